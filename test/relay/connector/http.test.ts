/**
 * The connector's HTTP face (spec/1-concepts.md "Connector", "App sign-in"): `/mcp/connect`
 * answers 401 naming the protected-resource metadata to anything but a live app token, and both
 * addresses answer misuse of HTTP with a proper HTTP or JSON-RPC error, never a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_MAX_BYTES } from '../../../shared/limits.js';
import { connectConnector } from '../../helpers/connector.js';
import { call, mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function rawPost(path: string, body: string, headers: Record<string, string> = MCP_HEADERS) {
  const res = await fetch(`${relay.url}${path}`, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('/mcp/connect takes app tokens only', () => {
  it('without a token: 401 with WWW-Authenticate naming the protected-resource metadata, and the envelope', async () => {
    const r = await rawPost('/mcp/connect', JSON.stringify(INIT));
    expect(r.status).toBe(401);
    expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${relay.url}/.well-known/oauth-protected-resource/mcp/connect"`);
    expect(JSON.parse(r.text).error.code).toBe('TOKEN_MISSING');
  });

  it('with a KEY\'s own token, or a token not known here: 401 with error="invalid_token"', async () => {
    const t = await mintToken(relay.url);
    for (const token of [t.token, `svc_${'0'.repeat(64)}`]) {
      const r = await rawPost('/mcp/connect', JSON.stringify(INIT), { ...MCP_HEADERS, authorization: `Bearer ${token}` });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${relay.url}/.well-known/oauth-protected-resource/mcp/connect", error="invalid_token"`);
      expect(JSON.parse(r.text).error.code).toBe('TOKEN_INVALID');
    }
  });

  it('the SDK client sees the 401 at connect, and the same KEY token works at /mcp', async () => {
    const t = await mintToken(relay.url);
    await expect(connectConnector(relay.url, { token: t.token, path: '/mcp/connect' })).rejects.toThrow();
    const c = await connectConnector(relay.url, { token: t.token });
    await c.close();
  });
});

describe('HTTP misuse of /mcp is answered, never a crash', () => {
  it('a token problem at /mcp is never a 401: initialize with a bad token succeeds', async () => {
    const r = await rawPost('/mcp', JSON.stringify(INIT), { ...MCP_HEADERS, authorization: 'Bearer nonsense' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"serverInfo"');
  });

  it('GET and DELETE (2025-11-25 session operations of a stateless server) answer 405', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${relay.url}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status, method).toBe(405);
      await res.text();
    }
  });

  it('malformed JSON answers the JSON-RPC parse error', async () => {
    const r = await rawPost('/mcp', '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
  });

  it('a body that is not JSON-RPC answers a JSON-RPC error', async () => {
    const r = await rawPost('/mcp', JSON.stringify({ hello: 'world' }));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(JSON.parse(r.text).error).toBeDefined();
  });

  it('another media type answers 415', async () => {
    const r = await rawPost('/mcp', JSON.stringify(INIT), { 'content-type': 'text/plain', accept: MCP_HEADERS.accept });
    expect(r.status).toBe(415);
  });

  it('a body over the request limit answers 413 TOO_LARGE with the envelope', async () => {
    const big = JSON.stringify({ ...INIT, params: { ...INIT.params, pad: 'x'.repeat(REQUEST_MAX_BYTES) } });
    const r = await rawPost('/mcp', big);
    expect(r.status).toBe(413);
    expect(JSON.parse(r.text).error.code).toBe('TOO_LARGE');
  });

  it('after all of that the relay still serves', async () => {
    expect((await call(relay, 'GET', '/v1/capabilities')).status).toBe(200);
    const c = await connectConnector(relay.url);
    expect((await c.client.listTools()).tools.length).toBeGreaterThan(10);
    await c.close();
  });
});
