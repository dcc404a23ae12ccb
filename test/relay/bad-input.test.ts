/**
 * Bad input against every operation the relay serves, over real HTTP: the operations are read
 * from the index `GET /` answers with `Accept: application/json`, and each gets, one request per
 * (route, case):
 *
 * - a NUL byte (`%00`) in the path, and uppercase hex where a path takes a peer id;
 * - for writes: malformed JSON, a body of 300 KiB, an unknown member, and, for each field of a
 *   well-formed sample body, a value of the wrong type and uppercase hex where hex goes.
 *
 * Every answer is a 4xx envelope with a catalogue code and the X-Request-Id of the response
 * (never a 500, never a success; a wrong type is named in the detail, never as a missing field),
 * no answer carries another KEY's private post content, no table a write can touch moves, and
 * the relay still answers `GET /healthz` at the end. Passkey operations answer PASSKEYS_UNAVAILABLE
 * (501) on a relay with passkeys turned off: the one 5xx allowed.
 *
 * Input here is attacker-controlled by design; the world it is sent into (a SPACE with a member,
 * a post, a link, a waiting request and a hand-over offer, and a sealed SPACE) is built over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE, type ErrorCode } from '../../shared/errors.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { call, type Answer } from '../helpers/spaces.js';
import { stateProbe } from '../helpers/state.js';
import { buildWorld, pathOf as worldPath, sampleBody as worldSample, type Operation, type World } from '../helpers/fuzz/world.js';

let relay: RunningRelay;
let operations: Operation[];
let world: World;

beforeAll(async () => {
  relay = await startRelay();
  const index = await call(relay, 'GET', '/', { headers: { accept: 'application/json' } });
  operations = index.body.operations;
  world = await buildWorld(relay);
});
afterAll(async () => {
  await relay.close();
});

// ---- what each operation is sent ---------------------------------------------------------------

function pathOf(op: Operation, over: Partial<Record<string, string>> = {}): string {
  return worldPath(world, op, over);
}

function sampleBody(op: Operation): Record<string, unknown> | undefined {
  return worldSample(world, op);
}

/** A value no field accepts in place of `v`: an object for a scalar, a string for a list, a list for an object. */
function wrongType(v: unknown): unknown {
  if (Array.isArray(v)) return 'not a list';
  if (v !== null && typeof v === 'object') return ['not', 'an', 'object'];
  return { not: 'a scalar' };
}

const HEXISH = /^[0-9a-f]{32,}$/;

/** `v` with every hex text in it (values, list items, map keys) in uppercase; undefined if none. */
function upperHex(v: unknown): unknown {
  if (typeof v === 'string') return HEXISH.test(v) ? v.toUpperCase() : undefined;
  if (Array.isArray(v)) {
    const items = v.map(upperHex);
    return items.some((i) => i !== undefined) ? v.map((x, i) => items[i] ?? x) : undefined;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    if (!entries.some(([k]) => HEXISH.test(k))) return undefined;
    return Object.fromEntries(entries.map(([k, x]) => [HEXISH.test(k) ? k.toUpperCase() : k, x]));
  }
  return undefined;
}

interface Case {
  what: string;
  path: string;
  /** Raw body text sent as application/json (undefined: no body). */
  body?: string;
  /** The body field given a wrong type: the detail must name it, and not as missing. */
  wrongField?: string;
}

function casesFor(op: Operation): Case[] {
  const cases: Case[] = [];
  const base = pathOf(op);
  const sample = sampleBody(op);
  // Path cases carry the well-formed body, so only the path is wrong.
  const good = sample === undefined ? undefined : JSON.stringify(sample);
  // A NUL byte in the address: in a parameter when there is one, else at the end of the path.
  const withNul = op.path.includes('{') ? pathOf(op, { name: 'a%00b', peer: `${'a'.repeat(32)}%00`, id: 'x%00y', seq: '1%00', generation: '2%00' }) : `${base}%00`;
  cases.push({ what: 'a NUL byte in the path', path: withNul, body: good });
  if (op.path.includes('{peer}')) cases.push({ what: 'an uppercase peer id in the path', path: pathOf(op, { peer: world.writer.peerId.toUpperCase() }), body: good });
  if (op.method === 'GET') return cases;

  cases.push({ what: 'malformed JSON', path: base, body: '{"kind": "obs", ' });
  cases.push({ what: 'a body of 300 KiB', path: base, body: JSON.stringify({ x: 'a'.repeat(300 * 1024) }) });
  cases.push({ what: 'an unknown member', path: base, body: JSON.stringify({ ...sample, zz_unknown_member: 1 }) });
  for (const [field, value] of Object.entries(sample ?? {})) {
    cases.push({ what: `a wrong type for ${field}`, path: base, body: JSON.stringify({ ...sample, [field]: wrongType(value) }), wrongField: field });
    const upper = upperHex(value);
    if (upper !== undefined) cases.push({ what: `uppercase hex in ${field}`, path: base, body: JSON.stringify({ ...sample, [field]: upper }) });
  }
  return cases;
}

async function send(op: Operation, c: Case): Promise<Answer> {
  // The caller's buckets refill between requests: every answer is about the input alone.
  relay.clock.advance(2_100);
  const headers: Record<string, string> = { authorization: `Bearer ${world.owner.token}` };
  if (c.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${relay.url}${c.path}`, { method: op.method, headers, body: c.body });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** What is wrong with an answer to bad input; undefined when it is a proper refusal. */
/** OAuth's error codes register and token answer with (spec/3-errors.md, RFC 7591 §3.2.2, RFC 6749 §5.2). */
const OAUTH_ERRORS = new Set(['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri', 'unsupported_grant_type', 'invalid_grant', 'invalid_target', 'invalid_client']);

function problemWith(op: Operation, c: Case, r: Answer): string | undefined {
  const oauth = r.body as { error?: unknown; error_description?: unknown } | undefined;
  if ((op.name === 'oauth.register' || op.name === 'oauth.token') && typeof oauth?.error === 'string') {
    // spec/3-errors.md: these two refuse in OAuth's own shape, except for a limit ahead of them.
    if (!OAUTH_ERRORS.has(oauth.error)) return `unknown OAuth error ${oauth.error}`;
    if (typeof oauth.error_description !== 'string') return 'an OAuth error without error_description';
    if (r.status !== 400 && r.status !== 401) return `HTTP ${r.status} for OAuth error ${oauth.error}`;
    if (c.what.startsWith('a body of')) return `a body over the request limit answered in the OAuth form, not TOO_LARGE`;
    return undefined;
  }
  const e = (r.body as { error?: Record<string, unknown> } | undefined)?.error;
  if (!e) return `no envelope (HTTP ${r.status}): ${r.text.slice(0, 120)}`;
  const code = e.code as ErrorCode;
  if (!(code in CATALOGUE)) return `unknown code ${String(code)}`;
  // The caller's token must keep working: a case that revoked it would hide every later one.
  if (['TOKEN_MISSING', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED'].includes(code)) return `the caller's token failed: ${code}`;
  const passkeys = op.name.startsWith('passkeys.') && code === 'PASSKEYS_UNAVAILABLE';
  if (!passkeys && (r.status < 400 || r.status > 499)) return `HTTP ${r.status} ${code}`;
  if (r.status !== CATALOGUE[code].status && !(code === 'INVALID_REQUEST' && r.status === 404)) return `HTTP ${r.status} for ${code}`;
  if (e.request_id !== r.headers.get('x-request-id')) return 'request_id differs from X-Request-Id';
  if (r.text.includes(world.secret)) return "another KEY's private content in the answer";
  if (c.wrongField !== undefined) {
    const detail = typeof e.detail === 'string' ? e.detail : '';
    if (!detail.includes(c.wrongField)) return `the detail does not name ${c.wrongField}: ${detail}`;
    if (detail.includes(`${c.wrongField}: required`)) return `a wrong type reads as missing: ${detail}`;
  }
  return undefined;
}

describe('bad input to every operation', () => {
  it('the index lists the operations this relay serves, writes among them', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.filter((o) => o.method !== 'GET').length).toBeGreaterThan(30);
    for (const o of operations) expect(o.path.startsWith('/')).toBe(true);
  });

  it('is refused with a 4xx catalogue envelope, one request per operation and case, never a 500 or a success, writing nothing', async () => {
    const digest = await stateProbe(relay);
    const before = await digest();
    const problems: string[] = [];
    let sent = 0;
    for (const op of operations) {
      for (const c of casesFor(op)) {
        const r = await send(op, c);
        sent++;
        const p = problemWith(op, c, r);
        if (p) problems.push(`${op.name} ${op.method} ${op.path} — ${c.what}: ${p}`);
      }
    }
    expect(problems).toEqual([]);
    expect(sent).toBeGreaterThan(200);
    // No table a write can touch moved: nothing was lost or written by any of it.
    expect(await digest()).toBe(before);
  }, 120_000);

  it('leaves the relay up: GET /healthz answers ok afterwards', async () => {
    const r = await call(relay, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });
  });
});
