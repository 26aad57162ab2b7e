import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contracts/errors';

/** A file a page links: its bytes, media type and content hash (the `?v=` of its URL). */
export interface StaticAsset {
  body: Buffer;
  type: string;
  version: string;
}

export function staticAsset(type: string, body: Buffer): StaticAsset {
  return { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

/** The asset named by the route's `{name}`; 404 `route_not_found` for any other name. */
export function sendStaticAsset(req: FastifyRequest, reply: FastifyReply, assets: ReadonlyMap<string, StaticAsset>) {
  const asset = assets.get((req.params as { name: string }).name);
  if (!asset) throw new ApiError('route_not_found', { message: 'No endpoint exists at this method and path.' });
  // Versioned URLs (`?v=<content hash>`, as the pages link them) never change: cached for good.
  const versioned = (req.query as { v?: string }).v === asset.version;
  reply.header('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'no-cache');
  return reply.type(asset.type).send(asset.body);
}
