import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { API_VERSION } from '../../contracts/openapi';
import { mcpTools, toolResultOf, unreachableResult } from './tools';

/** The MCP server's settings: where the API is and whose key it calls with (README, "MCP server"). */
export interface McpSettings {
  apiUrl: string;
  /** The user's API key; absent: the API answers 401 `unauthorized` to every tool call. */
  apiKey: string | undefined;
}

const Env = z.object({
  LOOKUP_API_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:3000'),
  LOOKUP_API_KEY: z.string().trim().min(1).optional(),
});

/** LOOKUP_API_URL (default http://127.0.0.1:3000) and LOOKUP_API_KEY, checked. */
export function mcpSettings(env: NodeJS.ProcessEnv): McpSettings {
  const parsed = Env.safeParse({ LOOKUP_API_URL: env.LOOKUP_API_URL || undefined, LOOKUP_API_KEY: env.LOOKUP_API_KEY || undefined });
  if (!parsed.success) throw new Error(`MCP server settings: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return { apiUrl: parsed.data.LOOKUP_API_URL.replace(/\/+$/, ''), apiKey: parsed.data.LOOKUP_API_KEY };
}

/**
 * The Model Context Protocol server: the lookup and cache endpoints as tools (tools.ts), each call
 * one HTTP request to the API with the user's key. The low-level `Server` of the SDK, not
 * `McpServer`: the input schemas are JSON Schemas derived from the contracts, and the API, not
 * the server, judges the arguments, so a bad one comes back as the API's own code and message.
 */
export function createMcpServer(settings: McpSettings, log: (line: string) => void = () => {}): Server {
  const tools = mcpTools();
  const server = new Server({ name: 'lookup-api', version: API_VERSION }, { capabilities: { tools: {} } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) return { content: [{ type: 'text', text: `unknown_tool: no tool is called ${request.params.name}.` }], isError: true };
    const url = `${settings.apiUrl}${tool.path}`;
    try {
      const response = await fetch(url, {
        method: tool.method,
        headers: {
          accept: 'application/json',
          ...(settings.apiKey === undefined ? {} : { authorization: `Bearer ${settings.apiKey}` }),
          ...(tool.method === 'GET' ? {} : { 'content-type': 'application/json' }),
        },
        ...(tool.method === 'GET' ? {} : { body: JSON.stringify(request.params.arguments ?? {}) }),
      });
      const text = await response.text();
      log(`${tool.name}: ${response.status} ${response.headers.get('x-request-id') ?? ''}`);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON (a proxy's page, say): passed on as text.
      }
      return toolResultOf(response.status, body);
    } catch (err) {
      log(`${tool.name}: unreachable ${url}: ${err instanceof Error ? err.message : String(err)}`);
      return unreachableResult(settings.apiUrl, err);
    }
  });

  return server;
}
