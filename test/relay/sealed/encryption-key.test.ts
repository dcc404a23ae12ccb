/**
 * me.encryption_key over the real HTTP relay (spec/2-endpoints.md; protocol/sealed.md §2):
 * published once per KEY for life, every check of the statement in order, the refusals
 * ENCRYPTION_KEY_INVALID (detail names the check), _EXISTS and _TAKEN, and the key served in
 * GET /v1/me and GET /v1/peers/{peer} exactly as signed, so a member checks it itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../../shared/canonical.js';
import { toBase64url, toHex } from '../../../shared/encoding.js';
import {
  buildEncryptionKeyStatement,
  checkEncryptionKeyView,
  encryptionKeyFingerprint,
  encryptionKeyPutBody,
  signEncryptionKeyStatement,
} from '../../../shared/sealed/encryption-key.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import { encryptionKeyBody, publishKey, sealedKey, type SealedKey } from '../../helpers/sealed.js';
import { call } from '../../helpers/spaces.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay.close();
});

async function me(k: SealedKey): Promise<any> {
  return (await call(relay, 'GET', '/v1/me', { token: k.token })).body;
}

async function put(k: SealedKey, body: unknown): Promise<any> {
  return call(relay, 'PUT', '/v1/me/encryption-key', { token: k.token, body });
}

/** A refusal with `code` (and a detail matching `detail`) that leaves the KEY's key as it was. */
async function expectRefused(k: SealedKey, body: unknown, code: string, detail?: RegExp): Promise<void> {
  const before = (await me(k)).encryption_key;
  const r = await put(k, body);
  expect(r.body.error?.code, r.text).toBe(code);
  if (detail) expect(r.body.error.detail).toMatch(detail);
  expect((await me(k)).encryption_key).toEqual(before);
}

describe('publishing an encryption key', () => {
  it('publishes the statement signed by the KEY and serves it exactly as signed, checkable by anyone', async () => {
    const alice = await sealedKey(relay);
    const bob = await sealedKey(relay);
    expect((await me(alice)).encryption_key).toBeNull();
    const r = await publishKey(relay, alice);
    expect(r.status).toBe(200);
    expect(r.body.changed).toBe(true);
    const view = r.body.encryption_key;
    expect(view.public_key).toBe(toHex(alice.enc.publicKey));
    expect(view.fingerprint).toBe(encryptionKeyFingerprint(alice.enc.publicKey));
    expect(view.statement).toBe(encryptionKeyBody(alice).statement);
    // A member checks the served statement against the KEY it names, trusting nothing else.
    const signer = { peerId: alice.peerId, keyType: 'ed25519' as const, publicKey: alice.signer.publicKey };
    expect(checkEncryptionKeyView(view, signer)!.fingerprint).toBe(view.fingerprint);
    expect((await me(alice)).encryption_key).toEqual(view);
    const peer = await call(relay, 'GET', `/v1/peers/${alice.peerId}`, { token: bob.token });
    expect(peer.body.encryption_key).toEqual(view);
    expect(checkEncryptionKeyView(peer.body.encryption_key, signer)).not.toBeNull();
    const bobs = await call(relay, 'GET', `/v1/peers/${bob.peerId}`, { token: alice.token });
    expect(bobs.body.encryption_key).toBeNull();
  });

  it('answers the same statement sent again without change, and refuses a different key with ENCRYPTION_KEY_EXISTS', async () => {
    const alice = await sealedKey(relay);
    const first = await publishKey(relay, alice);
    const again = await publishKey(relay, alice);
    expect(again.status).toBe(200);
    expect(again.body.changed).toBe(false);
    expect(again.body.encryption_key).toEqual(first.body.encryption_key);
    const other = new Uint8Array(32).fill(9);
    const statement = buildEncryptionKeyStatement(alice.peerId, other);
    await expectRefused(alice, encryptionKeyPutBody(statement, signEncryptionKeyStatement(alice.signer, statement)), 'ENCRYPTION_KEY_EXISTS');
  });

  it("refuses another KEY's encryption key with ENCRYPTION_KEY_TAKEN", async () => {
    const alice = await sealedKey(relay);
    const mallory = await sealedKey(relay);
    expect((await publishKey(relay, alice)).status).toBe(200);
    // Mallory signs a statement naming itself with Alice's public key.
    const statement = buildEncryptionKeyStatement(mallory.peerId, alice.enc.publicKey);
    await expectRefused(mallory, encryptionKeyPutBody(statement, signEncryptionKeyStatement(mallory.signer, statement)), 'ENCRYPTION_KEY_TAKEN');
    expect((await publishKey(relay, mallory)).status).toBe(200);
  });
});

describe('statement checks, in order, each naming what failed', () => {
  it('refuses a statement that is not canonical', async () => {
    const k = await sealedKey(relay);
    const text = `{"kem": 32,"peer_id":"${k.peerId}","public_key":"${toHex(k.enc.publicKey)}","v":1}`;
    const statement = new TextEncoder().encode(text);
    await expectRefused(k, encryptionKeyPutBody(statement, signEncryptionKeyStatement(k.signer, statement)), 'ENCRYPTION_KEY_INVALID', /canonical|statement/);
  });

  it('refuses a statement with a member too many, or a wrong kem or version', async () => {
    const k = await sealedKey(relay);
    const base = { kem: 32, peer_id: k.peerId, public_key: toHex(k.enc.publicKey), v: 1 };
    for (const [value, detail] of [
      [{ ...base, extra: 1 }, /exactly the members/],
      [{ ...base, kem: 16 }, /statement\.kem/],
      [{ ...base, v: 2 }, /statement\.v/],
    ] as const) {
      const statement = canonicalBytes(value);
      await expectRefused(k, encryptionKeyPutBody(statement, signEncryptionKeyStatement(k.signer, statement)), 'ENCRYPTION_KEY_INVALID', detail);
    }
  });

  it("refuses a statement naming another KEY, even signed by the caller", async () => {
    const k = await sealedKey(relay);
    const other = await sealedKey(relay);
    const statement = buildEncryptionKeyStatement(other.peerId, k.enc.publicKey);
    await expectRefused(k, encryptionKeyPutBody(statement, signEncryptionKeyStatement(k.signer, statement)), 'ENCRYPTION_KEY_INVALID', /peer_id/);
  });

  it('refuses a signature that does not verify: another KEY signed it, or one byte changed', async () => {
    const k = await sealedKey(relay);
    const other = await sealedKey(relay);
    const statement = buildEncryptionKeyStatement(k.peerId, k.enc.publicKey);
    await expectRefused(k, encryptionKeyPutBody(statement, signEncryptionKeyStatement(other.signer, statement)), 'ENCRYPTION_KEY_INVALID', /signature/);
    const good = signEncryptionKeyStatement(k.signer, statement);
    const flipped = (good.signature[0] === '0' ? '1' : '0') + good.signature.slice(1);
    await expectRefused(k, { statement: toBase64url(statement), alg: 'ed25519', signature: flipped }, 'ENCRYPTION_KEY_INVALID', /signature/);
  });

  it('refuses a webauthn signature from an Ed25519 KEY', async () => {
    const k = await sealedKey(relay);
    const statement = buildEncryptionKeyStatement(k.peerId, k.enc.publicKey);
    const body = {
      statement: toBase64url(statement),
      alg: 'webauthn',
      credential_id: toBase64url(new Uint8Array(16)),
      client_data_json: toBase64url(new Uint8Array(40)),
      authenticator_data: toBase64url(new Uint8Array(37)),
      signature: toBase64url(new Uint8Array(70)),
    };
    await expectRefused(k, body, 'ENCRYPTION_KEY_INVALID', /webauthn/);
  });

  it('refuses other members in the body and a missing statement with INVALID_REQUEST', async () => {
    const k = await sealedKey(relay);
    await expectRefused(k, { ...encryptionKeyBody(k), public_key: toHex(k.enc.publicKey) }, 'INVALID_REQUEST', /public_key/);
    const { statement: _s, ...rest } = encryptionKeyBody(k);
    await expectRefused(k, rest, 'INVALID_REQUEST', /statement/);
    await expectRefused(k, undefined, 'INVALID_REQUEST');
  });

  it('needs a token', async () => {
    const k = await sealedKey(relay);
    const r = await call(relay, 'PUT', '/v1/me/encryption-key', { body: encryptionKeyBody(k) });
    expect(r.body.error.code).toBe('TOKEN_MISSING');
  });
});
