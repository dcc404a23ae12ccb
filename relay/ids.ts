/** Fresh identifiers from the injected randomness (so tests can make them deterministic). */
import { randomFillSync } from 'node:crypto';
import { toHex, uuidFromBytes } from '../shared/encoding.js';

export type Random = (n: number) => Uint8Array;

/**
 * The relay's randomness: node:crypto's CSPRNG, drawn from a pool refilled `poolBytes` at a
 * time, so the two uuids of every request (its id, a post's id) cost a copy instead of a call
 * into the system generator each (Node's own randomUUID pools the same way). Each answer is a
 * fresh array of its own; a request larger than the pool is filled directly.
 */
export function pooledRandom(poolBytes = 4096): Random {
  const pool = new Uint8Array(poolBytes);
  let used = poolBytes;
  return (n) => {
    if (n > poolBytes) return randomFillSync(new Uint8Array(n));
    if (used + n > poolBytes) {
      randomFillSync(pool);
      used = 0;
    }
    const out = pool.slice(used, used + n);
    pool.fill(0, used, used + n); // handed out once: no copy stays behind
    used += n;
    return out;
  };
}

/** A random (version 4, RFC 9562) lowercase uuid. */
export function newUuid(random: Random): string {
  const b = random(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  return uuidFromBytes(b);
}

/** A bearer token: `svc_` + 64 hex from 32 random bytes (protocol/labels.md "token"). */
export function newToken(random: Random): string {
  return `svc_${toHex(random(32))}`;
}
