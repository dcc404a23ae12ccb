/**
 * Stamps (protocol/sealed.md §8): a KEY's statement that another KEY belongs to it, put for one
 * SPACE, counted by keepers when deciding who is vouched for (keepers.ts).
 *
 *   stamp  = canonical({"issuer","not_after"?,"peer_id","v":1})      at most 1,024 bytes
 *   signed = L("sealed-stamp") || stamp                              signed by `issuer`
 *
 * `not_after` is whole seconds since 1970 (at most 253,402,300,799), after which the stamp stops
 * counting; without it the stamp does not expire. Shape problems are INVALID_REQUEST; a signer
 * that is not the issuer, or a signature that does not verify, is SEALED_SIGNATURE_INVALID.
 * Stamps are attacker-controlled; time is passed in.
 */
import { canonicalBytes, readCanonicalObject } from '../canonical.js';
import { SvcError } from '../errors.js';
import { concatBytes, isHex } from '../encoding.js';
import { type Signer } from '../identity.js';
import { label } from '../labels.js';
import {
  readEnvelopeBody,
  signEnvelope,
  signerMatchesPeerId,
  verifyEnvelope,
  type Ed25519Envelope,
  type SignatureEnvelope,
  type SignerKey,
} from './envelope.js';

export const STAMP_MAX_BYTES = 1_024;
export const NOT_AFTER_MAX = 253_402_300_799;

export interface Stamp {
  issuer: string;
  not_after?: number;
  peer_id: string;
  v: 1;
}

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

function notAfter(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > NOT_AFTER_MAX) {
    throw bad(field, `whole seconds since 1970, 0 to ${NOT_AFTER_MAX}`);
  }
  return value;
}

/** The stamp's canonical bytes. */
export function buildStamp(fields: { issuer: string; peer_id: string; not_after?: number | undefined }): Uint8Array {
  if (!isHex(fields.issuer, 32)) throw bad('issuer', 'expected a peer id, 64 lowercase hex');
  if (!isHex(fields.peer_id, 32)) throw bad('peer_id', 'expected a peer id, 64 lowercase hex');
  const stamp: Stamp = { issuer: fields.issuer, peer_id: fields.peer_id, v: 1 };
  if (fields.not_after !== undefined) stamp.not_after = notAfter(fields.not_after, 'not_after');
  return canonicalBytes(stamp);
}

/** Read a stamp's bytes strictly: 1 to 1,024 bytes, canonical, exactly its members. */
export function readStamp(bytes: Uint8Array, field = 'stamp'): Stamp {
  if (!(bytes instanceof Uint8Array) || bytes.length < 1 || bytes.length > STAMP_MAX_BYTES) {
    throw bad(field, `must be 1 to ${STAMP_MAX_BYTES} bytes`);
  }
  const o = readCanonicalObject(bytes, field);
  for (const k of Object.keys(o)) {
    if (!['issuer', 'not_after', 'peer_id', 'v'].includes(k)) throw bad(`${field}.${k}`, 'not a member of a stamp');
  }
  if (o.v !== 1) throw bad(`${field}.v`, 'must be 1');
  if (!isHex(o.issuer, 32)) throw bad(`${field}.issuer`, 'expected a peer id, 64 lowercase hex');
  if (!isHex(o.peer_id, 32)) throw bad(`${field}.peer_id`, 'expected a peer id, 64 lowercase hex');
  const stamp: Stamp = { issuer: o.issuer, peer_id: o.peer_id, v: 1 };
  if (o.not_after !== undefined) stamp.not_after = notAfter(o.not_after, `${field}.not_after`);
  return stamp;
}

/** L("sealed-stamp") || stamp: what the issuer signs (a passkey signs its hash). */
export function stampSignedBytes(stamp: Uint8Array): Uint8Array {
  return concatBytes(label('sealed-stamp'), stamp);
}

export function signStamp(signer: Signer, stamp: Uint8Array): Ed25519Envelope {
  return signEnvelope(signer, stampSignedBytes(stamp));
}

/**
 * Read and verify a stamp signed by `issuer` (the KEY the stamp names as its issuer). Throws
 * INVALID_REQUEST for the shape, SEALED_SIGNATURE_INVALID naming the failed check.
 */
export function verifyStamp(bytes: Uint8Array, envelope: SignatureEnvelope, issuer: SignerKey): Stamp {
  const stamp = readStamp(bytes);
  if (stamp.issuer !== issuer.peerId) throw new SvcError('SEALED_SIGNATURE_INVALID', 'stamp.issuer: not the signing KEY');
  if (!signerMatchesPeerId(issuer)) throw new SvcError('SEALED_SIGNATURE_INVALID', "signer: the KEY's key does not hash to its peer id");
  verifyEnvelope(envelope, stampSignedBytes(bytes), issuer, 'SEALED_SIGNATURE_INVALID', 'stamp signature');
  return stamp;
}

/** Whether a stamp still counts at `now` (whole seconds since 1970): until and including not_after. */
export function stampCurrent(stamp: Stamp, now: number): boolean {
  return stamp.not_after === undefined || now <= stamp.not_after;
}

/** `PUT …/sealed/stamp` body: `{"stamp": b64u, "alg", "signature", …}`. */
export function readStampPut(body: unknown): { stamp: Uint8Array; envelope: SignatureEnvelope } {
  const { payload, envelope } = readEnvelopeBody(body, 'stamp');
  if (payload.length > STAMP_MAX_BYTES) throw bad('stamp', `at most ${STAMP_MAX_BYTES} bytes`);
  return { stamp: payload, envelope };
}
