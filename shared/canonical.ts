/**
 * Canonical JSON, RFC 8785 (JCS), with a strict reader (protocol/objects.md §1).
 *
 * Writing uses the `canonicalize` package (members by UTF-16 code units, ECMAScript number
 * form, minimal string escapes). Reading accepts bytes only when they are UTF-8 without a BOM,
 * parse as JSON with no duplicate member, contain no U+0000, lone surrogate or integer beyond
 * ±(2^53 − 1) (in any form: 1e+21 too), nest at most JSON_DEPTH_MAX deep, and canonicalising
 * the parse gives back exactly the same bytes.
 *
 * Input to the reader is attacker-controlled.
 */
import canonicalizeLib from 'canonicalize';
import { SvcError } from './errors.js';
import { fromUtf8, utf8 } from './encoding.js';
import { nestsDeeperThan } from './json-text.js';
import { JSON_DEPTH_MAX } from './limits.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Reasons a value is refused anywhere in the protocol (spec "Encoding conventions"). */
export function findForbiddenValue(value: unknown, path = '$'): string | undefined {
  switch (typeof value) {
    case 'string':
      if (value.includes('\u0000')) return `${path}: U+0000 is not allowed`;
      if (!value.isWellFormed()) return `${path}: lone surrogate is not allowed`;
      return undefined;
    case 'number':
      if (!Number.isFinite(value)) return `${path}: non-finite number`;
      // Every IEEE 754 double beyond ±(2^53 − 1) is an integer, whatever text it was read
      // from (123456789012345678901234, 1e300, 1E21, 2.5e25, or a fraction that rounds to one):
      // an integer the protocol refuses, which could not be stored as sent either (JSON.parse
      // already rounded it, and from 1e21 up it would be written back in exponent form).
      // Fractions within the range are kept.
      if (!Number.isSafeInteger(value) && Number.isInteger(value)) return `${path}: integer beyond ±(2^53 - 1)`;
      return undefined;
    case 'boolean':
      return undefined;
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const r = findForbiddenValue(value[i], `${path}[${i}]`);
          if (r) return r;
        }
        return undefined;
      }
      for (const [k, v] of Object.entries(value)) {
        if (k.includes('\u0000')) return `${path}: U+0000 in a member name`;
        if (!k.isWellFormed()) return `${path}: lone surrogate in a member name`;
        const r = findForbiddenValue(v, `${path}.${k}`);
        if (r) return r;
      }
      return undefined;
    }
    default:
      return `${path}: not a JSON value`;
  }
}

/** RFC 8785 text of a JSON value. Throws INVALID_REQUEST for values the protocol refuses. */
export function canonicalize(value: unknown): string {
  const problem = findForbiddenValue(value);
  if (problem) throw new SvcError('INVALID_REQUEST', problem);
  return rfc8785Text(value);
}

/**
 * RFC 8785 text of a JSON value without the protocol's value rules: RFC 8785 itself writes
 * any finite number (its own examples include 1e+30), which the protocol refuses as an
 * integer beyond ±(2^53 − 1). Only for checking the writer against the published RFC 8785
 * vectors; protocol bytes go through `canonicalize`.
 */
export function rfc8785Text(value: unknown): string {
  const text = canonicalizeLib(value);
  if (text === undefined) throw new SvcError('INVALID_REQUEST', 'not a JSON value');
  return text;
}

/** RFC 8785 bytes of a JSON value. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8(canonicalize(value));
}

/**
 * Read canonical bytes strictly. Anything that is not exactly the canonical form of what it
 * parses to is INVALID_REQUEST with a detail naming `field`.
 */
export function readCanonical(input: Uint8Array | string, field = 'canonical'): JsonValue {
  const text = typeof input === 'string' ? input : fromUtf8(input, field);
  if (text.charCodeAt(0) === 0xfeff) {
    throw new SvcError('INVALID_REQUEST', `${field}: byte-order mark is not allowed`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SvcError('INVALID_REQUEST', `${field}: not JSON`);
  }
  // The checks below recurse: bytes nested deeper than any protocol object may be (a post's
  // `private` part holding `data`, the deepest) are refused before they could overflow the stack.
  if (nestsDeeperThan(text, JSON_DEPTH_MAX)) {
    throw new SvcError('INVALID_REQUEST', `${field}: arrays and objects nest more than ${JSON_DEPTH_MAX} deep`);
  }
  const problem = findForbiddenValue(parsed);
  if (problem) throw new SvcError('INVALID_REQUEST', `${field}: ${problem}`);
  // A duplicate member, whitespace, another number form or another escape all make the
  // re-canonicalised text differ from the input. Fast path: RFC 8785 writes strings and numbers
  // exactly as JSON.stringify does, so when every object's members already come in ascending
  // UTF-16 order, JSON.stringify gives the canonical text (saves ~2 µs per 1 KiB object on the
  // signed-post path). Anything else, such as integer-like member names, which V8 reorders,
  // takes the full comparison.
  if (!(JSON.stringify(parsed) === text && membersAscending(parsed)) && canonicalizeLib(parsed) !== text) {
    throw new SvcError('INVALID_REQUEST', `${field}: not canonical JSON (RFC 8785)`);
  }
  return parsed as JsonValue;
}

/** True when every object's members, in enumeration order, are strictly ascending (UTF-16). */
function membersAscending(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(membersAscending);
  let previous: string | undefined;
  for (const [k, v] of Object.entries(value)) {
    if (previous !== undefined && !(previous < k)) return false;
    if (!membersAscending(v)) return false;
    previous = k;
  }
  return true;
}

/** Read canonical bytes that must hold a JSON object. */
export function readCanonicalObject(input: Uint8Array | string, field = 'canonical'): JsonObject {
  const v = readCanonical(input, field);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new SvcError('INVALID_REQUEST', `${field}: must be a JSON object`);
  }
  return v;
}
