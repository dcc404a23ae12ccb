/**
 * The keys of the local search index of sealed SPACES (bridge/sealed-index.ts), derived from
 * the KEY seed with HKDF-SHA256 (RFC 5869, node:crypto) under labels of the bridge's own: no
 * relay ever computes them, and they are not protocol labels.
 *
 *   content key = HKDF(salt = empty, ikm = seed, info = "svc bridge sealed search content", 32)
 *   entry key   = HKDF(salt = empty, ikm = seed, info = "svc bridge sealed search entries", 32)
 *
 * - The content key seals what the bridge opened of a post (AES-256-GCM, bridge/keys.ts
 *   `aeadBox`), so the index file holds no word of it in the clear.
 * - The entry key makes the blind index: each term, fingerprint and fingerprint prefix is
 *   stored as the first 8 bytes of HMAC-SHA256(entry key, entry), never as itself. Without the
 *   seed nobody can compute the hash of a word to look for it. What such an index still shows
 *   is how often each (unknown) entry occurs and which posts share entries; 8 bytes keep
 *   accidental collisions negligible (about one pair in 2^64/N² of N distinct entries), and
 *   every hit is checked against the opened content anyway.
 */
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import { aeadBox, type LocalBox } from './keys.js';

const CONTENT_INFO = 'svc bridge sealed search content';
const ENTRY_INFO = 'svc bridge sealed search entries';

export interface SearchKeys {
  /** Seals opened content at rest. */
  readonly box: LocalBox;
  /** The keyed hash of an index entry: HMAC-SHA256 under the entry key, first 8 bytes as a signed 64-bit integer. */
  entry(text: string): bigint;
}

function derived(seed: Uint8Array, info: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', Buffer.from(seed), Buffer.alloc(0), Buffer.from(info, 'utf8'), 32)));
}

/** The search keys of one seed (the seed itself is not kept). */
export function searchKeysOf(seed: Uint8Array): SearchKeys {
  const entryKey = derived(seed, ENTRY_INFO);
  return Object.freeze({
    box: aeadBox(derived(seed, CONTENT_INFO)),
    entry: (text: string) => createHmac('sha256', entryKey).update(text, 'utf8').digest().readBigInt64BE(0),
  });
}
