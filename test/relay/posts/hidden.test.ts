/**
 * A hidden post shows none of its words on any read path (spec/1-concepts.md "Unavailable
 * marker": content and recipients null, fingerprints suppressed; objects.md §13): not to
 * members, not in the proof block. Every content member is blank (title, body, snippet, to,
 * fingerprints, data, budget, run_id, sealed parts), and the proof keeps object_id and the
 * chain link with no object bytes, private part or signature, so it still verifies as a chain
 * position. Read paths: posts.read (ids, snippets, full with proof), posts.batch, posts.get,
 * posts.proof, the ndjson export, markdown renderings, the mailbox. Real relay over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPostChain } from '../../../shared/chain.js';
import { fromHex } from '../../../shared/encoding.js';
import { verifyObjectSignature } from '../../../shared/objects.js';
import { admit, call, get, newSpace, signedPost } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../../helpers/sealed.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let reader: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  reader = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** Every content member an unavailable post must not show. */
const WORDS = ['secret-title-7f3a', 'secret-body-7f3a', 'secret-fingerprint-7f3a', 'secret-data-7f3a', '2026-01-31T12:00:00Z'] as const;

interface Hidden {
  space: Awaited<ReturnType<typeof newSpace>>;
  postId: string;
  chainHash: string;
  objectId: string;
  /** What must appear nowhere while the post is hidden: its words, run id, signature, object and private bytes. */
  secrets: string[];
}

/** A signed post by `writer` with every content field, addressed to `reader`, then hidden by the owner. */
async function hiddenPost(opts: { visibility?: 'public' } = {}): Promise<Hidden> {
  const space = await newSpace(relay, owner, opts.visibility ? { visibility: 'public', joinPolicy: 'open', categories: ['general'] } : {});
  await admit(relay, space, writer, 'writer');
  await admit(relay, space, reader, 'reader');
  const runId = randomUUID();
  const s = signedPost(
    writer,
    space,
    { kind: 'handoff', title: WORDS[0], body: WORDS[1], to: [reader.peerId], fingerprints: [{ scheme: 'git.commit', value: WORDS[2] }] },
    { data: { x_note: WORDS[3] }, budget: { observed_at: WORDS[4], compute: { remaining: '3', unit: 'h', estimated: true } }, run_id: runId },
  );
  relay.clock.advance(2_100);
  const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: s.submission });
  expect(sent.status, sent.text).toBe(201);
  const hide = await call(relay, 'PUT', `/v1/posts/${sent.body.post_id}/hidden`, { token: owner.token });
  expect(hide.status, hide.text).toBe(200);
  const sub = s.submission as unknown as Record<string, string>;
  return {
    space,
    postId: sent.body.post_id,
    chainHash: sent.body.chain_hash,
    objectId: sent.body.object_id,
    secrets: [...WORDS, runId, sub.signature!, sub.canonical!, sub.private!, reader.peerId],
  };
}

/** `text` (a whole answer) holds none of the hidden post's secrets. */
function expectNoSecrets(text: string, h: Hidden): void {
  for (const s of h.secrets) expect(text.includes(s), `leaked ${s.slice(0, 40)}`).toBe(false);
}

/** One rendered hidden post at `detail`, read by a member (`inside`) or not. */
function expectBlank(item: any, h: Hidden, detail: 'ids' | 'snippets' | 'full', inside: boolean, proof: boolean): void {
  expect(item.post_id).toBe(h.postId);
  expect(item.unavailable).toMatchObject({ state: 'hidden', reason: null });
  expect(typeof item.unavailable.since).toBe('string');
  expect(item).toMatchObject({ seq: '1', kind: 'handoff', author: writer.peerId });
  if (detail === 'ids') return;
  expect(item).toMatchObject({ title: null, to: null, fingerprints: [], fingerprint_count: 0, signed: true });
  for (const gone of ['budget', 'data', 'sealed', 'summary', 'attachments']) expect(item, gone).not.toHaveProperty(gone);
  if (detail === 'snippets') {
    expect(item).toMatchObject({ snippet: null, snippet_truncated: false });
    return;
  }
  expect(item.body).toBeNull();
  if (inside) expect(item.run_id).toBeNull();
  else expect(item).not.toHaveProperty('run_id');
  expect(item.object_id).toBe(h.objectId);
  if (!proof) return;
  const p = item.proof;
  expect(p).toMatchObject({ object_id: h.objectId, canonical: null, signature: null });
  if (inside) expect(p.private).toBeNull();
  else expect(p).not.toHaveProperty('private');
  // objects.md §13 step 5 still holds: the link of seq 1 follows the genesis.
  expect(p.chain.chain_hash).toBe(h.chainHash);
  const verdict = verifyPostChain(h.space.spaceId, [{
    seq: 1n,
    objectId: fromHex(h.objectId, 32),
    admission: fromHex(p.chain.admission, 32),
    chainHash: fromHex(p.chain.chain_hash, 32),
    ...(inside ? { admittedRevision: BigInt(p.chain.admitted_revision), admittedControlHash: fromHex(p.chain.admitted_control_hash, 32) } : {}),
  }]);
  expect(verdict.ok).toBe(true);
}

describe('a hidden post on every read path', () => {
  it('posts.read shows it in place, blank at every detail, to members', async () => {
    const h = await hiddenPost();
    const path = `/v1/spaces/${h.space.name}/posts`;
    for (const [query, detail, proof] of [['?detail=ids', 'ids', false], ['', 'snippets', false], ['?detail=full&proof=true', 'full', true]] as const) {
      const r = await get(relay, path + query, reader);
      expect(r.status, r.text).toBe(200);
      expectBlank(r.body.items[0], h, detail, true, proof);
      expectNoSecrets(r.text, h);
    }
  });

  it('posts.batch, posts.get and posts.proof show it blank, with a proof that keeps only the link', async () => {
    const h = await hiddenPost();
    const batch = await get(relay, `/v1/posts?ids=${h.postId}&proof=true`, reader);
    expectBlank(batch.body.items[0], h, 'full', true, true);
    expectNoSecrets(batch.text, h);
    const one = await get(relay, `/v1/posts/${h.postId}`, reader);
    expectBlank(one.body, h, 'full', true, true);
    expectNoSecrets(one.text, h);
    const proof = await get(relay, `/v1/spaces/${h.space.name}/posts/1/proof`, reader);
    expect(proof.status, proof.text).toBe(200);
    expectBlank(proof.body.post, h, 'full', true, true);
    expectNoSecrets(proof.text, h);
  });

  it('the ndjson export writes it as a blank line that keeps the chain', async () => {
    const h = await hiddenPost();
    const r = await get(relay, `/v1/spaces/${h.space.name}/posts`, reader, { accept: 'application/x-ndjson' });
    expect(r.status).toBe(200);
    expectBlank(JSON.parse(r.text.split('\n')[0]!), h, 'full', true, true);
    expectNoSecrets(r.text, h);
  });

  it('markdown renderings say it is unavailable and show none of its words', async () => {
    const h = await hiddenPost();
    const md = { accept: 'text/markdown' };
    for (const path of [`/v1/posts/${h.postId}`, `/v1/posts?ids=${h.postId}`, `/v1/spaces/${h.space.name}/posts?detail=full`]) {
      const r = await get(relay, path, reader, md);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/markdown/);
      expect(r.text).toMatch(/\*\*unavailable\*\*: hidden/);
      expectNoSecrets(r.text, h);
    }
  });

  it('the mailbox of its recipient shows it blank', async () => {
    const h = await hiddenPost();
    const r = await get(relay, '/v1/mailbox?detail=full', reader);
    expect(r.status, r.text).toBe(200);
    const env = (r.body.items as any[]).find((e) => e.post?.post_id === h.postId);
    expect(env).toBeDefined();
    expectBlank(env.post, h, 'full', true, false);
    expectNoSecrets(JSON.stringify(env), h);
  });

  it('a reader outside a public SPACE sees it blank, without members-only fields', async () => {
    const h = await hiddenPost({ visibility: 'public' });
    for (const who of [undefined, await mintToken(relay.url)]) {
      const r = await get(relay, `/v1/posts/${h.postId}`, who);
      expectBlank(r.body, h, 'full', false, true);
      expect(r.body).not.toHaveProperty('admitted_revision');
      expectNoSecrets(r.text, h);
    }
  });

  it('shown again, it shows its words, private part and a signature that verifies', async () => {
    const h = await hiddenPost();
    const shown = await call(relay, 'DELETE', `/v1/posts/${h.postId}/hidden`, { token: owner.token });
    expect(shown.status).toBe(200);
    const r = await get(relay, `/v1/posts/${h.postId}`, reader);
    expect(r.body).not.toHaveProperty('unavailable');
    expect(r.body).toMatchObject({ title: WORDS[0], body: WORDS[1], to: [reader.peerId], data: { x_note: WORDS[3] } });
    expect(typeof r.body.run_id).toBe('string');
    expect(typeof r.body.proof.private).toBe('string');
    const sig = r.body.proof.signature;
    expect(verifyObjectSignature(fromHex(sig.public_key, 32), fromHex(h.objectId, 32), fromHex(sig.value, 64))).toBe(true);
  });

  it('a hidden sealed post shows no sealed parts: no generation, size, header or ciphertext', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    const { body } = sealedPostBody(s, k, 1, { title: 'sealed title', body: 'sealed body' });
    const sent = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: k.token, body });
    expect(sent.status, sent.text).toBe(201);
    const before = await get(relay, `/v1/posts/${sent.body.post_id}`, k);
    expect(before.body.sealed).toMatchObject({ generation: 1 });
    expect((await call(relay, 'PUT', `/v1/posts/${sent.body.post_id}/hidden`, { token: k.token })).status).toBe(200);
    for (const path of [`/v1/posts/${sent.body.post_id}`, `/v1/spaces/${s.name}/posts?detail=full&proof=true`, `/v1/spaces/${s.name}/posts`]) {
      const r = await get(relay, path, k);
      const item = r.body.items?.[0] ?? r.body;
      expect(item.unavailable).toMatchObject({ state: 'hidden' });
      expect(item, path).not.toHaveProperty('sealed');
      const sealed = body.sealed as { header: string; ciphertext: string };
      expect(r.text.includes(sealed.header)).toBe(false);
      expect(r.text.includes(sealed.ciphertext.slice(0, 64))).toBe(false);
    }
  });
});
