import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { endpoint, type Endpoint, type EndpointById, type EndpointId } from '../../contracts/endpoints';
import { readJson, validated } from './request-body';

type Parsed<E, K extends 'params' | 'query' | 'body'> = E extends { [P in K]: infer S extends z.ZodType } ? z.output<S> : undefined;

/** A request as its endpoint's row reads it: path, query and body checked against the row's schemas. */
export interface RouteInput<E extends Endpoint> {
  req: FastifyRequest;
  reply: FastifyReply;
  params: Parsed<E, 'params'>;
  query: Parsed<E, 'query'>;
  body: Parsed<E, 'body'>;
  /** The body as sent (an Idempotency-Key fingerprint compares it canonically). */
  json: unknown;
}

/**
 * Registers the handler of one row of the route table (contracts/endpoints.ts): its method, its
 * path (`{id}` becomes `:id`), its row (admission hooks by its policies: admission/plugin.ts), and
 * its success status. Path, query and body are checked in that order, each problem a 400
 * `invalid_request` with details; a body only where the row has one.
 */
export function route<Id extends EndpointId>(app: FastifyInstance, id: Id, handler: (input: RouteInput<EndpointById<Id>>) => Promise<unknown>): void {
  const row: Endpoint = endpoint(id);
  app.route({
    method: row.method,
    url: row.path.replace(/\{(\w+)\}/g, ':$1'),
    config: { endpoint: row },
    handler: async (req, reply) => {
      const params = row.params && validated(row.params, { ...(req.params as object) }, 'The id in the path is not a valid id.');
      const query = row.query && validated(row.query, { ...(req.query as object) }, 'The query string does not match the schema.');
      const json = row.body && readJson(req, row.body);
      const body = row.body && validated(row.body, json);
      reply.status(row.status);
      // The row's schemas decide these types (RouteInput); the checks above made the values so.
      return handler({ req, reply, params, query, body, json } as RouteInput<EndpointById<Id>>);
    },
  });
}
