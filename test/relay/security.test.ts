/**
 * Security review of the relay (spec/1-concepts.md "Visibility rules", "Mailbox", "Join request",
 * "Tokens"): one KEY never reads another KEY's private content, and a refused or revoked caller
 * gets nothing more, including on paths that hold a request open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { call, createSpace, freshName, grant, rest } from '../helpers/invites.js';
import { admit, get, newSpace, post, signedPost } from '../helpers/posts.js';
import { toBase64url } from '../../shared/encoding.js';
import { JSON_DEPTH_MAX } from '../../relay/http/json-body.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let asker: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  [owner, admin, asker] = (await Promise.all([1, 2, 3].map(() => mintToken(relay.url)))) as [MintedToken, MintedToken, MintedToken];
});
afterAll(async () => {
  await relay.close();
});

async function mailbox(who: MintedToken): Promise<any[]> {
  const r = await call(relay, 'GET', '/v1/mailbox?limit=200', { token: who.token });
  expect(r.status).toBe(200);
  return r.body.items;
}

describe('join request messages in the mailbox', () => {
  it('show a removed admin the request envelope as unavailable, without the message', async () => {
    rest(relay);
    const name = freshName('sec');
    await createSpace(relay, owner.token, { name, join_policy: 'request' });
    expect((await grant(relay, owner, name, admin.peerId, 'admin')).status).toBeLessThan(300);
    const asked = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: asker.token, body: { message: 'secret-note-41' } });
    expect(asked.status).toBe(202);
    const before = (await mailbox(admin)).filter((e) => e.reason === 'request');
    expect(before.at(-1)?.request?.message).toBe('secret-note-41');

    const removed = await call(relay, 'DELETE', `/v1/spaces/${name}/members/${admin.peerId}`, { token: owner.token });
    expect(removed.status).toBe(200);
    const after = (await mailbox(admin)).filter((e) => e.reason === 'request');
    expect(after.at(-1)).toMatchObject({ mailbox_seq: before.at(-1).mailbox_seq, unavailable: true });
    expect(JSON.stringify(after)).not.toContain('secret-note-41');
  });
});

describe('long polls and the token that opened them', () => {
  it('answer TOKEN_REVOKED, not the new post, when the token is revoked while the read waits', async () => {
    const reader = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await admit(relay, space, reader, 'reader');
    const waiting = get(relay, `/v1/spaces/${space.name}/posts?wait=20&detail=full`, reader);
    await new Promise((r) => setTimeout(r, 100));
    expect((await call(relay, 'DELETE', '/v1/tokens/current', { token: reader.token })).status).toBeLessThan(300);
    await post(relay, owner, space, { kind: 'obs', body: 'written-after-revocation' });
    const r = await waiting;
    expect(r.text).not.toContain('written-after-revocation');
    expect(r.body?.error?.code).toBe('TOKEN_REVOKED');
  });

  it('answer KEY_BLOCKED, not the new mailbox row, when the KEY is blocked while its mailbox read waits', async () => {
    const reader = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await admit(relay, space, reader, 'reader');
    const head = await relay.store.mailbox.head(reader.peerId);
    const waiting = get(relay, `/v1/mailbox?after=${head}&wait=20&detail=full`, reader);
    await new Promise((r) => setTimeout(r, 100));
    await relay.store.db.prepare('UPDATE keys SET blocked_at = ? WHERE peer_id = ?').run(relay.clock.now(), reader.peerId);
    await post(relay, owner, space, { kind: 'obs', body: 'addressed-after-block', to: [reader.peerId] });
    const r = await waiting;
    expect(r.text).not.toContain('addressed-after-block');
    expect(r.body?.error?.code).toBe('KEY_BLOCKED');
  });
});

describe('deeply nested request bodies', () => {
  it('are refused as INVALID_REQUEST on every route, not answered INTERNAL', async () => {
    const space = await newSpace(relay, owner);
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    rest(relay);
    for (const [path, body] of [
      [`/v1/spaces/${space.name}/posts`, `{"kind":"obs","body":"x","data":{"x_a":${deep(10_000)}}}`],
      ['/v1/spaces', `{"name":"deep-one","title":${deep(100_000)}}`],
      ['/v1/keys/challenge', deep(120_000)],
    ] as const) {
      const r = await fetch(`${relay.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body,
      });
      const answer = (await r.json()) as { error: { code: string; detail: string } };
      expect({ path, status: r.status, code: answer.error.code }).toEqual({ path, status: 400, code: 'INVALID_REQUEST' });
      expect(answer.error.detail).toMatch(/^body: .*nest/);
    }
    expect((await call(relay, 'GET', '/healthz')).status).toBe(200);
  });

  it('are still read when they nest as deep as the limit allows', async () => {
    const space = await newSpace(relay, owner);
    const data = { x_a: JSON.parse(`${'['.repeat(JSON_DEPTH_MAX - 2)}1${']'.repeat(JSON_DEPTH_MAX - 2)}`) };
    const landed = await post(relay, owner, space, { kind: 'obs', body: 'deep enough', data });
    const r = await get(relay, `/v1/posts/${landed.post_id}`, owner);
    expect(r.body.data).toEqual(data);
  });
});

describe('deeply nested canonical bytes inside a signed post', () => {
  // The body itself nests shallowly: the depth hides in base64url, past the body reader's check,
  // and reaches the strict canonical reader, whose checks recurse.
  it('are refused as INVALID_REQUEST, not answered INTERNAL, and nothing is written', async () => {
    const space = await newSpace(relay, owner);
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    const before = (await get(relay, `/v1/spaces/${space.name}/posts`, owner)).body.head_seq;
    for (const [part, n] of [['private', 5_000], ['private', 16_000], ['canonical', 30_000]] as const) {
      const { submission } = signedPost(owner, space, { kind: 'obs', body: 'x' }, { data: { x_n: 1 } });
      const body = { ...submission, [part]: toBase64url(new TextEncoder().encode(`{"data":{"x_a":${deep(n)}}}`)) };
      relay.clock.advance(2_100);
      const r = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: owner.token, body });
      expect({ part, n, status: r.status, code: r.body.error?.code }).toEqual({ part, n, status: 400, code: 'INVALID_REQUEST' });
      expect(r.body.error.detail).toMatch(/nest more than/);
    }
    expect((await get(relay, `/v1/spaces/${space.name}/posts`, owner)).body.head_seq).toBe(before);
    expect((await call(relay, 'GET', '/healthz')).status).toBe(200);
  });
});

describe('SEEK queries written as FTS5 syntax', () => {
  it('are words to search for: never a server error, never a hit outside public and own SPACES', async () => {
    const stranger = await mintToken(relay.url);
    const closed = await newSpace(relay, owner);
    await post(relay, owner, closed, { kind: 'obs', title: 'zebra notes', body: 'zebra quokka private words' });
    for (const q of ['zebra*', '"zebra', 'zebra NEAR quokka', 'NEAR(zebra quokka, 2)', 'terms:zebra', '{terms}: zebra', '^zebra', 'zebra OR _s1', '_s* zebra', 'zebra -quokka', 'NOT zebra', '(zebra', 'zebra AND', '\\ zebra \'', 'x'.repeat(300)]) {
      const r = await get(relay, `/v1/seek?q=${encodeURIComponent(q)}&detail=full`, stranger);
      expect({ q, status: r.status < 500 }).toEqual({ q, status: true });
      if (r.status === 200) expect(r.text).not.toContain('quokka');
      const mine = await get(relay, `/v1/seek?q=${encodeURIComponent(q)}`, owner);
      expect({ q, status: mine.status < 500 }).toEqual({ q, status: true });
    }
    // The owner finds it; the stranger, scoped to the SPACE, is refused.
    expect((await get(relay, '/v1/seek?q=zebra%20quokka', owner)).body.items.map((i: any) => i.space)).toContain(closed.name);
    expect((await get(relay, `/v1/seek?q=zebra&space=${closed.name}`, stranger)).body.error.code).toBe('READ_DENIED');
  });
});
