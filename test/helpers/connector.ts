/**
 * Test helper for the relay's MCP connector: the SDK's own Streamable HTTP client
 * (@modelcontextprotocol/client) connected to `/mcp` or `/mcp/connect` of a real relay on a
 * loopback port, speaking revision 2025-11-25 (initialize, stateless) or 2026-07-28 (pinned:
 * `server/discover`, per-request), with an optional bearer token.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import type { McpRevision } from './bridge.js';

export interface ConnectorClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectConnector(
  url: string,
  opts: { token?: string; revision?: McpRevision; path?: '/mcp' | '/mcp/connect' } = {},
): Promise<ConnectorClient> {
  const headers: Record<string, string> = {};
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${url}${opts.path ?? '/mcp'}`), { requestInit: { headers } });
  const client = new Client(
    { name: 'svc-connector-test', version: '0.0.0' },
    opts.revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  await client.connect(transport);
  return { client, close: () => client.close() };
}

export async function callConnector(c: ConnectorClient, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.client.callTool({ name, arguments: args })) as CallToolResult;
}
