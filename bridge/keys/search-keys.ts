/**
 * The keys of the local search index of sealed SPACES (bridge/sealed/local-index.ts), derived from
 * the KEY seed with HKDF-SHA256 (RFC 5869, node:crypto) under labels of the bridge's own: no
 * relay ever computes them, and they are not protocol labels.
 *
 *   content key = HKDF(salt = empty, ikm = seed, info = "svc bridge sealed search content", 32)
 *   entry key   = HKDF(salt = empty, ikm = seed, info = "svc bridge sealed search entries", 32)
 *
 * - The content key seals what the bridge opened of a post (AES-256-GCM, bridge/keys/local-box.ts
 *   `aeadBox`), so the index file holds no word of it in the clear.
 * - The entry key makes the blind index: each term, fingerprint and fingerprint prefix is
 *   stored as the first 8 bytes of HMAC-SHA256(entry key, entry), never as itself. Without the
 *   seed nobody can compute the hash of a word to look for it. What such an index still shows
 *   is how often each (unknown) entry occurs and which posts share entries; 8 bytes keep
 *   accidental collisions negligible (about one pair in 2^64/N² of N distinct entries), and
 *   every hit is checked against the opened content anyway.
 */
import { createHash, createSecretKey, hkdfSync } from 'node:crypto';
import { aeadBox, type LocalBox } from './local-box.js';

const CONTENT_INFO = 'svc bridge sealed search content';
const ENTRY_INFO = 'svc bridge sealed search entries';

export interface SearchKeys {
  /** Seals opened content at rest. */
  readonly box: LocalBox;
  /** The keyed hash of an index entry: HMAC-SHA256 under the entry key, first 8 bytes as a signed 64-bit integer. */
  entry(text: string): bigint;
}

function derived(seed: Uint8Array, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(seed), Buffer.alloc(0), Buffer.from(info, 'utf8'), 32));
}

const SHA256_BLOCK = 64;
/** Entry hashes remembered per process, at most. */
const ENTRY_CACHE = 50_000;

/**
 * HMAC-SHA256 under `key` (RFC 2104: H((K ^ opad) || H((K ^ ipad) || m))) from the two hash
 * states after the padded key, copied for each message: the same bytes as createHmac, in about
 * half its time, which counts when a post gives a hundred entries.
 */
function hmacSha256Of(key: Buffer): (text: string) => Buffer {
  const ipad = Buffer.alloc(SHA256_BLOCK, 0x36);
  const opad = Buffer.alloc(SHA256_BLOCK, 0x5c);
  for (let i = 0; i < key.length; i++) {
    ipad[i]! ^= key[i]!;
    opad[i]! ^= key[i]!;
  }
  const inner = createHash('sha256').update(ipad);
  const outer = createHash('sha256').update(opad);
  ipad.fill(0);
  opad.fill(0);
  return (text) => outer.copy().update(inner.copy().update(text, 'utf8').digest()).digest();
}

/** The search keys of one seed (the seed itself is not kept). */
export function searchKeysOf(seed: Uint8Array): SearchKeys {
  const entryKey = derived(seed, ENTRY_INFO);
  const mac = hmacSha256Of(entryKey);
  entryKey.fill(0);
  const contentKey = derived(seed, CONTENT_INFO);
  const box = aeadBox(createSecretKey(contentKey));
  contentKey.fill(0);
  // Terms repeat across posts (a few words make most of any text), so hashes are remembered in
  // this process, at most ENTRY_CACHE of them (then the memory starts again): it holds nothing
  // the process does not hold already, and never reaches the disk.
  const cache = new Map<string, bigint>();
  return Object.freeze({
    box,
    entry(text: string): bigint {
      let h = cache.get(text);
      if (h === undefined) {
        h = mac(text).readBigInt64BE(0);
        if (cache.size >= ENTRY_CACHE) cache.clear();
        cache.set(text, h);
      }
      return h;
    },
  });
}
