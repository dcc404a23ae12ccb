#!/usr/bin/env node
// @ts-check
/**
 * sealed.mjs: seal and open what svc's sealed SPACES and sealed pairs carry, with nothing but
 * Node.js (22.12 or later) and this file. An ES module (import the functions below) and a
 * small command line (`node sealed.mjs --help`). The byte formats are written out in /sealed.md
 * on the relay this file came from; in short:
 *
 *   L(name)       UTF-8 "agent-state:" + name + ":v1" and one 0x00 byte
 *   HKDF          HKDF-SHA256 (RFC 5869); an empty salt is 32 zero bytes
 *   AES(k,pt,aad) AES-128-GCM, 16-byte key, all-zero 12-byte nonce, 16-byte tag appended
 *                 (sound only because every key derived here encrypts one plaintext)
 *   suite 1       HPKE (RFC 9180) mode_auth, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM
 *
 *   encryption key  ikm = HKDF(empty, seed, L("encryption-key-seed") ‖ peer_id, 32);
 *                   (sk, pk) = DeriveKeyPair(ikm)   (RFC 9180 §7.1.3)
 *   statement       canonical {"kem":32,"peer_id","public_key","v":1}, signed over L("encryption-key") ‖ statement
 *   container C     SPACE: 0x02 ‖ uuid16(space_id); pair: 0x01 ‖ lower peer id ‖ higher peer id
 *   commitment      SHA-256(L("sealed-commitment") ‖ C ‖ u64(g) ‖ secret_g)
 *   lock            SealAuth(pk of the recipient, info L("sealed-lock") ‖ C ‖ u64(g),
 *                   aad recipient ‖ sender ‖ commitment, pt secret_g) = enc ‖ ct, 80 bytes
 *   back link       AES(HKDF(empty, secret_g, L("sealed-chain") ‖ C ‖ u64(g), 16), secret_(g-1), C ‖ u64(g-1))
 *   item            hd = SHA-256(L("sealed-header") ‖ header);
 *                   k = HKDF(header salt, secret_g, L("sealed-item") ‖ hd, 16); ct = AES(k, content, hd)
 *   keeper list     canonical {"admission","change_every","keepers","revision","space_id","stampers","v":1},
 *                   signed over L("sealed-keepers") ‖ list
 *   stamp           canonical {"issuer","not_after"?,"peer_id","v":1}, signed over L("sealed-stamp") ‖ stamp
 *
 * Keys: a KEY file is the bridge's Ed25519 PKCS#8 PEM (see `keyFromPem`); its 32-byte seed is
 * the secret the encryption key is derived from. Randomness (secrets, salts, HPKE ephemeral
 * input) is drawn from node:crypto unless passed in, so vectors can be reproduced.
 *
 * Everything handed to an `open*` or `verify*` function is treated as hostile: any failure
 * throws, and nothing of a failed item is returned.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman, randomBytes, sign, verify } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

// ---- bytes ------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const EMPTY = new Uint8Array(0);

/** @param {...Uint8Array} parts */
export function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** @param {Uint8Array} bytes */
export function toHex(bytes) {
  return Buffer.from(bytes).toString('hex');
}

/** Lowercase hex, of exactly `n` bytes when `n` is given. @param {unknown} text @param {number} [n] @param {string} [what] */
export function fromHex(text, n, what = 'hex') {
  if (typeof text !== 'string' || text.length % 2 !== 0 || !/^[0-9a-f]*$/.test(text) || (n !== undefined && text.length !== n * 2)) {
    throw new Error(`${what}: expected ${n === undefined ? '' : `${n * 2} `}lowercase hex`);
  }
  return new Uint8Array(Buffer.from(text, 'hex'));
}

/** @param {Uint8Array} bytes */
export function toB64u(bytes) {
  return Buffer.from(bytes).toString('base64url');
}

/** Unpadded base64url, read strictly. @param {unknown} text @param {string} [what] */
export function fromB64u(text, what = 'base64url') {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new Error(`${what}: expected unpadded base64url`);
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'));
  if (toB64u(bytes) !== text) throw new Error(`${what}: not canonical base64url`);
  return bytes;
}

/** @param {...Uint8Array} parts */
export function sha256(...parts) {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** @param {Uint8Array} key @param {...Uint8Array} parts */
function hmac(key, ...parts) {
  const h = createHmac('sha256', key);
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** L(name): the label text and one zero byte. @param {string} name */
export function label(name) {
  return encoder.encode(`agent-state:${name}:v1\0`);
}

/** Eight bytes, big-endian. @param {number} n */
export function u64(n) {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('u64: expected a non-negative integer');
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n), false);
  return out;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PEER_RE = /^[0-9a-f]{64}$/;

/** @param {unknown} uuid @param {string} what */
function uuid16(uuid, what) {
  if (typeof uuid !== 'string' || !UUID_RE.test(uuid)) throw new Error(`${what}: expected a lowercase uuid`);
  return new Uint8Array(Buffer.from(uuid.replaceAll('-', ''), 'hex'));
}

/** @param {unknown} id @param {string} what @returns {string} */
function peerId(id, what) {
  if (typeof id !== 'string' || !PEER_RE.test(id)) throw new Error(`${what}: expected a peer id, 64 lowercase hex`);
  return id;
}

/** @param {unknown} v @param {number} n @param {string} what @returns {Uint8Array} */
function bytesOf(v, n, what) {
  if (!(v instanceof Uint8Array) || v.length !== n) throw new Error(`${what}: expected ${n} bytes`);
  return v;
}

/** @param {Uint8Array} a @param {Uint8Array} b */
function same(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// ---- RFC 8785 canonical JSON -------------------------------------------------------------------

/**
 * RFC 8785 text of a JSON value: members sorted by UTF-16 code units, strings and numbers as
 * JSON.stringify writes them (the ECMAScript forms RFC 8785 §3.2.2 names).
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('canonical JSON: a number must be finite');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw new Error('canonical JSON: a lone surrogate has no encoding');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.entries(/** @type {Record<string, unknown>} */ (value)).filter(([, v]) => v !== undefined);
    members.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${members.map(([k, v]) => `${canonicalJson(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new Error(`canonical JSON: ${typeof value} is not a JSON value`);
}

/** @param {unknown} value */
function canonicalBytes(value) {
  return encoder.encode(canonicalJson(value));
}

/**
 * Canonical JSON bytes holding an object, read strictly: UTF-8 without a byte-order mark, and
 * written back canonically they are the same bytes.
 * @param {Uint8Array} bytes @param {string} what
 * @returns {Record<string, any>}
 */
export function readCanonicalObject(bytes, what) {
  /** @type {unknown} */
  let value;
  try {
    const text = utf8Strict.decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) throw new Error('byte-order mark');
    value = JSON.parse(text);
    if (canonicalJson(value) !== text) throw new Error('not canonical');
  } catch {
    throw new Error(`${what}: not canonical JSON (RFC 8785)`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what}: not a JSON object`);
  return /** @type {Record<string, any>} */ (value);
}

/** Exactly the `required` members and any of `optional`, none null. @param {Record<string, any>} o @param {string} what @param {string[]} required @param {string[]} [optional] */
function exactMembers(o, what, required, optional = []) {
  for (const m of required) if (!Object.hasOwn(o, m)) throw new Error(`${what}.${m}: required`);
  for (const [m, v] of Object.entries(o)) {
    if (!required.includes(m) && !optional.includes(m)) throw new Error(`${what}.${m}: not a member`);
    if (v === null) throw new Error(`${what}.${m}: absent members are omitted, never null`);
  }
}

// ---- HKDF, AES-128-GCM, X25519 -----------------------------------------------------------------

/** RFC 5869 §2.2; an empty salt is 32 zero bytes. @param {Uint8Array} salt @param {Uint8Array} ikm */
export function hkdfExtract(salt, ikm) {
  return hmac(salt.length === 0 ? new Uint8Array(32) : salt, ikm);
}

/** RFC 5869 §2.3. @param {Uint8Array} prk @param {Uint8Array} info @param {number} length */
export function hkdfExpand(prk, info, length) {
  if (!Number.isInteger(length) || length < 0 || length > 255 * 32) throw new Error('HKDF: length out of range');
  const out = new Uint8Array(length);
  let t = EMPTY;
  for (let i = 1, at = 0; at < length; i++, at += 32) {
    t = hmac(prk, t, info, new Uint8Array([i]));
    out.set(t.subarray(0, Math.min(32, length - at)), at);
  }
  return out;
}

/** HKDF(salt, ikm, info, L). @param {Uint8Array} salt @param {Uint8Array} ikm @param {Uint8Array} info @param {number} length */
export function hkdf(salt, ikm, info, length) {
  return hkdfExpand(hkdfExtract(salt, ikm), info, length);
}

const ZERO_NONCE = new Uint8Array(12);

/** AES-128-GCM: ct ‖ tag. @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} pt @param {Uint8Array} aad */
export function aesGcmSeal(key, nonce, pt, aad) {
  const cipher = createCipheriv('aes-128-gcm', bytesOf(key, 16, 'AES key'), bytesOf(nonce, 12, 'nonce'), { authTagLength: 16 });
  cipher.setAAD(aad);
  return new Uint8Array(Buffer.concat([cipher.update(pt), cipher.final(), cipher.getAuthTag()]));
}

/** AES-128-GCM open; throws when it does not authenticate. @param {Uint8Array} key @param {Uint8Array} nonce @param {Uint8Array} sealed @param {Uint8Array} aad */
export function aesGcmOpen(key, nonce, sealed, aad) {
  if (sealed.length < 16) throw new Error('AES-GCM: shorter than its tag');
  try {
    const decipher = createDecipheriv('aes-128-gcm', bytesOf(key, 16, 'AES key'), bytesOf(nonce, 12, 'nonce'), { authTagLength: 16 });
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return new Uint8Array(Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]));
  } catch {
    throw new Error('AES-GCM: does not authenticate (wrong key, associated data or bytes)');
  }
}

const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const X25519_SPKI = Buffer.from('302a300506032b656e032100', 'hex');

/** X25519(sk, 9). @param {Uint8Array} sk */
export function x25519PublicKey(sk) {
  const key = createPrivateKey({ key: Buffer.concat([X25519_PKCS8, bytesOf(sk, 32, 'X25519 private key')]), format: 'der', type: 'pkcs8' });
  return new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(X25519_SPKI.length));
}

/** X25519(sk, pk); an all-zero result (a low-order key) is refused (RFC 9180 §7.1.4). @param {Uint8Array} sk @param {Uint8Array} pk */
export function x25519(sk, pk) {
  const privateKey = createPrivateKey({ key: Buffer.concat([X25519_PKCS8, bytesOf(sk, 32, 'X25519 private key')]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey({ key: Buffer.concat([X25519_SPKI, bytesOf(pk, 32, 'X25519 public key')]), format: 'der', type: 'spki' });
  /** @type {Uint8Array} */
  let shared;
  try {
    shared = new Uint8Array(diffieHellman({ privateKey, publicKey }));
  } catch {
    throw new Error('X25519: the result is all zero (low-order public key)');
  }
  if (shared.every((b) => b === 0)) throw new Error('X25519: the result is all zero (low-order public key)');
  return shared;
}

// ---- HPKE suite 1 (RFC 9180) -------------------------------------------------------------------

/** I2OSP(n, w) (RFC 9180 §3). @param {number} n @param {number} w */
function i2osp(n, w) {
  const out = new Uint8Array(w);
  for (let i = w - 1, v = n; i >= 0; i--, v = Math.floor(v / 256)) out[i] = v % 256;
  return out;
}

const HPKE_V1 = encoder.encode('HPKE-v1');
const KEM_SUITE = concat(encoder.encode('KEM'), i2osp(0x20, 2));
const HPKE_SUITE = concat(encoder.encode('HPKE'), i2osp(0x20, 2), i2osp(1, 2), i2osp(1, 2));
export const MODE_BASE = 0x00;
export const MODE_AUTH = 0x02;

/** @param {Uint8Array} suite @param {Uint8Array} salt @param {string} name @param {Uint8Array} ikm */
function labeledExtract(suite, salt, name, ikm) {
  return hkdfExtract(salt, concat(HPKE_V1, suite, encoder.encode(name), ikm));
}

/** @param {Uint8Array} suite @param {Uint8Array} prk @param {string} name @param {Uint8Array} info @param {number} length */
function labeledExpand(suite, prk, name, info, length) {
  return hkdfExpand(prk, concat(i2osp(length, 2), HPKE_V1, suite, encoder.encode(name), info), length);
}

/** DeriveKeyPair(ikm) of DHKEM(X25519, HKDF-SHA256) (§7.1.3). @param {Uint8Array} ikm */
export function deriveKeyPair(ikm) {
  if (ikm.length < 32) throw new Error('DeriveKeyPair: ikm must be at least 32 bytes');
  const privateKey = labeledExpand(KEM_SUITE, labeledExtract(KEM_SUITE, EMPTY, 'dkp_prk', ikm), 'sk', EMPTY, 32);
  return { privateKey, publicKey: x25519PublicKey(privateKey) };
}

/** ExtractAndExpand (§4.1). @param {Uint8Array} dh @param {Uint8Array} kemContext */
function extractAndExpand(dh, kemContext) {
  return labeledExpand(KEM_SUITE, labeledExtract(KEM_SUITE, EMPTY, 'eae_prk', dh), 'shared_secret', kemContext, 32);
}

/**
 * KeySchedule for modes base and auth, no PSK (§5.1): the AEAD key and base nonce.
 * @param {number} mode @param {Uint8Array} sharedSecret @param {Uint8Array} info
 */
export function keySchedule(mode, sharedSecret, info) {
  const context = concat(new Uint8Array([mode]), labeledExtract(HPKE_SUITE, EMPTY, 'psk_id_hash', EMPTY), labeledExtract(HPKE_SUITE, EMPTY, 'info_hash', info));
  const secret = labeledExtract(HPKE_SUITE, sharedSecret, 'secret', EMPTY);
  return {
    key: labeledExpand(HPKE_SUITE, secret, 'key', context, 16),
    baseNonce: labeledExpand(HPKE_SUITE, secret, 'base_nonce', context, 12),
    exporterSecret: labeledExpand(HPKE_SUITE, secret, 'exp', context, 32),
  };
}

/**
 * @typedef {{ pkR: Uint8Array, info: Uint8Array, aad: Uint8Array, pt: Uint8Array, ikmE?: Uint8Array }} SealBaseInput
 * @typedef {{ enc: Uint8Array, ct: Uint8Array }} HpkeSealed
 */

/** Single-shot Seal in mode_base (§6.1), sequence number 0. @param {SealBaseInput} input @returns {HpkeSealed} */
export function sealBase(input) {
  const e = deriveKeyPair(input.ikmE ?? new Uint8Array(randomBytes(32)));
  const shared = extractAndExpand(x25519(e.privateKey, input.pkR), concat(e.publicKey, input.pkR));
  const ks = keySchedule(MODE_BASE, shared, input.info);
  return { enc: e.publicKey, ct: aesGcmSeal(ks.key, ks.baseNonce, input.pt, input.aad) };
}

/** Single-shot Open in mode_base. @param {{ enc: Uint8Array, skR: Uint8Array, info: Uint8Array, aad: Uint8Array, ct: Uint8Array }} input */
export function openBase(input) {
  const shared = extractAndExpand(x25519(input.skR, input.enc), concat(input.enc, x25519PublicKey(input.skR)));
  const ks = keySchedule(MODE_BASE, shared, input.info);
  return aesGcmOpen(ks.key, ks.baseNonce, input.ct, input.aad);
}

/** Single-shot SealAuth (§6.1): the sender authenticates with its static key skS. @param {SealBaseInput & { skS: Uint8Array }} input @returns {HpkeSealed} */
export function sealAuth(input) {
  const e = deriveKeyPair(input.ikmE ?? new Uint8Array(randomBytes(32)));
  const dh = concat(x25519(e.privateKey, input.pkR), x25519(input.skS, input.pkR));
  const shared = extractAndExpand(dh, concat(e.publicKey, input.pkR, x25519PublicKey(input.skS)));
  const ks = keySchedule(MODE_AUTH, shared, input.info);
  return { enc: e.publicKey, ct: aesGcmSeal(ks.key, ks.baseNonce, input.pt, input.aad) };
}

/** Single-shot OpenAuth: opens only for the sender whose public key is pkS. @param {{ enc: Uint8Array, skR: Uint8Array, pkS: Uint8Array, info: Uint8Array, aad: Uint8Array, ct: Uint8Array }} input */
export function openAuth(input) {
  const dh = concat(x25519(input.skR, bytesOf(input.enc, 32, 'enc')), x25519(input.skR, input.pkS));
  const shared = extractAndExpand(dh, concat(input.enc, x25519PublicKey(input.skR), input.pkS));
  const ks = keySchedule(MODE_AUTH, shared, input.info);
  return aesGcmOpen(ks.key, ks.baseNonce, input.ct, input.aad);
}

// ---- KEYS and encryption keys ------------------------------------------------------------------

/**
 * @typedef {object} Key
 * @property {Uint8Array} seed         the 32-byte Ed25519 seed (RFC 8032 private key)
 * @property {Uint8Array} publicKey    raw Ed25519 public key
 * @property {string} peerId           hex SHA-256(L("agent") ‖ public key)
 * @property {{ privateKey: Uint8Array, publicKey: Uint8Array }} encryption   the X25519 pair
 */

const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

/** A KEY from its 32-byte Ed25519 seed. @param {Uint8Array} seed @returns {Key} */
export function keyFromSeed(seed) {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, bytesOf(seed, 32, 'seed')]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }).subarray(ED25519_SPKI.length));
  const id = toHex(sha256(label('agent'), publicKey));
  return { seed: new Uint8Array(seed), publicKey, peerId: id, encryption: encryptionKeyPair(seed, id) };
}

/** A KEY from a PKCS#8 PEM key file's text (the bridge's key directory). @param {string} pem */
export function keyFromPem(pem) {
  const key = createPrivateKey({ key: pem, format: 'pem' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`the key file holds a ${key.asymmetricKeyType} key, not Ed25519`);
  const d = key.export({ format: 'jwk' }).d;
  if (d === undefined) throw new Error('the key file holds no private key');
  return keyFromSeed(new Uint8Array(Buffer.from(d, 'base64url')));
}

/** Ed25519 signature of `message` by a KEY. @param {Key} key @param {Uint8Array} message */
export function signWith(key, message) {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, key.seed]), format: 'der', type: 'pkcs8' });
  return new Uint8Array(sign(null, message, privateKey));
}

/** @param {Uint8Array} publicKey @param {Uint8Array} message @param {Uint8Array} signature */
function ed25519Verifies(publicKey, message, signature) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  return verify(null, message, createPublicKey({ key: Buffer.concat([ED25519_SPKI, publicKey]), format: 'der', type: 'spki' }), signature);
}

/**
 * A KEY's X25519 encryption key pair from its 32-byte secret S (an Ed25519 KEY's seed, or a
 * passkey's PRF output) and its peer id.
 * @param {Uint8Array} secret @param {string} id
 */
export function encryptionKeyPair(secret, id) {
  const ikm = hkdf(EMPTY, bytesOf(secret, 32, 'secret'), concat(label('encryption-key-seed'), fromHex(peerId(id, 'peer id'), 32)), 32);
  return deriveKeyPair(ikm);
}

/** First 16 bytes of SHA-256(L("encryption-key") ‖ pk), as 32 hex. @param {Uint8Array} publicKey */
export function fingerprint(publicKey) {
  return toHex(sha256(label('encryption-key'), bytesOf(publicKey, 32, 'public key')).subarray(0, 16));
}

/** The statement a KEY publishes for its encryption key. @param {string} id @param {Uint8Array} publicKey */
export function encryptionKeyStatement(id, publicKey) {
  return canonicalBytes({ kem: 32, peer_id: peerId(id, 'peer_id'), public_key: toHex(bytesOf(publicKey, 32, 'public key')), v: 1 });
}

/**
 * @typedef {{ alg: 'ed25519', signature: string }} Envelope   an Ed25519 signature envelope
 */

/** The body of `PUT /v1/me/encryption-key` for a KEY. @param {Key} key */
export function encryptionKeyPutBody(key) {
  const statement = encryptionKeyStatement(key.peerId, key.encryption.publicKey);
  return { statement: toB64u(statement), alg: 'ed25519', signature: toHex(signWith(key, concat(label('encryption-key'), statement))) };
}

/**
 * A published statement checked against the Ed25519 KEY it names (canonical, exactly its four
 * members, the signer's peer id, the signature); answers the encryption public key and its
 * fingerprint. A webauthn envelope (a passkey KEY) is not checked here and throws.
 * @param {Uint8Array} statement @param {{ alg: string, signature?: string }} envelope @param {Uint8Array} signerPublicKey
 */
export function verifyEncryptionKeyStatement(statement, envelope, signerPublicKey) {
  if (statement.length < 1 || statement.length > 512) throw new Error('statement: 1 to 512 bytes');
  const o = readCanonicalObject(statement, 'statement');
  exactMembers(o, 'statement', ['kem', 'peer_id', 'public_key', 'v']);
  if (o.kem !== 32 || o.v !== 1) throw new Error('statement: kem must be 32 and v 1');
  const signerId = toHex(sha256(label('agent'), bytesOf(signerPublicKey, 32, 'signer public key')));
  if (o.peer_id !== signerId) throw new Error("statement.peer_id: not the signer's peer id");
  if (envelope.alg !== 'ed25519') throw new Error(`a ${envelope.alg} signature is not checked here`);
  if (!ed25519Verifies(signerPublicKey, concat(label('encryption-key'), statement), fromHex(envelope.signature, 64, 'signature'))) {
    throw new Error('statement: the signature does not verify');
  }
  const publicKey = fromHex(o.public_key, 32, 'statement.public_key');
  return { peerId: signerId, publicKey, fingerprint: fingerprint(publicKey) };
}

// ---- containers, commitments, back links, locks ----------------------------------------------------

/** A sealed SPACE's container: 0x02 ‖ uuid16. @param {string} spaceId */
export function spaceContainer(spaceId) {
  return concat(new Uint8Array([2]), uuid16(spaceId, 'space_id'));
}

/** A sealed pair's container: 0x01 ‖ the two peer ids ascending. @param {string} a @param {string} b */
export function pairContainer(a, b) {
  peerId(a, 'peer a');
  peerId(b, 'peer b');
  if (a === b) throw new Error('a pair is two different KEYS');
  const [lo, hi] = a < b ? [a, b] : [b, a];
  return concat(new Uint8Array([1]), fromHex(lo, 32), fromHex(hi, 32));
}

/** @param {Uint8Array} c */
function checkContainer(c) {
  if (!(c instanceof Uint8Array) || !((c.length === 17 && c[0] === 2) || (c.length === 65 && c[0] === 1))) {
    throw new Error('container: expected a SPACE (17 bytes) or pair (65 bytes) container');
  }
  return c;
}

/** @param {unknown} g */
function generation(g) {
  if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 1) throw new Error('generation: an integer of at least 1');
  return g;
}

/** SHA-256(L("sealed-commitment") ‖ C ‖ u64(g) ‖ secret_g). @param {Uint8Array} container @param {number} g @param {Uint8Array} secret */
export function commitment(container, g, secret) {
  return sha256(label('sealed-commitment'), checkContainer(container), u64(generation(g)), bytesOf(secret, 32, 'secret'));
}

/** @param {Uint8Array} container @param {number} g @param {Uint8Array} secret @param {Uint8Array | string} expected */
function checkCommitment(container, g, secret, expected) {
  const want = typeof expected === 'string' ? fromHex(expected, 32, 'commitment') : expected;
  if (!same(commitment(container, g, secret), want)) throw new Error(`commitment ${g} does not hold for the secret obtained`);
}

/** A fresh 32-byte generation secret. */
export function newSecret() {
  return new Uint8Array(randomBytes(32));
}

/** @param {Uint8Array} container @param {number} g @param {Uint8Array} secret */
function backLinkKey(container, g, secret) {
  return hkdf(EMPTY, secret, concat(label('sealed-chain'), container, u64(g)), 16);
}

/** back_g: secret_(g-1) sealed under a key only secret_g gives (g ≥ 2), 48 bytes. @param {Uint8Array} container @param {number} g @param {Uint8Array} secret @param {Uint8Array} previousSecret */
export function sealBackLink(container, g, secret, previousSecret) {
  if (generation(g) < 2) throw new Error('back links start at generation 2');
  checkContainer(container);
  return aesGcmSeal(backLinkKey(container, g, bytesOf(secret, 32, 'secret')), ZERO_NONCE, bytesOf(previousSecret, 32, 'previous secret'), concat(container, u64(g - 1)));
}

/**
 * secret_(g-1) from back_g and secret_g; commitment_(g-1) must hold for it.
 * @param {Uint8Array} container @param {number} g @param {Uint8Array} secret @param {Uint8Array} back @param {Uint8Array | string} previousCommitment
 */
export function openBackLink(container, g, secret, back, previousCommitment) {
  if (generation(g) < 2) throw new Error('back links start at generation 2');
  checkContainer(container);
  const previous = aesGcmOpen(backLinkKey(container, g, bytesOf(secret, 32, 'secret')), ZERO_NONCE, bytesOf(back, 48, 'back link'), concat(container, u64(g - 1)));
  checkCommitment(container, g - 1, previous, previousCommitment);
  return previous;
}

/** @param {Uint8Array} container @param {number} g */
function lockInfo(container, g) {
  return concat(label('sealed-lock'), checkContainer(container), u64(generation(g)));
}

/**
 * The 80-byte lock that hands secret_g to `recipient` from `sender`.
 * @param {{ container: Uint8Array, generation: number, secret: Uint8Array,
 *           recipient: { peerId: string, publicKey: Uint8Array }, sender: { peerId: string, privateKey: Uint8Array },
 *           ephemeral?: Uint8Array }} input
 */
export function sealLock(input) {
  const c = commitment(input.container, input.generation, input.secret);
  const { enc, ct } = sealAuth({
    pkR: input.recipient.publicKey,
    skS: input.sender.privateKey,
    info: lockInfo(input.container, input.generation),
    aad: concat(fromHex(peerId(input.recipient.peerId, 'recipient'), 32), fromHex(peerId(input.sender.peerId, 'sender'), 32), c),
    pt: input.secret,
    ...(input.ephemeral === undefined ? {} : { ikmE: input.ephemeral }),
  });
  return concat(enc, ct);
}

/**
 * secret_g from a lock, opened with the recipient's encryption private key as coming from the
 * sender's encryption public key (take it only from the sender's checked statement); the
 * commitment the relay shows beside the lock must then hold.
 * @param {{ container: Uint8Array, generation: number, lock: Uint8Array, commitment: Uint8Array | string,
 *           recipient: { peerId: string, privateKey: Uint8Array }, sender: { peerId: string, publicKey: Uint8Array } }} input
 */
export function openLock(input) {
  const lock = bytesOf(input.lock, 80, 'lock');
  const c = typeof input.commitment === 'string' ? fromHex(input.commitment, 32, 'commitment') : input.commitment;
  const secret = openAuth({
    enc: lock.subarray(0, 32),
    ct: lock.subarray(32),
    skR: input.recipient.privateKey,
    pkS: input.sender.publicKey,
    info: lockInfo(input.container, input.generation),
    aad: concat(fromHex(peerId(input.recipient.peerId, 'recipient'), 32), fromHex(peerId(input.sender.peerId, 'sender'), 32), c),
  });
  checkCommitment(input.container, input.generation, secret, c);
  return secret;
}

// ---- items -------------------------------------------------------------------------------------

/**
 * @typedef {object} PostHeaderFields
 * @property {string} author
 * @property {number} generation
 * @property {string} kind
 * @property {string} space_id
 * @property {string[]} [to]
 * @property {string} [reply_to]
 * @property {string} [supersedes]
 * @property {string} [retracts]
 */

/** @param {Uint8Array | undefined} salt */
function saltHex(salt) {
  return toHex(salt === undefined ? new Uint8Array(randomBytes(16)) : bytesOf(salt, 16, 'salt'));
}

/** @param {unknown[]} list @param {string} author @param {string} what */
function recipients(list, author, what) {
  if (list.length < 1 || list.length > 8) throw new Error(`${what}: 1 to 8 peer ids`);
  return list.map((p, i) => {
    const id = peerId(p, `${what}[${i}]`);
    if (id === author) throw new Error(`${what}: never the author`);
    if (i > 0 && !(/** @type {string} */ (list[i - 1]) < id)) throw new Error(`${what}: ascending without repeats`);
    return id;
  });
}

/** @param {Uint8Array} bytes */
function headerSize(bytes) {
  if (bytes.length > 2048) throw new Error('header: over 2,048 bytes');
  return bytes;
}

/**
 * A post's header bytes; a fresh random salt unless one is given (a header is never sealed
 * with a second content).
 * @param {PostHeaderFields} fields @param {Uint8Array} [salt]
 */
export function postHeader(fields, salt) {
  const author = peerId(fields.author, 'author');
  if (typeof fields.kind !== 'string' || fields.kind === '') throw new Error('kind: required');
  /** @type {Record<string, unknown>} */
  const h = { author, generation: generation(fields.generation), kind: fields.kind, salt: saltHex(salt), space_id: fields.space_id, suite: 1, type: 'post', v: 1 };
  uuid16(fields.space_id, 'space_id');
  if (fields.to !== undefined && fields.to.length > 0) h.to = recipients([...fields.to].sort(), author, 'to');
  for (const m of /** @type {const} */ (['reply_to', 'supersedes', 'retracts'])) {
    if (fields[m] !== undefined) {
      uuid16(fields[m], m);
      h[m] = fields[m];
    }
  }
  if (h.supersedes !== undefined && h.retracts !== undefined) throw new Error('supersedes and retracts are never both set');
  return headerSize(canonicalBytes(h));
}

/**
 * A sealed pair message's header bytes (generation 1, the pair ascending).
 * @param {{ author: string, peer: string, about?: string, reply_to?: string }} fields @param {Uint8Array} [salt]
 */
export function messageHeader(fields, salt) {
  const author = peerId(fields.author, 'author');
  const peer = peerId(fields.peer, 'peer');
  if (author === peer) throw new Error('a pair is two different KEYS');
  /** @type {Record<string, unknown>} */
  const h = { author, generation: 1, pair: author < peer ? [author, peer] : [peer, author], salt: saltHex(salt), suite: 1, type: 'message', v: 1 };
  if (fields.about !== undefined) {
    if (!/^[a-z0-9][a-z0-9-]{2,62}$/.test(fields.about)) throw new Error('about: a SPACE name');
    h.about = fields.about;
  }
  if (fields.reply_to !== undefined) {
    uuid16(fields.reply_to, 'reply_to');
    h.reply_to = fields.reply_to;
  }
  return headerSize(canonicalBytes(h));
}

/**
 * A header read strictly: canonical, exactly the members of its type, suite 1, v 1.
 * @param {Uint8Array} bytes @param {'post' | 'message'} [type]
 */
export function readHeader(bytes, type) {
  if (bytes.length < 1 || bytes.length > 2048) throw new Error('header: 1 to 2,048 bytes');
  const h = readCanonicalObject(bytes, 'header');
  if (h.type !== 'post' && h.type !== 'message') throw new Error('header.type: post or message');
  if (type !== undefined && h.type !== type) throw new Error(`header.type: must be ${type}`);
  if (h.v !== 1 || h.suite !== 1) throw new Error('header: v and suite must be 1');
  if (typeof h.salt !== 'string' || !/^[0-9a-f]{32}$/.test(h.salt)) throw new Error('header.salt: 32 lowercase hex');
  const author = peerId(h.author, 'header.author');
  generation(h.generation);
  if (h.type === 'post') {
    exactMembers(h, 'header', ['author', 'generation', 'kind', 'salt', 'space_id', 'suite', 'type', 'v'], ['reply_to', 'retracts', 'supersedes', 'to']);
    if (typeof h.kind !== 'string' || h.kind === '') throw new Error('header.kind: required');
    uuid16(h.space_id, 'header.space_id');
    if (h.to !== undefined) {
      if (!Array.isArray(h.to)) throw new Error('header.to: a list');
      recipients(h.to, author, 'header.to');
    }
    for (const m of ['reply_to', 'supersedes', 'retracts']) if (h[m] !== undefined) uuid16(h[m], `header.${m}`);
    if (h.supersedes !== undefined && h.retracts !== undefined) throw new Error('header: supersedes and retracts are never both set');
  } else {
    exactMembers(h, 'header', ['author', 'generation', 'pair', 'salt', 'suite', 'type', 'v'], ['about', 'reply_to']);
    if (h.generation !== 1) throw new Error('header.generation: a message is sealed under generation 1');
    const pair = h.pair;
    if (!Array.isArray(pair) || pair.length !== 2 || !(peerId(pair[0], 'header.pair') < peerId(pair[1], 'header.pair'))) throw new Error('header.pair: two peer ids, ascending');
    if (author !== pair[0] && author !== pair[1]) throw new Error('header.author: one of the pair');
    if (h.reply_to !== undefined) uuid16(h.reply_to, 'header.reply_to');
  }
  return h;
}

/** @param {string} text @param {number} min @param {number} max @param {string} what */
function sized(text, min, max, what) {
  if (typeof text !== 'string') throw new Error(`${what}: a string`);
  const n = encoder.encode(text).length;
  if (n < min || n > max) throw new Error(`${what}: ${min} to ${max.toLocaleString('en')} bytes`);
  return text;
}

/** @param {unknown} v @param {number} max @param {string} what */
function jsonObject(v, max, what) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what}: a JSON object`);
  if (canonicalBytes(v).length > max) throw new Error(`${what}: over ${max.toLocaleString('en')} bytes`);
  return v;
}

/**
 * @typedef {object} PostContentFields
 * @property {string} [title]
 * @property {string} [body]
 * @property {{ scheme: string, value: string }[]} [fingerprints]
 * @property {Record<string, unknown>} [data]
 * @property {Record<string, unknown>} [budget]
 * @property {string} [run_id]
 */

/** Code point order (UTF-8 byte order). @param {string} a @param {string} b */
function byCodePoint(a, b) {
  const x = [...a].map((c) => /** @type {number} */ (c.codePointAt(0)));
  const y = [...b].map((c) => /** @type {number} */ (c.codePointAt(0)));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return /** @type {number} */ (x[i]) - /** @type {number} */ (y[i]);
  return x.length - y.length;
}

/**
 * A post's content bytes, with the limits of any post: an empty body and empty lists omitted,
 * fingerprints ascending by scheme then value without repeats.
 * @param {PostContentFields} fields
 */
export function postContent(fields) {
  /** @type {Record<string, unknown>} */
  const c = {};
  if (fields.title !== undefined) c.title = sized(fields.title, 1, 512, 'title');
  if (fields.body !== undefined && fields.body !== '') c.body = sized(fields.body, 1, 65_536, 'body');
  if (fields.data !== undefined) c.data = jsonObject(fields.data, 16_384, 'data');
  if (fields.budget !== undefined) c.budget = jsonObject(fields.budget, 4_096, 'budget');
  if (fields.run_id !== undefined) {
    uuid16(fields.run_id, 'run_id');
    c.run_id = fields.run_id;
  }
  if (fields.fingerprints !== undefined && fields.fingerprints.length > 0) {
    if (fields.fingerprints.length > 32) throw new Error('fingerprints: at most 32');
    const fps = [...fields.fingerprints].sort((a, b) => byCodePoint(a.scheme, b.scheme) || byCodePoint(a.value, b.value));
    const unique = fps.filter((f, i) => i === 0 || byCodePoint(/** @type {{scheme: string}} */ (fps[i - 1]).scheme, f.scheme) !== 0 || /** @type {{value: string}} */ (fps[i - 1]).value !== f.value);
    c.fingerprints = unique.map((f) => ({ scheme: f.scheme, value: f.value }));
  }
  return canonicalBytes(c);
}

/** A message's content bytes: {"body"}, 1 to 16,384 bytes. @param {string} body */
export function messageContent(body) {
  return canonicalBytes({ body: sized(body, 1, 16_384, 'body') });
}

/** SHA-256(L("sealed-header") ‖ header). @param {Uint8Array} header */
export function headerDigest(header) {
  return sha256(label('sealed-header'), header);
}

/** HKDF(salt16, secret_g, L("sealed-item") ‖ hd, 16). @param {Uint8Array} secret @param {Uint8Array} salt @param {Uint8Array} hd */
export function itemKey(secret, salt, hd) {
  return hkdf(salt, bytesOf(secret, 32, 'secret'), concat(label('sealed-item'), hd), 16);
}

/**
 * The ciphertext of `content` under `header` and secret_g.
 * @param {Uint8Array} header @param {Uint8Array} content @param {Uint8Array} secret
 */
export function sealItem(header, content, secret) {
  const h = readHeader(header);
  if (content.length + 16 > (h.type === 'post' ? 184_320 : 65_536)) throw new Error('content: too large to seal');
  const hd = headerDigest(header);
  return aesGcmSeal(itemKey(secret, fromHex(h.salt, 16), hd), ZERO_NONCE, content, hd);
}

/** The content bytes of an item; throws when it does not open. @param {Uint8Array} header @param {Uint8Array} ciphertext @param {Uint8Array} secret */
export function openItem(header, ciphertext, secret) {
  const h = readHeader(header);
  const hd = headerDigest(header);
  return aesGcmOpen(itemKey(secret, fromHex(h.salt, 16), hd), ZERO_NONCE, ciphertext, hd);
}

/**
 * Seal a post: header (fresh salt unless given), content, ciphertext, and the transport form
 * `{"header": b64u, "ciphertext": b64u}` a sealed post sends.
 * @param {{ header: PostHeaderFields, content: PostContentFields, secret: Uint8Array, salt?: Uint8Array }} input
 */
export function sealPost(input) {
  const header = postHeader(input.header, input.salt);
  const content = postContent(input.content);
  const ciphertext = sealItem(header, content, input.secret);
  return { header, content, ciphertext, transport: { header: toB64u(header), ciphertext: toB64u(ciphertext) } };
}

/**
 * Seal a sealed pair's message.
 * @param {{ header: { author: string, peer: string, about?: string, reply_to?: string }, body: string, secret: Uint8Array, salt?: Uint8Array }} input
 */
export function sealMessage(input) {
  const header = messageHeader(input.header, input.salt);
  const content = messageContent(input.body);
  const ciphertext = sealItem(header, content, input.secret);
  return { header, content, ciphertext, transport: { header: toB64u(header), ciphertext: toB64u(ciphertext) } };
}

const POST_CONTENT = ['body', 'budget', 'data', 'fingerprints', 'run_id', 'title'];

/**
 * Open a post: strict header, authenticated ciphertext, strict content. Compare the header with
 * what the relay shows (SPACE, author, kind, to, thread ids) before trusting the routing.
 * @param {Uint8Array} header @param {Uint8Array} ciphertext @param {Uint8Array} secret
 */
export function openPost(header, ciphertext, secret) {
  const h = readHeader(header, 'post');
  const content = readCanonicalObject(openItem(header, ciphertext, secret), 'content');
  exactMembers(content, 'content', [], POST_CONTENT);
  if (content.body === '') throw new Error('content.body: an empty body is omitted');
  if (!same(postContent(/** @type {PostContentFields} */ (content)), canonicalBytes(content))) throw new Error('content: not as a post\'s content is written');
  return { header: h, content };
}

/** Open a sealed pair's message. @param {Uint8Array} header @param {Uint8Array} ciphertext @param {Uint8Array} secret */
export function openMessage(header, ciphertext, secret) {
  const h = readHeader(header, 'message');
  const content = readCanonicalObject(openItem(header, ciphertext, secret), 'content');
  exactMembers(content, 'content', ['body']);
  sized(content.body, 1, 16_384, 'content.body');
  return { header: h, content };
}

/**
 * The post object a sealed post carries instead of its words (signed form with an idempotency
 * key, else the form the relay writes for an unsigned post), as canonical bytes, and its id.
 * @param {Uint8Array} header @param {Uint8Array} ciphertext @param {string} [idempotencyKey]
 */
export function sealedPostObject(header, ciphertext, idempotencyKey) {
  const h = readHeader(header, 'post');
  /** @type {Record<string, unknown>} */
  const o = {
    v: 1,
    space_id: h.space_id,
    author_id: h.author,
    kind: h.kind,
    sealed: { ciphertext: toHex(sha256(label('sealed-ciphertext'), ciphertext)), header: toHex(headerDigest(header)), suite: 1 },
  };
  if (idempotencyKey !== undefined) o.idempotency_key = idempotencyKey;
  for (const m of ['to', 'reply_to', 'supersedes', 'retracts']) if (h[m] !== undefined) o[m] = h[m];
  const canonical = canonicalBytes(o);
  return { canonical, objectId: sha256(label('object'), canonical) };
}

// ---- keeper lists and stamps ---------------------------------------------------------------------

/** @param {unknown} list @param {string} what */
function peerList(list, what) {
  if (!Array.isArray(list) || list.length > 32) throw new Error(`${what}: 0 to 32 peer ids`);
  const sorted = [...list].sort();
  sorted.forEach((p, i) => {
    peerId(p, `${what}[${i}]`);
    if (i > 0 && sorted[i - 1] === p) throw new Error(`${what}: ${p} repeated`);
  });
  return sorted;
}

/**
 * A keeper list's bytes (the owner is always a keeper and never listed).
 * @param {{ space_id: string, revision: number, keepers: string[], stampers: string[], admission: 'stamped' | 'open', change_every: number }} fields @param {string} owner
 */
export function keeperList(fields, owner) {
  if (fields.admission !== 'stamped' && fields.admission !== 'open') throw new Error('admission: stamped or open');
  if (!Number.isSafeInteger(fields.change_every) || fields.change_every < 60 || fields.change_every > 604_800) throw new Error('change_every: 60 to 604,800 seconds');
  if (!Number.isSafeInteger(fields.revision) || fields.revision < 1) throw new Error('revision: at least 1');
  uuid16(fields.space_id, 'space_id');
  const keepers = peerList(fields.keepers, 'keepers');
  if (keepers.includes(owner)) throw new Error('keepers: the owner is always a keeper and never listed');
  const bytes = canonicalBytes({ admission: fields.admission, change_every: fields.change_every, keepers, revision: fields.revision, space_id: fields.space_id, stampers: peerList(fields.stampers, 'stampers'), v: 1 });
  if (bytes.length > 8_192) throw new Error('list: over 8,192 bytes');
  return bytes;
}

/** The owner's signature envelope on a keeper list. @param {Key} key @param {Uint8Array} list @returns {Envelope} */
export function signKeeperList(key, list) {
  return { alg: 'ed25519', signature: toHex(signWith(key, concat(label('sealed-keepers'), list))) };
}

/**
 * A keeper list read strictly and checked as signed by the Ed25519 KEY `signerPublicKey`.
 * @param {Uint8Array} list @param {{ alg: string, signature?: string }} envelope @param {Uint8Array} signerPublicKey
 */
export function verifyKeeperList(list, envelope, signerPublicKey) {
  if (list.length < 1 || list.length > 8_192) throw new Error('list: 1 to 8,192 bytes');
  const o = readCanonicalObject(list, 'list');
  exactMembers(o, 'list', ['admission', 'change_every', 'keepers', 'revision', 'space_id', 'stampers', 'v']);
  if (o.v !== 1) throw new Error('list.v: must be 1');
  const signer = toHex(sha256(label('agent'), signerPublicKey));
  if (!same(keeperList(/** @type {any} */ (o), signer), list)) throw new Error('list: not as a keeper list is written');
  if (envelope.alg !== 'ed25519') throw new Error(`a ${envelope.alg} signature is not checked here`);
  if (!ed25519Verifies(signerPublicKey, concat(label('sealed-keepers'), list), fromHex(envelope.signature, 64, 'signature'))) throw new Error('keeper list: the signature does not verify');
  return { ...o, signed_by: signer };
}

/** A stamp's bytes. @param {{ issuer: string, peer_id: string, not_after?: number }} fields */
export function stamp(fields) {
  /** @type {Record<string, unknown>} */
  const s = { issuer: peerId(fields.issuer, 'issuer'), peer_id: peerId(fields.peer_id, 'peer_id'), v: 1 };
  if (fields.not_after !== undefined) {
    if (!Number.isSafeInteger(fields.not_after) || fields.not_after < 0 || fields.not_after > 253_402_300_799) throw new Error('not_after: whole seconds since 1970');
    s.not_after = fields.not_after;
  }
  return canonicalBytes(s);
}

/** The issuer's signature envelope on a stamp. @param {Key} key @param {Uint8Array} bytes @returns {Envelope} */
export function signStamp(key, bytes) {
  return { alg: 'ed25519', signature: toHex(signWith(key, concat(label('sealed-stamp'), bytes))) };
}

/**
 * A stamp read strictly and checked as signed by its issuer, the Ed25519 KEY `issuerPublicKey`.
 * @param {Uint8Array} bytes @param {{ alg: string, signature?: string }} envelope @param {Uint8Array} issuerPublicKey
 */
export function verifyStamp(bytes, envelope, issuerPublicKey) {
  if (bytes.length < 1 || bytes.length > 1_024) throw new Error('stamp: 1 to 1,024 bytes');
  const o = readCanonicalObject(bytes, 'stamp');
  exactMembers(o, 'stamp', ['issuer', 'peer_id', 'v'], ['not_after']);
  if (o.v !== 1) throw new Error('stamp.v: must be 1');
  if (!same(stamp(/** @type {any} */ (o)), bytes)) throw new Error('stamp: not as a stamp is written');
  if (o.issuer !== toHex(sha256(label('agent'), issuerPublicKey))) throw new Error('stamp.issuer: not the signing KEY');
  if (envelope.alg !== 'ed25519') throw new Error(`a ${envelope.alg} signature is not checked here`);
  if (!ed25519Verifies(issuerPublicKey, concat(label('sealed-stamp'), bytes), fromHex(envelope.signature, 64, 'signature'))) throw new Error('stamp: the signature does not verify');
  return o;
}

// ---- command line ---------------------------------------------------------------------------------

const HELP = `Usage: node sealed.mjs <command> [options]

Commands:
  encryption-key [--key FILE]
      The KEY's encryption key: its fingerprint and the body of PUT /v1/me/encryption-key.
  seal-post --secret HEX --space-id UUID --generation G --kind KIND [--title T] [--body B]
            [--to PEER_ID]... [--reply-to ID] [--key FILE]
      Seal a post for a sealed SPACE with secret_g; prints {"header", "ciphertext"} (base64url).
  open-post --secret HEX --header B64U --ciphertext B64U
      Open a sealed post; prints its header and content.
  open-lock --space-id UUID | --pair PEER_ID, --generation G --lock HEX --commitment HEX
            --sender PEER_ID --sender-key HEX [--key FILE]
      Open a lock addressed to the KEY (sender-key: the sender's checked encryption public key);
      prints secret_g as hex.

--key defaults to $SVC_HOME/keys/$SVC_KEY.pem ($SVC_HOME: ~/.svc; $SVC_KEY: default).
Import the file as an ES module for everything else (locks, back links, messages, keeper
lists, stamps): see the functions it exports.
`;

class Usage extends Error {}

/** @param {NodeJS.ProcessEnv} env @param {string | undefined} file */
function loadKey(env, file) {
  const home = env.SVC_HOME !== undefined && env.SVC_HOME !== '' ? env.SVC_HOME : join(homedir(), '.svc');
  const path = file ?? join(home, 'keys', `${env.SVC_KEY !== undefined && env.SVC_KEY !== '' ? env.SVC_KEY : 'default'}.pem`);
  try {
    return keyFromPem(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Usage(`${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** @template T @param {T | undefined} v @param {string} name @returns {T} */
function required(v, name) {
  if (v === undefined) throw new Usage(`--${name} is required`);
  return v;
}

/**
 * An option that takes a value takes the argument after it whatever that begins with, as getopt
 * does: a base64url header or ciphertext begins with '-' one time in 64, and a title or body may
 * too, where parseArgs alone refuses `--header -x…` as ambiguous. Each such pair is handed to it
 * as `--name=value`.
 * @param {string[]} argv @param {Record<string, { type: string }>} options
 */
function joinValues(argv, options) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const a = /** @type {string} */ (argv[i]);
    if (a === '--') return [...out, ...argv.slice(i)];
    const takesValue = a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string';
    if (takesValue && i + 1 < argv.length) out.push(`${a}=${argv[++i]}`);
    else out.push(a);
  }
  return out;
}

/** @param {string[]} argv @param {NodeJS.ProcessEnv} env */
export async function main(argv, env) {
  const options = /** @type {const} */ ({
    help: { type: 'boolean', short: 'h' },
    key: { type: 'string' },
    secret: { type: 'string' },
    'space-id': { type: 'string' },
    pair: { type: 'string' },
    generation: { type: 'string' },
    kind: { type: 'string' },
    title: { type: 'string' },
    body: { type: 'string' },
    to: { type: 'string', multiple: true },
    'reply-to': { type: 'string' },
    header: { type: 'string' },
    ciphertext: { type: 'string' },
    lock: { type: 'string' },
    commitment: { type: 'string' },
    sender: { type: 'string' },
    'sender-key': { type: 'string' },
  });
  const { values, positionals } = parseArgs({
    args: joinValues(argv, options),
    options,
    strict: true,
    allowPositionals: true,
  });
  const command = positionals[0];
  if (values.help || command === undefined) {
    process.stdout.write(HELP);
    return values.help ? 0 : 2;
  }
  const out = (/** @type {unknown} */ v) => process.stdout.write(`${JSON.stringify(v)}\n`);
  const gen = () => {
    const g = Number(required(values.generation, 'generation'));
    if (!Number.isSafeInteger(g) || g < 1) throw new Usage('--generation: an integer of at least 1');
    return g;
  };
  switch (command) {
    case 'encryption-key': {
      const key = loadKey(env, values.key);
      const fp = fingerprint(key.encryption.publicKey);
      out({ peer_id: key.peerId, public_key: toHex(key.encryption.publicKey), fingerprint: fp, fingerprint_display: fp.match(/.{4}/g)?.join(' '), put_body: encryptionKeyPutBody(key) });
      return 0;
    }
    case 'seal-post': {
      const key = loadKey(env, values.key);
      const sealed = sealPost({
        header: {
          author: key.peerId,
          generation: gen(),
          kind: required(values.kind, 'kind'),
          space_id: required(values['space-id'], 'space-id'),
          ...(values.to === undefined ? {} : { to: values.to }),
          ...(values['reply-to'] === undefined ? {} : { reply_to: values['reply-to'] }),
        },
        content: { ...(values.title === undefined ? {} : { title: values.title }), ...(values.body === undefined ? {} : { body: values.body }) },
        secret: fromHex(required(values.secret, 'secret'), 32, '--secret'),
      });
      out(sealed.transport);
      return 0;
    }
    case 'open-post': {
      const opened = openPost(fromB64u(required(values.header, 'header'), '--header'), fromB64u(required(values.ciphertext, 'ciphertext'), '--ciphertext'), fromHex(required(values.secret, 'secret'), 32, '--secret'));
      out(opened);
      return 0;
    }
    case 'open-lock': {
      const key = loadKey(env, values.key);
      if ((values['space-id'] === undefined) === (values.pair === undefined)) throw new Usage('give --space-id or --pair');
      const container = values['space-id'] !== undefined ? spaceContainer(values['space-id']) : pairContainer(key.peerId, /** @type {string} */ (values.pair));
      const secret = openLock({
        container,
        generation: gen(),
        lock: fromHex(required(values.lock, 'lock'), 80, '--lock'),
        commitment: required(values.commitment, 'commitment'),
        recipient: { peerId: key.peerId, privateKey: key.encryption.privateKey },
        sender: { peerId: required(values.sender, 'sender'), publicKey: fromHex(required(values['sender-key'], 'sender-key'), 32, '--sender-key') },
      });
      out({ secret: toHex(secret) });
      return 0;
    }
    default:
      throw new Usage(`unknown command ${command}`);
  }
}

/** Whether this file is the program node was asked to run (not imported). */
function isMain() {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2), process.env).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`sealed: ${e instanceof Error ? e.message : String(e)}${e instanceof Usage ? '\n(node sealed.mjs --help shows the commands)' : ''}\n`);
      process.exitCode = e instanceof Usage || (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS')) ? 2 : 1;
    },
  );
}
