/**
 * Posting into a sealed SPACE and reading it back over the real HTTP relay
 * (spec/2-endpoints.md posts.append; protocol/sealed.md §7 "Transport and limits", objects.md
 * §7; api-notes §4): `sealed` {header, ciphertext} instead of the words, the header checked
 * against the SPACE, the author, the routing fields and the generation in use, signed sealed
 * posts verified like any signed post, reads that show ciphertext only, and a relay whose data
 * directory holds none of the plaintexts written.
 */
import { sqliteRaw } from '../../../relay/store/sqlite/connection.js';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBytes, type JsonObject } from '../../../shared/canonical.js';
import { fromBase64url, fromHex, toBase64url, toHex } from '../../../shared/encoding.js';
import { objectIdOf, objectSignaturePreimage, readPostObject, sealedDigests } from '../../../shared/objects.js';
import { verifyEd25519 } from '../../../shared/identity.js';
import { checkPostHeader, readSealedHeader, type PostHeader } from '../../../shared/sealed/headers.js';
import { openPost, type PostContentFields } from '../../../shared/sealed/items.js';
import { startRelay, tempDataDir, type RunningRelay } from '../../helpers/relay.js';
import { storedContent } from '../../helpers/test-store.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  lockFor,
  nextGeneration,
  publishKey,
  sealedKey,
  sealedPostBody,
  signedSealedPostBody,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../../helpers/sealed.js';
import { call, createSpace, freshName, type Answer } from '../../helpers/spaces.js';

let relay: RunningRelay;
let dataDir: string;
let owner: SealedKey;
let bob: SealedKey;
let outsider: SealedKey;
let s: SealedSpace;
/** Every plaintext a test sealed (titles, bodies, data values): none may reach the data directory. */
const plaintexts: string[] = [];

function secretWords(what: string): string {
  const w = `${what}-${toHex(new Uint8Array(randomBytes(12)))}`;
  plaintexts.push(w);
  return w;
}

function content(): PostContentFields {
  return {
    title: `Title ${secretWords('sealedtitle')}`,
    body: `The body says ${secretWords('sealedbody')} and more.`,
    data: { note: secretWords('sealeddata') },
  };
}

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  if ((await publishKey(relay, k)).status !== 200) throw new Error('publish refused');
  return k;
}

const post = async (k: SealedKey, body: unknown, sp: SealedSpace = s): Promise<Answer> =>
  await call(relay, 'POST', `/v1/spaces/${sp.name}/posts`, { token: k.token, body });

async function headOf(sp: SealedSpace): Promise<number> {
  return (await relay.store.posts.head((await relay.store.spaces.byName(sp.name))!.id)).seq;
}

/** Refused with `code`; nothing stored (no post, no sealed item, no mailbox row). */
async function expectRefused(k: SealedKey, body: unknown, code: string, detail?: RegExp | string, sp: SealedSpace = s): Promise<Answer> {
  const count = async (sql: string): Promise<number> => (await relay.store.db.prepare(sql).get() as { n: number }).n;
  const before = await Promise.all([headOf(sp), count('SELECT count(*) AS n FROM sealed_posts'), count('SELECT count(*) AS n FROM mailbox')]);
  const r = await post(k, body, sp);
  expect(r.body?.error?.code, r.text).toBe(code);
  if (typeof detail === 'string') expect(r.body.error.detail).toBe(detail);
  else if (detail) expect(r.body.error.detail).toMatch(detail);
  expect(await Promise.all([headOf(sp), count('SELECT count(*) AS n FROM sealed_posts'), count('SELECT count(*) AS n FROM mailbox')])).toEqual(before);
  return r;
}

beforeAll(async () => {
  dataDir = tempDataDir('svc-sealed-posts-');
  relay = await startRelay({ dataDir });
  owner = await keyed();
  bob = await keyed();
  outsider = await keyed();
  s = await createSealedSpace(relay, owner);
  const admitted = await call(relay, 'PUT', `/v1/spaces/${s.name}/members/${bob.peerId}`, { token: owner.token, body: { role: 'writer' } });
  expect(admitted.status).toBe(201);
  expect((await call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/stamp`, { token: bob.token, body: stampBody(owner, bob.peerId) })).status).toBe(200);
  const locked = await call(relay, 'POST', `/v1/spaces/${s.name}/sealed/locks`, {
    token: owner.token,
    body: { generation: 1, commitment: commitmentOfGeneration(s, 1), locks: { [bob.peerId]: lockFor(s, 1, owner, bob) } },
  });
  expect(locked.status).toBe(200);
});

afterAll(async () => {
  await relay.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('sealed posts are accepted and read as ciphertext only', () => {
  it('takes an unsigned sealed post and serves its header and ciphertext, which a member opens', async () => {
    const words = content();
    const { body } = sealedPostBody(s, bob, 1, words, { kind: 'result' });
    const r = await post(bob, body);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ sealed: true, signed: false, seq: String(await headOf(s)) });

    const snip = await call(relay, 'GET', `/v1/spaces/${s.name}/posts?detail=snippets`, { token: owner.token });
    const item = snip.body.items.find((i: any) => i.post_id === r.body.post_id);
    const sent = body.sealed as { header: string; ciphertext: string };
    expect(item).toMatchObject({ kind: 'result', author: bob.peerId, title: null, snippet: null, snippet_truncated: false, fingerprints: [] });
    expect(item.sealed).toEqual({ generation: 1, bytes: fromBase64url(sent.ciphertext).length });
    expect(Object.keys(item).indexOf('sealed')).toBe(Object.keys(item).indexOf('title') + 1);

    const full = await call(relay, 'GET', `/v1/posts/${r.body.post_id}`, { token: owner.token });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ title: null, body: null });
    expect(full.body.data).toBeUndefined();
    expect(full.body.sealed).toEqual({ generation: 1, bytes: fromBase64url(sent.ciphertext).length, header: sent.header, ciphertext: sent.ciphertext });
    // The object the relay wrote carries only the digests of header and ciphertext.
    const object = readPostObject(fromBase64url(full.body.proof.canonical), 'unsigned');
    expect(object).toEqual({
      v: 1,
      space_id: s.spaceId,
      author_id: bob.peerId,
      kind: 'result',
      sealed: { ...sealedDigests(fromBase64url(sent.header), fromBase64url(sent.ciphertext)), suite: 1 },
    });
    // The owner's software opens it with the secret and checks the header against what is shown.
    const opened = openPost(fromBase64url(full.body.sealed.header), fromBase64url(full.body.sealed.ciphertext), s.secrets[1]!);
    checkPostHeader(opened.header, { space_id: s.spaceId, author: full.body.author, kind: full.body.kind, to: full.body.to, reply_to: full.body.reply_to, generation: full.body.sealed.generation });
    expect(opened.content).toEqual({ ...words, data: words.data });

    const md = await call(relay, 'GET', `/v1/spaces/${s.name}/posts?detail=full`, { token: owner.token, headers: { accept: 'text/markdown' } });
    expect(md.text).toMatch(/sealed: generation 1/);
  });

  it('takes a sealed finding, whose data its author sealed: the relay checks none of it and lists no finding', async () => {
    const words = { title: `Claim ${secretWords('sealedfinding')}`, data: { claim: secretWords('sealedclaim'), status: 'proposed', confidence: 'low' } };
    const r = await post(bob, sealedPostBody(s, bob, 1, words, { kind: 'finding' }).body);
    expect(r.status, r.text).toBe(201);
    const listed = await call(relay, 'GET', `/v1/spaces/${s.name}/findings`, { token: owner.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.items).toEqual([]);
  });

  it('takes a signed sealed post and serves a proof whose signature verifies', async () => {
    const body = signedSealedPostBody(s, bob, 1, content());
    const r = await post(bob, body);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ sealed: true, signed: true });
    const full = await call(relay, 'GET', `/v1/posts/${r.body.post_id}`, { token: owner.token });
    const canonical = fromBase64url(full.body.proof.canonical);
    expect(full.body.proof.canonical).toBe(body.canonical);
    const objectId = objectIdOf(canonical);
    expect(verifyEd25519(bob.signer.publicKey, objectSignaturePreimage(objectId), fromHex(full.body.proof.signature.value))).toBe(true);
    expect(full.body.sealed.header).toBe((body.sealed as any).header);
    // A replay of the same signed post answers the first.
    const again = await post(bob, body);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ replayed: true, post_id: r.body.post_id });
  });

  it('verifies a signed sealed post like any signed post: digests of header and ciphertext, signature', async () => {
    const body = signedSealedPostBody(s, bob, 1, content());
    const sealed = body.sealed as { header: string; ciphertext: string };
    const ct = fromBase64url(sealed.ciphertext);
    ct[0] = ct[0]! ^ 1;
    await expectRefused(bob, { ...body, sealed: { ...sealed, ciphertext: toBase64url(ct) } }, 'INVALID_REQUEST', /sealed\.ciphertext/);
    const other = signedSealedPostBody(s, bob, 1, content());
    await expectRefused(bob, { ...body, signature: other.signature }, 'POST_SIGNATURE_INVALID');
    // Signed by Bob, sent by the owner: the object names another author.
    await expectRefused(owner, body, 'INVALID_REQUEST', /author_id/);
  });

  it('replays an unsigned sealed post by idempotency key, and refuses the key with other content', async () => {
    const { body } = sealedPostBody(s, bob, 1, content());
    const key = randomUUID();
    const first = await post(bob, { ...body, idempotency_key: key });
    expect(first.status).toBe(201);
    const again = await post(bob, { ...body, idempotency_key: key });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ replayed: true, post_id: first.body.post_id });
    const { body: other } = sealedPostBody(s, bob, 1, content());
    await expectRefused(bob, { ...other, idempotency_key: key }, 'IDEMPOTENCY_CONFLICT');
  });

  it('routes by the header: to and reply_to as for any post', async () => {
    const { body: first } = sealedPostBody(s, owner, 1, content());
    const parent = await post(owner, first);
    expect(parent.status).toBe(201);
    const { body } = sealedPostBody(s, bob, 1, content(), { to: [owner.peerId], reply_to: parent.body.post_id });
    const r = await post(bob, { ...body, to: [owner.peerId], reply_to: parent.body.post_id });
    expect(r.status, r.text).toBe(201);
    const mailbox = await call(relay, 'GET', '/v1/mailbox?detail=full', { token: owner.token });
    const env = mailbox.body.items.find((e: any) => e.post?.post_id === r.body.post_id);
    expect(env.reason).toBe('to');
    expect(env.post).toMatchObject({ to: [owner.peerId], reply_to: parent.body.post_id, body: null, title: null });
    expect(env.post.sealed.ciphertext).toBe((body.sealed as any).ciphertext);
    const { body: toOutsider } = sealedPostBody(s, bob, 1, content(), { to: [outsider.peerId] });
    await expectRefused(bob, toOutsider, 'RECIPIENT_NOT_A_MEMBER');
    const { body: orphan } = sealedPostBody(s, bob, 1, content(), { reply_to: randomUUID() });
    await expectRefused(bob, orphan, 'REPLY_TARGET_NOT_FOUND');
  });

  it('refuses a KEY with no role there (WRITE_DENIED)', async () => {
    const { body } = sealedPostBody(s, outsider, 1, content());
    await expectRefused(outsider, body, 'WRITE_DENIED');
  });
});

describe('what a sealed SPACE refuses', () => {
  it('refuses words with SPACE_SEALED and a request to seal with SEALED_NEEDS_BRIDGE', async () => {
    await expectRefused(bob, { kind: 'obs', body: 'plain words' }, 'SPACE_SEALED');
    await expectRefused(bob, { kind: 'obs', title: 'plain title' }, 'SPACE_SEALED', /title/);
    await expectRefused(bob, { kind: 'obs' }, 'SPACE_SEALED');
    const { body } = sealedPostBody(s, bob, 1, content());
    for (const field of ['title', 'body', 'data', 'budget', 'run_id', 'fingerprints']) {
      const words = field === 'data' || field === 'budget' ? { x: 1 } : field === 'fingerprints' ? [{ scheme: 'sha256', value: 'ab' }] : 'words';
      await expectRefused(bob, { ...body, [field]: words }, 'SPACE_SEALED', new RegExp(`^${field}:`));
    }
    // `sealed: true` asks the relay to seal: it never can, words or not.
    await expectRefused(bob, { kind: 'obs', body: 'please seal this', sealed: true }, 'SEALED_NEEDS_BRIDGE');
    await expectRefused(bob, { kind: 'obs', sealed: true }, 'SEALED_NEEDS_BRIDGE');
    await expectRefused(bob, { ...body, attachments: [] }, 'SEALED_NO_FILES', /attachments/);
  });

  it('refuses a signed post with a plain object (SPACE_SEALED)', async () => {
    const { signPost } = await import('../../../shared/objects.js');
    const plain = signPost({ fields: { space_id: s.spaceId, author_id: bob.peerId, kind: 'obs', body: 'plain', idempotency_key: randomUUID() }, signer: bob.signer });
    await expectRefused(bob, plain.submission, 'SPACE_SEALED');
  });

  it('refuses a header that does not name this SPACE, this author or the routing sent (SEALED_HEADER_MISMATCH)', async () => {
    const other = await createSealedSpace(relay, owner);
    const cases: [SealedKey, Record<string, unknown>, RegExp][] = [
      [bob, sealedPostBody(other, bob, 1, content()).body, /^space_id/],
      [owner, sealedPostBody(s, bob, 1, content()).body, /^author/],
      [bob, { ...sealedPostBody(s, bob, 1, content(), { kind: 'obs' }).body, kind: 'result' }, /^kind/],
      [bob, { ...sealedPostBody(s, bob, 1, content()).body, to: [owner.peerId] }, /^to/],
      [bob, { ...sealedPostBody(s, bob, 1, content(), { to: [owner.peerId] }).body, to: [] }, /^to/],
      [bob, { ...sealedPostBody(s, bob, 1, content()).body, reply_to: randomUUID() }, /^reply_to/],
      [bob, { ...sealedPostBody(s, bob, 1, content(), { supersedes: randomUUID() }).body, supersedes: null }, /^supersedes/],
      [bob, { ...sealedPostBody(s, bob, 1, content()).body, retracts: randomUUID() }, /^retracts/],
    ];
    for (const [k, body, detail] of cases) await expectRefused(k, body, 'SEALED_HEADER_MISMATCH', detail);
    // A signed object whose routing differs from its header's.
    const { buildSealedPostObject, postObjectBytes, signObjectId } = await import('../../../shared/objects.js');
    const { body: sealedBody } = sealedPostBody(s, bob, 1, content(), { kind: 'obs' });
    const sent = sealedBody.sealed as { header: string; ciphertext: string };
    const object = buildSealedPostObject(
      {
        space_id: s.spaceId,
        author_id: bob.peerId,
        kind: 'result',
        idempotency_key: randomUUID(),
        sealed: sealedDigests(fromBase64url(sent.header), fromBase64url(sent.ciphertext)),
      },
      'signed',
    );
    const canonical = postObjectBytes(object);
    const signature = toHex(signObjectId(bob.signer, objectIdOf(canonical)));
    await expectRefused(bob, { alg: 'ed25519', canonical: toBase64url(canonical), signature, sealed: sent }, 'SEALED_HEADER_MISMATCH', /^kind/);
  });

  it('refuses a malformed header or transport with INVALID_REQUEST', async () => {
    const { body } = sealedPostBody(s, bob, 1, content());
    const sent = body.sealed as { header: string; ciphertext: string };
    const header = JSON.parse(Buffer.from(sent.header, 'base64url').toString()) as Record<string, unknown>;
    const reencode = (h: Record<string, unknown>): string => toBase64url(canonicalBytes(h as JsonObject));
    await expectRefused(bob, { sealed: { ...sent, header: reencode({ ...header, extra: 1 }) } }, 'INVALID_REQUEST', /extra/);
    await expectRefused(bob, { sealed: { ...sent, header: reencode({ ...header, type: 'message' }) } }, 'INVALID_REQUEST', /type/);
    await expectRefused(bob, { sealed: { ...sent, ciphertext: toBase64url(new Uint8Array(16)) } }, 'INVALID_REQUEST', /ciphertext/);
    await expectRefused(bob, { sealed: { ...sent, more: 'x' } }, 'INVALID_REQUEST', /more/);
    // Not canonical: the same members in another order.
    const reordered = `{"v":1,${Buffer.from(sent.header, 'base64url').toString().slice(1).replace(/,"v":1}$/, '}')}`;
    await expectRefused(bob, { sealed: { ...sent, header: Buffer.from(reordered).toString('base64url') } }, 'INVALID_REQUEST');
  });

  it('refuses sealed content in a SPACE that is not sealed (SPACE_NOT_SEALED)', async () => {
    const plain = await createSpace(relay, owner.token, { name: freshName('plain') });
    const sp: SealedSpace = { ...s, name: plain.name };
    await expectRefused(owner, sealedPostBody(s, owner, 1, content()).body, 'SPACE_NOT_SEALED', undefined, sp);
  });
});

describe('the key in use', () => {
  it('refuses a post sealed under an old generation after a change with KEY_CHANGED, and takes the new one', async () => {
    const sp = await createSealedSpace(relay, owner);
    const { body: early } = sealedPostBody(sp, owner, 1, content());
    expect((await post(owner, early, sp)).status).toBe(201);
    const next = nextGeneration(sp);
    expect((await call(relay, 'POST', `/v1/spaces/${sp.name}/sealed/generations`, { token: owner.token, body: next })).status).toBe(201);
    // While staged, generation 1 is still the one in use; 2 is not yet.
    expect((await post(owner, sealedPostBody(sp, owner, 1, content()).body, sp)).status).toBe(201);
    await expectRefused(owner, sealedPostBody(sp, owner, 2, content()).body, 'KEY_CHANGED', '1', sp);
    const locks = { [owner.peerId]: lockFor(sp, 2, owner, owner) };
    expect((await call(relay, 'POST', `/v1/spaces/${sp.name}/sealed/locks`, { token: owner.token, body: { generation: 2, commitment: next.commitment, locks } })).status).toBe(200);
    expect((await call(relay, 'POST', `/v1/spaces/${sp.name}/sealed/generations/2/activate`, { token: owner.token })).status).toBe(200);
    await expectRefused(owner, sealedPostBody(sp, owner, 1, content()).body, 'KEY_CHANGED', '2', sp);
    await expectRefused(owner, signedSealedPostBody(sp, owner, 1, content()), 'KEY_CHANGED', '2', sp);
    await expectRefused(owner, sealedPostBody(sp, owner, 3, content()).body, 'KEY_CHANGED', '2', sp);
    const now = await post(owner, sealedPostBody(sp, owner, 2, content()).body, sp);
    expect(now.status).toBe(201);
    const read = await call(relay, 'GET', `/v1/spaces/${sp.name}/posts?detail=snippets`, { token: owner.token });
    expect(read.body.items.map((i: any) => i.sealed.generation)).toEqual([1, 1, 2]);
    // A post sealed before the change still opens with its own generation's secret.
    const full = await call(relay, 'GET', `/v1/posts/${read.body.items[0].post_id}`, { token: owner.token });
    const header = readSealedHeader(fromBase64url(full.body.sealed.header), 'header', 'post') as PostHeader;
    expect(header.generation).toBe(1);
    expect(() => openPost(fromBase64url(full.body.sealed.header), fromBase64url(full.body.sealed.ciphertext), sp.secrets[1]!)).not.toThrow();
  });
});

describe('the relay holds no plaintext', () => {
  it('finds none of the sealed titles, bodies and data values in SEEK or anywhere in its data directory', async () => {
    // A further run of sealed posts, signed and unsigned, by both members.
    for (let i = 0; i < 20; i++) {
      const author = i % 2 === 0 ? owner : bob;
      const body = i % 3 === 0 ? signedSealedPostBody(s, author, 1, content()) : sealedPostBody(s, author, 1, content()).body;
      expect((await post(author, body)).status).toBe(201);
    }
    // Control: words posted to a private SPACE do reach the files, so the scan can see them.
    const plain = await createSpace(relay, owner.token, { name: freshName('plain') });
    const control = `plainmarker-${toHex(new Uint8Array(randomBytes(12)))}`;
    expect((await call(relay, 'POST', `/v1/spaces/${plain.name}/posts`, { token: owner.token, body: { kind: 'obs', body: control } })).status).toBe(201);

    for (const word of [plaintexts[0]!, plaintexts[plaintexts.length - 1]!]) {
      const hits = await call(relay, 'GET', `/v1/seek?q=${encodeURIComponent(word)}`, { token: owner.token });
      expect(hits.status).toBe(200);
      expect(hits.body.items).toEqual([]);
    }
    const controlHits = await call(relay, 'GET', `/v1/seek?q=${control}`, { token: owner.token });
    expect(controlHits.body.items.length).toBe(1);

    if (relay.store.db.dialect === 'sqlite') sqliteRaw(relay.store.db).pragma('wal_checkpoint(PASSIVE)');
    const found = await storedContent(relay);
    expect(plaintexts.length).toBeGreaterThan(60);
    expect(found(control)).toBe(true);
    expect(plaintexts.filter(found)).toEqual([]);
  });
});
