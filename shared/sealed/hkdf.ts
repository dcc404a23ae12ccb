/**
 * HKDF-SHA256 (RFC 5869) built on HMAC, so RFC 9180's labelled forms can call Extract and
 * Expand separately with exactly the bytes they need.
 *
 *   Extract(salt, ikm)     = HMAC-SHA256(salt, ikm)                  (§2.2; empty salt = 32 zero bytes)
 *   Expand(prk, info, L)   = T(1) || T(2) || ... first L bytes        (§2.3)
 *   T(i)                   = HMAC-SHA256(prk, T(i-1) || info || i)
 *   HKDF(salt, ikm, info, L) = Expand(Extract(salt, ikm), info, L)   (labels.md `HKDF`)
 */
import { hmacSha256 } from '../hash.js';

export const SHA256_BYTES = 32;
const ZERO_SALT = new Uint8Array(SHA256_BYTES);

function assertBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be bytes`);
}

/** RFC 5869 §2.2. An empty salt is HashLen zero bytes (HMAC pads the key the same way). */
export function hkdfExtract(salt: Uint8Array, ikm: Uint8Array): Uint8Array {
  assertBytes(salt, 'salt');
  assertBytes(ikm, 'ikm');
  return hmacSha256(salt.length === 0 ? ZERO_SALT : salt, ikm);
}

/** RFC 5869 §2.3: L at most 255 * HashLen. */
export function hkdfExpand(prk: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  assertBytes(prk, 'prk');
  assertBytes(info, 'info');
  if (!Number.isInteger(length) || length < 0 || length > 255 * SHA256_BYTES) {
    throw new RangeError('length must be 0 to 8160 bytes');
  }
  const out = new Uint8Array(length);
  let previous: Uint8Array = new Uint8Array(0);
  for (let i = 1, at = 0; at < length; i++) {
    previous = hmacSha256(prk, previous, info, Uint8Array.of(i));
    out.set(previous.subarray(0, Math.min(SHA256_BYTES, length - at)), at);
    at += SHA256_BYTES;
  }
  return out;
}

/** HKDF(salt, ikm, info, L) as labels.md writes it. */
export function hkdf(salt: Uint8Array, ikm: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  return hkdfExpand(hkdfExtract(salt, ikm), info, length);
}
