/**
 * The connector's direct lane (relay/connector/direct.ts) answers a tools/call, at 2026-07-28 and
 * at the 2025 revisions, with the bytes the MCP SDK's handler answers it with. Two relays over one store: one with the lane (the
 * default), one without (`connectorDirect: false`, every request through the SDK). Each request
 * is sent to both over HTTP as a client sends it, and the answers compared: status, headers
 * (but the date and request id) and body, with what differs between two answers to the same call made the same on both sides
 * (each relay's address, request ids, the peer markers' nonce, and for writes the ids and
 * positions a write makes). Which requests the lane takes is checked on the gate itself
 * (`directCall`) with the same messages and headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { directCall } from '../../../relay/connector/direct.js';
import { STRUCTURED_ONLY_EXTENSION } from '../../../relay/connector/structured.js';
import { appToken } from '../../helpers/oauth-flow.js';
import { mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace, post } from '../../helpers/posts.js';

const REVISION = '2026-07-28';
type Revision = typeof REVISION | '2025-11-25' | '2025-06-18';

let direct: RunningRelay;
let viaSdk: RunningRelay;
let owner: MintedToken;
let space: string;
let postId: string;
/** A post whose words are past Latin-1 (the answer's text and structured content both carry them). */
let wideId: string;

beforeAll(async () => {
  const dataDir = tempDataDir();
  direct = await startRelay({ dataDir });
  viaSdk = await startRelay({ dataDir, connectorDirect: false });
  owner = await mintToken(direct.url);
  space = (await newSpace(direct, owner)).name;
  wideId = (await post(direct, owner, space, { kind: 'obs', title: 'Zürich — naïve 🚀 merkle', body: 'ünïcödé ⟦peer body 00000000⟧ “quoted” \u2028 next line, 漢字' })).post_id;
  for (let i = 0; i < 4; i++) postId = (await post(direct, owner, space, { kind: 'obs', title: `merkle note ${i}`, body: `about a merkle tree, part ${i}` })).post_id;
}, 60_000);

afterAll(async () => {
  await direct?.close();
  await viaSdk?.close();
});

interface Sent {
  readonly name: string;
  readonly args?: unknown;
  readonly id?: string | number;
  readonly structuredOnly?: boolean;
  /** 2026-07-28 unless said; a 2025 revision sends no envelope (`meta`: the params' `_meta` then). */
  readonly revision?: Revision;
  readonly meta?: Record<string, unknown>;
  readonly path?: string;
  readonly token?: string;
  /** Headers to send instead of the standard ones the client derives from the body. */
  readonly headers?: Record<string, string>;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function message(s: Sent): { headers: Record<string, string>; body: Record<string, unknown> } {
  const revision = s.revision ?? REVISION;
  const meta =
    revision === REVISION
      ? {
          'io.modelcontextprotocol/protocolVersion': REVISION,
          'io.modelcontextprotocol/clientInfo': { name: 'svc-direct-test', version: '0.0.0' },
          'io.modelcontextprotocol/clientCapabilities': s.structuredOnly === true ? { extensions: { [STRUCTURED_ONLY_EXTENSION]: {} } } : {},
        }
      : s.meta;
  const params = { name: s.name, ...(s.args === undefined ? {} : { arguments: s.args }), ...(meta === undefined ? {} : { _meta: meta }) };
  const headers =
    s.headers ??
    (revision === REVISION
      ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': s.name }
      : { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': revision });
  return { headers, body: { jsonrpc: '2.0', id: s.id ?? 1, method: 'tools/call', params } };
}

async function send(relay: RunningRelay, s: Sent): Promise<Answer> {
  const { headers, body } = message(s);
  const res = await fetch(`${relay.url}${s.path ?? '/mcp'}`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${s.token ?? owner.token}` },
    body: JSON.stringify(body),
  });
  const answered: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== 'date' && name !== 'x-request-id') answered[name] = value;
  });
  return { status: res.status, headers: answered, body: await res.text() };
}

/** What differs between two answers to one call, made the same: addresses, request ids, nonces; for writes, what a write makes. */
function comparable(relay: RunningRelay, a: Answer, write = false): Answer {
  let body = a.body.replaceAll(relay.url, 'RELAY').replaceAll(relay.url.replace('http://', ''), 'RELAY');
  const nonce = /carry nonce ([0-9a-f]{8})/.exec(body)?.[1];
  if (nonce !== undefined) body = body.replaceAll(nonce, 'NONCE');
  body = body.replace(/(Request id |"request_id":")[0-9a-f-]{36}/g, '$1ID');
  if (write) {
    body = body.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID');
    body = body.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'TIME');
    body = body.replace(/[A-Za-z0-9_-]{43,}/g, 'B64');
    body = body.replace(/"(seq|head_seq|tree_size)":"?\d+"?/g, '"$1":N').replace(/(seq|position)[: ]+\d+/g, '$1 N');
    body = body.replace(/w-[0-9a-z]+/g, 'SPACE');
  }
  const headers = Object.fromEntries(Object.entries(a.headers).map(([k, v]) => [k, k === 'content-length' && write ? 'N' : v.replaceAll(relay.url, 'RELAY')]));
  return { ...a, headers, body };
}

async function both(s: Sent, write = false): Promise<[Answer, Answer]> {
  const a = await send(direct, s);
  const b = await send(viaSdk, s);
  const pair: [Answer, Answer] = [comparable(direct, a, write), comparable(viaSdk, b, write)];
  if (process.env.SVC_DIRECT_DIFF) {
    const [x, y] = pair;
    let i = 0;
    while (i < x.body.length && x.body[i] === y.body[i]) i++;
    if (i < x.body.length || i < y.body.length) console.log(`first difference at ${i}:\n  direct: ${x.body.slice(Math.max(0, i - 80), i + 120)}\n  sdk:    ${y.body.slice(Math.max(0, i - 80), i + 120)}`);
  }
  return pair;
}

describe('the direct lane answers a 2026-07-28 tools/call as the SDK does', () => {
  const reads: [string, () => Sent][] = [
    ['svc_whoami', () => ({ name: 'svc_whoami', args: {} })],
    ['svc_whoami with no arguments member', () => ({ name: 'svc_whoami' })],
    ['svc_get with its proof', () => ({ name: 'svc_get', args: { post_id: postId } })],
    ['svc_get of a post with words past Latin-1', () => ({ name: 'svc_get', args: { post_id: wideId } })],
    ['svc_get of a post with words past Latin-1, structured only', () => ({ name: 'svc_get', args: { post_id: wideId }, structuredOnly: true })],
    ['svc_get of no such post (a refusal)', () => ({ name: 'svc_get', args: { post_id: '00000000-0000-4000-8000-000000000000' } })],
    ['svc_get with arguments the schema refuses', () => ({ name: 'svc_get', args: { post_id: 'nope' } })],
    ['svc_read_space newest first', () => ({ name: 'svc_read_space', args: { space, order: 'desc' } })],
    ['svc_read_space, structured only', () => ({ name: 'svc_read_space', args: { space, order: 'desc' }, structuredOnly: true })],
    ['svc_read_space of no such SPACE', () => ({ name: 'svc_read_space', args: { space: 'no-such-space-here', order: 'desc' } })],
    ['svc_mailbox', () => ({ name: 'svc_mailbox', args: { after: '0' } })],
    ['svc_seek', () => ({ name: 'svc_seek', args: { q: 'merkle' } })],
    ['svc_seek, structured only', () => ({ name: 'svc_seek', args: { q: 'merkle' }, structuredOnly: true })],
    ['svc_guide part=tools', () => ({ name: 'svc_guide', args: { part: 'tools' } })],
    ['a string id', () => ({ name: 'svc_whoami', args: {}, id: 'call-7' })],
    ['an unknown tool', () => ({ name: 'svc_nope', args: {} })],
    ['a tool the toolset leaves out', () => ({ name: 'svc_oracle', args: { action: 'list' }, path: '/mcp?tools=posts' })],
    ['a tool the toolset keeps', () => ({ name: 'svc_get', args: { post_id: postId }, path: '/mcp?tools=posts' })],
    ['no token', () => ({ name: 'svc_whoami', args: {}, token: 'not-a-token' })],
    ['a Mcp-Name header that names another tool', () => ({ name: 'svc_whoami', args: {}, headers: { 'content-type': 'application/json', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call', 'mcp-name': 'svc_get' } })],
    ['no Mcp-Name header', () => ({ name: 'svc_whoami', args: {}, headers: { 'content-type': 'application/json', 'mcp-protocol-version': REVISION, 'mcp-method': 'tools/call' } })],
    ['2025-11-25: svc_whoami', () => ({ name: 'svc_whoami', args: {}, revision: '2025-11-25' })],
    ['2025-11-25: svc_get with its proof', () => ({ name: 'svc_get', args: { post_id: postId }, revision: '2025-11-25' })],
    ['2025-11-25: svc_get of a post with words past Latin-1', () => ({ name: 'svc_get', args: { post_id: wideId }, revision: '2025-11-25' })],
    ['2025-11-25: svc_get of no such post', () => ({ name: 'svc_get', args: { post_id: '00000000-0000-4000-8000-000000000000' }, revision: '2025-11-25' })],
    ['2025-11-25: arguments the schema refuses', () => ({ name: 'svc_get', args: { post_id: 'nope' }, revision: '2025-11-25' })],
    ['2025-11-25: svc_read_space', () => ({ name: 'svc_read_space', args: { space, order: 'desc' }, revision: '2025-11-25' })],
    ['2025-11-25: svc_mailbox', () => ({ name: 'svc_mailbox', args: { after: '0' }, revision: '2025-11-25' })],
    ['2025-11-25: svc_seek', () => ({ name: 'svc_seek', args: { q: 'merkle' }, revision: '2025-11-25' })],
    ['2025-11-25: a progress token', () => ({ name: 'svc_whoami', args: {}, revision: '2025-11-25', meta: { progressToken: 7 } })],
    ['2025-11-25: an unknown tool', () => ({ name: 'svc_nope', args: {}, revision: '2025-11-25' })],
    ['2025-11-25: a tool the toolset leaves out', () => ({ name: 'svc_oracle', args: { action: 'list' }, path: '/mcp?tools=posts', revision: '2025-11-25' })],
    ['2025-11-25: an Accept of JSON alone', () => ({ name: 'svc_whoami', args: {}, revision: '2025-11-25', headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': '2025-11-25' } })],
    ['2025-06-18: svc_whoami', () => ({ name: 'svc_whoami', args: {}, revision: '2025-06-18' })],
    ['2025-03-26 (not on the lane): svc_whoami', () => ({ name: 'svc_whoami', args: {}, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-03-26' } })],
  ];
  for (const [title, sent] of reads) {
    it(title, async () => {
      const [a, b] = await both(sent());
      expect(a).toEqual(b);
    });
  }

  for (const revision of [REVISION, '2025-11-25'] as const) {
    it(`svc_post at ${revision}: a post written through each, answered alike`, async () => {
      const [a, b] = await both({ name: 'svc_post', args: { space, kind: 'obs', title: 'written twice', body: 'once through each lane' }, revision }, true);
      expect(a.status).toBe(200);
      expect(a.body).toMatch(/"post_id":"UUID"/);
      expect(a).toEqual(b);
    });
  }

  it('at /mcp/connect, a read-only app token\'s write is HTTP 403 insufficient_scope both ways, nothing written', async () => {
    const { accessToken } = await appToken(direct, { scope: 'read', keyToken: owner.token });
    const before = await send(direct, { name: 'svc_read_space', args: { space, order: 'desc', limit: 1 }, path: '/mcp/connect', token: accessToken });
    const sent: Sent = { name: 'svc_post', args: { space, kind: 'obs', title: 'must not land' }, path: '/mcp/connect', token: accessToken };
    const [a, b] = await both(sent);
    expect(a.status).toBe(403);
    expect(a.headers['www-authenticate']).toMatch(/insufficient_scope/);
    expect(a).toEqual(b);
    const after = await send(direct, { name: 'svc_read_space', args: { space, order: 'desc', limit: 1 }, path: '/mcp/connect', token: accessToken });
    expect(comparable(direct, after)).toEqual(comparable(direct, before));
  });
});

describe('which requests the direct lane takes', () => {
  function taken(s: Sent, change: (m: { headers: Record<string, string>; body: Record<string, unknown> }) => void = () => {}): boolean {
    const m = message(s);
    change(m);
    return directCall({ method: 'POST', headers: m.headers } as unknown as FastifyRequest, m.body) !== undefined;
  }
  const whoami: Sent = { name: 'svc_whoami', args: {} };

  it('a plain 2026-07-28 tools/call, with or without arguments, any id', () => {
    expect(taken(whoami)).toBe(true);
    expect(taken({ name: 'svc_whoami' })).toBe(true);
    expect(taken({ ...whoami, id: 'call-7' })).toBe(true);
    expect(taken({ ...whoami, structuredOnly: true })).toBe(true);
  });

  it('not: headers missing or not matching the body, another media type, another revision', () => {
    expect(taken(whoami, (m) => delete m.headers['mcp-name'])).toBe(false);
    expect(taken(whoami, (m) => delete m.headers['mcp-method'])).toBe(false);
    expect(taken(whoami, (m) => delete m.headers['mcp-protocol-version'])).toBe(false);
    expect(taken(whoami, (m) => (m.headers['mcp-name'] = 'svc_get'))).toBe(false);
    expect(taken(whoami, (m) => (m.headers['mcp-name'] = '=?base64?c3ZjX3dob2FtaQ==?='))).toBe(false);
    expect(taken(whoami, (m) => (m.headers['content-type'] = 'text/plain'))).toBe(false);
    expect(taken(whoami, (m) => (m.headers['mcp-protocol-version'] = '2025-11-25'))).toBe(false);
  });

  it('a 2025-11-25 or 2025-06-18 tools/call, with a progress token or none', () => {
    expect(taken({ ...whoami, revision: '2025-11-25' })).toBe(true);
    expect(taken({ ...whoami, revision: '2025-06-18' })).toBe(true);
    expect(taken({ ...whoami, revision: '2025-11-25', meta: { progressToken: 'p' } })).toBe(true);
  });

  it('not at a 2025 revision: another _meta, a session, an Accept without event streams, no or an older revision header, an envelope', () => {
    const legacy: Sent = { ...whoami, revision: '2025-11-25' };
    expect(taken({ ...legacy, meta: { progressToken: 1, other: true } })).toBe(false);
    expect(taken(legacy, (m) => (m.headers['mcp-session-id'] = 'abc'))).toBe(false);
    expect(taken(legacy, (m) => (m.headers.accept = 'application/json'))).toBe(false);
    expect(taken(legacy, (m) => delete m.headers.accept)).toBe(false);
    expect(taken(legacy, (m) => delete m.headers['mcp-protocol-version'])).toBe(false);
    expect(taken(legacy, (m) => (m.headers['mcp-protocol-version'] = '2025-03-26'))).toBe(false);
    expect(taken(legacy, (m) => ((m.body.params as Record<string, unknown>)._meta = message(whoami).body.params && (message(whoami).body.params as Record<string, unknown>)._meta))).toBe(false);
  });

  it('not: a message of another shape (a batch, another method, extra members, a fractional id, arguments not an object, no envelope)', () => {
    expect(taken(whoami, (m) => (m.body.method = 'tools/list'))).toBe(false);
    expect(taken(whoami, (m) => (m.body.extra = true))).toBe(false);
    expect(taken(whoami, (m) => (m.body.id = 1.5))).toBe(false);
    expect(taken(whoami, (m) => (m.body.id = null))).toBe(false);
    expect(taken(whoami, (m) => ((m.body.params as Record<string, unknown>).arguments = []))).toBe(false);
    expect(taken(whoami, (m) => ((m.body.params as Record<string, unknown>).task = {}))).toBe(false);
    expect(taken(whoami, (m) => delete (m.body.params as Record<string, unknown>)._meta)).toBe(false);
    expect(taken(whoami, (m) => (((m.body.params as Record<string, unknown>)._meta as Record<string, unknown>).progressToken = 1))).toBe(false);
    expect(directCall({ method: 'POST', headers: message(whoami).headers } as unknown as FastifyRequest, [message(whoami).body])).toBeUndefined();
    expect(directCall({ method: 'GET', headers: message(whoami).headers } as unknown as FastifyRequest, message(whoami).body)).toBeUndefined();
  });

  // The lane remembers the SDK classifier's verdict per envelope, headers and id type
  // (direct.ts `classifiedAs`), on the ground that the classifier reads neither the arguments nor
  // the id's value: held to it here, with arguments shaped like the members it does read.
  it("the SDK's classifier judges a tools/call by its envelope and headers, not by its arguments or its id's value", () => {
    const odd = [
      {},
      { post_id: 'x' },
      { result: {}, error: { code: 1, message: 'm' }, jsonrpc: '1.0', method: 'initialize' },
      { _meta: { 'io.modelcontextprotocol/protocolVersion': '1999-01-01' }, progressToken: null },
      { deep: [[[{ a: [1, 'b', null, true] }]]], n: Number.MAX_SAFE_INTEGER },
    ];
    for (const revision of [REVISION, '2025-11-25'] as const) {
      const verdicts = new Set<string>();
      for (const args of odd) {
        for (const id of [1, 0, -7, Number.MAX_SAFE_INTEGER, 'a', '', 'x'.repeat(300)]) {
          const m = message({ ...whoami, args, id, revision });
          const h = m.headers;
          verdicts.add(JSON.stringify(classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: h['mcp-protocol-version'], mcpMethodHeader: h['mcp-method'], mcpNameHeader: h['mcp-name'], body: m.body }), (k, v) => (k === 'message' ? undefined : v)));
          expect(taken({ ...whoami, args, id, revision })).toBe(true);
        }
      }
      expect([...verdicts]).toHaveLength(1);
    }
  });

  it('an envelope the SDK refuses is not taken, after the same client sent a good one (and again after)', () => {
    const broken = (m: { body: Record<string, unknown> }) => {
      ((m.body.params as Record<string, unknown>)._meta as Record<string, unknown>)['io.modelcontextprotocol/clientInfo'] = { name: 'svc-direct-test' };
    };
    expect(taken(whoami)).toBe(true);
    expect(taken(whoami, broken)).toBe(false);
    expect(taken(whoami, broken)).toBe(false);
    expect(taken(whoami)).toBe(true);
    expect(taken({ ...whoami, id: 'z' }, broken)).toBe(false);
    // An envelope too large to remember is judged each time, the same way.
    const large = (m: { body: Record<string, unknown> }) => {
      ((m.body.params as Record<string, unknown>)._meta as Record<string, unknown>)['io.modelcontextprotocol/clientInfo'] = { name: 'x'.repeat(5000), version: '1' };
    };
    expect(taken(whoami, large)).toBe(true);
    const largeBroken = (m: { body: Record<string, unknown> }) => {
      ((m.body.params as Record<string, unknown>)._meta as Record<string, unknown>)['io.modelcontextprotocol/clientInfo'] = { name: 'x'.repeat(5000) };
    };
    expect(taken(whoami, largeBroken)).toBe(false);
    expect(taken(whoami, large)).toBe(true);
  });
});
