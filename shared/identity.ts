/**
 * Identity: Ed25519 KEYS (RFC 8032, pure Ed25519 through node:crypto), peer ids and the token
 * challenge message (protocol/labels.md "Identity and sign-in", spec/1-concepts.md
 * "Authentication").
 *
 *   peer_id (Ed25519 KEY)  = H(L("agent") || pk32)
 *   peer_id (passkey KEY)  = H(L("passkey") || spki)
 *   token challenge signed = L("token-challenge") || audience || 0x00 || challenge
 *
 * Callers hold a `Signer`, never private key bytes. Public keys, messages and signatures given
 * to `verifyEd25519` are attacker-controlled: any malformed input answers `false`.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { SvcError } from './errors.js';
import { concatBytes, fromHex, toHex, utf8 } from './encoding.js';
import { label, labelledHash } from './labels.js';

/** DER prefixes that turn raw Ed25519 bytes into PKCS#8 / SPKI (labels.md "Other fixed byte strings"). */
const PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');
const SPKI_PREFIX = fromHex('302a300506032b6570032100');

export const ED25519_SEED_BYTES = 32;
export const ED25519_PUBLIC_KEY_BYTES = 32;
export const ED25519_SIGNATURE_BYTES = 64;

/** Something that signs with one KEY; the private half stays inside. */
export interface Signer {
  readonly publicKey: Uint8Array;
  sign(message: Uint8Array): Uint8Array;
}

function assertBytes(value: unknown, length: number, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new TypeError(`${name} must be ${length} bytes`);
  }
}

function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  assertBytes(seed, ED25519_SEED_BYTES, 'seed');
  return createPrivateKey({ key: Buffer.from(concatBytes(PKCS8_PREFIX, seed)), format: 'der', type: 'pkcs8' });
}

function rawPublicKey(privateKey: KeyObject): Uint8Array {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
}

/** A signer for the Ed25519 KEY whose RFC 8032 private key (seed) is `seed`. */
export function signerFromSeed(seed: Uint8Array): Signer {
  const privateKey = privateKeyFromSeed(seed);
  const publicKey = rawPublicKey(privateKey);
  return Object.freeze({
    publicKey,
    sign(message: Uint8Array): Uint8Array {
      return new Uint8Array(sign(null, message, privateKey));
    },
  });
}

export function publicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return rawPublicKey(privateKeyFromSeed(seed));
}

/**
 * Public KeyObjects by raw key (hex). Importing a key costs about a quarter of a verify
 * (measured, Node 24: 81 µs verify with a KeyObject, 107 µs when the SPKI DER is passed each
 * time, 22 µs for createPublicKey alone), and the same few authors sign most posts. The memo
 * is of a pure function, so it changes no answer; it is bounded and evicts the least recently
 * used key, so a caller cycling through many keys costs only misses.
 */
const KEY_CACHE_LIMIT = 1024;
const publicKeyCache = new Map<string, KeyObject>();

export function publicKeyObject(publicKey: Uint8Array): KeyObject {
  const id = toHex(publicKey);
  const hit = publicKeyCache.get(id);
  if (hit !== undefined) {
    publicKeyCache.delete(id);
    publicKeyCache.set(id, hit);
    return hit;
  }
  const der = new Uint8Array(SPKI_PREFIX.length + ED25519_PUBLIC_KEY_BYTES);
  der.set(SPKI_PREFIX);
  der.set(publicKey, SPKI_PREFIX.length);
  const key = createPublicKey({ key: Buffer.from(der.buffer), format: 'der', type: 'spki' });
  if (publicKeyCache.size >= KEY_CACHE_LIMIT) {
    const oldest = publicKeyCache.keys().next().value;
    if (oldest !== undefined) publicKeyCache.delete(oldest);
  }
  publicKeyCache.set(id, key);
  return key;
}

/**
 * Pure Ed25519 verification (RFC 8032 §5.1.7) of `signature` over `message`.
 * Never throws: wrong lengths, a key that is not a curve point or a bad signature are `false`.
 */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (
    !(publicKey instanceof Uint8Array) ||
    publicKey.length !== ED25519_PUBLIC_KEY_BYTES ||
    !(signature instanceof Uint8Array) ||
    signature.length !== ED25519_SIGNATURE_BYTES ||
    !(message instanceof Uint8Array)
  ) {
    return false;
  }
  try {
    return verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    return false;
  }
}

/** peer_id of an Ed25519 KEY: H(L("agent") || pk32). */
export function peerIdOf(publicKey: Uint8Array): Uint8Array {
  assertBytes(publicKey, ED25519_PUBLIC_KEY_BYTES, 'publicKey');
  return labelledHash('agent', publicKey);
}

export function peerIdHexOf(publicKey: Uint8Array): string {
  return toHex(peerIdOf(publicKey));
}

/** peer_id of a passkey KEY: H(L("passkey") || spki), spki as sent at registration. */
export function passkeyPeerIdOf(spki: Uint8Array): Uint8Array {
  if (!(spki instanceof Uint8Array) || spki.length === 0) throw new TypeError('spki must be non-empty bytes');
  return labelledHash('passkey', spki);
}

/**
 * The bytes a KEY signs to mint a token: L("token-challenge") || audience || 0x00 || challenge.
 * The audience comes from the server's answer; a NUL inside it would make the split ambiguous.
 */
export function tokenChallengeMessage(audience: string, challenge: Uint8Array): Uint8Array {
  if (typeof audience !== 'string' || audience.length === 0 || audience.includes('\u0000')) {
    throw new SvcError('INVALID_REQUEST', 'audience: must be a non-empty host name without U+0000');
  }
  if (!(challenge instanceof Uint8Array)) throw new TypeError('challenge must be bytes');
  return concatBytes(label('token-challenge'), utf8(audience), new Uint8Array([0]), challenge);
}

/**
 * Public keys whose private half is published (spec "Minting with an Ed25519 KEY" step 4:
 * KEY_REJECTED), lowercase hex:
 * - the protocol's published test KEY (protocol-v1-vectors.json, labels.md);
 * - the five public keys of RFC 8032 §7.1 (TEST 1, TEST 2, TEST 3, TEST 1024, TEST SHA(abc)).
 */
export const REJECTED_PUBLIC_KEYS: ReadonlySet<string> = new Set([
  '03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8',
  'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
  '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
  'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
  '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
  'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
]);
