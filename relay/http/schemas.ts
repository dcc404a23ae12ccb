/** Zod pieces shared by route schemas (spec/1-concepts.md "Encoding conventions"). */
import * as z from 'zod';
import { utf8Length } from '../../shared/encoding.js';

/** Exactly `bytes` bytes as lowercase hex; uppercase is refused. */
export function lowerHex(bytes: number) {
  return z.string().regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `expected ${bytes * 2} lowercase hex characters`);
}

/** Any even-length lowercase hex, at most `maxBytes` bytes. */
export function evenLowerHex(maxBytes: number) {
  return z
    .string()
    .max(maxBytes * 2, `at most ${maxBytes * 2} hex characters`)
    .regex(/^(?:[0-9a-f]{2})+$/, 'expected even-length lowercase hex');
}

/** A string of at most `max` UTF-8 bytes. */
export function utf8Max(max: number) {
  return z.string().refine((s) => utf8Length(s) <= max, `at most ${max} bytes`);
}

/**
 * The body of an operation that takes none: absent, or `{}`. Anything else is refused, so a
 * member sent by mistake (or by an attacker) is never silently ignored by a write.
 */
export const noBody = z.strictObject({}).optional();

/** A lowercase uuid. */
export const uuidText = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'expected a lowercase uuid');

/** A peer id in a path: 64 lowercase hex, never a prefix. */
export const PEER_ID_RE = /^[0-9a-f]{64}$/;

/** ISO 8601 with milliseconds and Z, as every answer writes times. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
