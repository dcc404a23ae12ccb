/**
 * Wire encodings of protocol version 1 (spec/1-concepts.md "Encoding conventions",
 * protocol/labels.md "Notation"):
 * - fixed-size binary values are lowercase hex; uppercase is refused;
 * - variable-length byte strings are unpadded base64url; padding and the standard alphabet
 *   are refused;
 * - u64(n) is eight bytes big-endian; uuid16(u) the sixteen bytes of a lowercase uuid;
 * - every 64-bit number on the wire is a decimal string.
 *
 * Readers throw SvcError('INVALID_REQUEST') with a detail naming `field`.
 */
import { SvcError } from './errors.js';

const HEX_RE = /^(?:[0-9a-f]{2})*$/;
const B64U_RE = /^[A-Za-z0-9_-]*$/;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DECIMAL_RE = /^(?:0|[1-9][0-9]*)$/;
const U64_MAX = (1n << 64n) - 1n;
/** Positions are stored as SQLite integers, so the largest one we accept is 2^63 - 1. */
export const I64_MAX = (1n << 63n) - 1n;

const textEncoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

export function utf8(text: string): Uint8Array {
  return textEncoder.encode(text);
}

/** Decode UTF-8 strictly: invalid sequences are refused, a BOM is kept as U+FEFF. */
export function fromUtf8(bytes: Uint8Array, field = 'bytes'): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    throw bad(field, 'not valid UTF-8');
  }
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function isHex(text: unknown, bytes?: number): text is string {
  return (
    typeof text === 'string' &&
    HEX_RE.test(text) &&
    (bytes === undefined || text.length === bytes * 2)
  );
}

/** Lowercase hex of exactly `bytes` bytes (any even length when omitted). */
export function fromHex(text: unknown, bytes?: number, field = 'hex'): Uint8Array {
  if (typeof text !== 'string') throw bad(field, 'expected a string of lowercase hex');
  if (!HEX_RE.test(text)) {
    throw bad(field, /^[0-9a-fA-F]*$/.test(text) ? 'hex must be lowercase' : 'not hex');
  }
  if (bytes !== undefined && text.length !== bytes * 2) {
    throw bad(field, `expected ${bytes * 2} hex characters, got ${text.length}`);
  }
  return new Uint8Array(Buffer.from(text, 'hex'));
}

export function toBase64url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');
}

/**
 * Unpadded base64url. Refuses padding, other alphabets, a length of 1 mod 4 and non-zero
 * trailing bits (so every byte string has exactly one accepted encoding).
 */
export function fromBase64url(text: unknown, field = 'base64url'): Uint8Array {
  if (typeof text !== 'string') throw bad(field, 'expected a base64url string');
  if (!B64U_RE.test(text)) {
    throw bad(field, text.includes('=') ? 'padding is not allowed' : 'not unpadded base64url');
  }
  if (text.length % 4 === 1) throw bad(field, 'impossible base64url length');
  // The last character carries 4 unused bits (length 2 mod 4) or 2 (length 3 mod 4); they must
  // be zero. Checked on the character rather than by re-encoding: this sits on the signed-post path.
  const rest = text.length % 4;
  if (rest !== 0) {
    const c = text.charCodeAt(text.length - 1);
    const sextet = c === 45 ? 62 : c === 95 ? 63 : c >= 97 ? c - 71 : c >= 65 ? c - 65 : c + 4;
    if ((sextet & (rest === 2 ? 0x0f : 0x03)) !== 0) throw bad(field, 'non-canonical base64url (trailing bits)');
  }
  return new Uint8Array(Buffer.from(text, 'base64url'));
}

/** Eight bytes, big-endian. */
export function u64(n: bigint | number): Uint8Array {
  const v = typeof n === 'bigint' ? n : BigInt(n);
  if (v < 0n || v > U64_MAX) throw new RangeError(`u64 out of range: ${v}`);
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, false);
  return out;
}

export function readU64(bytes: Uint8Array, offset = 0): bigint {
  if (bytes.length < offset + 8) throw new RangeError('u64 needs eight bytes');
  return new DataView(bytes.buffer, bytes.byteOffset + offset, 8).getBigUint64(0, false);
}

export function isUuid(text: unknown): text is string {
  return typeof text === 'string' && UUID_RE.test(text);
}

/** The sixteen bytes of a lowercase uuid, in text order. */
export function uuid16(uuid: string, field = 'uuid'): Uint8Array {
  if (!isUuid(uuid)) throw bad(field, 'expected a lowercase uuid');
  return new Uint8Array(Buffer.from(uuid.replaceAll('-', ''), 'hex'));
}

export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError('a uuid is 16 bytes');
  const h = toHex(bytes);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A 64-bit decimal string (no sign, no leading zeros) read as a bigint within [min, max]. */
export function parseDecimal(
  text: unknown,
  field = 'number',
  min = 0n,
  max: bigint = I64_MAX,
): bigint {
  if (typeof text !== 'string' || !DECIMAL_RE.test(text) || text.length > 20) {
    throw bad(field, 'expected a decimal string');
  }
  const v = BigInt(text);
  if (v < min || v > max) throw bad(field, `must be between ${min} and ${max}`);
  return v;
}

export function toDecimal(n: bigint | number): string {
  if (typeof n === 'number' && !Number.isSafeInteger(n)) throw new RangeError('not an integer');
  return typeof n === 'bigint' ? n.toString(10) : String(n);
}
