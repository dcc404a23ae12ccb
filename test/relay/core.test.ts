/**
 * The relay's HTTP envelope over the real server: request ids, refusal envelopes for bad
 * addresses and bodies, headers, and that the process keeps serving after each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, mintToken, startRelay, type RunningRelay } from '../helpers/relay.js';
import { connect } from 'node:net';
import fc from 'fast-check';
import { findDuplicateMember, nestingDepth } from '../../relay/http/json-body.js';

/** Send raw bytes over TCP and read everything until the server closes. */
function rawHttp(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function rawPost(path: string, body: string, contentType = 'application/json') {
  const res = await fetch(`${relay.url}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}

function expectEnvelope(body: any, code: string, requestId: string | null) {
  expect(body.error.code).toBe(code);
  expect(body.error.message.startsWith(`${code}. `)).toBe(true);
  expect(typeof body.error.fix).toBe('string');
  expect(body.error.request_id).toBe(requestId);
}

describe('every answer carries a request id', () => {
  it('a healthy GET /healthz answers ok with an X-Request-Id uuid', async () => {
    const r = await getJson(`${relay.url}/healthz`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });
    expect(r.headers.get('x-request-id')).toMatch(UUID_RE);
  });

  it('two requests get two different ids', async () => {
    const a = await getJson(`${relay.url}/healthz`);
    const b = await getJson(`${relay.url}/healthz`);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });

  it('a refusal names the same id in the header and the envelope', async () => {
    const r = await getJson(`${relay.url}/v1/me`);
    expect(r.status).toBe(401);
    expectEnvelope(r.body, 'TOKEN_MISSING', r.headers.get('x-request-id'));
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    expect(r.headers.get('cache-control')).toBe('no-store');
  });
});

describe('refusals of malformed requests', () => {
  it('an unknown path is 404 INVALID_REQUEST saying there is no operation there', async () => {
    const r = await getJson(`${relay.url}/v1/no-such-thing`);
    expect(r.status).toBe(404);
    expectEnvelope(r.body, 'INVALID_REQUEST', r.headers.get('x-request-id'));
    expect(r.body.error.message).toBe('INVALID_REQUEST. There is no operation at that path.');
    expect(r.body.error.doc).toBe('/reference#operations');
  });

  it('malformed JSON is INVALID_REQUEST naming the body', async () => {
    const r = await rawPost('/v1/keys/challenge', '{"public_key": ');
    expect(r.status).toBe(400);
    expectEnvelope(r.body, 'INVALID_REQUEST', r.headers.get('x-request-id'));
    expect(r.body.error.detail).toMatch(/^body/);
  });

  it('a body over 256 KiB is 413 TOO_LARGE', async () => {
    const big = JSON.stringify({ public_key: 'a'.repeat(300 * 1024) });
    const r = await rawPost('/v1/keys/challenge', big);
    expect(r.status).toBe(413);
    expectEnvelope(r.body, 'TOO_LARGE', r.headers.get('x-request-id'));
  });

  it('a NUL byte in the address is INVALID_REQUEST', async () => {
    const r = await getJson(`${relay.url}/v1/peers/ab%00cd`);
    expect(r.status).toBe(400);
    expectEnvelope(r.body, 'INVALID_REQUEST', r.headers.get('x-request-id'));
    expect(r.body.error.detail).toMatch(/NUL/);
  });

  it('a NUL byte in the query is INVALID_REQUEST too', async () => {
    const r = await getJson(`${relay.url}/healthz?x=%00`);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
  });

  it('uppercase hex is refused with a detail naming the field', async () => {
    const r = await rawPost('/v1/keys/challenge', JSON.stringify({ public_key: 'AB'.repeat(32) }));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    expect(r.body.error.detail).toMatch(/^public_key: /);
  });

  it('U+0000 inside a JSON string is INVALID_REQUEST', async () => {
    const r = await rawPost('/v1/keys/verify', '{"public_key":"a\\u0000b"}');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    expect(r.body.error.detail).toMatch(/U\+0000/);
  });

  it('a lone surrogate in a JSON string is INVALID_REQUEST', async () => {
    const r = await rawPost('/v1/keys/verify', '{"label":"\\ud800"}');
    expect(r.status).toBe(400);
    expect(r.body.error.detail).toMatch(/surrogate/);
  });

  it('an integer beyond 2^53 - 1 is INVALID_REQUEST', async () => {
    const r = await rawPost('/v1/keys/verify', '{"ttl_seconds":9007199254740993}');
    expect(r.status).toBe(400);
    expect(r.body.error.detail).toMatch(/2\^53/);
  });

  it('a member name repeated in one object is refused rather than silently resolved', async () => {
    const r = await rawPost('/v1/keys/challenge', `{"public_key":"${'a'.repeat(64)}","public_key":"${'b'.repeat(64)}"}`);
    expect(r.status).toBe(400);
    expect(r.body.error.detail).toMatch(/appears twice/);
  });

  it('an unknown body member is refused by name', async () => {
    const r = await rawPost('/v1/keys/challenge', JSON.stringify({ public_key: 'a'.repeat(64), extra: 1 }));
    expect(r.status).toBe(400);
    expect(r.body.error.detail).toMatch(/"extra"/);
  });

  it('a body that is not JSON by media type is INVALID_REQUEST', async () => {
    const r = await rawPost('/v1/keys/challenge', 'public_key=aa', 'text/plain');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
  });

  it('a request the HTTP parser refuses still gets the envelope and a request id', async () => {
    const answer = await rawHttp(relay.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const id = /x-request-id: (\S+)/.exec(answer)![1];
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    expect(body.error.code).toBe('INVALID_REQUEST');
    expect(body.error.request_id).toBe(id);
  });

  it('the server keeps answering after all of the above', async () => {
    const r = await getJson(`${relay.url}/healthz`);
    expect(r.status).toBe(200);
  });
});

describe('cache headers on /v1', () => {
  it('an anonymous 200 GET under /v1 is publicly cacheable with an ETag', async () => {
    const r = await getJson(`${relay.url}/v1/recovery`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=60');
    expect(r.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('an authenticated GET under /v1 is no-store', async () => {
    const t = await mintToken(relay.url);
    const r = await getJson(`${relay.url}/v1/me`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('vary')).toBe('Accept, Authorization');
    expect(r.headers.get('x-robots-tag')).toBe('noindex');
  });
});

describe('duplicate member detection', () => {
  it('finds a repeat only within the same object', () => {
    expect(findDuplicateMember('{"a":1,"b":{"a":2}}')).toBeUndefined();
    expect(findDuplicateMember('[{"a":1},{"a":2}]')).toBeUndefined();
    expect(findDuplicateMember('{"a":1,"b":[1,{"c":"a"}],"a":3}')).toBe('a');
  });

  it('compares decoded names, so an escaped spelling is the same member', () => {
    expect(findDuplicateMember('{"a":1,"\\u0061":2}')).toBe('a');
  });

  it('ignores braces and quotes inside strings', () => {
    expect(findDuplicateMember('{"x":"{\\"x\\":1}","y":"\\\\"}')).toBeUndefined();
  });

  it('agrees with a plain reading of any JSON text, escapes and backslash runs included', () => {
    // JSON.stringify never repeats a member; putting the outer object's first member again at
    // its end makes that the one repeat. Names and strings are full of quotes, backslashes and
    // brackets, so a scanner that misreads where a string ends finds the wrong answer.
    const tricky = fc.string({ unit: fc.constantFrom('a', '"', '\\', '{', '}', '[', ']', ',', ':', 'é', '\n') });
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.integer(), tricky, fc.array(tie('node'), { maxLength: 4 }), tie('object')),
      object: fc.dictionary(tricky, tie('node'), { maxKeys: 4 }),
    })).node;
    fc.assert(
      fc.property(value, fc.boolean(), (v, repeat) => {
        let text = JSON.stringify(v);
        let expected: string | undefined;
        const keys = v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.keys(v) : [];
        if (repeat && keys.length > 0) {
          // Put the first member again at the end of the outer object.
          const first = keys[0]!;
          text = `${text.slice(0, -1)},${JSON.stringify(first)}:0}`;
          expected = first;
        }
        expect(findDuplicateMember(text)).toBe(expected);
      }),
      { numRuns: 1_000 },
    );
  });

  it('measures nesting depth with brackets inside strings ignored', () => {
    expect(nestingDepth('{"a":"[[[[","b":[[1]]}')).toBe(3);
    expect(nestingDepth('"[[["')).toBe(0);
    expect(nestingDepth('[' + '"\\\\",'.repeat(3) + '[[]]]')).toBe(3);
  });
});
