/**
 * A client's mistake at the connector's `/mcp` is never -32603 Internal error, which tells a
 * client the server failed (JSON-RPC 2.0 §5.1; MCP "Error handling"), at either protocol
 * revision: reading a resource with no token or a token the relay does not know is the read's
 * ordinary answer saying what is wrong, as every token problem at `/mcp` is ordinary output;
 * params a method does not take (initialize's capabilities as a string, prompts/get's arguments
 * as numbers, a list's cursor as an array, in a 2025 batch too) are -32602 Invalid params;
 * reading a SPACE the KEY may not read is -32602 with the refusal as data. What the service could
 * not do stays -32603 and is logged.
 */
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY, ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayRefusal } from '../../../tools/errors.js';
import { readFailure } from '../../../tools/resources/errors.js';
import type { McpRevision } from '../../helpers/bridge.js';
import { connectConnector } from '../../helpers/connector.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { call, createSpace, freshName } from '../../helpers/spaces.js';

let relay: RunningRelay;
let key: MintedToken;
/** Another KEY's private SPACE, with a post `key` may not read. */
let hidden: string;

beforeAll(async () => {
  relay = await startRelay();
  key = await mintToken(relay.url);
  const other = await mintToken(relay.url);
  hidden = freshName('hidden');
  await createSpace(relay, other.token, { name: hidden });
  expect((await call(relay, 'POST', `/v1/spaces/${hidden}/posts`, { token: other.token, body: { kind: 'obs', body: 'members only' } })).status).toBe(201);
});

afterAll(async () => {
  await relay?.close();
});

interface RpcAnswer {
  status: number;
  /** The JSON-RPC messages of the answer (a JSON body or SSE events). */
  messages: { id?: unknown; result?: any; error?: { code: number; message: string; data?: any } }[];
}

/** One JSON-RPC body POSTed to /mcp as a client of `revision` sends it (2026-07-28: the envelope and the standard headers). */
async function rpc(revision: McpRevision, body: { id: number | string; method: string; params?: Record<string, unknown> }, token?: string): Promise<RpcAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': revision };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let params = body.params;
  if (revision === '2026-07-28') {
    const envelope = { [PROTOCOL_VERSION_META_KEY]: revision, [CLIENT_INFO_META_KEY]: { name: 'mistakes', version: '1' }, [CLIENT_CAPABILITIES_META_KEY]: {} };
    params = { ...params, _meta: envelope };
    headers['mcp-method'] = body.method;
    const name = params.name ?? params.uri;
    if (typeof name === 'string') headers['mcp-name'] = name;
  }
  return await send(headers, JSON.stringify({ jsonrpc: '2.0', ...body, ...(params === undefined ? {} : { params }) }));
}

async function send(headers: Record<string, string>, body: string): Promise<RpcAnswer> {
  const res = await fetch(`${relay.url}/mcp`, { method: 'POST', headers, body });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const data = type.startsWith('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()) : [text];
  return { status: res.status, messages: data.flatMap((d) => JSON.parse(d) as RpcAnswer['messages']) };
}

describe.each(['2025-11-25', '2026-07-28'] as const)('client mistakes at /mcp (%s)', (revision) => {
  it.each([
    ['no token', undefined, 'TOKEN_MISSING'],
    ['a token the relay does not know', `svc_${'1'.repeat(64)}`, 'TOKEN_INVALID'],
  ])('reading svc://mailbox and svc://me with %s is an ordinary answer saying a token is needed', async (_what, token, code) => {
    const c = await connectConnector(relay.url, { token, revision });
    try {
      for (const uri of ['svc://mailbox', 'svc://me']) {
        const read = await c.client.readResource({ uri });
        expect(read.contents).toHaveLength(1);
        const text = (read.contents[0] as { text: string }).text;
        expect(text).toContain(`${uri} needs a KEY's token`);
        expect(text).toContain(code);
      }
    } finally {
      await c.close();
    }
  });

  it('prompts/get with arguments that are not strings is -32602 naming the argument', async () => {
    const { status, messages } = await rpc(revision, { id: 1, method: 'prompts/get', params: { name: 'start_run', arguments: { goal: 5 } } }, key.token);
    expect(status).toBeLessThan(500);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.error).toMatchObject({ code: -32602, message: expect.stringContaining('params.arguments.goal') });
  });

  it('a list with a cursor that is not a string is -32602', async () => {
    const { messages } = await rpc(revision, { id: 'c', method: 'tools/list', params: { cursor: [] } }, key.token);
    expect(messages[0]).toMatchObject({ id: 'c', error: { code: -32602, message: expect.stringContaining('params.cursor') } });
  });

  it("reading the newest posts of a SPACE the KEY may not read is -32602 with READ_DENIED as data, and shows nothing of it", async () => {
    const c = await connectConnector(relay.url, { token: key.token, revision });
    try {
      const refused = await c.client.readResource({ uri: `svc://spaces/${hidden}/latest` }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32602);
      expect((refused as ProtocolError).data).toMatchObject({ error: { code: 'READ_DENIED', source: 'relay' } });
      expect(JSON.stringify((refused as ProtocolError).data)).not.toContain('members only');
    } finally {
      await c.close();
    }
  });
});

describe('client mistakes at /mcp (2025-11-25 only)', () => {
  it('initialize with capabilities "x" is -32602 naming params.capabilities', async () => {
    const { status, messages } = await rpc('2025-11-25', { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: 'x', clientInfo: { name: 'c', version: '1' } } });
    expect(status).toBeLessThan(500);
    expect(messages[0]).toMatchObject({ id: 1, error: { code: -32602, message: expect.stringContaining('params.capabilities') } });
  });

  it('in a batch, the request with params its method does not take is -32602 and the one beside it is answered', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${key.token}` };
    const { messages } = await send(
      headers,
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'start_run', arguments: { goal: false } } },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
      ]),
    );
    expect(messages.find((m) => m.id === 1)?.error?.code).toBe(-32602);
    expect(messages.find((m) => m.id === 2)?.result).toEqual({});
  });
});

describe('what the service could not do', () => {
  it('is -32603 with the refusal as data, and logged; a refusal of the caller is -32602 and not logged', () => {
    const logged: string[] = [];
    const sink = { log: (line: string) => logged.push(line), served: 'relay' as const };
    const uri = new URL('svc://mailbox');
    const busy = new RelayRefusal(503, { code: 'BUSY', message: 'BUSY. The service is full.', fix: 'Wait and resend.' });
    const fault = readFailure(uri, busy, sink) as ProtocolError;
    expect(fault.code).toBe(-32603);
    expect(fault.data).toMatchObject({ error: { code: 'BUSY', source: 'relay' } });
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('svc://mailbox');
    const limited = new RelayRefusal(429, { code: 'RATE_LIMITED', message: 'RATE_LIMITED. Too many requests.', fix: 'Wait.', retryAfter: 3 });
    expect((readFailure(uri, limited, sink) as ProtocolError).code).toBe(-32602);
    expect((readFailure(uri, new TypeError('a bug'), sink) as ProtocolError).code).toBe(-32603);
    expect(logged).toHaveLength(2);
  });
});
