/**
 * Resource reads that fail, through the real bridge over stdio (MCP SDK client) against a real
 * relay: an address naming nothing is "resource not found" with data {uri}, code -32002 on
 * revision 2025-11-25 and -32602 on 2026-07-28 (the wire code is read from the transport, since
 * the SDK client turns either into its ResourceNotFoundError); a malformed address is Invalid
 * Params with the refusal as data.
 */
import { randomUUID } from 'node:crypto';
import { ProtocolError, ResourceNotFoundError, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type McpRevision, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
const bridges = new Map<McpRevision, RunningBridge>();
/** The JSON-RPC error responses each client received, by request id. */
const errors = new Map<McpRevision, Map<string | number, { code: number; message: string; data?: unknown }>>();

beforeAll(async () => {
  relay = await startRelay();
  for (const revision of ['2025-11-25', '2026-07-28'] as const) {
    const b = await startBridge({ relayUrl: relay.url, revision });
    const seen = new Map<string | number, { code: number; message: string; data?: unknown }>();
    const transport = b.client.transport!;
    const deliver = transport.onmessage!;
    transport.onmessage = (m: JSONRPCMessage, extra?: unknown) => {
      if ('error' in m && m.id !== undefined && m.id !== null) seen.set(m.id, m.error);
      (deliver as (m: JSONRPCMessage, extra?: unknown) => void)(m, extra);
    };
    bridges.set(revision, b);
    errors.set(revision, seen);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all([...bridges.values()].map((b) => b.close()));
  await relay?.close();
});

/** Read `uri` on `revision`: the error the client raised and the error response on the wire. */
async function failedRead(revision: McpRevision, uri: string): Promise<{ thrown: unknown; wire: { code: number; message: string; data?: unknown } }> {
  const seen = errors.get(revision)!;
  const before = new Set(seen.keys());
  const thrown = await bridges
    .get(revision)!
    .client.readResource({ uri })
    .then(() => undefined)
    .catch((e: unknown) => e);
  expect(thrown, `${uri} was read`).toBeDefined();
  const fresh = [...seen.entries()].filter(([id]) => !before.has(id));
  expect(fresh).toHaveLength(1);
  return { thrown, wire: fresh[0]![1] };
}

const NOT_FOUND_CODE: Record<McpRevision, number> = { '2025-11-25': -32002, '2026-07-28': -32602 };

describe.each(['2025-11-25', '2026-07-28'] as const)('resources/read on revision %s', (revision) => {
  it.each([
    ['an address no resource or template has', 'svc://nowhere'],
    ['a SPACE that does not exist', 'svc://spaces/no-such-space-here'],
    ['the newest posts of a SPACE that does not exist', 'svc://spaces/no-such-space-here/latest'],
    ['a post that does not exist', `svc://posts/${randomUUID()}`],
    ['a category that does not exist', 'svc://categories/no-such-category-here'],
  ])('%s is resource not found, with the address as data', async (_what, uri) => {
    const { thrown, wire } = await failedRead(revision, uri);
    expect(wire.code).toBe(NOT_FOUND_CODE[revision]);
    expect(wire.data).toEqual({ uri });
    expect(thrown).toBeInstanceOf(ResourceNotFoundError);
    expect((thrown as ResourceNotFoundError).uri).toBe(uri);
  });

  it('a post address whose id is not a uuid is Invalid Params carrying the refusal, not resource not found', async () => {
    const { thrown, wire } = await failedRead(revision, 'svc://posts/not-a-uuid');
    expect(wire.code).toBe(-32602);
    expect(wire.data).toMatchObject({ error: { code: 'INVALID_REQUEST', source: 'relay' } });
    expect(thrown).not.toBeInstanceOf(ResourceNotFoundError);
  });

  it('a SPACE name that is not valid percent-encoding is Invalid Params, not resource not found', async () => {
    const { thrown, wire } = await failedRead(revision, 'svc://spaces/%E0%A4%A');
    expect(wire.code).toBe(-32602);
    expect(wire.message).toContain('not a valid percent-encoding');
    expect(wire.data).toBeUndefined();
    expect(thrown).toBeInstanceOf(ProtocolError);
    expect(thrown).not.toBeInstanceOf(ResourceNotFoundError);
  });
});
