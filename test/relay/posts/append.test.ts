/**
 * posts.append, posts.hide, posts.unhide over the real HTTP server with a real SQLite store
 * (spec/2-endpoints.md; spec/1-concepts.md "Post", "Signed posts", "Chains", "Limits";
 * protocol/objects.md §5-§10, api-notes §4). SPACES, members and blocks are set up through
 * their stores; every post goes through HTTP. Every refusal checks that nothing was written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { getJson, mintToken, postJson, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { expectChainVerifies } from '../../helpers/chain.js';
import { admit as admitTo, newSpace as newSpaceOn, signedPost } from '../../helpers/posts.js';
import { fromBase64url, fromHex, toBase64url, toHex } from '../../../shared/encoding.js';
import { objectIdOf, readPostObject, readPrivatePart, privateDigestOf, signPost, type PostFields } from '../../../shared/objects.js';
import { verifyReceipt } from '../../../shared/receipt.js';
import type { CreateSpaceInput, SpaceRow } from '../../../relay/store/spaces.js';
import type { Role } from '../../../shared/vocabulary.js';

let relay: RunningRelay;
let signerKey: Uint8Array;
let owner: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  const caps = await getJson(`${relay.url}/v1/capabilities`);
  signerKey = fromHex(caps.body.protocol.service_keys[0].public_key, 32);
  owner = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

// ---- helpers ----------------------------------------------------------------------------------

// The shared set-up (helpers/posts.ts), bound to this file's relay.
const newSpace = async (by: MintedToken, opts: Partial<CreateSpaceInput> = {}): Promise<SpaceRow> => await newSpaceOn(relay, by, opts);
const admit = async (space: SpaceRow, peer: MintedToken, role: Role): Promise<void> => await admitTo(relay, space, peer, role);

const auth = (t: MintedToken) => ({ authorization: `Bearer ${t.token}` });

/** One append over HTTP. The clock moves 2.1 s first so the 30-a-minute write bucket never runs dry. */
async function append(t: MintedToken, space: SpaceRow | string, body: unknown, query = '') {
  relay.clock.advance(2_100);
  const name = typeof space === 'string' ? space : space.name;
  return postJson(`${relay.url}/v1/spaces/${name}/posts${query}`, body, auth(t));
}

const headOf = async (space: SpaceRow) => (await relay.store.posts.head(space.id)).seq;

/** The append is refused with `code` and the SPACE's chain did not move. */
async function expectRefused(t: MintedToken, space: SpaceRow, body: unknown, code: string, query = ''): Promise<any> {
  const before = await headOf(space);
  const r = await append(t, space, body, query);
  expect(r.body.error?.code, JSON.stringify(r.body)).toBe(code);
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(await headOf(space)).toBe(before);
  return r;
}

const randomPeer = () => toHex(randomBytes(32));
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// ---- the two forms ----------------------------------------------------------------------------

describe('unsigned posts', () => {
  it('answer 201 with position, link and a short receipt that verifies against the signer key in capabilities', async () => {
    const space = await newSpace(owner);
    const r = await append(owner, space, { kind: 'obs', title: 'Found it', body: 'the cache key misses the locale' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual([
      'post_id', 'seq', 'posted_at', 'replayed', 'space_id', 'object_id', 'chain_hash', 'signed', 'sealed', 'receipt', 'space',
    ]);
    expect(r.body).toMatchObject({ seq: '1', replayed: false, signed: false, sealed: false, space_id: space.spaceId, space: space.name });
    expect(r.body.posted_at).toMatch(ISO_MS);
    expect(Object.keys(r.body.receipt)).toEqual(['v', 'service_epoch', 'signer_key_id', 'signature']);
    const fields = verifyReceipt(r.body, signerKey);
    expect(fields).toMatchObject({ seq: '1', post_id: r.body.post_id, posted_at: r.body.posted_at });
    // The receipt does not verify against another key or for a changed answer.
    expect(() => verifyReceipt({ ...r.body, seq: '2' }, signerKey)).toThrow();
    expect(() => verifyReceipt(r.body, owner.signer.publicKey)).toThrow();
  });

  it('store the object the relay wrote: no idempotency key, content as sent, private part salted at random', async () => {
    const space = await newSpace(owner);
    const body = {
      kind: 'result',
      title: 'Build time',
      body: 'down to 41 s',
      fingerprints: [{ scheme: 'git.commit', value: 'b' }, { scheme: 'git.commit', value: 'a' }, { scheme: 'git.commit', value: 'b' }],
      data: { x_minutes: 4 },
      run_id: randomUUID(),
      idempotency_key: 'build-time-1',
    };
    const r = await append(owner, space, body);
    expect(r.status).toBe(201);
    const row = (await relay.store.posts.byPostId(r.body.post_id))!;
    expect(toHex(objectIdOf(row.canonical))).toBe(r.body.object_id);
    const object = readPostObject(row.canonical, 'unsigned') as unknown as Record<string, unknown>;
    expect(object.idempotency_key).toBeUndefined();
    expect(object).toMatchObject({ v: 1, space_id: space.spaceId, author_id: owner.peerId, kind: 'result', title: 'Build time', body: 'down to 41 s' });
    expect(object.fingerprints).toEqual([{ scheme: 'git.commit', value: 'a' }, { scheme: 'git.commit', value: 'b' }]);
    const part = readPrivatePart(row.private!);
    expect(part).toMatchObject({ data: { x_minutes: 4 }, run_id: body.run_id });
    expect(object.private_digest).toBe(toHex(privateDigestOf(row.private!)));
    expect(row.signature).toBeNull();

    // The same fields under another key get a fresh salt, so another digest.
    const again = await append(owner, space, { ...body, idempotency_key: 'build-time-2' });
    const other = readPrivatePart((await relay.store.posts.byPostId(again.body.post_id))!.private!);
    expect(other.salt).not.toBe(part.salt);
  });

  it('answer the full receipt with ?receipt=full, which verifies and signs the same bytes', async () => {
    const space = await newSpace(owner);
    const r = await append(owner, space, { kind: 'obs', body: 'full receipt' }, '?receipt=full');
    expect(r.status).toBe(201);
    expect(Object.keys(r.body.receipt)).toEqual(['canonical', 'signature', 'signer_key_id']);
    const fields = verifyReceipt(r.body, signerKey);
    expect(fields.chain_hash).toBe(r.body.chain_hash);
    const canonical = JSON.parse(Buffer.from(fromBase64url(r.body.receipt.canonical)).toString('utf8'));
    expect(canonical.posted_at).toBe(r.body.posted_at);
    await expectRefused(owner, space, { kind: 'obs' }, 'INVALID_REQUEST', '?receipt=long');
  });
});

describe('signed posts', () => {
  it('are admitted with the object, private part and signature the KEY sent', async () => {
    const space = await newSpace(owner);
    const s = signedPost(owner, space, { kind: 'decision', title: 'Use WAL', body: 'FULL sync' }, { data: { x_reason: 'durability' } });
    const r = await append(owner, space, s.submission);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.signed).toBe(true);
    expect(r.body.object_id).toBe(toHex(s.objectId));
    verifyReceipt(r.body, signerKey);
    const row = (await relay.store.posts.byPostId(r.body.post_id))!;
    expect(Buffer.from(row.canonical).equals(Buffer.from(s.canonical))).toBe(true);
    expect(toHex(row.signature!)).toBe(s.submission.signature);
    expect(Buffer.from(row.private!).equals(Buffer.from(s.private!.bytes))).toBe(true);
    expect(JSON.parse(row.dataJson!)).toEqual({ x_reason: 'durability' });
  });

  it('are refused when the signature does not verify', async () => {
    const space = await newSpace(owner);
    const s = signedPost(owner, space, { kind: 'obs', body: 'tampered' });
    const sig = s.submission.signature;
    const flipped = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
    await expectRefused(owner, space, { ...s.submission, signature: flipped }, 'POST_SIGNATURE_INVALID');
  });

  it('are refused when the object names another SPACE or another author', async () => {
    const space = await newSpace(owner);
    const other = await newSpace(owner);
    const elsewhere = signedPost(owner, other, { kind: 'obs', body: 'x' });
    const r = await expectRefused(owner, space, elsewhere.submission, 'INVALID_REQUEST');
    expect(r.body.error.detail).toMatch(/space_id/);
    const mallory = await mintToken(relay.url);
    await admit(space, mallory, 'writer');
    const byOwner = signedPost(owner, space, { kind: 'obs', body: 'x' });
    const r2 = await expectRefused(mallory, space, byOwner.submission, 'INVALID_REQUEST');
    expect(r2.body.error.detail).toMatch(/author_id/);
  });

  it('take no content fields beside the signed ones', async () => {
    const space = await newSpace(owner);
    const s = signedPost(owner, space, { kind: 'obs', body: 'x' });
    await expectRefused(owner, space, { ...s.submission, title: 'beside' }, 'INVALID_REQUEST');
    await expectRefused(owner, space, { kind: 'obs', canonical: s.submission.canonical }, 'INVALID_REQUEST');
  });

  it('with alg webauthn from an Ed25519 KEY are POST_SIGNATURE_INVALID (test/relay/passkeys/signing.test.ts signs with passkeys)', async () => {
    const space = await newSpace(owner);
    const s = signedPost(owner, space, { kind: 'obs', body: 'x' });
    const assertion = {
      credential_id: toBase64url(new Uint8Array(16)),
      client_data_json: toBase64url(new Uint8Array(40)),
      authenticator_data: toBase64url(new Uint8Array(37)),
      signature: toBase64url(new Uint8Array(70)),
    };
    await expectRefused(owner, space, { alg: 'webauthn', canonical: s.submission.canonical, ...assertion }, 'POST_SIGNATURE_INVALID');
  });

  it('meet every field rule of the Post table on the signed fields', async () => {
    const space = await newSpace(owner);
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'answer', body: 'x' }).submission, 'INVALID_KIND');
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'obs', fingerprints: [{ scheme: 'svc.internal', value: 'x' }] }).submission, 'SCHEME_RESERVED');
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'obs' }, { data: { lease_until: 'later' } }).submission, 'INVALID_REQUEST');
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'obs', title: '' }).submission, 'INVALID_REQUEST');
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'obs', body: 'y'.repeat(65_537) }).submission, 'TOO_LARGE');
  });
});

// ---- input rules --------------------------------------------------------------------------------

describe('input rules of the Post table', () => {
  const peerA = 'a'.repeat(64);
  const peerB = 'b'.repeat(64);
  const cases: [string, unknown, string][] = [
    ['a body that is not an object', [], 'INVALID_REQUEST'],
    ['a missing kind', { body: 'x' }, 'INVALID_KIND'],
    ['a kind outside the twenty', { kind: 'answer' }, 'INVALID_KIND'],
    ['an unknown field', { kind: 'obs', headline: 'x' }, 'INVALID_REQUEST'],
    ['a title over 512 bytes', { kind: 'obs', title: 't'.repeat(513) }, 'INVALID_REQUEST'],
    ['a body over 64 KiB', { kind: 'obs', body: 'b'.repeat(65_537) }, 'TOO_LARGE'],
    ['a reserved fingerprint scheme', { kind: 'obs', fingerprints: [{ scheme: 'svc.x', value: '1' }] }, 'SCHEME_RESERVED'],
    ['33 fingerprints', { kind: 'obs', fingerprints: Array.from({ length: 33 }, (_, i) => ({ scheme: 'task.reference', value: String(i) })) }, 'INVALID_REQUEST'],
    ['a fingerprint as text', { kind: 'obs', fingerprints: ['git.commit:abc'] }, 'INVALID_REQUEST'],
    ['`to` out of order', { kind: 'obs', to: [peerB, peerA] }, 'INVALID_REQUEST'],
    ['`to` with a repeat', { kind: 'obs', to: [peerA, peerA] }, 'INVALID_REQUEST'],
    ['nine recipients', { kind: 'obs', to: Array.from({ length: 9 }, (_, i) => String(i).repeat(64)) }, 'INVALID_REQUEST'],
    ['uppercase hex in `to`', { kind: 'obs', to: ['A'.repeat(64)] }, 'INVALID_REQUEST'],
    ['a reply_to that is not a post id', { kind: 'obs', reply_to: 'nope' }, 'INVALID_REQUEST'],
    ['supersedes and retracts together', { kind: 'obs', supersedes: randomUUID(), retracts: randomUUID() }, 'INVALID_REQUEST'],
    ['a refused data key', { kind: 'obs', data: { fencing_token: 1 } }, 'INVALID_REQUEST'],
    ['a data key claiming sponsorship', { kind: 'obs', data: { sponsored_by: 'acme' } }, 'INVALID_REQUEST'],
    ['a shape-checked data key of the wrong shape', { kind: 'resetwatch', data: { return_status: 'maybe' } }, 'INVALID_REQUEST'],
    ['data over 16 KiB', { kind: 'obs', data: { x_blob: 'd'.repeat(16_400) } }, 'TOO_LARGE'],
    ['a budget without observed_at', { kind: 'beacon', budget: { compute: { remaining: '1', unit: 'h', estimated: true } } }, 'INVALID_REQUEST'],
    ['a budget over 4 KiB', { kind: 'beacon', budget: { observed_at: '2026-01-31T12:00:00Z', compute: { remaining: '1', unit: 'u'.repeat(4100), estimated: true } } }, 'TOO_LARGE'],
    ['a run_id that is not a uuid', { kind: 'obs', run_id: 'run-1' }, 'INVALID_REQUEST'],
    ['an empty idempotency key', { kind: 'obs', idempotency_key: '' }, 'INVALID_REQUEST'],
    ['an idempotency key over 128 bytes', { kind: 'obs', idempotency_key: 'k'.repeat(129) }, 'INVALID_REQUEST'],
    ['sealed content in a SPACE that is not sealed', { kind: 'obs', sealed: { header: 'aa', ciphertext: 'bb' } }, 'SPACE_NOT_SEALED'],
  ];
  for (const [what, body, code] of cases) {
    it(`refuses ${what} with ${code}`, async () => {
      const space = await newSpace(owner);
      await expectRefused(owner, space, body, code);
    });
  }

  it('refuses `to` naming the author itself', async () => {
    const space = await newSpace(owner);
    await expectRefused(owner, space, { kind: 'obs', to: [owner.peerId] }, 'INVALID_REQUEST');
  });

  it('refuses a recipient that is not registered, and one outside a SPACE that is not open', async () => {
    const space = await newSpace(owner);
    await expectRefused(owner, space, { kind: 'obs', to: [randomPeer()] }, 'RECIPIENT_NOT_REGISTERED');
    const stranger = await mintToken(relay.url);
    await expectRefused(owner, space, { kind: 'obs', to: [stranger.peerId] }, 'RECIPIENT_NOT_A_MEMBER');
    await admit(space, stranger, 'reader');
    const r = await append(owner, space, { kind: 'obs', to: [stranger.peerId] });
    expect(r.status).toBe(201);
  });

  it('lets a member address any registered KEY in an open SPACE', async () => {
    const space = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const stranger = await mintToken(relay.url);
    const r = await append(owner, space, { kind: 'question', to: [stranger.peerId] });
    expect(r.status).toBe(201);
  });

  it('refuses a reply to a post that is not in this SPACE', async () => {
    const space = await newSpace(owner);
    const other = await newSpace(owner);
    const there = await append(owner, other, { kind: 'obs', body: 'elsewhere' });
    await expectRefused(owner, space, { kind: 'obs', reply_to: randomUUID() }, 'REPLY_TARGET_NOT_FOUND');
    await expectRefused(owner, space, { kind: 'obs', reply_to: there.body.post_id }, 'REPLY_TARGET_NOT_FOUND');
  });

  it('lets supersedes and retracts name only own posts of the same SPACE', async () => {
    const space = await newSpace(owner);
    const other = await newSpace(owner);
    const writer = await mintToken(relay.url);
    await admit(space, writer, 'writer');
    const mine = await append(owner, space, { kind: 'obs', body: 'first take' });
    const theirs = await append(writer, space, { kind: 'obs', body: 'theirs' });
    const elsewhere = await append(owner, other, { kind: 'obs', body: 'elsewhere' });
    await expectRefused(owner, space, { kind: 'obs', supersedes: theirs.body.post_id }, 'REVISION_TARGET_NOT_FOUND');
    await expectRefused(owner, space, { kind: 'obs', retracts: elsewhere.body.post_id }, 'REVISION_TARGET_NOT_FOUND');
    await expectRefused(owner, space, { kind: 'obs', retracts: randomUUID() }, 'REVISION_TARGET_NOT_FOUND');
    expect((await append(owner, space, { kind: 'obs', body: 'second take', supersedes: mine.body.post_id })).status).toBe(201);
    expect((await append(owner, space, { kind: 'obs', retracts: mine.body.post_id })).status).toBe(201);
  });

  it('refuses an unknown SPACE with SPACE_NOT_FOUND', async () => {
    const r = await append(owner, 'no-such-space-here', { kind: 'obs' });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('SPACE_NOT_FOUND');
  });

  it('takes kind version only in an oracle SPACE', async () => {
    const space = await newSpace(owner);
    await expectRefused(owner, space, { kind: 'version', body: '# Doc' }, 'NOT_AN_ORACLE');
    const oracle = await newSpace(owner, { visibility: 'public', oracle: true, joinPolicy: 'request' });
    expect((await append(owner, oracle, { kind: 'version', body: '# Doc' })).status).toBe(201);
  });

  it('refuses words in a sealed SPACE with SPACE_SEALED', async () => {
    const space = await newSpace(owner, { visibility: 'sealed' });
    await expectRefused(owner, space, { kind: 'obs', body: 'plain words' }, 'SPACE_SEALED');
    await expectRefused(owner, space, signedPost(owner, space, { kind: 'obs', body: 'plain words' }).submission, 'SPACE_SEALED');
    await expectRefused(owner, space, { kind: 'obs', body: 'plain words', sealed: { header: 'aa', ciphertext: 'bb' } }, 'SPACE_SEALED');
    // Sealed parts are read strictly (test/relay/posts/sealed.test.ts covers sealed posting).
    await expectRefused(owner, space, { kind: 'obs', sealed: { header: 'aa', ciphertext: 'bb' } }, 'INVALID_REQUEST');
  });

  it('refuses a signed sealed object in a SPACE that is not sealed', async () => {
    const space = await newSpace(owner);
    const s = signedPost(owner, space, { kind: 'obs', body: 'x' });
    await expectRefused(owner, space, { ...s.submission, sealed: { header: 'AA', ciphertext: 'BB' } }, 'SPACE_NOT_SEALED');
  });
});

// ---- who may post ------------------------------------------------------------------------------

describe('who may post', () => {
  it('refuses a KEY with no role in a private SPACE, and a reader outside open and oracle SPACES', async () => {
    const space = await newSpace(owner);
    const stranger = await mintToken(relay.url);
    await expectRefused(stranger, space, { kind: 'obs' }, 'WRITE_DENIED');
    const reader = await mintToken(relay.url);
    await admit(space, reader, 'reader');
    await expectRefused(reader, space, { kind: 'obs' }, 'WRITE_DENIED');
    const publicSpace = await newSpace(owner, { visibility: 'public', joinPolicy: 'request' });
    await expectRefused(stranger, publicSpace, { kind: 'obs' }, 'WRITE_DENIED');
  });

  it('lets a reader post in an open SPACE without the no_role mark', async () => {
    const space = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const reader = await mintToken(relay.url);
    await admit(space, reader, 'reader');
    const r = await append(reader, space, { kind: 'obs', body: 'reader here' });
    expect(r.status).toBe(201);
    expect(r.body.no_role).toBeUndefined();
  });

  it('lets a KEY with no role post in open and oracle SPACES, marked no_role, addressing the owner alone', async () => {
    const open = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const oracle = await newSpace(owner, { visibility: 'public', oracle: true, joinPolicy: 'request' });
    const member = await mintToken(relay.url);
    await admit(open, member, 'writer');
    const stranger = await mintToken(relay.url);
    const r = await append(stranger, open, { kind: 'question', body: 'may I?', to: [owner.peerId] });
    expect(r.status).toBe(201);
    expect(r.body.no_role).toBe(true);
    expect(Object.keys(r.body).indexOf('no_role')).toBe(Object.keys(r.body).indexOf('sealed') + 1);
    expect((await relay.store.posts.byPostId(r.body.post_id))!.noRole).toBe(true);
    await expectRefused(stranger, open, { kind: 'question', to: [member.peerId] }, 'WRITE_DENIED');
    const o = await append(stranger, oracle, { kind: 'obs', body: 'roleless in an oracle' });
    expect(o.status).toBe(201);
    expect(o.body.no_role).toBe(true);
  });

  it('refuses a blocked KEY with WRITE_BLOCKED', async () => {
    const space = await newSpace(owner);
    const writer = await mintToken(relay.url);
    await admit(space, writer, 'writer');
    expect((await append(writer, space, { kind: 'obs' })).status).toBe(201);
    await relay.store.blocks.set(space.id, owner.peerId, writer.peerId, relay.clock.now());
    await expectRefused(writer, space, { kind: 'obs' }, 'WRITE_BLOCKED');
  });

  it('refuses every post to a closed SPACE with SPACE_CLOSED', async () => {
    const space = await newSpace(owner);
    expect((await append(owner, space, { kind: 'obs' })).status).toBe(201);
    await relay.store.spaces.close(space.id, null, relay.clock.now());
    await expectRefused(owner, space, { kind: 'obs' }, 'SPACE_CLOSED');
  });

  it('refuses unsigned posts in a signed-only SPACE, after the replay test', async () => {
    const space = await newSpace(owner);
    const first = await append(owner, space, { kind: 'obs', body: 'before', idempotency_key: 'k-before' });
    expect(first.status).toBe(201);
    await relay.store.spaces.update(space.id, { signedOnly: true }, owner.peerId, relay.clock.now());
    await expectRefused(owner, space, { kind: 'obs', body: 'after' }, 'SIGNATURE_REQUIRED');
    const replay = await append(owner, space, { kind: 'obs', body: 'before', idempotency_key: 'k-before' });
    expect(replay.status).toBe(201);
    expect(replay.body.replayed).toBe(true);
    expect(replay.body.post_id).toBe(first.body.post_id);
    expect((await append(owner, space, signedPost(owner, space, { kind: 'obs', body: 'signed' }).submission)).status).toBe(201);
  });
});

// ---- idempotency ---------------------------------------------------------------------------------

describe('idempotency', () => {
  it('replays the same key and content with 201, replayed: true and the first receipt', async () => {
    const space = await newSpace(owner);
    const body = { kind: 'progress', body: 'step 3 of 5', to: undefined, idempotency_key: 'step-3' };
    const first = await append(owner, space, body);
    expect(first.status).toBe(201);
    const head = await headOf(space);
    const again = await append(owner, space, { ...body, title: '' });
    expect(again.status).toBe(201);
    expect(again.body.replayed).toBe(true);
    for (const k of ['post_id', 'seq', 'posted_at', 'object_id', 'chain_hash', 'receipt']) expect(again.body[k]).toEqual(first.body[k]);
    verifyReceipt(again.body, signerKey);
    expect(await headOf(space)).toBe(head);
    const full = await append(owner, space, body, '?receipt=full');
    expect(full.status).toBe(201);
    expect(full.body.replayed).toBe(true);
    expect(verifyReceipt(full.body, signerKey).post_id).toBe(first.body.post_id);
  });

  it('refuses the same key with different content', async () => {
    const space = await newSpace(owner);
    expect((await append(owner, space, { kind: 'obs', body: 'one', idempotency_key: 'same' })).status).toBe(201);
    await expectRefused(owner, space, { kind: 'obs', body: 'two', idempotency_key: 'same' }, 'IDEMPOTENCY_CONFLICT');
    await expectRefused(owner, space, { kind: 'obs', body: 'one', data: { x_more: 1 }, idempotency_key: 'same' }, 'IDEMPOTENCY_CONFLICT');
  });

  it('refuses a replay that would change signed-ness, either way', async () => {
    const space = await newSpace(owner);
    expect((await append(owner, space, { kind: 'obs', body: 'plain', idempotency_key: 'u-first' })).status).toBe(201);
    const s1 = signedPost(owner, space, { kind: 'obs', body: 'plain', idempotency_key: 'u-first' });
    await expectRefused(owner, space, s1.submission, 'IDEMPOTENCY_CONFLICT');
    const s2 = signedPost(owner, space, { kind: 'obs', body: 'signed', idempotency_key: 's-first' });
    expect((await append(owner, space, s2.submission)).status).toBe(201);
    await expectRefused(owner, space, { kind: 'obs', body: 'signed', idempotency_key: 's-first' }, 'IDEMPOTENCY_CONFLICT');
  });

  it('replays a signed post only with the same object', async () => {
    const space = await newSpace(owner);
    const fields = { space_id: space.spaceId, author_id: owner.peerId, kind: 'obs', body: 'signed once', idempotency_key: 'sig-1' };
    const s = signPost({ fields, signer: owner.signer });
    const first = await append(owner, space, s.submission);
    expect(first.status).toBe(201);
    const again = await append(owner, space, s.submission);
    expect(again.status).toBe(201);
    expect(again.body.replayed).toBe(true);
    expect(again.body.seq).toBe(first.body.seq);
    const changed = signPost({ fields: { ...fields, body: 'signed twice' }, signer: owner.signer });
    await expectRefused(owner, space, changed.submission, 'IDEMPOTENCY_CONFLICT');
  });

  it('scopes a key to its SPACE and author', async () => {
    const a = await newSpace(owner);
    const b = await newSpace(owner);
    const writer = await mintToken(relay.url);
    await admit(a, writer, 'writer');
    const one = await append(owner, a, { kind: 'obs', idempotency_key: 'shared-key' });
    const two = await append(owner, b, { kind: 'obs', idempotency_key: 'shared-key' });
    const three = await append(writer, a, { kind: 'obs', idempotency_key: 'shared-key' });
    expect([one.status, two.status, three.status]).toEqual([201, 201, 201]);
    expect(new Set([one.body.post_id, two.body.post_id, three.body.post_id]).size).toBe(3);
  });
});

// ---- the chain --------------------------------------------------------------------------------------

describe('the chain', () => {
  it('verifies from genesis after many posts of both forms, each admitted under the control revision of its time', async () => {
    const space = await newSpace(owner);
    const writers = [await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url)];
    let revisionSeen = (await relay.store.events.head(space.id)).revision;
    for (let i = 0; i < 45; i++) {
      if (i % 15 === 0) await admit(space, writers[i / 15]!, 'writer');
      const who = i < 15 ? owner : writers[Math.floor(i / 15) - 1]!;
      const r =
        i % 2 === 0
          ? await append(who, space, { kind: 'obs', body: `post ${i}`, data: i % 4 === 0 ? { x_i: i } : undefined })
          : await append(who, space, signedPost(who, space, { kind: 'result', body: `post ${i}` }).submission);
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.seq).toBe(String(i + 1));
      const row = (await relay.store.posts.byPostId(r.body.post_id))!;
      const control = await relay.store.events.head(space.id);
      expect(row.admittedRevision).toBe(control.revision);
      expect(row.admittedRevision).toBeGreaterThanOrEqual(revisionSeen);
      revisionSeen = row.admittedRevision;
    }
    await expectChainVerifies(relay, space, 45);
    const rows = await relay.store.posts.list(space.id, 0, 1000);
    for (const r of rows) expect(Buffer.from(r.admittedControlHash).equals(Buffer.from(await relay.store.events.chainHashAt(space.id, r.admittedRevision)))).toBe(true);
    // Revision 1 is space.created, then one member.granted before each block of 15 posts.
    expect([...new Set(rows.map((r) => r.admittedRevision))]).toEqual([2, 3, 4]);
  });
});

// ---- deliveries --------------------------------------------------------------------------------------

describe('deliveries', () => {
  it('deliver `to` to each addressee and `reply` to the parent author, never to oneself, in the same write', async () => {
    const boss = await mintToken(relay.url);
    const space = await newSpace(boss);
    const a = await mintToken(relay.url);
    const b = await mintToken(relay.url);
    await admit(space, a, 'writer');
    await admit(space, b, 'writer');
    const to = [a.peerId, b.peerId].sort();
    const asked = await append(boss, space, { kind: 'question', body: 'who has the key?', to });
    expect(asked.status).toBe(201);
    for (const peer of to) {
      expect((await relay.store.mailbox.list(peer, 0, 10)).map((m) => [m.reason, m.postId])).toEqual([['to', asked.body.post_id]]);
    }
    const answer = await append(a, space, { kind: 'obs', body: 'I do', reply_to: asked.body.post_id });
    expect((await relay.store.mailbox.list(boss.peerId, 0, 10)).map((m) => [m.reason, m.postId])).toEqual([['reply', answer.body.post_id]]);
    const selfReply = await append(a, space, { kind: 'obs', body: 'and me', reply_to: answer.body.post_id });
    expect(selfReply.status).toBe(201);
    expect(await relay.store.mailbox.head(a.peerId)).toBe(1);
    // Addressed and the parent's author: one row, reason `to`.
    const both = await append(b, space, { kind: 'obs', reply_to: answer.body.post_id, to: [a.peerId] });
    expect((await relay.store.mailbox.list(a.peerId, 1, 10)).map((m) => [m.reason, m.postId])).toEqual([['to', both.body.post_id]]);
  });

  it('skip a parent author who can no longer read the SPACE', async () => {
    const space = await newSpace(owner);
    const leaver = await mintToken(relay.url);
    await admit(space, leaver, 'writer');
    const parent = await append(leaver, space, { kind: 'obs', body: 'bye soon' });
    await relay.store.members.remove((await relay.store.spaces.byRowId(space.id))!, leaver.peerId, leaver.peerId, 'member.left', relay.clock.now());
    const reply = await append(owner, space, { kind: 'obs', reply_to: parent.body.post_id });
    expect(reply.status).toBe(201);
    expect(await relay.store.mailbox.head(leaver.peerId)).toBe(0);
  });

  it('omit the notice past 200 an hour from one KEY to another and still write the post', async () => {
    const space = await newSpace(owner);
    const sender = await mintToken(relay.url);
    const target = await mintToken(relay.url);
    await admit(space, sender, 'writer');
    await admit(space, target, 'writer');
    const start = relay.clock.now();
    const total = 240;
    for (let i = 0; i < total; i++) {
      // 60 at once (the write burst), then one every 2 s, which refills 0.11 of a delivery.
      if (i >= 60) relay.clock.advance(2_000);
      const r = await postJson(`${relay.url}/v1/spaces/${space.name}/posts`, { kind: 'obs', to: [target.peerId] }, auth(sender));
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    expect(await headOf(space)).toBe(total);
    const hours = (relay.clock.now() - start) / 3_600_000;
    const delivered = await relay.store.mailbox.head(target.peerId);
    expect(delivered).toBeLessThan(total);
    expect(delivered).toBeGreaterThanOrEqual(200);
    expect(delivered).toBeLessThanOrEqual(200 + Math.ceil(hours * 200));
  });
});

// ---- limits --------------------------------------------------------------------------------------

describe('limits', () => {
  it('refuses a KEY past 60 writes at once (30 a minute, burst 60) with RATE_LIMITED and its own numbers', async () => {
    const space = await newSpace(owner);
    const writer = await mintToken(relay.url);
    await admit(space, writer, 'writer');
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) {
      const r = await postJson(`${relay.url}/v1/spaces/${space.name}/posts`, { kind: 'obs' }, auth(writer));
      statuses.push(r.status);
      if (r.status === 429) {
        expect(r.body.error.code).toBe('RATE_LIMITED');
        expect(r.headers.get('retry-after')).toBeTruthy();
        expect(r.headers.get('ratelimit-limit')).toBe('60');
      }
    }
    expect(statuses.filter((s) => s === 201).length).toBe(60);
    expect(statuses[60]).toBe(429);
    expect(await headOf(space)).toBe(60);
  });

  it('limits roleless posts to 10 on the KEY first day and 60 a day after', async () => {
    const space = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const other = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const stranger = await mintToken(relay.url);
    for (let i = 0; i < 10; i++) expect((await append(stranger, i % 2 ? space : other, { kind: 'obs' })).status).toBe(201);
    const r = await expectRefused(stranger, space, { kind: 'obs' }, 'RATE_LIMITED');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    // A member of the SPACE is not roleless there.
    const writer = await newSpace(owner);
    await admit(writer, stranger, 'writer');
    expect((await append(stranger, writer, { kind: 'obs' })).status).toBe(201);
    relay.clock.advance(24 * 3_600_000 + 1_000);
    let written = 0;
    for (let i = 0; i < 61; i++) {
      const p = await append(stranger, space, { kind: 'obs' });
      if (p.status === 201) written++;
      else expect(p.body.error.code).toBe('RATE_LIMITED');
    }
    expect(written).toBe(60);
  });

  it('limits roleless posts into one SPACE to 10,000 a day', async () => {
    const space = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    // Fill the day's allowance directly in the table (10,000 HTTP posts would only be slow).
    const now = relay.clock.now();
    const filler = await mintToken(relay.url);
    // One byte, written as a literal each database reads as bytes.
    const z = relay.store.db.dialect === 'postgres' ? "'\\x00'::bytea" : "x'00'";
    await relay.store.db
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
         INSERT INTO posts (space_row_id, seq, post_id, author, kind, canonical, signed, object_id, admitted_revision,
           admitted_control_hash, admission, previous_hash, chain_hash, posted_at, no_role, receipt_signature, receipt_signer_key_id)
         SELECT CAST(? AS BIGINT), i, 'filler-' || i, CAST(? AS TEXT), 'obs', ${z}, 0, ${z}, 0, ${z}, ${z}, ${z}, ${z}, CAST(? AS BIGINT), 1, ${z}, 'k' FROM n`,
      )
      .run(space.id, filler.peerId, now - 1000);
    const stranger = await mintToken(relay.url);
    const r = await expectRefused(stranger, space, { kind: 'obs' }, 'RATE_LIMITED');
    expect(r.headers.get('retry-after')).toBe('60');
    expect(r.headers.get('ratelimit-limit')).toBeNull();
  });
});

// ---- hide and unhide ------------------------------------------------------------------------------

describe('posts.hide and posts.unhide', () => {
  const hide = async (t: MintedToken, id: string, method: 'PUT' | 'DELETE' = 'PUT') => {
    relay.clock.advance(2_100);
    return await getJson(`${relay.url}/v1/posts/${id}/hidden`, { method, headers: auth(t) });
  };

  it('let the owner hide a post, with a post.hidden event, keeping its position and link', async () => {
    const space = await newSpace(owner);
    const writer = await mintToken(relay.url);
    await admit(space, writer, 'writer');
    const p = await append(writer, space, { kind: 'obs', body: 'to be hidden' });
    await append(writer, space, { kind: 'obs', body: 'after it' });
    const before = (await relay.store.posts.byPostId(p.body.post_id))!;
    const h = await hide(owner, p.body.post_id);
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ post_id: p.body.post_id, space: space.name, seq: '1', hidden: true, changed: true });
    expect(h.body.unavailable).toMatchObject({ state: 'hidden', reason: null });
    const after = (await relay.store.posts.byPostId(p.body.post_id))!;
    expect(after.hiddenAt).not.toBeNull();
    expect(after.seq).toBe(before.seq);
    expect(Buffer.from(after.chainHash).equals(Buffer.from(before.chainHash))).toBe(true);
    const events = await relay.store.events.list(space.id, 0, 100);
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({ event: 'post.hidden', actor: owner.peerId, revision: Number(h.body.revision) });
    expect(last.payload).toEqual({ post_id: p.body.post_id, seq: '1' });

    // Hiding again changes nothing and writes no event.
    const again = await hide(owner, p.body.post_id);
    expect(again.body).toMatchObject({ changed: false, hidden: true, revision: null });
    expect((await relay.store.events.head(space.id)).revision).toBe(last.revision);

    const shown = await hide(owner, p.body.post_id, 'DELETE');
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ hidden: false, unavailable: null, changed: true });
    expect((await relay.store.events.list(space.id, last.revision, 10)).map((e) => e.event)).toEqual(['post.unhidden']);
    expect((await relay.store.posts.byPostId(p.body.post_id))!.hiddenAt).toBeNull();
  });

  it('let an admin hide posts of KEYS ranked below it and nobody else', async () => {
    const space = await newSpace(owner, { visibility: 'public', joinPolicy: 'open' });
    const admin = await mintToken(relay.url);
    const admin2 = await mintToken(relay.url);
    const writer = await mintToken(relay.url);
    const stranger = await mintToken(relay.url);
    await admit(space, admin, 'admin');
    await admit(space, admin2, 'admin');
    await admit(space, writer, 'writer');
    const byWriter = await append(writer, space, { kind: 'obs' });
    const byStranger = await append(stranger, space, { kind: 'obs' });
    const byOwner = await append(owner, space, { kind: 'obs' });
    const byAdmin2 = await append(admin2, space, { kind: 'obs' });
    expect((await hide(admin, byWriter.body.post_id)).status).toBe(200);
    expect((await hide(admin, byStranger.body.post_id)).status).toBe(200);
    const revision = (await relay.store.events.head(space.id)).revision;
    for (const [who, id] of [
      [admin, byOwner.body.post_id],
      [admin, byAdmin2.body.post_id],
      [writer, byStranger.body.post_id],
      [stranger, byWriter.body.post_id],
    ] as const) {
      const r = await hide(who, id);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('CONTROL_DENIED');
    }
    expect((await relay.store.events.head(space.id)).revision).toBe(revision);
    // The owner hides anyone's post, its own included.
    expect((await hide(owner, byOwner.body.post_id)).status).toBe(200);
  });

  it('answer POST_NOT_FOUND for an unknown post and for one the caller cannot read', async () => {
    const space = await newSpace(owner);
    const p = await append(owner, space, { kind: 'obs' });
    const stranger = await mintToken(relay.url);
    for (const [who, id] of [[owner, randomUUID()], [stranger, p.body.post_id]] as const) {
      const r = await hide(who, id);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('POST_NOT_FOUND');
    }
    const bad = await hide(owner, 'not-a-uuid');
    expect(bad.body.error.code).toBe('INVALID_REQUEST');
  });

  it('refuse in a closed SPACE with SPACE_CLOSED', async () => {
    const space = await newSpace(owner);
    const p = await append(owner, space, { kind: 'obs' });
    await relay.store.spaces.close(space.id, null, relay.clock.now());
    const r = await hide(owner, p.body.post_id);
    expect(r.body.error.code).toBe('SPACE_CLOSED');
    expect((await relay.store.posts.byPostId(p.body.post_id))!.hiddenAt).toBeNull();
  });
});
