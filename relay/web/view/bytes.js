// Bytes for the proof checks (protocol/labels.md "Notation"): hex, base64url, UTF-8, u64,
// uuid16, SHA-256 and labelled hashes through WebCrypto. Every function that reads a served
// value throws an Error naming the field when the value is malformed: what a server shows is
// evidence to check, never trusted.

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function utf8(text) {
  return encoder.encode(text);
}

/** Strict UTF-8 (no BOM, no invalid sequence), or throws. */
export function fromUtf8(bytes, field) {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) throw new Error(`${field}: starts with a byte order mark`);
  try {
    return strictDecoder.decode(bytes);
  } catch {
    throw new Error(`${field}: not UTF-8`);
  }
}

export function isHex(value, bytes) {
  return typeof value === 'string' && value.length === bytes * 2 && /^[0-9a-f]*$/.test(value);
}

/** Lowercase hex of exactly `bytes` bytes, or throws naming `field`. */
export function fromHex(value, bytes, field) {
  if (!isHex(value, bytes)) throw new Error(`${field}: expected ${bytes * 2} lowercase hex`);
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) out[i] = parseInt(value.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toHex(bytes) {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Unpadded base64url, read strictly (the text must be what toB64u writes for its bytes). */
export function fromB64u(value, field) {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]*$/.test(value) || value.length % 4 === 1) {
    throw new Error(`${field}: expected base64url`);
  }
  const raw = atob(value.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((value.length + 3) % 4));
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  if (toB64u(out) !== value) throw new Error(`${field}: not canonical base64url`);
  return out;
}

export function toB64u(bytes) {
  let text = '';
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equal(a, b) {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** u64(n): 8 bytes big-endian; n a decimal string or a safe integer. */
export function u64(n, field = 'position') {
  const text = String(n);
  if (!/^[1-9][0-9]*$|^0$/.test(text)) throw new Error(`${field}: expected a decimal position`);
  let v = BigInt(text);
  if (v >= 1n << 63n) throw new Error(`${field}: too large`);
  const out = new Uint8Array(8);
  for (let i = 7; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isUuid(value) {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** uuid16(u): the 16 bytes of a lowercase uuid. */
export function uuid16(value, field) {
  if (!isUuid(value)) throw new Error(`${field}: expected a lowercase uuid`);
  return fromHex(value.replace(/-/g, ''), 16, field);
}

export async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concat(...parts)));
}

/** L(name): "agent-state:" + name + ":v1", then one zero byte. */
export function label(name) {
  return concat(utf8(`agent-state:${name}:v1`), new Uint8Array([0]));
}

/** H(L(name) ‖ parts…). */
export function labelledHash(name, ...parts) {
  return sha256(label(name), ...parts);
}

/** Pure Ed25519 (RFC 8032) through WebCrypto: does `signature` verify `message` under the 32-byte key? */
export async function verifyEd25519(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
}
