/**
 * A post's `summary` (the newer API's post field; protocol/objects.md §2, api-notes §4): a member
 * of the post object, signed with it or written by the relay for an unsigned post, shown at
 * snippets and full where the object carries one, checked by the proof (objects.md §13 step 2),
 * and shown nowhere on a hidden post. A sealed SPACE takes none. Real relay over HTTP; a post
 * without one reads exactly as before (no `summary` member).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize } from '../../../shared/canonical.js';
import { fromBase64url, fromUtf8, toBase64url, toHex, utf8 } from '../../../shared/encoding.js';
import { objectIdOf, signObjectId } from '../../../shared/objects.js';
import { checkPostProof } from '../../../shared/post-proof.js';
import { admit, call, newSpace, signedPost } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../../helpers/sealed.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

const SUMMARY = 'numpy 1.26.4 is pinned. Both runs passed on linux; macOS is untested.';

async function spaceWithWriter() {
  const space = await newSpace(relay, owner);
  await admit(relay, space, writer, 'writer');
  return space;
}

async function readFull(name: string, seq: string, token = writer.token) {
  const r = await call(relay, 'GET', `/v1/spaces/${name}/posts?after=${BigInt(seq) - 1n}&limit=1&detail=full&proof=true`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body.items[0];
}

describe('summary on a post', () => {
  it('an unsigned post with a summary: the relay writes it into the object, every read shows it but ids, and the proof verifies', async () => {
    const space = await spaceWithWriter();
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, {
      token: writer.token,
      body: { kind: 'result', title: 'Build passes on linux: 2 of 2 runs', summary: SUMMARY, body: 'Reproduced twice.' },
    });
    expect(sent.status, sent.text).toBe(201);
    const full = await readFull(space.name, sent.body.seq);
    expect(full.summary).toBe(SUMMARY);
    const object = JSON.parse(fromUtf8(fromBase64url(full.proof.canonical)));
    expect(object.summary).toBe(SUMMARY);
    expect(checkPostProof(full)).toMatchObject({ ok: true });
    const snippets = await call(relay, 'GET', `/v1/spaces/${space.name}/posts?detail=snippets`, { token: writer.token });
    expect(snippets.body.items[0].summary).toBe(SUMMARY);
    const ids = await call(relay, 'GET', `/v1/spaces/${space.name}/posts?detail=ids`, { token: writer.token });
    expect(ids.body.items[0]).not.toHaveProperty('summary');
    const one = await call(relay, 'GET', `/v1/posts/${sent.body.post_id}`, { token: writer.token });
    expect(one.body.summary).toBe(SUMMARY);
  });

  it('a post without a summary shows no summary member, as an 0.1 reader knows it', async () => {
    const space = await spaceWithWriter();
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: { kind: 'obs', title: 'plain', body: 'no summary here, though "summary":"x" is in the body' } });
    expect(sent.status, sent.text).toBe(201);
    const full = await readFull(space.name, sent.body.seq);
    expect(full).not.toHaveProperty('summary');
    expect(checkPostProof(full)).toMatchObject({ ok: true });
  });

  it('a signed post whose object carries summary is taken as signed, shown with it, and its proof verifies', async () => {
    const space = await spaceWithWriter();
    const s = signedPost(writer, space, { kind: 'result', title: 'Build passes', summary: SUMMARY, body: 'Reproduced.' });
    expect(s.object).toMatchObject({ summary: SUMMARY });
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: s.submission });
    expect(sent.status, sent.text).toBe(201);
    expect(sent.body.object_id).toBe(toHex(s.objectId));
    const full = await readFull(space.name, sent.body.seq);
    expect(full).toMatchObject({ signed: true, summary: SUMMARY });
    expect(checkPostProof(full)).toMatchObject({ ok: true });
  });

  it('refuses an empty or an oversized summary in a signed object, and stores nothing', async () => {
    const space = await spaceWithWriter();
    const base = signedPost(writer, space, { kind: 'obs', title: 't' }).object;
    for (const [summary, detail] of [['', 'canonical.summary: at least 1 byte; omit it when empty'], ['x'.repeat(4097), /^summary: /]] as const) {
      const bytes = utf8(canonicalize({ ...base, summary }));
      const body = { alg: 'ed25519', canonical: toBase64url(bytes), signature: toHex(signObjectId(writer.signer, objectIdOf(bytes))) };
      const r = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body });
      expect(r.body.error.code, r.text).toBe('INVALID_REQUEST');
      if (typeof detail === 'string') expect(r.body.error.detail).toBe(detail);
      else expect(r.body.error.detail).toMatch(detail);
    }
    const read = await call(relay, 'GET', `/v1/spaces/${space.name}/posts`, { token: writer.token });
    expect(read.body.items).toEqual([]);
  });

  it('a hidden post shows no summary anywhere, and still verifies as a chain position', async () => {
    const space = await spaceWithWriter();
    const s = signedPost(writer, space, { kind: 'result', title: 'Build passes', summary: SUMMARY });
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: s.submission });
    expect(sent.status, sent.text).toBe(201);
    expect((await call(relay, 'PUT', `/v1/posts/${sent.body.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    const full = await readFull(space.name, sent.body.seq, owner.token);
    expect(full.unavailable).toMatchObject({ state: 'hidden' });
    expect(full).not.toHaveProperty('summary');
    expect(checkPostProof(full)).toMatchObject({ ok: true });
    const one = await call(relay, 'GET', `/v1/posts/${sent.body.post_id}`, { token: owner.token });
    expect(one.text.includes(SUMMARY)).toBe(false);
  });

  it('a reader checking the proof notices a summary the object does not carry', async () => {
    const space = await spaceWithWriter();
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: { kind: 'obs', title: 't', summary: SUMMARY } });
    const full = await readFull(space.name, sent.body.seq);
    expect(checkPostProof({ ...full, summary: 'another reading' })).toMatchObject({ ok: false });
    const { summary: _gone, ...without } = full;
    expect(checkPostProof(without)).toMatchObject({ ok: false });
  });

  it('a sealed SPACE takes no summary beside its sealed words (SPACE_SEALED), and stores nothing', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    const { body } = sealedPostBody(s, k, 1, { title: 't', body: 'b' });
    const r = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: k.token, body: { ...body, summary: SUMMARY } });
    expect(r.body.error.code, r.text).toBe('SPACE_SEALED');
    expect(r.body.error.detail).toMatch(/^summary: /);
    const read = await call(relay, 'GET', `/v1/spaces/${s.name}/posts`, { token: k.token });
    expect(read.body.items).toEqual([]);
  });
});
