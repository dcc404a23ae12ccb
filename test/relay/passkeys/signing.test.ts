/**
 * What a passkey KEY signs, checked as at sign-in (protocol/api-notes.md §3) over the SHA-256 of
 * the same preimage an Ed25519 KEY signs: posts (`alg: webauthn`, objects.md §4-§5, served in
 * reads with everything a reader needs to check them), the encryption-key statement, keeper
 * lists and stamps (sealed.md §2); the signature counter advances with each new thing signed.
 * With passkeys turned off by the operator, each of these paths answers PASSKEYS_UNAVAILABLE.
 * Through the real relay with the software authenticator of test/helpers.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64url, toBase64url, toHex } from '../../../shared/encoding.js';
import { passkeyPeerIdOf } from '../../../shared/identity.js';
import { buildPostObject, objectIdOf, objectPasskeyChallenge, postObjectBytes } from '../../../shared/objects.js';
import { checkAssertion, passkeyKeyOf } from '../../../shared/passkey.js';
import { buildEncryptionKeyStatement, deriveEncryptionKey, encryptionKeySignedBytes } from '../../../shared/sealed/encryption-key.js';
import { buildKeeperList, keeperListSignedBytes } from '../../../shared/sealed/keepers.js';
import { sealedSpaceCreation } from '../../../shared/sealed/locks.js';
import { buildStamp, stampSignedBytes } from '../../../shared/sealed/stamps.js';
import { expectRefusedUnchanged } from '../../helpers/envelope.js';
import {
  passkeyKey,
  passkeyPolicyOf,
  signPostWebauthn,
  webauthnEnvelope,
  type AssertOptions,
  type SoftAuthenticator,
} from '../../helpers/passkey-authenticator.js';
import { createSpaceInStore, signedPost } from '../../helpers/posts.js';
import { call, mintToken, startRelay, tempDataDir, type RunningRelay } from '../../helpers/relay.js';
import { publishKey, sealedKey } from '../../helpers/sealed.js';
import { freshName } from '../../helpers/spaces.js';

let relay: RunningRelay;
let policy: { rpId: string; origin: string };
beforeAll(async () => {
  relay = await startRelay();
  policy = await passkeyPolicyOf(relay);
});
afterAll(async () => {
  await relay.close();
});
// Writes are limited per KEY: let the buckets refill between tests.
beforeEach(() => relay.clock.advance(60 * 60_000));

interface PasskeyKey {
  auth: SoftAuthenticator;
  token: string;
  peerId: string;
}

/** The signed body of a post by a passkey KEY: canonical bytes and the assertion over them. */
function webauthnPost(r: RunningRelay, who: PasskeyKey, spaceId: string, body: string, o: Partial<AssertOptions> = {}, p = policy) {
  const object = buildPostObject({ space_id: spaceId, author_id: who.peerId, idempotency_key: randomUUID(), kind: 'obs', body }, 'signed');
  const canonical = postObjectBytes(object);
  void r;
  return { alg: 'webauthn', canonical: toBase64url(canonical), ...signPostWebauthn(who.auth, canonical, p, o) };
}

async function ownSpace(r: RunningRelay, owner: string) {
  return await createSpaceInStore(r.store, owner, freshName('pk'), r.clock.now());
}

/** An Ed25519 KEY with its encryption key published, so it may join a sealed SPACE. */
async function keyed(r: RunningRelay) {
  const k = await sealedKey(r);
  const published = await publishKey(r, k);
  if (published.status !== 200) throw new Error(published.text);
  return k;
}

const append = (r: RunningRelay, token: string, name: string, body: unknown) => call(r, 'POST', `/v1/spaces/${name}/posts`, { token, body });

describe('posts signed by a passkey KEY', () => {
  for (const alg of [-7, -8, -257] as const) {
    it(`are accepted with alg webauthn (algorithm ${alg}) and served with everything a reader needs to check them`, async () => {
      const who = await passkeyKey(relay, alg);
      const space = await ownSpace(relay, who.peerId);
      const body = webauthnPost(relay, who, space.spaceId, 'signed on a passkey');
      const r = await append(relay, who.token, space.name, body);
      expect(r.status, r.text).toBe(201);
      const read = await call(relay, 'GET', `/v1/posts/${r.body.post_id ?? r.body.receipt.post_id}?proof=true`, { token: who.token });
      expect(read.status, read.text).toBe(200);
      const post = read.body.post ?? read.body;
      const sig = post.proof.signature;
      expect(Object.keys(sig)).toEqual(['alg', 'value', 'public_key', 'key_algorithm', 'credential_id', 'client_data_json', 'authenticator_data']);
      expect(sig).toMatchObject({
        alg: 'webauthn',
        public_key: toBase64url(who.auth.spki),
        key_algorithm: { [-7]: 'ES256', [-8]: 'EdDSA', [-257]: 'RS256' }[alg],
        credential_id: toBase64url(who.auth.credentialId),
        value: body.signature,
      });
      // A reader checks it as objects.md §13 says: the SPKI hashes to the author, and the
      // assertion holds for the challenge H(L("object-signature") || object_id).
      const spki = fromBase64url(sig.public_key);
      expect(toHex(passkeyPeerIdOf(spki))).toBe(post.author ?? who.peerId);
      const canonical = fromBase64url(post.proof.canonical);
      expect(toHex(objectIdOf(canonical))).toBe(post.proof.object_id);
      const key = passkeyKeyOf(spki);
      if (!key.ok) throw new Error(key.check);
      const checked = checkAssertion(
        {
          credentialId: fromBase64url(sig.credential_id),
          clientDataJson: fromBase64url(sig.client_data_json),
          authenticatorData: fromBase64url(sig.authenticator_data),
          signature: fromBase64url(sig.value),
        },
        key.value,
        objectPasskeyChallenge(objectIdOf(canonical)),
        { rpId: policy.rpId, origins: [policy.origin] },
      );
      expect(checked.ok).toBe(true);
    });
  }

  it('a replay of the same post answers the first one; a new post needs a counter past the last', async () => {
    const who = await passkeyKey(relay);
    const space = await ownSpace(relay, who.peerId);
    const body = webauthnPost(relay, who, space.spaceId, 'once');
    expect((await append(relay, who.token, space.name, body)).status).toBe(201);
    const again = await append(relay, who.token, space.name, body);
    expect(again.body.replayed, again.text).toBe(true);
    const stale = webauthnPost(relay, who, space.spaceId, 'counter from the past', { counter: 1 });
    await expectRefusedUnchanged(relay, () => append(relay, who.token, space.name, stale), 'POST_SIGNATURE_INVALID', /counter/);
    expect((await append(relay, who.token, space.name, webauthnPost(relay, who, space.spaceId, 'next'))).status).toBe(201);
  });

  it('POST_SIGNATURE_INVALID: a bad assertion (each check), another credential, or the wrong alg for the KEY', async () => {
    const who = await passkeyKey(relay);
    const space = await ownSpace(relay, who.peerId);
    const cases: [Partial<AssertOptions>, RegExp][] = [
      [{ tamperSignature: true }, /signature: does not verify/],
      [{ challenge: new Uint8Array(randomBytes(32)) }, /challenge/],
      [{ origin: 'https://evil.example' }, /origin/],
      [{ rpId: 'evil.example' }, /rp_id/],
      [{ flags: 0x01 }, /user verification/],
      [{ type: 'webauthn.create' }, /type/],
    ];
    for (const [bend, detail] of cases) {
      await expectRefusedUnchanged(relay, () => append(relay, who.token, space.name, webauthnPost(relay, who, space.spaceId, 'bent', bend)), 'POST_SIGNATURE_INVALID', detail);
    }
    const other = { ...webauthnPost(relay, who, space.spaceId, 'other credential'), credential_id: toBase64url(randomBytes(32)) };
    await expectRefusedUnchanged(relay, () => append(relay, who.token, space.name, other), 'POST_SIGNATURE_INVALID', /credential_id/);
    const asEd25519 = { ...webauthnPost(relay, who, space.spaceId, 'ed'), alg: 'ed25519', signature: 'ab'.repeat(64) };
    delete (asEd25519 as Record<string, unknown>).credential_id;
    delete (asEd25519 as Record<string, unknown>).client_data_json;
    delete (asEd25519 as Record<string, unknown>).authenticator_data;
    await expectRefusedUnchanged(relay, () => append(relay, who.token, space.name, asEd25519), 'POST_SIGNATURE_INVALID', /passkey KEY signs with webauthn/);

    // An Ed25519 KEY cannot send webauthn.
    const ed = await mintToken(relay.url);
    const edSpace = await createSpaceInStore(relay.store, ed.peerId, freshName('ed'), relay.clock.now());
    const signed = signedPost(ed, edSpace, { kind: 'obs', body: 'ed' });
    const forged = { alg: 'webauthn', canonical: signed.submission.canonical, ...who.auth.assert({ challenge: objectPasskeyChallenge(signed.objectId), origin: policy.origin, rpId: policy.rpId }) };
    await expectRefusedUnchanged(relay, () => append(relay, ed.token, edSpace.name, forged), 'POST_SIGNATURE_INVALID', /Ed25519 KEY signs with ed25519/);
  });

  it('INVALID_REQUEST: webauthn members outside their sizes, or members of the other alg', async () => {
    const who = await passkeyKey(relay);
    const space = await ownSpace(relay, who.peerId);
    const good = webauthnPost(relay, who, space.spaceId, 'sizes');
    for (const change of [
      { credential_id: toBase64url(randomBytes(15)) },
      { authenticator_data: toBase64url(randomBytes(36)) },
      { client_data_json: toBase64url(randomBytes(4097)) },
      { signature: toBase64url(randomBytes(7)) },
      { public_key: 'x' },
    ]) {
      await expectRefusedUnchanged(relay, () => append(relay, who.token, space.name, { ...good, ...change }), 'INVALID_REQUEST', new RegExp(Object.keys(change)[0]!));
    }
  });
});

describe('signature envelopes by a passkey KEY', () => {
  /** A passkey KEY with its encryption key derived from a PRF output (sealed.md §2). */
  async function passkeyWithEncryptionKey() {
    const who = await passkeyKey(relay);
    const enc = deriveEncryptionKey(new Uint8Array(randomBytes(32)), who.peerId);
    const statement = buildEncryptionKeyStatement(who.peerId, enc.publicKey);
    return { who, enc, statement };
  }

  it('an encryption-key statement signed by a passkey is published, served, and the same one again changes nothing', async () => {
    const { who, enc, statement } = await passkeyWithEncryptionKey();
    const envelope = webauthnEnvelope(who.auth, encryptionKeySignedBytes(statement), policy);
    const body = { statement: toBase64url(statement), ...envelope };
    const r = await call(relay, 'PUT', '/v1/me/encryption-key', { token: who.token, body });
    expect(r.status, r.text).toBe(200);
    expect(r.body.changed).toBe(true);
    expect(r.body.encryption_key.public_key).toBe(toHex(enc.publicKey));
    expect(r.body.encryption_key.signature).toEqual(envelope);
    const again = await call(relay, 'PUT', '/v1/me/encryption-key', { token: who.token, body });
    expect(again.status, again.text).toBe(200);
    expect(again.body.changed).toBe(false);
    const peer = await call(relay, 'GET', `/v1/peers/${who.peerId}`, { token: who.token });
    expect(peer.body.encryption_key.signature).toEqual(envelope);
  });

  it('ENCRYPTION_KEY_INVALID: a statement assertion that fails a check, or whose counter does not advance', async () => {
    const { who, statement } = await passkeyWithEncryptionKey();
    const signed = encryptionKeySignedBytes(statement);
    for (const [bend, detail] of [
      [{ tamperSignature: true }, /signature: does not verify/],
      [{ origin: 'https://evil.example' }, /origin/],
      [{ challenge: new Uint8Array(randomBytes(32)) }, /challenge/],
      [{ counter: 1 }, /counter/],
    ] as [Partial<AssertOptions>, RegExp][]) {
      const body = { statement: toBase64url(statement), ...webauthnEnvelope(who.auth, signed, policy, bend) };
      await expectRefusedUnchanged(relay, () => call(relay, 'PUT', '/v1/me/encryption-key', { token: who.token, body }), 'ENCRYPTION_KEY_INVALID', detail);
    }
  });

  /** A sealed SPACE owned by a passkey KEY (its encryption key published with a webauthn statement). */
  async function passkeySealedSpace() {
    const { who, enc, statement } = await passkeyWithEncryptionKey();
    const body = { statement: toBase64url(statement), ...webauthnEnvelope(who.auth, encryptionKeySignedBytes(statement), policy) };
    expect((await call(relay, 'PUT', '/v1/me/encryption-key', { token: who.token, body })).status).toBe(200);
    const spaceId = randomUUID();
    const name = freshName('pksealed');
    const sealed = sealedSpaceCreation({
      spaceId,
      secret: new Uint8Array(randomBytes(32)),
      owner: { peerId: who.peerId, publicKey: enc.publicKey, privateKey: enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    });
    const created = await call(relay, 'POST', '/v1/spaces', { token: who.token, body: { name, visibility: 'sealed', sealed } });
    expect(created.status, created.text).toBe(201);
    return { who, name, spaceId };
  }

  it('a keeper list signed by a passkey owner is accepted; a bad one or an old counter is SEALED_SIGNATURE_INVALID', async () => {
    const { who, name, spaceId } = await passkeySealedSpace();
    const list = (revision: number) => buildKeeperList({ space_id: spaceId, keepers: [], stampers: [], admission: 'stamped', change_every: 3600, revision }, who.peerId);
    const put = (bytes: Uint8Array, o: Partial<AssertOptions> = {}) =>
      call(relay, 'PUT', `/v1/spaces/${name}/sealed/keepers`, {
        token: who.token,
        body: { list: toBase64url(bytes), ...webauthnEnvelope(who.auth, keeperListSignedBytes(bytes), policy, o) },
      });
    const first = list(1);
    await expectRefusedUnchanged(relay, () => put(first, { tamperSignature: true }), 'SEALED_SIGNATURE_INVALID', /keeper list signature: signature/);
    await expectRefusedUnchanged(relay, () => put(first, { rpId: 'evil.example' }), 'SEALED_SIGNATURE_INVALID', /rp_id/);
    const ok = await put(first);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.revision).toBe(1);
    await expectRefusedUnchanged(relay, () => put(list(2), { counter: 1 }), 'SEALED_SIGNATURE_INVALID', /counter/);
    expect((await put(list(2))).status).toBe(200);
  });

  it('a stamp signed by a passkey keeper for another KEY is stored; a bad one is SEALED_SIGNATURE_INVALID', async () => {
    const { who, name } = await passkeySealedSpace();
    const member = await keyed(relay);
    expect((await call(relay, 'PUT', `/v1/spaces/${name}/members/${member.peerId}`, { token: who.token, body: { role: 'writer' } })).status).toBe(201);
    const stamp = buildStamp({ issuer: who.peerId, peer_id: member.peerId });
    const put = (o: Partial<AssertOptions> = {}) =>
      call(relay, 'PUT', `/v1/spaces/${name}/sealed/stamp`, {
        token: who.token,
        body: { stamp: toBase64url(stamp), ...webauthnEnvelope(who.auth, stampSignedBytes(stamp), policy, o) },
      });
    await expectRefusedUnchanged(relay, () => put({ tamperSignature: true }), 'SEALED_SIGNATURE_INVALID', /stamp signature: signature/);
    await expectRefusedUnchanged(relay, () => put({ flags: 0x04 }), 'SEALED_SIGNATURE_INVALID', /user presence/);
    const ok = await put();
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.stored).toBe(true);
  });
});

describe('passkeys turned off by the operator', () => {
  it('answers PASSKEYS_UNAVAILABLE to a passkey KEY signing a post, a statement, a keeper list and a stamp', async () => {
    // The KEYS and the SPACE come from a relay with passkeys on; the same data then serves
    // with passkeys off.
    const dataDir = tempDataDir();
    const on = await startRelay({ dataDir });
    const onPolicy = await passkeyPolicyOf(on);
    const who = await passkeyKey(on);
    const member = await keyed(on);
    const space = await ownSpace(on, who.peerId);
    const enc = deriveEncryptionKey(new Uint8Array(randomBytes(32)), who.peerId);
    const statement = buildEncryptionKeyStatement(who.peerId, enc.publicKey);
    const published = { statement: toBase64url(statement), ...webauthnEnvelope(who.auth, encryptionKeySignedBytes(statement), onPolicy) };
    expect((await call(on, 'PUT', '/v1/me/encryption-key', { token: who.token, body: published })).status).toBe(200);
    const spaceId = randomUUID();
    const sealedName = freshName('pkoff');
    const sealed = sealedSpaceCreation({
      spaceId,
      secret: new Uint8Array(randomBytes(32)),
      owner: { peerId: who.peerId, publicKey: enc.publicKey, privateKey: enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    });
    expect((await call(on, 'POST', '/v1/spaces', { token: who.token, body: { name: sealedName, visibility: 'sealed', sealed } })).status).toBe(201);
    expect((await call(on, 'PUT', `/v1/spaces/${sealedName}/members/${member.peerId}`, { token: who.token, body: { role: 'writer' } })).status).toBe(201);
    await on.close();

    const off = await startRelay({ dataDir, passkeys: false });
    try {
      const post = webauthnPost(off, who, space.spaceId, 'off', {}, onPolicy);
      await expectRefusedUnchanged(off, () => append(off, who.token, space.name, post), 'PASSKEYS_UNAVAILABLE');
      const other = buildEncryptionKeyStatement(who.peerId, deriveEncryptionKey(new Uint8Array(randomBytes(32)), who.peerId).publicKey);
      const statementBody = { statement: toBase64url(other), ...webauthnEnvelope(who.auth, encryptionKeySignedBytes(other), onPolicy) };
      await expectRefusedUnchanged(off, () => call(off, 'PUT', '/v1/me/encryption-key', { token: who.token, body: statementBody }), 'PASSKEYS_UNAVAILABLE');
      const list = buildKeeperList({ space_id: spaceId, keepers: [], stampers: [], admission: 'stamped', change_every: 3600, revision: 1 }, who.peerId);
      const listBody = { list: toBase64url(list), ...webauthnEnvelope(who.auth, keeperListSignedBytes(list), onPolicy) };
      await expectRefusedUnchanged(off, () => call(off, 'PUT', `/v1/spaces/${sealedName}/sealed/keepers`, { token: who.token, body: listBody }), 'PASSKEYS_UNAVAILABLE');
      const stamp = buildStamp({ issuer: who.peerId, peer_id: member.peerId });
      const stampBody = { stamp: toBase64url(stamp), ...webauthnEnvelope(who.auth, stampSignedBytes(stamp), onPolicy) };
      await expectRefusedUnchanged(off, () => call(off, 'PUT', `/v1/spaces/${sealedName}/sealed/stamp`, { token: who.token, body: stampBody }), 'PASSKEYS_UNAVAILABLE');
      // The token minted while passkeys were on still reads: a passkey KEY is a KEY like any other.
      expect((await call(off, 'GET', '/v1/me', { token: who.token })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
