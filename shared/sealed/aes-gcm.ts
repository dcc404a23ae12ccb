/**
 * AES-128-GCM (NIST SP 800-38D) with a 12-byte nonce and a 16-byte tag appended to the
 * ciphertext, through node:crypto. protocol/sealed.md writes `AES(k, pt, aad)` for the form with
 * an all-zero nonce, which is sound only because each derived key encrypts one plaintext.
 *
 * `aesGcmOpen` takes attacker-controlled ciphertext: any failure is `undefined`, never a throw,
 * so callers decide what a refusal means.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';

export const AES128_KEY_BYTES = 16;
export const GCM_NONCE_BYTES = 12;
export const GCM_TAG_BYTES = 16;
const ZERO_NONCE = new Uint8Array(GCM_NONCE_BYTES);

function assertLength(value: unknown, length: number, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== length) throw new TypeError(`${name} must be ${length} bytes`);
}

function assertBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be bytes`);
}

/** ct || tag of `pt` under `key` and `nonce`, authenticating `aad`. */
export function aesGcmSeal(key: Uint8Array, nonce: Uint8Array, pt: Uint8Array, aad: Uint8Array): Uint8Array {
  assertLength(key, AES128_KEY_BYTES, 'key');
  assertLength(nonce, GCM_NONCE_BYTES, 'nonce');
  assertBytes(pt, 'pt');
  assertBytes(aad, 'aad');
  const cipher = createCipheriv('aes-128-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(aad);
  const out = new Uint8Array(pt.length + GCM_TAG_BYTES);
  const head = cipher.update(pt);
  const tail = cipher.final();
  out.set(head, 0);
  out.set(tail, head.length);
  out.set(cipher.getAuthTag(), pt.length);
  return out;
}

/** The plaintext of `sealed` (ct || tag), or undefined when it does not authenticate. */
export function aesGcmOpen(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
  assertLength(key, AES128_KEY_BYTES, 'key');
  assertLength(nonce, GCM_NONCE_BYTES, 'nonce');
  assertBytes(sealed, 'sealed');
  assertBytes(aad, 'aad');
  if (sealed.length < GCM_TAG_BYTES) return undefined;
  const split = sealed.length - GCM_TAG_BYTES;
  try {
    const decipher = createDecipheriv('aes-128-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(split));
    const head = decipher.update(sealed.subarray(0, split));
    const tail = decipher.final();
    const out = new Uint8Array(split);
    out.set(head, 0);
    out.set(tail, head.length);
    return out;
  } catch {
    return undefined;
  }
}

/** `AES(k, pt, aad)` of sealed.md: the all-zero nonce, for a key used exactly once. */
export function aesSealOnce(key: Uint8Array, pt: Uint8Array, aad: Uint8Array): Uint8Array {
  return aesGcmSeal(key, ZERO_NONCE, pt, aad);
}

export function aesOpenOnce(key: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined {
  return aesGcmOpen(key, ZERO_NONCE, sealed, aad);
}
