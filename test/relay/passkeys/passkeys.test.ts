/**
 * Passkey KEYS: passkeys.challenge and passkeys.verify (spec/2-endpoints.md "Keys, tokens,
 * passkeys", spec/1-concepts.md "Passkeys", protocol/api-notes.md §3), through the real relay
 * with a software authenticator (test/helpers/passkey-authenticator.ts): registration with an
 * SPKI and a COSE algorithm, sign-in by credential afterwards, and every refusal with its code,
 * the envelope and nothing changed.
 */
import { ECDH, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toBase64url, toHex } from '../../../shared/encoding.js';
import { passkeyPeerIdOf } from '../../../shared/identity.js';
import { expectRefusedUnchanged } from '../../helpers/envelope.js';
import {
  passkeyChallenge,
  passkeyKey,
  passkeySignIn,
  softAuthenticator,
  verifyBody,
  type PasskeyAlg,
} from '../../helpers/passkey-authenticator.js';
import { call, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});
// Sign-in is limited per address: let the buckets refill between tests.
beforeEach(() => relay.clock.advance(60 * 60_000));

const verify = (body: unknown) => call(relay, 'POST', '/v1/passkeys/verify', { body });

describe('passkeys.challenge', () => {
  it('answers a 56-byte challenge with the rp_id and origin of the public URL, the three algorithms and user verification required', async () => {
    const r = await call(relay, 'POST', '/v1/passkeys/challenge', { body: {} });
    expect(r.status).toBe(200);
    const port = new URL(relay.url).port;
    expect(Object.keys(r.body)).toEqual(['challenge', 'rp_id', 'origins', 'algorithms', 'user_verification', 'expires_at']);
    expect(r.body.challenge).toMatch(/^[0-9a-f]{112}$/);
    expect(r.body.rp_id).toBe('127.0.0.1');
    expect(r.body.origins).toEqual([`http://127.0.0.1:${port}`]);
    expect(r.body.algorithms).toEqual([-7, -8, -257]);
    expect(r.body.user_verification).toBe('required');
    const ttl = Date.parse(r.body.expires_at) - relay.clock.now();
    expect(ttl).toBeGreaterThan(298_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });

  it('takes no body as well as an empty object', async () => {
    expect((await call(relay, 'POST', '/v1/passkeys/challenge')).status).toBe(200);
  });
});

describe('register, then sign in', () => {
  for (const alg of [-7, -8, -257] as PasskeyAlg[]) {
    it(`works for algorithm ${alg}: a KEY whose peer id is H(L("passkey") || spki), whose token works like any KEY's`, async () => {
      const a = softAuthenticator(alg);
      const first = await passkeySignIn(relay, a, true);
      expect(first.status, first.text).toBe(200);
      expect(Object.keys(first.body)).toEqual(['peer_id', 'token', 'expires_at', 'registered', 'key_type', 'algorithm']);
      expect(first.body).toMatchObject({ peer_id: toHex(passkeyPeerIdOf(a.spki)), registered: true, key_type: 'passkey', algorithm: alg });
      expect(first.body.token).toMatch(/^svc_[0-9a-f]{64}$/);

      const again = await passkeySignIn(relay, a, false);
      expect(again.status, again.text).toBe(200);
      expect(again.body).toMatchObject({ peer_id: first.body.peer_id, registered: false, key_type: 'passkey', algorithm: alg });

      const me = await call(relay, 'GET', '/v1/me', { token: again.body.token });
      expect(me.status).toBe(200);
      expect(me.body.peer_id).toBe(first.body.peer_id);
      const peer = await call(relay, 'GET', `/v1/peers/${first.body.peer_id}`, { token: first.body.token });
      expect(peer.status).toBe(200);
      expect(peer.body.key_type).toBe('passkey');
      expect(peer.body.public_key).toBe(toHex(a.spki));
      expect(await relay.store.keys.passkeyOf(first.body.peer_id)).toMatchObject({ credentialId: toBase64url(a.credentialId), algorithm: alg, signCount: 2 });
    });
  }

  it('a passkey whose counter stays 0 (a synced passkey) signs in again and again', async () => {
    const a = softAuthenticator(-7, false);
    expect((await passkeySignIn(relay, a, true)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await passkeySignIn(relay, a, false)).status).toBe(200);
  });

  it('takes a label and a ttl as keys.verify does', async () => {
    const a = softAuthenticator(-8);
    const c = await passkeyChallenge(relay);
    const r = await verify({ ...verifyBody(a, c, true), label: 'laptop', ttl_seconds: 3600 });
    expect(r.status, r.text).toBe(200);
    expect(Date.parse(r.body.expires_at) - relay.clock.now()).toBeLessThanOrEqual(3600_000);
    const list = await call(relay, 'GET', '/v1/tokens', { token: r.body.token });
    expect(list.body.items.map((t: { label: string }) => t.label)).toContain('laptop');
  });
});

describe('refusals', () => {
  it('PASSKEY_NOT_REGISTERED: signing in with a credential no KEY registered', async () => {
    const a = softAuthenticator();
    const c = await passkeyChallenge(relay);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(a, c, false)), 'PASSKEY_NOT_REGISTERED');
  });

  it('PASSKEY_TAKEN: registering a key, or a credential id, that is already registered', async () => {
    const { auth } = await passkeyKey(relay);
    const c = await passkeyChallenge(relay);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(auth, c, true)), 'PASSKEY_TAKEN');
    // A new key presented under the taken credential id.
    const other = softAuthenticator();
    other.credentialId = auth.credentialId;
    const c2 = await passkeyChallenge(relay);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(other, c2, true)), 'PASSKEY_TAKEN');
  });

  it('CHALLENGE_INVALID: a challenge used once already, and one the relay never issued', async () => {
    const a = softAuthenticator();
    const c = await passkeyChallenge(relay);
    expect((await verify(verifyBody(a, c, true))).status).toBe(200);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(a, c, false)), 'CHALLENGE_INVALID', /once/);
    const forged = { ...c, challenge: c.challenge.slice(0, 48) + 'ab'.repeat(32) };
    forged.bytes = new Uint8Array(Buffer.from(forged.challenge, 'hex'));
    await expectRefusedUnchanged(relay, () => verify(verifyBody(a, forged, false)), 'CHALLENGE_INVALID');
    // A token challenge for an Ed25519 KEY is not a passkey challenge.
    const keyChallenge = await call(relay, 'POST', '/v1/keys/challenge', { body: { public_key: toHex(randomBytes(32)) } });
    const asPasskey = { ...c, challenge: keyChallenge.body.challenge, bytes: new Uint8Array(Buffer.from(keyChallenge.body.challenge, 'hex')) };
    await expectRefusedUnchanged(relay, () => verify(verifyBody(a, asPasskey, false)), 'CHALLENGE_INVALID');
  });

  it('CHALLENGE_EXPIRED: a challenge older than five minutes', async () => {
    const a = softAuthenticator();
    const c = await passkeyChallenge(relay);
    relay.clock.advance(301_000);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(a, c, true)), 'CHALLENGE_EXPIRED');
  });

  it('KEY_BLOCKED: a blocked passkey KEY gets no token', async () => {
    const { auth, peerId } = await passkeyKey(relay);
    await relay.store.keys.setBlocked(peerId, relay.clock.now());
    const c = await passkeyChallenge(relay);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(auth, c, false)), 'KEY_BLOCKED');
  });

  it('PASSKEY_INVALID names each assertion check that fails, at registration and at sign-in', async () => {
    const { auth } = await passkeyKey(relay);
    const c = await passkeyChallenge(relay);
    const cases: [string, Parameters<typeof verifyBody>[3], RegExp][] = [
      ['type', { type: 'webauthn.create' }, /client_data_json\.type/],
      ['challenge', { challenge: new Uint8Array(randomBytes(56)) }, /client_data_json\.challenge/],
      ['origin', { origin: 'https://evil.example' }, /client_data_json\.origin/],
      ['cross origin', { crossOrigin: true }, /crossOrigin/],
      ['top origin', { topOrigin: 'https://evil.example' }, /topOrigin/],
      ['rp id', { rpId: 'evil.example' }, /rp_id/],
      ['user presence', { flags: 0x04 }, /user presence/],
      ['user verification', { flags: 0x01 }, /user verification/],
      ['signature', { tamperSignature: true }, /signature: does not verify/],
      ['client data not JSON', { clientDataJson: new Uint8Array(Buffer.from('not json')) }, /client_data_json: not a JSON object/],
    ];
    for (const [name, bend, detail] of cases) {
      const r = await expectRefusedUnchanged(relay, () => verify(verifyBody(auth, c, false, bend)), 'PASSKEY_INVALID', detail);
      expect(r.body.error.detail, name).toMatch(detail);
    }
    // The same checks hold when registering.
    const fresh = softAuthenticator(-257);
    await expectRefusedUnchanged(relay, () => verify(verifyBody(fresh, c, true, { flags: 0x01 })), 'PASSKEY_INVALID', /user verification/);
    expect(await relay.store.keys.get(fresh.peerId)).toBeUndefined();
    // The challenge was never spent by those refusals.
    expect((await verify(verifyBody(auth, c, false))).status).toBe(200);
  });

  it('PASSKEY_INVALID: a signature counter that does not increase (equal or backwards)', async () => {
    const { auth } = await passkeyKey(relay);
    // Registration used counter 1; sign in at 5.
    let c = await passkeyChallenge(relay);
    expect((await verify(verifyBody(auth, c, false, { counter: 5 }))).status).toBe(200);
    for (const counter of [5, 4, 0]) {
      c = await passkeyChallenge(relay);
      await expectRefusedUnchanged(relay, () => verify(verifyBody(auth, c, false, { counter })), 'PASSKEY_INVALID', /counter/);
    }
    c = await passkeyChallenge(relay);
    expect((await verify(verifyBody(auth, c, false, { counter: 6 }))).status).toBe(200);
  });

  it('PASSKEY_INVALID: a public key that is not its algorithm, not canonical DER, or not one of the three kinds', async () => {
    const c = await passkeyChallenge(relay);
    const ec = softAuthenticator(-7);
    await expectRefusedUnchanged(relay, () => verify({ ...verifyBody(ec, c, true), algorithm: -8 }), 'PASSKEY_INVALID', /algorithm: -8 does not match/);
    // The same P-256 key as a compressed point: a valid SPKI, but not the canonical one.
    const jwk = createPublicKey({ key: Buffer.from(ec.spki), format: 'der', type: 'spki' }).export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    const compressedPoint = ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'compressed') as Buffer;
    const prefix = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');
    const compressedSpki = Buffer.concat([prefix, compressedPoint]);
    await expectRefusedUnchanged(
      relay,
      () => verify({ ...verifyBody(ec, c, true), public_key: toBase64url(compressedSpki) }),
      'PASSKEY_INVALID',
      /canonical DER/,
    );
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'der' });
    await expectRefusedUnchanged(relay, () => verify({ ...verifyBody(ec, c, true), public_key: toBase64url(p384) }), 'PASSKEY_INVALID', /not a P-256/);
    await expectRefusedUnchanged(
      relay,
      () => verify({ ...verifyBody(ec, c, true), public_key: toBase64url(randomBytes(64)) }),
      'PASSKEY_INVALID',
      /not a DER SubjectPublicKeyInfo/,
    );
  });

  it('INVALID_REQUEST: each passkey field outside its size in the Limits table, and a malformed body', async () => {
    const a = softAuthenticator();
    const c = await passkeyChallenge(relay);
    const good = verifyBody(a, c, true);
    const b64 = (n: number) => toBase64url(randomBytes(n));
    const cases: [string, Record<string, unknown>][] = [
      ['credential_id', { credential_id: b64(15) }],
      ['credential_id', { credential_id: b64(1024) }],
      ['client_data_json', { client_data_json: b64(4097) }],
      ['client_data_json', { client_data_json: '' }],
      ['authenticator_data', { authenticator_data: b64(36) }],
      ['authenticator_data', { authenticator_data: b64(4097) }],
      ['signature', { signature: b64(1025) }],
      ['public_key', { public_key: b64(31) }],
      ['public_key', { public_key: b64(1101) }],
      ['algorithm', { algorithm: -35 }],
      ['algorithm', { algorithm: undefined }],
      ['challenge', { challenge: c.challenge.toUpperCase() }],
      ['challenge', { challenge: c.challenge.slice(2) }],
      ['credential_id', { credential_id: 'not base64url!' }],
      ['extra', { extra: 1 }],
    ];
    for (const [field, change] of cases) {
      const r = await expectRefusedUnchanged(relay, () => verify({ ...good, ...change }), 'INVALID_REQUEST');
      expect(r.body.error.detail ?? '', field).toMatch(field === 'algorithm' && change.algorithm === undefined ? /public_key and algorithm/ : new RegExp(field));
    }
    expect((await verify(good)).status).toBe(200);
  });
});

describe('settings', () => {
  it('passkeys off: both operations answer PASSKEYS_UNAVAILABLE, whatever the body', async () => {
    const off = await startRelay({ passkeys: false });
    try {
      for (const path of ['/v1/passkeys/challenge', '/v1/passkeys/verify']) {
        for (const body of [{}, 'not an object', undefined]) {
          await expectRefusedUnchanged(off, () => call(off, 'POST', path, { body }), 'PASSKEYS_UNAVAILABLE');
        }
      }
      const caps = await call(off, 'GET', '/v1/capabilities');
      expect(caps.body.protocol.passkeys).toEqual({ status: 'unavailable' });
      expect(caps.body.modules.passkeys.status).toBe('unavailable');
    } finally {
      await off.close();
    }
  });

  it('rp_id and origins come from the settings; an assertion for another rp_id or origin is refused', async () => {
    const other = await startRelay({ passkeys: { rpId: 'relay.example', origins: ['https://relay.example', 'https://app.relay.example'] } });
    try {
      const c = await passkeyChallenge(other);
      expect(c.rp_id).toBe('relay.example');
      expect(c.origins).toEqual(['https://relay.example', 'https://app.relay.example']);
      const a = softAuthenticator(-8);
      const port = new URL(other.url).port;
      const vb = (o: Parameters<typeof verifyBody>[3]) => verifyBody(a, c, true, o);
      const refused = (o: Parameters<typeof verifyBody>[3], detail: RegExp) =>
        expectRefusedUnchanged(other, () => call(other, 'POST', '/v1/passkeys/verify', { body: vb(o) }), 'PASSKEY_INVALID', detail);
      await refused({ rpId: '127.0.0.1' }, /rp_id/);
      await refused({ origin: `http://127.0.0.1:${port}` }, /origin/);
      const ok = await call(other, 'POST', '/v1/passkeys/verify', { body: vb({ origin: 'https://app.relay.example' }) });
      expect(ok.status, ok.text).toBe(200);
      const caps = await call(other, 'GET', '/v1/capabilities');
      expect(caps.body.protocol.passkeys).toEqual({
        status: 'available',
        rp_id: 'relay.example',
        origins: ['https://relay.example', 'https://app.relay.example'],
        algorithms: { ES256: -7, EdDSA: -8, RS256: -257 },
        user_verification: 'required',
        peer_id_label: 'agent-state:passkey:v1',
      });
      expect(caps.body.modules.passkeys.status).toBe('available');
      const names = caps.body.operations.map((o: { name: string }) => o.name);
      expect(names).toEqual(expect.arrayContaining(['passkeys.challenge', 'passkeys.verify']));
    } finally {
      await other.close();
    }
  });
});
