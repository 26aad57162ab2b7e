import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ENDPOINTS, endpoint, type Endpoint } from '../../../contracts/endpoints';
import { mcpTools, toolName, toolResultOf, unreachableResult } from '../../../services/mcp/tools';

describe('mcpTools: the tools derived from the route table', () => {
  it('given the route table, then every lookup and cache endpoint is a tool, nothing of Meta or admin', () => {
    expect(mcpTools().map((tool) => [tool.name, tool.method, tool.path])).toEqual(
      ENDPOINTS.filter((row) => row.area === 'lookup' || row.area === 'cache').map((row) => [toolName(row.id), row.method, row.path]),
    );
    expect(mcpTools().map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['lookup_company', 'lookup_domain', 'lookup_person', 'search', 'cache_company', 'cache_domain', 'cache_person', 'cache_stats']),
    );
  });

  it("given a row with a body, then its input schema is the JSON Schema of the row's zod schema, as a caller writes it", () => {
    const tool = mcpTools().find((t) => t.name === 'lookup_company')!;
    const { $schema: _dialect, ...expected } = z.toJSONSchema(endpoint('lookupCompany').body, { io: 'input' }) as Record<string, unknown>;
    expect(tool.inputSchema).toEqual(expected);
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['url'], properties: { on_error: { enum: ['stale'] } } });
  });

  it('given a row without a body (cache stats), then its tool takes an empty object', () => {
    expect(mcpTools().find((t) => t.name === 'cache_stats')!.inputSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('given a new row of the lookup area (a batch endpoint), when the table has it, then it is a tool with no other change', () => {
    const batch: Endpoint = { ...endpoint('search'), id: 'batch', path: '/v1/batch', summary: 'Many lookups in one call', body: z.strictObject({ items: z.array(z.unknown()) }) };
    const tools = mcpTools([...ENDPOINTS, batch]);
    expect(tools.at(-1)).toMatchObject({ name: 'batch', method: 'POST', path: '/v1/batch', inputSchema: { type: 'object', required: ['items'] } });
  });

  it('given a priced row, then its description states its price from the price table', () => {
    expect(mcpTools().find((t) => t.name === 'lookup_domain')!.description).toMatch(/4 credits/);
    expect(mcpTools().find((t) => t.name === 'cache_company')!.description).toMatch(/Free of charge/);
  });
});

describe('toolResultOf: an API answer as a tool result', () => {
  it('given a 200, then its body is the structured content and the text, not an error', () => {
    const body = { data: { slug: 'acme' }, meta: { credits_charged: 1 } };
    expect(toolResultOf(200, body)).toEqual({ content: [{ type: 'text', text: JSON.stringify(body, null, 2) }], structuredContent: body });
  });

  it("given an error envelope, then it is an error whose text starts with the API's code and message", () => {
    const body = {
      error: { type: 'invalid_request_error', code: 'invalid_company_reference', message: 'Not a company reference.', retryable: false, doc_url: 'http://x/docs/errors#invalid_company_reference' },
      meta: { request_id: 'req_01J9Z8Q4V6Y3M2K7T5R1N0B8CD', credits_charged: 0, credits_remaining: 10 },
    };
    const result = toolResultOf(400, body);
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text.split('\n')[0]).toBe('invalid_company_reference: Not a company reference.');
    expect(result.structuredContent).toEqual(body);
  });

  it('given an error that is no envelope (a proxy page), then it is an error naming the status', () => {
    expect(toolResultOf(502, '<html>bad gateway</html>')).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/^HTTP 502\n/) }] });
  });

  it('given no answer at all, then it is an error saying where the API was', () => {
    const result = unreachableResult('http://127.0.0.1:1', new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') }));
    expect(result).toEqual({ content: [{ type: 'text', text: 'unreachable: the lookup API at http://127.0.0.1:1 did not answer (connect ECONNREFUSED 127.0.0.1:1).' }], isError: true });
  });
});
