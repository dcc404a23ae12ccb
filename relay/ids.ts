/** Fresh identifiers from the injected randomness (so tests can make them deterministic). */
import { toHex, uuidFromBytes } from '../shared/encoding.js';

export type Random = (n: number) => Uint8Array;

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
