/**
 * Test helper for the relay's MCP connector: the SDK's own Streamable HTTP client
 * (@modelcontextprotocol/client) connected to `/mcp` or `/mcp/connect` of a real relay on a
 * loopback port, speaking revision 2025-11-25 (initialize, stateless) or 2026-07-28 (pinned:
 * `server/discover`, per-request), with an optional bearer token; and a 2026-07-28 client that
 * keeps the live updates (`subscriptions/listen`) it is sent.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult, type McpSubscription } from '@modelcontextprotocol/client';
import type { McpRevision } from './bridge.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './relay.js';

export interface ConnectorClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectConnector(
  url: string,
  opts: { token?: string; revision?: McpRevision; path?: '/mcp' | '/mcp/connect' | `/mcp?${string}` } = {},
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

/** A relay with two KEYS, each connected to its `/mcp` by the SDK's client; `close` stops all of it. */
export interface TwoCallers {
  relay: RunningRelay;
  owner: MintedToken;
  writer: MintedToken;
  asOwner: ConnectorClient;
  asWriter: ConnectorClient;
  close(): Promise<void>;
}

export async function twoCallers(): Promise<TwoCallers> {
  const relay = await startRelay();
  const owner = await mintToken(relay.url);
  const writer = await mintToken(relay.url);
  const asOwner = await connectConnector(relay.url, { token: owner.token });
  const asWriter = await connectConnector(relay.url, { token: writer.token });
  return {
    relay,
    owner,
    writer,
    asOwner,
    asWriter,
    close: async () => {
      await asOwner.close();
      await asWriter.close();
      await relay.close();
    },
  };
}

/** A `notifications/resources/updated` as a client receives it. */
export type Updated = { uri: string } & Record<string, unknown>;

/** A 2026-07-28 client at `url`/mcp for `token`, with the live updates it was sent, in order. */
export async function liveClient(url: string, token: string | undefined): Promise<ConnectorClient & { updates: Updated[] }> {
  const c = await connectConnector(url, { token, revision: '2026-07-28' });
  const updates: Updated[] = [];
  c.client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params as Updated));
  return { ...c, updates };
}

/** The first value of `probe` that is neither undefined nor false, read every 25 ms; throws after `ms`. */
export async function waitFor<T>(what: string, probe: () => T | undefined, ms = 5_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Whether the subscription is still open after `ms`. */
export async function stillOpen(sub: McpSubscription, ms = 300): Promise<boolean> {
  return (await Promise.race([sub.closed, new Promise((r) => setTimeout(() => r('open'), ms))])) === 'open';
}

/** How the subscription closed, or 'still open' when it has not within `ms` (a bound on a failure, not a wait). */
export async function closedWithin(sub: McpSubscription, ms = 2_000): Promise<'local' | 'graceful' | 'remote' | 'still open'> {
  return await Promise.race([sub.closed, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms))]);
}
