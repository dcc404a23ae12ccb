/**
 * The local box: AES-256-GCM for what the bridge keeps at rest on this machine (generation
 * secrets in the sealed cache, opened posts in the local index of sealed SPACES), under a key
 * derived from the KEY seed (bridge/keys/keys.ts, bridge/keys/search-keys.ts), a fresh 12-byte random
 * nonce per value, the caller's associated data binding where the value belongs. Bridge-local:
 * no relay ever sees it.
 */
import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';

export interface LocalBox {
  /** nonce (12) || ciphertext || tag (16). */
  seal(plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
  /** The plaintext, or undefined when the bytes do not authenticate under this KEY and `aad`. */
  open(sealed: Uint8Array, aad: Uint8Array): Uint8Array | undefined;
}

const BOX_NONCE_BYTES = 12;
const BOX_TAG_BYTES = 16;

/** A LocalBox (AES-256-GCM, fresh 12-byte nonce per value) under a 32-byte `key`. */
export function aeadBox(key: KeyObject): LocalBox {
  return {
    seal(plaintext, aad) {
      const nonce = randomBytes(BOX_NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: BOX_TAG_BYTES });
      cipher.setAAD(aad);
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return new Uint8Array(Buffer.concat([nonce, body, cipher.getAuthTag()]));
    },
    open(sealed, aad) {
      if (!(sealed instanceof Uint8Array) || sealed.length < BOX_NONCE_BYTES + BOX_TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, BOX_NONCE_BYTES), { authTagLength: BOX_TAG_BYTES });
        decipher.setAAD(aad);
        decipher.setAuthTag(sealed.subarray(sealed.length - BOX_TAG_BYTES));
        return new Uint8Array(Buffer.concat([decipher.update(sealed.subarray(BOX_NONCE_BYTES, sealed.length - BOX_TAG_BYTES)), decipher.final()]));
      } catch {
        return undefined;
      }
    },
  };
}
