import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError } from '../../contracts/errors';
import { invalidJsonDetail, isJsonContentType, parseValue, unsupportedContentTypeDetail } from '../../contracts/validation';

/**
 * The JSON value of a POST body: wrong content type or invalid JSON is a 400 with details. No body
 * at all means `{}` where `schema` accepts `{}` (every field optional): there is nothing to send.
 */
export function readJson(req: FastifyRequest, schema: z.ZodType): unknown {
  if ((req.body === undefined || req.body === '') && schema.safeParse({}).success) return {};
  if (!isJsonContentType(req.headers['content-type'])) throw new ApiError('invalid_request', { details: [unsupportedContentTypeDetail()] });
  try {
    return JSON.parse(typeof req.body === 'string' ? req.body : '');
  } catch {
    throw new ApiError('invalid_request', { details: [invalidJsonDetail()] });
  }
}

/** A decoded value checked against its schema; every problem field a 400 detail. */
export function validated<T>(schema: z.ZodType<T>, value: unknown, message?: string): T {
  const parsed = parseValue(schema, value);
  if (!parsed.ok) throw new ApiError('invalid_request', { message, details: parsed.details });
  return parsed.value;
}
