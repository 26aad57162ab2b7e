// The MCP server (`npm run -s mcp`) driven by a Client of the same SDK over stdio, against a
// running service on a random port (embedded PGlite and the built-in sandbox): the tools listed
// with the contracts' schemas, lookups and cache checks called with the user's key, errors as the
// API's codes and messages.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newCustomer, startE2eServer, type Backend, type Customer, type E2eServer } from './support/harness';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** A client connected to a new MCP server process, as an assistant starts it (README, "MCP server"). */
async function connect(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'lookup-api-e2e', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: 'npm', args: ['run', '-s', 'mcp'], cwd: REPO, env: { ...getDefaultEnvironment(), ...env }, stderr: 'ignore' }));
  return client;
}

const firstLine = (result: CallToolResult) => (result.content[0] as { text: string }).text.split('\n')[0];

describe('MCP server over stdio against a running service', () => {
  const pglite: Backend = { name: 'PGlite', available: true };
  let server: E2eServer;
  let customer: Customer;
  let client: Client;

  beforeAll(async () => {
    server = await startE2eServer(pglite);
    customer = await newCustomer(server, 10, 'mcp');
    client = await connect({ LOOKUP_API_URL: server.url, LOOKUP_API_KEY: customer.key });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  test('lists the lookups, search and the cache checks, each with the input schema of its request body', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['lookup_company', 'lookup_domain', 'lookup_person', 'search', 'cache_company', 'cache_domain', 'cache_person', 'cache_stats']));
    const company = tools.find((tool) => tool.name === 'lookup_company')!;
    expect(company.inputSchema).toMatchObject({ type: 'object', required: ['url'], properties: { url: { type: 'string' }, max_age: { type: 'integer' }, on_error: { enum: ['stale'] } } });
    expect(company.description).toMatch(/1 credit/);
  });

  test("a lookup charges the user's workspace and answers the API's body; the cache check then sees it", async () => {
    const result = (await client.callTool({ name: 'lookup_company', arguments: { url: 'acme-robotics' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ data: { slug: 'acme-robotics' }, meta: { cache: { status: 'MISS' }, credits_charged: 1, credits_remaining: 9 } });
    expect(await customer.balance()).toBe(9);

    const cached = (await client.callTool({ name: 'cache_company', arguments: { url: 'https://www.linkedin.com/company/acme-robotics' } })) as CallToolResult;
    expect(cached.structuredContent).toMatchObject({ data: { cached: true, found: true } });
    const search = (await client.callTool({ name: 'search', arguments: { query: 'acme', limit: 2 } })) as CallToolResult;
    expect(search.structuredContent).toMatchObject({ data: { query: 'acme' }, meta: { credits_charged: 1 } });
  });

  test("errors come back as the API's codes and messages: bad input, a refunded failure, a not-found", async () => {
    const bad = (await client.callTool({ name: 'lookup_company', arguments: { url: 'https://example.com/not-a-company' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(firstLine(bad)).toMatch(/^invalid_company_reference: /);
    expect(bad.structuredContent).toMatchObject({ error: { code: 'invalid_company_reference' }, meta: { credits_charged: 0 } });

    const unknownField = (await client.callTool({ name: 'lookup_domain', arguments: { domain: 'globex.com', colour: 'red' } })) as CallToolResult;
    expect(firstLine(unknownField)).toMatch(/^invalid_request: /);

    const failed = (await client.callTool({ name: 'lookup_person', arguments: { url: 'https://www.linkedin.com/in/sandbox-upstream-error' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ error: { code: 'upstream_error', retryable: true }, meta: { credits_charged: 0 } });
  });

  test('without a valid key every call is 401 unauthorized; with the API away, the tool says it is unreachable', async () => {
    const keyless = await connect({ LOOKUP_API_URL: server.url });
    try {
      const refused = (await keyless.callTool({ name: 'cache_stats', arguments: {} })) as CallToolResult;
      expect([refused.isError, (refused.structuredContent as { error: { code: string } }).error.code]).toEqual([true, 'unauthorized']);
    } finally {
      await keyless.close();
    }
    const away = await connect({ LOOKUP_API_URL: 'http://127.0.0.1:1', LOOKUP_API_KEY: customer.key });
    try {
      const result = (await away.callTool({ name: 'cache_stats', arguments: {} })) as CallToolResult;
      expect([result.isError, firstLine(result)]).toEqual([true, expect.stringMatching(/^unreachable: the lookup API at http:\/\/127\.0\.0\.1:1 did not answer/)]);
    } finally {
      await away.close();
    }
  });
});
