/**
 * X25519 (RFC 7748 §5) through node:crypto, raw 32-byte keys in and out.
 *
 * Raw keys become DER with the fixed prefixes of protocol/labels.md ("Other fixed byte
 * strings"). OpenSSL clamps the scalar and masks the top bit of the peer's u-coordinate as
 * RFC 7748 requires. A result of 32 zero bytes (a low-order peer key) is refused, as RFC 9180
 * §7.1.4 demands of DHKEM (OpenSSL already fails there; both paths give the same refusal).
 *
 * The peer's public key is attacker-controlled.
 */
import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { concatBytes, fromHex } from '../encoding.js';
import { SealedError } from './errors.js';

export const X25519_KEY_BYTES = 32;
const PKCS8_PREFIX = fromHex('302e020100300506032b656e04220420');
const SPKI_PREFIX = fromHex('302a300506032b656e032100');

function assertKey(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== X25519_KEY_BYTES) {
    throw new TypeError(`${name} must be ${X25519_KEY_BYTES} bytes`);
  }
}

function privateKeyObject(sk: Uint8Array): KeyObject {
  assertKey(sk, 'private key');
  return createPrivateKey({ key: Buffer.from(concatBytes(PKCS8_PREFIX, sk)), format: 'der', type: 'pkcs8' });
}

function publicKeyObject(pk: Uint8Array): KeyObject {
  assertKey(pk, 'public key');
  return createPublicKey({ key: Buffer.from(concatBytes(SPKI_PREFIX, pk)), format: 'der', type: 'spki' });
}

/** X25519(sk, 9): the public key of a raw private key. */
export function x25519PublicKey(sk: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyObject(sk)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_PREFIX.length));
}

/** X25519(sk, pk). Throws SealedError('x25519-zero') for an all-zero result. */
export function x25519(sk: Uint8Array, pk: Uint8Array): Uint8Array {
  const privateKey = privateKeyObject(sk);
  const publicKey = publicKeyObject(pk);
  let shared: Uint8Array;
  try {
    shared = new Uint8Array(diffieHellman({ privateKey, publicKey }));
  } catch {
    // With both keys well-formed, OpenSSL fails only on the all-zero result.
    throw new SealedError('x25519-zero', 'the X25519 result is all zero (low-order public key)');
  }
  if (shared.every((b) => b === 0)) {
    throw new SealedError('x25519-zero', 'the X25519 result is all zero (low-order public key)');
  }
  return shared;
}
