/**
 * Signed posts' Ed25519 check on the thread pool (relay/posts/verify-off-thread.ts, the setting
 * SVC_RELAY_VERIFY_OFF_THREAD=1): the check answers "verified" only for the very key, message
 * and signature it checked, and a relay with the setting on admits and refuses every post as a
 * relay with it off does, code, detail and order of the checks included, writing nothing on a
 * refusal (protocol/objects.md §5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, postJson, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { admit, newSpace, signedPost } from '../../helpers/posts.js';
import { fromBase64url, fromHex, toBase64url, toHex } from '../../../shared/encoding.js';
import { objectIdOf, objectSignaturePreimage } from '../../../shared/objects.js';
import { verifyOffThread } from '../../../relay/posts/verify-off-thread.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';

/** One relay with the check on the event loop, one with it on the thread pool. */
let onLoop: RunningRelay;
let offThread: RunningRelay;

beforeAll(async () => {
  onLoop = await startRelay({ rateLimits: false });
  offThread = await startRelay({ rateLimits: false, verifyOffThread: true });
});
afterAll(async () => {
  await onLoop?.close();
  await offThread?.close();
});

interface Setup {
  relay: RunningRelay;
  writer: MintedToken;
  other: MintedToken;
  space: SpaceRow;
}

async function setUp(relay: RunningRelay): Promise<Setup> {
  const owner = await mintToken(relay.url);
  const writer = await mintToken(relay.url);
  const other = await mintToken(relay.url);
  const space = await newSpace(relay, owner);
  await admit(relay, space, writer, 'writer');
  await admit(relay, space, other, 'writer');
  return { relay, writer, other, space };
}

async function append(s: Setup, body: unknown) {
  return await postJson(`${s.relay.url}/v1/spaces/${s.space.name}/posts`, body, { authorization: `Bearer ${s.writer.token}` });
}

/** Bodies that must be refused, each made for the relay and SPACE at hand. */
const BAD_BODIES: Record<string, (s: Setup) => object> = {
  'a signature by another KEY': (s) => {
    const good = signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission;
    const foreign = signedPost(s.other, s.space, { kind: 'obs', title: 't', body: 'b' }).submission;
    return { ...good, signature: foreign.signature };
  },
  'one bit of the signature flipped': (s) => {
    const good = signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission;
    const sig = fromHex(good.signature, 64);
    sig[10] = sig[10]! ^ 1;
    return { ...good, signature: toHex(sig) };
  },
  'a bad signature and an empty title': (s) => {
    const good = signedPost(s.writer, s.space, { kind: 'obs', title: '', body: 'b' }).submission;
    return { ...good, signature: toHex(randomBytes(64)) };
  },
  'a good signature and an empty title': (s) => signedPost(s.writer, s.space, { kind: 'obs', title: '', body: 'b' }).submission,
  'a bad signature and a member beside canonical': (s) => {
    const good = signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission;
    return { ...good, signature: toHex(randomBytes(64)), title: 'x' };
  },
  'a signature in capitals': (s) => {
    const good = signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission;
    return { ...good, signature: good.signature.toUpperCase() };
  },
  'canonical that is not base64url': (s) => ({ ...signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission, canonical: '***' }),
  'the object of another author, signed by it': (s) => signedPost(s.other, s.space, { kind: 'obs', title: 't', body: 'b' }).submission,
  'alg webauthn from an Ed25519 KEY': (s) => ({ ...signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' }).submission, alg: 'webauthn' }),
};

describe('the Ed25519 check on the thread pool', () => {
  it('answers verified for exactly the key, message and signature it checked, and nothing for a bad signature', async () => {
    const relay = onLoop;
    const s = await setUp(relay);
    const post = signedPost(s.writer, s.space, { kind: 'obs', title: 't', body: 'b' });
    const author = { peerId: s.writer.peerId, keyType: 'ed25519' as const, publicKey: toHex(s.writer.signer.publicKey) };
    const check = await verifyOffThread(author, post.submission);
    expect(check).toBeDefined();
    const message = objectSignaturePreimage(objectIdOf(fromBase64url(post.submission.canonical, 'canonical')));
    const signature = fromHex(post.submission.signature, 64);
    expect(check!(s.writer.signer.publicKey, message, signature)).toBe(true);
    // Other bytes are checked as verifyEd25519 checks them: a flipped bit of the message fails.
    const otherMessage = Uint8Array.from(message);
    otherMessage[otherMessage.length - 1]! ^= 1;
    expect(check!(s.writer.signer.publicKey, otherMessage, signature)).toBe(false);
    expect(check!(s.other.signer.publicKey, message, signature)).toBe(false);

    const forged = { ...post.submission, signature: toHex(randomBytes(64)) };
    expect(await verifyOffThread(author, forged)).toBeUndefined();
    expect(await verifyOffThread({ ...author, keyType: 'passkey' }, post.submission)).toBeUndefined();
    expect(await verifyOffThread(author, { ...post.submission, canonical: toBase64url(new Uint8Array(0)) + '*' })).toBeUndefined();
  });

  it('admits a signed post with a receipt, as the event loop does', async () => {
    const s = await setUp(offThread);
    const r = await append(s, signedPost(s.writer, s.space, { kind: 'obs', title: 'off thread', body: 'checked on the pool' }).submission);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.signed).toBe(true);
    expect((await offThread.store.posts.head(s.space.id)).seq).toBe(1);
  });

  it('refuses every bad signed post with the same status, code and detail as the event loop, writing nothing', async () => {
    const [loop, pool] = [await setUp(onLoop), await setUp(offThread)];
    for (const [what, make] of Object.entries(BAD_BODIES)) {
      const a = await append(loop, make(loop));
      const b = await append(pool, make(pool));
      expect(a.status, what).toBeGreaterThanOrEqual(400);
      expect({ status: b.status, code: b.body.error?.code, detail: b.body.error?.detail }, what).toEqual({
        status: a.status,
        code: a.body.error?.code,
        detail: a.body.error?.detail,
      });
    }
    expect((await offThread.store.posts.head(pool.space.id)).seq).toBe(0);
  });
});
