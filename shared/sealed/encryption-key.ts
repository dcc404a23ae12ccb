/**
 * A KEY's encryption key (protocol/sealed.md §2): one X25519 key per KEY for life, made from a
 * 32-byte secret S the KEY already has (an Ed25519 KEY's RFC 8032 seed, or a passkey's PRF
 * output), never by converting the Ed25519 key.
 *
 *   ikm        = HKDF(empty, S, L("encryption-key-seed") || peer_id32, 32)
 *   (sk, pk)   = DeriveKeyPair(ikm)                                   RFC 9180 §7.1.3
 *   statement  = canonical({"kem":32,"peer_id":hex,"public_key":hex,"v":1})   at most 512 bytes
 *   signed     = L("encryption-key") || statement
 *   fingerprint = first 16 bytes of H(L("encryption-key") || pk), 32 hex; shown in 8 groups of 4
 *
 * Statement checks, in order (§2): canonical with exactly the four members; `peer_id` is the
 * signer's; the signer's key hashes to that peer id; the signature verifies. Each failure is
 * ENCRYPTION_KEY_INVALID with a detail naming the check. Statements are attacker-controlled.
 */
import { canonicalBytes, readCanonicalObject } from '../canonical.js';
import { SvcError } from '../errors.js';
import { concatBytes, fromBase64url, fromHex, isHex, toBase64url, toHex } from '../encoding.js';
import { type Signer } from '../identity.js';
import { label, labelledHash } from '../labels.js';
import {
  readEnvelope,
  readEnvelopeBody,
  signEnvelope,
  signerMatchesPeerId,
  verifyEnvelope,
  type Ed25519Envelope,
  type SignatureEnvelope,
  type SignerKey,
} from './envelope.js';
import { hkdf } from './hkdf.js';
import { deriveKeyPair, type X25519KeyPair } from './hpke.js';

export const STATEMENT_MAX_BYTES = 512;
/** The KEM id a statement names: DHKEM(X25519, HKDF-SHA256). */
export const STATEMENT_KEM = 32;
export const FINGERPRINT_HEX_CHARS = 32;
const SECRET_BYTES = 32;
const STATEMENT_MEMBERS = ['kem', 'peer_id', 'public_key', 'v'];

export interface EncryptionKeyStatement {
  kem: 32;
  peer_id: string;
  public_key: string;
  v: 1;
}

/** A statement that passed every check of §2. */
export interface CheckedEncryptionKey {
  statement: EncryptionKeyStatement;
  bytes: Uint8Array;
  envelope: SignatureEnvelope;
  publicKey: Uint8Array;
  fingerprint: string;
}

function invalid(check: string): SvcError {
  return new SvcError('ENCRYPTION_KEY_INVALID', check);
}

/** The KEY's encryption key pair from its secret S and its peer id (hex). */
export function deriveEncryptionKey(secret: Uint8Array, peerId: string): X25519KeyPair {
  if (!(secret instanceof Uint8Array) || secret.length !== SECRET_BYTES) throw new TypeError('secret must be 32 bytes');
  const ikm = hkdf(new Uint8Array(0), secret, concatBytes(label('encryption-key-seed'), fromHex(peerId, 32, 'peerId')), 32);
  return deriveKeyPair(ikm);
}

/** The statement's canonical bytes. */
export function buildEncryptionKeyStatement(peerId: string, publicKey: Uint8Array): Uint8Array {
  if (!isHex(peerId, 32)) throw new TypeError('peerId must be 64 lowercase hex');
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new TypeError('publicKey must be 32 bytes');
  const statement: EncryptionKeyStatement = { kem: STATEMENT_KEM, peer_id: peerId, public_key: toHex(publicKey), v: 1 };
  return canonicalBytes(statement);
}

/** L("encryption-key") || statement: what the KEY signs (a passkey signs its hash). */
export function encryptionKeySignedBytes(statement: Uint8Array): Uint8Array {
  return concatBytes(label('encryption-key'), statement);
}

export function signEncryptionKeyStatement(signer: Signer, statement: Uint8Array): Ed25519Envelope {
  return signEnvelope(signer, encryptionKeySignedBytes(statement));
}

/** Check 1: canonical bytes with exactly the four members, kem 32 and v 1. */
export function readEncryptionKeyStatement(bytes: Uint8Array): EncryptionKeyStatement {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0 || bytes.length > STATEMENT_MAX_BYTES) {
    throw invalid(`statement: must be 1 to ${STATEMENT_MAX_BYTES} bytes`);
  }
  let o;
  try {
    o = readCanonicalObject(bytes, 'statement');
  } catch (e) {
    throw invalid(e instanceof SvcError && e.detail !== undefined ? e.detail : 'statement: not canonical JSON');
  }
  const keys = Object.keys(o);
  if (keys.length !== STATEMENT_MEMBERS.length || !STATEMENT_MEMBERS.every((k) => Object.hasOwn(o, k))) {
    throw invalid('statement: must have exactly the members kem, peer_id, public_key, v');
  }
  if (o.kem !== STATEMENT_KEM) throw invalid('statement.kem: must be 32');
  if (o.v !== 1) throw invalid('statement.v: must be 1');
  if (!isHex(o.peer_id, 32)) throw invalid('statement.peer_id: expected 64 lowercase hex');
  if (!isHex(o.public_key, 32)) throw invalid('statement.public_key: expected 64 lowercase hex');
  return { kem: STATEMENT_KEM, peer_id: o.peer_id, public_key: o.public_key, v: 1 };
}

/**
 * Every check of §2, in order, for a statement signed by `signer`. Returns the checked key with
 * its fingerprint; throws ENCRYPTION_KEY_INVALID naming the failed check.
 */
export function verifyEncryptionKeyStatement(bytes: Uint8Array, envelope: SignatureEnvelope, signer: SignerKey): CheckedEncryptionKey {
  const statement = readEncryptionKeyStatement(bytes);
  if (statement.peer_id !== signer.peerId) throw invalid("statement.peer_id: not the signer's peer id");
  if (!signerMatchesPeerId(signer)) throw invalid("signer: the KEY's key does not hash to its peer id");
  verifyEnvelope(envelope, encryptionKeySignedBytes(bytes), signer, 'ENCRYPTION_KEY_INVALID', 'signature');
  const publicKey = fromHex(statement.public_key, 32);
  return { statement, bytes, envelope, publicKey, fingerprint: encryptionKeyFingerprint(publicKey) };
}

/** First 16 bytes of H(L("encryption-key") || pk), as 32 lowercase hex (no spaces). */
export function encryptionKeyFingerprint(publicKey: Uint8Array): string {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new TypeError('publicKey must be 32 bytes');
  return toHex(labelledHash('encryption-key', publicKey).subarray(0, 16));
}

/** The fingerprint as people compare it: eight groups of four hex digits separated by spaces. */
export function displayFingerprint(fingerprint: string): string {
  if (!isHex(fingerprint, 16)) throw new TypeError('fingerprint must be 32 lowercase hex');
  return fingerprint.match(/.{4}/g)!.join(' ');
}

/** `PUT /v1/me/encryption-key` body: `{"statement": b64u, "alg", "signature", …}`, no other members. */
export function readEncryptionKeyPut(body: unknown): { statement: Uint8Array; envelope: SignatureEnvelope } {
  const { payload, envelope } = readEnvelopeBody(body, 'statement');
  return { statement: payload, envelope };
}

/** The PUT body a bridge sends. */
export function encryptionKeyPutBody(statement: Uint8Array, envelope: SignatureEnvelope): Record<string, string> {
  return { statement: toBase64url(statement), ...envelope };
}

/** How `GET /v1/me` and `GET /v1/peers/{peer}` show a published key (`encryption_key`). */
export interface EncryptionKeyView {
  public_key: string;
  fingerprint: string;
  statement: string;
  signature: SignatureEnvelope;
}

export function encryptionKeyView(key: CheckedEncryptionKey): EncryptionKeyView {
  return {
    public_key: key.statement.public_key,
    fingerprint: key.fingerprint,
    statement: toBase64url(key.bytes),
    signature: key.envelope,
  };
}

/**
 * Read and check a served `encryption_key` (a member's software never takes a relay's word for
 * a key: it checks the statement against the KEY it names). `public_key` and `fingerprint` must
 * agree with the statement. Null stays null.
 */
export function checkEncryptionKeyView(value: unknown, signer: SignerKey): CheckedEncryptionKey | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('encryption_key: expected an object or null');
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) {
    if (!['public_key', 'fingerprint', 'statement', 'signature'].includes(k)) throw invalid(`encryption_key.${k}: unknown member`);
  }
  let statement: Uint8Array;
  let envelope: SignatureEnvelope;
  try {
    statement = fromBase64url(v.statement, 'encryption_key.statement');
    envelope = readEnvelope(v.signature);
  } catch (e) {
    throw invalid(e instanceof SvcError && e.detail !== undefined ? e.detail : 'encryption_key: malformed');
  }
  const checked = verifyEncryptionKeyStatement(statement, envelope, signer);
  if (v.public_key !== checked.statement.public_key) throw invalid('encryption_key.public_key: differs from the statement');
  if (v.fingerprint !== checked.fingerprint) throw invalid('encryption_key.fingerprint: differs from the statement');
  return checked;
}
