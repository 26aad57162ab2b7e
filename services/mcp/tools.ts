import { z } from 'zod';
import { ENDPOINTS, type Endpoint } from '../../contracts/endpoints';
import { ErrorEnvelope } from '../../contracts/http';
import { priceSentence } from '../../contracts/prices';

/**
 * The tools of the MCP server (README, "MCP server"), derived from the route table: every public
 * endpoint of the lookup and cache areas is a tool, its input schema the JSON Schema of the row's
 * body schema, its description the row's. A new row of those areas (a batch endpoint, say) is a new
 * tool with no line here. Pure: what the tools are and how an API answer becomes a tool result.
 */

export interface McpTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  /** The HTTP call the tool makes. */
  method: Endpoint['method'];
  path: string;
}

/** The areas whose endpoints are tools: the charged lookups and the free cache checks. */
const TOOL_AREAS: readonly Endpoint['area'][] = ['lookup', 'cache'];

/** `lookupCompany` → `lookup_company`: the spelling MCP clients show. */
export function toolName(endpointId: string): string {
  return endpointId.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function inputSchemaOf(row: Endpoint): McpTool['inputSchema'] {
  if (row.body === undefined) return { type: 'object', properties: {}, additionalProperties: false };
  // The body as a caller writes it (defaults optional); the API checks it and answers its own errors.
  const { $schema: _dialect, ...schema } = z.toJSONSchema(row.body, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...schema, type: 'object' };
}

function descriptionOf(row: Endpoint): string {
  const price = row.priced === undefined ? 'Free of charge.' : priceSentence(row.priced);
  return [`${row.summary}.`, row.description, price, `(${row.method} ${row.path})`].filter(Boolean).join(' ');
}

export function mcpTools(endpoints: readonly Endpoint[] = ENDPOINTS): McpTool[] {
  return endpoints
    .filter((row) => TOOL_AREAS.includes(row.area) && row.answer !== 'html')
    .map((row) => ({ name: toolName(row.id), description: descriptionOf(row), inputSchema: inputSchemaOf(row), method: row.method, path: row.path }));
}

/** What an MCP `tools/call` answers (a type, not an interface: the SDK's result type is indexable). */
export type ToolResult = {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/**
 * An answer of the API as a tool result: a success is its JSON body; an error is flagged as one,
 * its text starting with the API's code and message (the envelope follows, whole).
 */
export function toolResultOf(status: number, body: unknown): ToolResult {
  const json = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : { body };
  const text = JSON.stringify(json, null, 2);
  if (status < 400) return { content: [{ type: 'text', text }], structuredContent: json };
  const envelope = ErrorEnvelope.safeParse(json);
  const headline = envelope.success ? `${envelope.data.error.code}: ${envelope.data.error.message}` : `HTTP ${status}`;
  return { content: [{ type: 'text', text: `${headline}\n${text}` }], structuredContent: json, isError: true };
}

/** The API could not be reached at all: no code of its own, so the tool says what failed. */
export function unreachableResult(apiUrl: string, err: unknown): ToolResult {
  const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  return { content: [{ type: 'text', text: `unreachable: the lookup API at ${apiUrl} did not answer (${reason}).` }], isError: true };
}
