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
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE, type ErrorCode } from '../shared/errors.js';
import { toHex } from '../shared/encoding.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './helpers/relay.js';
import { call, createSpace, freshName, type Answer } from './helpers/spaces.js';
import { grant, makeLink } from './helpers/invites.js';
import { stateProbe } from './helpers/state.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  encryptionKeyBody,
  keeperListBody,
  lockFor,
  nextGeneration,
  publishKey,
  sealedKey,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from './helpers/sealed.js';

interface Operation {
  name: string;
  method: string;
  path: string;
  auth: string;
}

interface World {
  owner: SealedKey;
  writer: MintedToken;
  space: string;
  sealed: SealedSpace;
  postId: string;
  inviteId: string;
  inviteCode: string;
  requestId: string;
  offerId: string;
  tokenId: string;
}

let relay: RunningRelay;
let operations: Operation[];
let world: World;
/** Private post content of another KEY: no answer to the caller may ever carry it. */
const SECRET = `secret-${toHex(randomBytes(12))}`;

beforeAll(async () => {
  relay = await startRelay();
  const index = await call(relay, 'GET', '/', { headers: { accept: 'application/json' } });
  operations = index.body.operations;

  const owner = await sealedKey(relay);
  expect((await publishKey(relay, owner)).status).toBe(200);
  const writer = await mintToken(relay.url);
  const asker = await mintToken(relay.url);
  const space = freshName('fuzz');
  await createSpace(relay, owner.token, { name: space, join_policy: 'request' });
  await grant(relay, owner, space, writer.peerId, 'writer');
  const post = await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: owner.token, body: { kind: 'obs', body: 'a post' } });
  const link = await makeLink(relay, owner, space, { role: 'reader' });
  const ask = await call(relay, 'POST', `/v1/spaces/${space}/join`, { token: asker.token, body: { message: 'hello' } });
  const offer = await call(relay, 'POST', `/v1/spaces/${space}/hand-over`, { token: writer.token, body: { to: owner.peerId } });
  const sealed = await createSealedSpace(relay, owner);
  nextGeneration(sealed);
  const tokens = await call(relay, 'GET', '/v1/tokens', { token: owner.token });
  world = {
    owner,
    writer,
    space,
    sealed,
    postId: post.body.post_id,
    inviteId: link.invite_id,
    inviteCode: link.code,
    requestId: ask.body.request_id,
    offerId: offer.body.offer_id,
    tokenId: tokens.body.items[0].id,
  };
  // Another KEY's private SPACE and a post whose private part carries the secret.
  const other = await mintToken(relay.url);
  const hidden = freshName('other');
  await createSpace(relay, other.token, { name: hidden });
  const secretPost = await call(relay, 'POST', `/v1/spaces/${hidden}/posts`, {
    token: other.token,
    body: { kind: 'obs', body: SECRET, data: { x_secret: SECRET } },
  });
  expect(secretPost.status).toBe(201);
});
afterAll(async () => {
  await relay.close();
});

// ---- what each operation is sent ---------------------------------------------------------------

/** The address of an operation with its parameters filled from the world. */
function pathOf(op: Operation, over: Partial<Record<string, string>> = {}): string {
  const w = world;
  const ids: Record<string, string> = {
    'tokens.revoke_one': w.tokenId,
    'posts.hide': w.postId,
    'posts.unhide': w.postId,
    'posts.get': w.postId,
    'invites.revoke': w.inviteId,
    'invites.remove': w.inviteId,
    'requests.approve': w.requestId,
    'requests.decline': w.requestId,
    'requests.withdraw': w.requestId,
    'hand_over.accept': w.offerId,
    'hand_over.decline': w.offerId,
    'categories.get': 'general',
  };
  const values: Record<string, string> = {
    name: op.path.includes('/sealed') ? w.sealed.name : w.space,
    peer: w.writer.peerId,
    id: ids[op.name] ?? randomUUID(),
    seq: '1',
    generation: '2',
    ...over,
  };
  return op.path.replace(/\{([a-z_]+)\}/g, (_m, p: string) => values[p]!);
}

/** A well-formed body for each operation that reads one (the fields its schema knows). */
function sampleBody(op: Operation): Record<string, unknown> | undefined {
  const w = world;
  const hex32 = toHex(randomBytes(32));
  const s = w.sealed;
  switch (op.name) {
    case 'keys.challenge':
      return { public_key: hex32 };
    case 'keys.verify':
      return { public_key: hex32, challenge: toHex(randomBytes(56)), signature: toHex(randomBytes(64)), label: 'fuzz', ttl_seconds: 3600, invite: w.inviteCode };
    case 'me.encryption_key':
      return encryptionKeyBody(w.owner);
    case 'spaces.create':
      return {
        name: freshName('fz'),
        title: 'T',
        description: 'D',
        categories: ['general'],
        join_policy: 'request',
        visibility: 'private',
        oracle: false,
        signed_only: false,
        task_confirmations: 1,
        task_confirmers: 'members',
        task_claim_hours: 4,
      };
    case 'spaces.update':
      return { title: 'T', description: 'D', join_policy: 'request', signed_only: false, task_confirmations: 1, task_confirmers: 'members', task_claim_hours: 4 };
    case 'members.set':
      return { role: 'reader', tags: ['x'] };
    case 'posts.append':
      return {
        kind: 'obs',
        title: 't',
        body: 'b',
        to: [w.writer.peerId],
        reply_to: w.postId,
        fingerprints: [{ scheme: 'git.commit', value: 'deadbeef' }],
        idempotency_key: `k-${randomUUID()}`,
        data: { x_note: 'n' },
        run_id: randomUUID(),
      };
    case 'invites.create':
      return { role: 'reader', tags: ['x'], max_uses: 3, expires_in_seconds: 3600, label: 'l' };
    case 'invites.look':
      return { link: w.inviteCode };
    case 'join':
      return { code: w.inviteCode, message: 'm' };
    case 'join.link':
      return { code: w.inviteCode, name: w.space };
    case 'requests.approve':
      return { role: 'reader', tags: ['x'] };
    case 'hand_over.create':
      return { to: w.owner.peerId, label: 'l', expires_in_seconds: 3600 };
    case 'sealed.keepers':
      return keeperListBody(s, w.owner, { revision: 1 });
    case 'sealed.stamp':
      return stampBody(w.owner, w.owner.peerId);
    case 'sealed.locks':
      return { generation: 1, commitment: commitmentOfGeneration(s, 1), locks: { [w.owner.peerId]: lockFor(s, 1, w.owner, w.owner) } };
    case 'sealed.stage':
      return { generation: 3, commitment: hex32, back: toHex(randomBytes(48)) };
    default:
      return undefined;
  }
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
  if (r.text.includes(SECRET)) return "another KEY's private content in the answer";
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
    const digest = stateProbe(relay);
    const before = digest();
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
    expect(digest()).toBe(before);
  }, 120_000);

  it('leaves the relay up: GET /healthz answers ok afterwards', async () => {
    const r = await call(relay, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });
  });
});
