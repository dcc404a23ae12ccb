// RFC 8785 canonical JSON (protocol/objects.md §1): the writer, and the strict reader that
// accepts bytes only when they are UTF-8, parse as JSON, and write back to exactly the same
// bytes. Re-writing catches what JSON.parse lets through: a duplicate member (the parse keeps
// one, so fewer bytes come back), white space, member order, number forms, escapes, integers
// beyond 2^53 − 1 (they lose digits) and lone surrogates (written raw they become U+FFFD).

import { equal, fromUtf8, utf8 } from './bytes.js';

function write(value) {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('a number that is not finite');
    // ECMAScript's number form, which RFC 8785 adopts (JSON.stringify writes -0 as 0).
    return JSON.stringify(value);
  }
  // JSON.stringify escapes exactly what RFC 8785 escapes, with its short forms and lowercase \u00xx.
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(write).join(',')}]`;
  if (typeof value === 'object') {
    // Default sort compares UTF-16 code units: RFC 8785's member order.
    const names = Object.keys(value).sort();
    return `{${names.map((n) => `${JSON.stringify(n)}:${write(value[n])}`).join(',')}}`;
  }
  throw new Error(`a ${typeof value} is not JSON`);
}

export function canonicalBytes(value) {
  return utf8(write(value));
}

/** Read canonical bytes strictly; answers the JSON value or throws naming `field`. */
export function readCanonical(bytes, field) {
  const text = fromUtf8(bytes, field);
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${field}: not JSON`);
  }
  if (!equal(canonicalBytes(value), bytes)) throw new Error(`${field}: not canonical JSON (RFC 8785)`);
  return value;
}

/** A canonical JSON object, or throws. */
export function readCanonicalObject(bytes, field) {
  const value = readCanonical(bytes, field);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${field}: not a JSON object`);
  return value;
}

/** Do two JSON values write the same canonical text? */
export function sameJson(a, b) {
  return write(a) === write(b);
}
