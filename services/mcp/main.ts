// `npm run -s mcp`: the MCP server on stdio (README, "MCP server"). stdout carries the protocol
// only; what it logs goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, mcpSettings } from './server';

const log = (line: string) => process.stderr.write(`lookup-api mcp: ${line}\n`);

try {
  const settings = mcpSettings(process.env);
  const server = createMcpServer(settings, log);
  await server.connect(new StdioServerTransport());
  log(`serving the lookup API at ${settings.apiUrl} on stdio${settings.apiKey === undefined ? ' (no LOOKUP_API_KEY: every call will be 401)' : ''}`);
  // The client closing stdin ends the session, and the process with it.
  process.stdin.on('close', () => {
    server.close().finally(() => process.exit(0));
  });
} catch (err) {
  log(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
