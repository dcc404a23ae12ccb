/**
 * A KEY's encryption key (protocol/sealed.md §2): derivation, the statement's checks in their
 * order, the fingerprint and the transport forms.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../../shared/canonical.js';
import { SvcError } from '../../../shared/errors.js';
import { fromHex, toBase64url, toHex, utf8 } from '../../../shared/encoding.js';
import { passkeyPeerIdOf, peerIdHexOf, signerFromSeed } from '../../../shared/identity.js';
import type { SignerKey } from '../../../shared/sealed/envelope.js';
import {
  buildEncryptionKeyStatement,
  checkEncryptionKeyView,
  deriveEncryptionKey,
  displayFingerprint,
  encryptionKeyFingerprint,
  encryptionKeyPutBody,
  encryptionKeyView,
  readEncryptionKeyPut,
  signEncryptionKeyStatement,
  verifyEncryptionKeyStatement,
} from '../../../shared/sealed/encryption-key.js';
import { x25519PublicKey } from '../../../shared/sealed/x25519.js';

const seed = (n: string): Uint8Array => new Uint8Array(createHash('sha256').update(`encryption-key test ${n}`).digest());
const alice = signerFromSeed(seed('alice'));
const bob = signerFromSeed(seed('bob'));
const aliceId = peerIdHexOf(alice.publicKey);
const bobId = peerIdHexOf(bob.publicKey);
const aliceKey: SignerKey = { peerId: aliceId, keyType: 'ed25519', publicKey: alice.publicKey };
const enc = deriveEncryptionKey(seed('alice'), aliceId);
const statement = buildEncryptionKeyStatement(aliceId, enc.publicKey);
const envelope = signEncryptionKeyStatement(alice, statement);

function refusal(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SvcError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('deriving the encryption key', () => {
  it('is deterministic from the secret and the peer id, and its public half is X25519 of the private half', () => {
    const again = deriveEncryptionKey(seed('alice'), aliceId);
    expect(toHex(again.privateKey)).toBe(toHex(enc.privateKey));
    expect(toHex(x25519PublicKey(enc.privateKey))).toBe(toHex(enc.publicKey));
  });

  it('differs for another peer id with the same secret, and for another secret', () => {
    expect(toHex(deriveEncryptionKey(seed('alice'), bobId).publicKey)).not.toBe(toHex(enc.publicKey));
    expect(toHex(deriveEncryptionKey(seed('bob'), aliceId).publicKey)).not.toBe(toHex(enc.publicKey));
  });

  it('is not the Ed25519 public key', () => {
    expect(toHex(enc.publicKey)).not.toBe(toHex(alice.publicKey));
  });
});

describe('the statement and its checks, in order', () => {
  it('a statement signed by its KEY verifies and yields the key and fingerprint', () => {
    const checked = verifyEncryptionKeyStatement(statement, envelope, aliceKey);
    expect(toHex(checked.publicKey)).toBe(toHex(enc.publicKey));
    expect(checked.fingerprint).toBe(encryptionKeyFingerprint(enc.publicKey));
    expect(checked.fingerprint).toMatch(/^[0-9a-f]{32}$/);
  });

  it.each([
    ['whitespace (not canonical)', utf8(new TextDecoder().decode(statement).replace(',', ', ')), 'not canonical'],
    ['a fifth member', canonicalBytes({ kem: 32, peer_id: aliceId, public_key: toHex(enc.publicKey), v: 1, x: 1 }), 'exactly the members'],
    ['a member missing', canonicalBytes({ kem: 32, peer_id: aliceId, v: 1 }), 'exactly the members'],
    ['kem 33', canonicalBytes({ kem: 33, peer_id: aliceId, public_key: toHex(enc.publicKey), v: 1 }), 'statement.kem'],
    ['v 2', canonicalBytes({ kem: 32, peer_id: aliceId, public_key: toHex(enc.publicKey), v: 2 }), 'statement.v'],
    ['uppercase hex', canonicalBytes({ kem: 32, peer_id: aliceId, public_key: toHex(enc.publicKey).toUpperCase(), v: 1 }), 'public_key'],
    ['over 512 bytes', utf8(`{"kem":32,"pad":"${'a'.repeat(520)}"}`), '512'],
  ])('refuses %s with ENCRYPTION_KEY_INVALID naming the check', (_name, bytes, words) => {
    const e = refusal(() => verifyEncryptionKeyStatement(bytes, signEncryptionKeyStatement(alice, bytes), aliceKey));
    expect(e.code).toBe('ENCRYPTION_KEY_INVALID');
    expect(e.detail).toContain(words);
  });

  it("refuses a statement naming another KEY's peer id, even when well signed", () => {
    const other = buildEncryptionKeyStatement(bobId, enc.publicKey);
    const e = refusal(() => verifyEncryptionKeyStatement(other, signEncryptionKeyStatement(alice, other), aliceKey));
    expect([e.code, e.detail]).toEqual(['ENCRYPTION_KEY_INVALID', "statement.peer_id: not the signer's peer id"]);
  });

  it("refuses a signer whose key does not hash to the peer id it claims", () => {
    const e = refusal(() => verifyEncryptionKeyStatement(statement, envelope, { ...aliceKey, publicKey: bob.publicKey }));
    expect(e.code).toBe('ENCRYPTION_KEY_INVALID');
    expect(e.detail).toContain('does not hash to its peer id');
  });

  it('refuses a signature by another KEY and a signature with one bit changed', () => {
    for (const env of [
      signEncryptionKeyStatement(bob, statement),
      { alg: 'ed25519' as const, signature: (envelope.signature[0] === '0' ? '1' : '0') + envelope.signature.slice(1) },
    ]) {
      const e = refusal(() => verifyEncryptionKeyStatement(statement, env, aliceKey));
      expect([e.code, e.detail]).toEqual(['ENCRYPTION_KEY_INVALID', 'signature: the signature does not verify']);
    }
  });

  it('answers a webauthn envelope from a passkey KEY with PASSKEYS_UNAVAILABLE when the key carries no passkey policy (passkeys off)', () => {
    const spki = fromHex('302a300506032b6570032100' + toHex(alice.publicKey));
    const passkeyId = toHex(passkeyPeerIdOf(spki));
    const st = buildEncryptionKeyStatement(passkeyId, enc.publicKey);
    const webauthn = { alg: 'webauthn' as const, credential_id: 'AAAA', client_data_json: 'AAAA', authenticator_data: 'AAAA', signature: 'AAAA' };
    const e = refusal(() => verifyEncryptionKeyStatement(st, webauthn, { peerId: passkeyId, keyType: 'passkey', spki }));
    expect(e.code).toBe('PASSKEYS_UNAVAILABLE');
  });
});

describe('fingerprint', () => {
  it('is shown as eight groups of four hex digits; the value itself has no spaces', () => {
    const fp = encryptionKeyFingerprint(enc.publicKey);
    const shown = displayFingerprint(fp);
    expect(shown.split(' ')).toHaveLength(8);
    expect(shown.replaceAll(' ', '')).toBe(fp);
    expect(() => displayFingerprint(shown)).toThrow(TypeError);
  });
});

describe('transport', () => {
  it('the PUT body reads back to the statement and envelope, and refuses any other member', () => {
    const body = encryptionKeyPutBody(statement, envelope);
    expect(Object.keys(body).sort()).toEqual(['alg', 'signature', 'statement']);
    const back = readEncryptionKeyPut(body);
    expect(toHex(back.statement)).toBe(toHex(statement));
    expect(back.envelope).toEqual(envelope);
    expect(refusal(() => readEncryptionKeyPut({ ...body, public_key: 'x' })).detail).toContain('public_key');
    expect(refusal(() => readEncryptionKeyPut({ alg: 'ed25519', signature: envelope.signature })).detail).toContain('statement');
    expect(refusal(() => readEncryptionKeyPut({ ...body, statement: toBase64url(statement) + '=' })).detail).toContain('padding');
  });

  it('a served key is checked against the KEY it belongs to: public key and fingerprint must agree with the statement', () => {
    const view = encryptionKeyView(verifyEncryptionKeyStatement(statement, envelope, aliceKey));
    expect(checkEncryptionKeyView(view, aliceKey)?.fingerprint).toBe(view.fingerprint);
    expect(checkEncryptionKeyView(null, aliceKey)).toBeNull();
    const forged = { ...view, public_key: toHex(deriveEncryptionKey(seed('x'), aliceId).publicKey) };
    expect(refusal(() => checkEncryptionKeyView(forged, aliceKey)).detail).toContain('public_key');
    expect(refusal(() => checkEncryptionKeyView({ ...view, fingerprint: '0'.repeat(32) }, aliceKey)).detail).toContain('fingerprint');
    expect(refusal(() => checkEncryptionKeyView(view, { peerId: bobId, keyType: 'ed25519', publicKey: bob.publicKey })).code).toBe(
      'ENCRYPTION_KEY_INVALID',
    );
  });
});
