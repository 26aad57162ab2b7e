// Every route the app serves is a row of the endpoint table (contracts/endpoints.ts), and each row
// is described in an OpenAPI document (the public one or the admin API's, as served) or marked
// internal (pages, assets, metrics). The routes are Fastify's own listing of what it registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentOf, ENDPOINTS, type Endpoint } from '../../contracts/endpoints';
import { ADMIN_TOKEN, startRouteApp, type RouteApp } from './support';

let t: RouteApp;
beforeAll(async () => {
  t = await startRouteApp();
}, 120_000);
afterAll(async () => t?.close());

/** `METHOD /path` of every route, from Fastify's tree (`├── /segment (GET, POST)`, children indented by 4). */
function servedRoutes(tree: string): string[] {
  const routes: string[] = [];
  const pathAt: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    pathAt[depth] = (depth === 0 ? '' : pathAt[depth - 1]!) + match[2]!;
    pathAt.length = depth + 1;
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${pathAt[depth]}`);
  }
  return routes;
}

const routeOf = (row: Endpoint) => `${row.method} ${row.path.replace(/\{(\w+)\}/g, ':$1')}`;

describe('every route the app serves', () => {
  it('is a row of the endpoint table, and every row is served', () => {
    const served = servedRoutes(t.app.printRoutes({ commonPrefix: false }));
    const rows = ENDPOINTS.map(routeOf);
    expect(served.filter((route) => !rows.includes(route))).toEqual([]);
    expect(rows.filter((route) => !served.includes(route))).toEqual([]);
    expect(served).toHaveLength(ENDPOINTS.length);
  });

  it('is in the OpenAPI document its row names, as served, or marked internal', async () => {
    const publicDocument = (await t.call('GET', '/v1/openapi.json')).json();
    const adminDocument = (await t.call('GET', '/admin/v1/openapi.json', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    const documents = { public: publicDocument, admin: adminDocument };
    const internal: string[] = [];
    for (const row of ENDPOINTS as readonly Endpoint[]) {
      const document = documentOf(row);
      if (document === 'internal') internal.push(routeOf(row));
      else expect(documents[document].paths[row.path]?.[row.method.toLowerCase()]?.operationId, `${routeOf(row)} in the ${document} document`).toBe(row.id);
    }
    // Pages, assets and metrics only: every JSON endpoint is documented.
    expect(internal.every((route) => /^GET \/(docs|console|metrics)/.test(route)), internal.join(', ')).toBe(true);
    expect(Object.keys(adminDocument.paths).every((path) => path.startsWith('/admin/'))).toBe(true);
    expect(Object.keys(publicDocument.paths).some((path) => path.startsWith('/admin/'))).toBe(false);
  });
});
