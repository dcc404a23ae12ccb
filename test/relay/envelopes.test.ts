/**
 * Every refusal of the relay's own routes carries the catalogue's envelope and status
 * (spec/3-errors.md "Envelope"; api-notes §1), also those decided before any route runs: by
 * Fastify's router (percent-encoding that does not decode, a path segment over the parameter
 * length), by the query parser (the same in the query), by Node's HTTP parser (headers or
 * address too large, malformed HTTP), and for an unknown path. Sent over a real socket as raw bytes, so no client rewrites the address and
 * the parser's own answers are the ones read.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQuery } from '../../relay/http/query.js';
import { CATALOGUE } from '../../shared/errors.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
let port: number;

beforeAll(async () => {
  relay = await startRelay();
  port = Number(new URL(relay.url).port);
});
afterAll(async () => {
  await relay.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** Write `head` (request line and headers, CRLF-separated, no blank line), then `body`, and read the whole answer. */
function raw(head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const lines = all.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      const text = all.slice(split + 4);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body, text });
    });
    socket.write(`${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n${body}`);
  });
}

const get = (path: string, extra = ''): Promise<RawAnswer> => raw(`GET ${path} HTTP/1.1${extra}`);

/** The answer is the catalogue's envelope for `code`, at the catalogue's status unless `status` says otherwise. */
function expectEnvelope(a: RawAnswer, code: keyof typeof CATALOGUE, status: number = CATALOGUE[code].status): void {
  expect(a.status, a.text).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const e = a.body?.error;
  expect(e, a.text).toBeDefined();
  expect(Object.keys(e).sort()).toEqual(expect.arrayContaining(['code', 'message', 'fix', 'doc', 'request_id']));
  expect(e.code).toBe(code);
  expect(e.message.startsWith(`${code}. `)).toBe(true);
  expect(e.fix).toBe(CATALOGUE[code].fix);
  expect(e.request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  expect(a.headers['x-request-id']).toBe(e.request_id);
  expect(JSON.stringify(a.body)).not.toMatch(/FST_ERR|statusCode/);
}

describe('refusals decided before any route runs', () => {
  for (const path of ['/v1/spaces/%ZZ/posts', '/v1/spaces/%C0%AE/posts', '/v1/spaces/%ED%A0%80/posts', '/v1/posts/%E0%80']) {
    it(`answers INVALID_REQUEST 400 with the envelope for percent-encoding that does not decode: ${path}`, async () => {
      const a = await get(path);
      expectEnvelope(a, 'INVALID_REQUEST');
      expect(a.body.error.detail).toMatch(/^address: percent-encoding/);
      expect(a.headers['cache-control']).toBe('no-store');
    });
  }

  for (const path of ['/v1/seek?q=%ZZ', '/v1/spaces/x/posts?after=%C0%AE', '/v1/seek?q=%ED%A0%80', '/v1/capabilities?x=100%', '/v1/me?%E0%80=1', '/v1/seek?q=ok&kind=obs&kind=%FF']) {
    it(`answers INVALID_REQUEST 400 with the envelope for a query that does not decode as UTF-8 percent-encoding: ${path}`, async () => {
      const a = await get(path);
      expectEnvelope(a, 'INVALID_REQUEST');
      expect(a.body.error.detail).toBe('query: percent-encoding that does not decode to UTF-8');
      expect(a.headers['cache-control']).toBe('no-store');
    });
  }

  it('refuses such a query before reading the token or the body, on writes too', async () => {
    // Without a token, the address is refused first (not TOKEN_MISSING).
    const a = await raw('POST /v1/spaces/x/posts?receipt=%ZZ HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2', '{}');
    expectEnvelope(a, 'INVALID_REQUEST');
    expect(a.body.error.detail).toBe('query: percent-encoding that does not decode to UTF-8');
    const head = await raw('HEAD /v1/capabilities?x=%ZZ HTTP/1.1');
    expect(head.status).toBe(400);
    expect(head.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reads a query that decodes as before: + and %20 are spaces, a repeated key is a list', async () => {
    expect({ ...parseQuery('q=zebra+quokka%20x&kind=obs&kind=result&flag&=v&&a=b=c&%C3%A9=%E2%9C%93') }).toEqual({
      q: 'zebra quokka x',
      kind: ['obs', 'result'],
      flag: '',
      '': 'v',
      a: 'b=c',
      é: '✓',
    });
    const proto = parseQuery('__proto__=x&constructor=y');
    expect(Object.getPrototypeOf(proto)).toBeNull();
    expect(Object.entries(proto)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    const ok = await get('/v1/seek?q=zebra+quokka&kind=obs&kind=result');
    expect(ok.status, ok.text).toBe(200);
  });

  it('answers the same for a write to such an address', async () => {
    const a = await raw('POST /v1/spaces/%ZZ/posts HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2', '{}');
    expectEnvelope(a, 'INVALID_REQUEST');
  });

  it('answers INVALID_REQUEST 400, not 414, for a path segment over 1,000 characters; 1,000 reach the route', async () => {
    const long = await get(`/v1/spaces/${'a'.repeat(1001)}/posts`);
    expectEnvelope(long, 'INVALID_REQUEST');
    expect(long.body.error.detail).toBe('address: a path segment over 1000 characters');
    // 1,000 characters reach the route, whose own rule refuses a name that long.
    const edge = await get(`/v1/spaces/${'a'.repeat(1000)}`);
    expect(edge.body.error.code).toMatch(/^[A-Z_]+$/);
    expect(edge.body.error.detail).not.toMatch(/^address:/);
  });

  it('answers TOO_LARGE 413, not 431, for a query, an address or a header past the parser’s limit', async () => {
    for (const a of [
      await get(`/v1/spaces/x/posts?after=${'1'.repeat(20_000)}`),
      await get(`/v1/${'b'.repeat(20_000)}`),
      await get('/v1/capabilities', `\r\nX-Filler: ${'c'.repeat(20_000)}`),
    ]) {
      expectEnvelope(a, 'TOO_LARGE');
      expect(a.body.error.detail).toMatch(/^headers: /);
    }
  });

  it('answers INVALID_REQUEST 400 for malformed HTTP', async () => {
    expectEnvelope(await raw('GET /v1/capabilities HTTP/1.1\r\nBad Header Line'), 'INVALID_REQUEST');
  });

  it('answers an unknown path, inside /v1 or not, with 404 and the INVALID_REQUEST envelope naming no operation', async () => {
    for (const path of ['/nothing', '/v1/nothing', '/v1/spaces/x/nothing/else']) {
      const a = await get(path);
      expectEnvelope(a, 'INVALID_REQUEST', 404);
      expect(a.body.error.message).toBe('INVALID_REQUEST. There is no operation at that path.');
    }
  });
});
