/**
 * The connector's tool servers are built once and reused (relay/connector/server.ts), the caller
 * passed per request (relay/connector/scope.ts): the SDK's handler over the connector's factory,
 * driven by the SDK's client at both revisions, each request in its caller's scope as the HTTP
 * entry runs it, against the real relay's routes in process. Counts the servers built, and checks
 * that every answer is its own caller's whichever server served it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { contextOf } from '../../../relay/app.js';
import { createKeyCaches } from '../../../relay/connector/caches.js';
import type { Caller } from '../../../relay/connector/caller.js';
import { inScope } from '../../../relay/connector/scope.js';
import { callerScope, connectorServers, type ConnectorBase } from '../../../relay/connector/server.js';
import type { McpRevision } from '../../helpers/bridge.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let a: MintedToken;
let b: MintedToken;
let built: { era: string }[];
let handler: ReturnType<typeof createMcpHandler>;
let base: ConnectorBase;
const clients: Client[] = [];

function isInitialize(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

/** A client whose requests reach the handler in the scope of `who`'s caller, as relay/connector/routes.ts runs them. */
async function clientOf(who: MintedToken | undefined, revision: McpRevision): Promise<Client> {
  const fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const caller: Caller = {
      authorization: who === undefined ? undefined : `Bearer ${who.token}`,
      identity: who === undefined ? undefined : { peerId: who.peerId, tokenId: 'test', tokenExpiresAt: Number.MAX_SAFE_INTEGER, app: null },
      remoteAddress: '127.0.0.1',
      connect: false,
      scopeDenied: false,
    };
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    const request = new Request(url, init);
    return await inScope(callerScope(base, caller), () =>
      handler.fetch(request, { authInfo: { token: '', clientId: '', scopes: [], extra: { caller, alone: isInitialize(body) } } }),
    );
  };
  const client = new Client({ name: 'svc-reuse-test', version: '0.0.0' }, revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), { fetch }));
  clients.push(client);
  return client;
}

async function whoami(client: Client): Promise<string> {
  const r = (await client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
  return JSON.stringify(r);
}

beforeAll(async () => {
  relay = await startRelay();
  a = await mintToken(relay.url);
  b = await mintToken(relay.url);
  const ctx = contextOf(relay.app);
  base = { app: relay.app, ctx, caches: createKeyCaches(), version: '0.0.0', log: () => {} };
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await handler?.close();
  await relay?.close();
});

function freshHandler(): void {
  built = [];
  handler = createMcpHandler(connectorServers(base, { onServer: (_server, era) => void built.push({ era }) }));
}

describe('one tool server serves request after request', () => {
  it('at 2026-07-28: one server for calls of two KEYs and no KEY, each answer its own caller\'s', async () => {
    freshHandler();
    const ca = await clientOf(a, '2026-07-28');
    const cb = await clientOf(b, '2026-07-28');
    const none = await clientOf(undefined, '2026-07-28');
    for (let i = 0; i < 3; i++) {
      const ta = await whoami(ca);
      const tb = await whoami(cb);
      expect(ta).toContain(a.peerId);
      expect(ta).not.toContain(b.peerId);
      expect(tb).toContain(b.peerId);
      expect(tb).not.toContain(a.peerId);
      const tn = await whoami(none);
      expect(tn).toContain('TOKEN_MISSING');
      expect(tn).not.toContain(a.peerId);
    }
    expect(built).toEqual([{ era: 'modern' }]);
  });

  it('at 2026-07-28: another server only while every one is busy, each call still its own caller\'s', async () => {
    freshHandler();
    const ca = await clientOf(a, '2026-07-28');
    const cb = await clientOf(b, '2026-07-28');
    const [ta, tb] = await Promise.all([whoami(ca), whoami(cb)]);
    expect(ta).toContain(a.peerId);
    expect(tb).toContain(b.peerId);
    const busy = built.length;
    expect(busy).toBeGreaterThanOrEqual(1);
    expect(busy).toBeLessThanOrEqual(2);
    for (let i = 0; i < 4; i++) expect(await whoami(i % 2 === 0 ? ca : cb)).toContain((i % 2 === 0 ? a : b).peerId);
    expect(built.length).toBe(busy);
  });

  it('at 2025-11-25: an initialize gets a server of its own; the calls after it share one', async () => {
    freshHandler();
    const ca = await clientOf(a, '2025-11-25');
    const cb = await clientOf(b, '2025-11-25');
    // Two initialize requests (each its own server), then one server for the rest.
    const afterConnecting = built.length;
    expect(afterConnecting).toBeGreaterThanOrEqual(2);
    for (let i = 0; i < 3; i++) {
      expect(await whoami(ca)).toContain(a.peerId);
      expect(await whoami(cb)).toContain(b.peerId);
    }
    expect(built.length).toBeLessThanOrEqual(afterConnecting + 1);
    expect(built.every((s) => s.era === 'legacy')).toBe(true);
  });
});
