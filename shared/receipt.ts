/**
 * Receipts (protocol/objects.md §10, labels.md "What the service signs").
 *
 *   receipt    = canonical({"chain_hash","object_id","post_id","posted_at","seq",
 *                           "service_epoch","signer_key_id","space_id","v":1})
 *   receipt_id = H(L("receipt") ‖ receipt)
 *   online key signs L("receipt-signature") ‖ receipt_id
 *
 * Every value is a string (hashes hex, `seq` decimal, ids uuid text) except `service_epoch`,
 * which is null only when no epoch exists, and `v`. `posted_at` is opaque: exactly the string
 * the same answer carries. A post answer carries the short form
 * `{"v":1,"service_epoch","signer_key_id","signature"}` (the holder rebuilds the canonical
 * bytes from the answer) or, with `?receipt=full`, `{"canonical","signature","signer_key_id"}`.
 *
 * Answers and receipts read here are attacker-controlled: refusals are CHECKPOINT_INVALID with
 * a detail naming the field.
 */
import { canonicalBytes, readCanonicalObject } from './canonical.js';
import { concatBytes, fromBase64url, isHex, isUuid, parseDecimal, toBase64url, toHex } from './encoding.js';
import { ED25519_SIGNATURE_BYTES, verifyEd25519 } from './identity.js';
import { label, labelledHash } from './labels.js';
import {
  asEvidence,
  evidenceError,
  readHexMember,
  readMembers,
  readStringMember,
  serviceKeyId,
  type ServiceSigner,
} from './service-keys.js';

/** The signed members of a receipt, as on the wire. */
export interface ReceiptFields {
  readonly space_id: string;
  readonly seq: string;
  readonly post_id: string;
  readonly object_id: string;
  readonly chain_hash: string;
  readonly posted_at: string;
  readonly service_epoch: string | null;
  readonly signer_key_id: string;
}

/** The answer's members a receipt covers (what the holder rebuilds the receipt from). */
export type ReceiptPost = Omit<ReceiptFields, 'service_epoch' | 'signer_key_id'>;

export interface SignedReceipt {
  readonly fields: ReceiptFields;
  readonly canonical: Uint8Array;
  readonly id: Uint8Array;
  readonly signature: Uint8Array;
}

export interface ShortReceipt {
  v: 1;
  service_epoch: string | null;
  signer_key_id: string;
  signature: string;
}

export interface FullReceipt {
  canonical: string;
  signature: string;
  signer_key_id: string;
}

const POST_MEMBERS = ['space_id', 'seq', 'post_id', 'object_id', 'chain_hash', 'posted_at'] as const;

function checkFields(f: Record<string, unknown>, field: string): ReceiptFields {
  if (!isUuid(f.space_id)) throw evidenceError(`${field}.space_id: expected a lowercase uuid`);
  asEvidence(() => parseDecimal(f.seq, `${field}.seq`, 1n));
  if (!isUuid(f.post_id)) throw evidenceError(`${field}.post_id: expected a lowercase uuid`);
  if (!isHex(f.object_id, 32)) throw evidenceError(`${field}.object_id: expected 64 lowercase hex`);
  if (!isHex(f.chain_hash, 32)) throw evidenceError(`${field}.chain_hash: expected 64 lowercase hex`);
  if (readStringMember(f.posted_at, `${field}.posted_at`) === '') throw evidenceError(`${field}.posted_at: empty`);
  if (f.service_epoch !== null && !isUuid(f.service_epoch)) {
    throw evidenceError(`${field}.service_epoch: expected a lowercase uuid or null`);
  }
  if (!isHex(f.signer_key_id, 32)) throw evidenceError(`${field}.signer_key_id: expected 64 lowercase hex`);
  return {
    space_id: f.space_id,
    seq: f.seq as string,
    post_id: f.post_id,
    object_id: f.object_id,
    chain_hash: f.chain_hash,
    posted_at: f.posted_at as string,
    service_epoch: f.service_epoch as string | null,
    signer_key_id: f.signer_key_id,
  };
}

/** The receipt's canonical bytes. */
export function receiptBytes(fields: ReceiptFields): Uint8Array {
  const f = checkFields(fields as unknown as Record<string, unknown>, 'receipt');
  return canonicalBytes({ ...f, v: 1 });
}

/** receipt_id = H(L("receipt") ‖ receipt). */
export function receiptId(canonical: Uint8Array): Uint8Array {
  return labelledHash('receipt', canonical);
}

/** The bytes the online key signs: L("receipt-signature") ‖ receipt_id. */
export function receiptSignatureMessage(canonical: Uint8Array): Uint8Array {
  return concatBytes(label('receipt-signature'), receiptId(canonical));
}

/** Sign the receipt of one post answer with the online key. */
export function signReceipt(signer: ServiceSigner, post: ReceiptPost, serviceEpoch: string | null): SignedReceipt {
  const fields: ReceiptFields = {
    space_id: post.space_id,
    seq: post.seq,
    post_id: post.post_id,
    object_id: post.object_id,
    chain_hash: post.chain_hash,
    posted_at: post.posted_at,
    service_epoch: serviceEpoch,
    signer_key_id: signer.keyId,
  };
  const canonical = receiptBytes(fields);
  return { fields, canonical, id: receiptId(canonical), signature: signer.sign(receiptSignatureMessage(canonical)) };
}

/** The short form needs no receipt bytes: the fields and the signature. */
export function shortReceipt(receipt: Pick<SignedReceipt, 'fields' | 'signature'>): ShortReceipt {
  return {
    v: 1,
    service_epoch: receipt.fields.service_epoch,
    signer_key_id: receipt.fields.signer_key_id,
    signature: toHex(receipt.signature),
  };
}

export function fullReceipt(receipt: SignedReceipt): FullReceipt {
  return {
    canonical: toBase64url(receipt.canonical),
    signature: toHex(receipt.signature),
    signer_key_id: receipt.fields.signer_key_id,
  };
}

/** Read receipt canonical bytes strictly: canonical, exactly the nine members, `v` 1. */
export function readReceipt(canonical: Uint8Array, field = 'receipt'): ReceiptFields {
  const obj = asEvidence(() => readCanonicalObject(canonical, field));
  readMembers(obj, field, [...POST_MEMBERS, 'service_epoch', 'signer_key_id', 'v']);
  if (obj.v !== 1) throw evidenceError(`${field}.v: must be 1`);
  return checkFields(obj, field);
}

/**
 * Check the receipt of a post answer (201, a replay included) against the online key the
 * reader trusts for it (a served signer already verified with verifyServiceSigner, or a key
 * from capabilities). Short form: the canonical bytes are rebuilt from the answer's own
 * members; full form: the signed bytes must name exactly the answer's members. The signer key
 * id must be the formula of `signerPublicKey`. Returns the signed members or throws
 * CHECKPOINT_INVALID.
 */
export function verifyReceipt(answer: unknown, signerPublicKey: Uint8Array): ReceiptFields {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
    throw evidenceError('answer: expected an object');
  }
  const a = answer as Record<string, unknown>;
  const receipt = a.receipt;
  if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) {
    throw evidenceError('receipt: expected an object');
  }
  let fields: ReceiptFields;
  let canonical: Uint8Array;
  let signatureHex: unknown;
  if (Object.hasOwn(receipt, 'canonical')) {
    const r = readMembers(receipt, 'receipt', ['canonical', 'signature', 'signer_key_id']);
    canonical = asEvidence(() => fromBase64url(r.canonical, 'receipt.canonical'));
    fields = readReceipt(canonical, 'receipt.canonical');
    for (const name of POST_MEMBERS) {
      if (fields[name] !== a[name]) throw evidenceError(`receipt.canonical: ${name} differs from the answer's`);
    }
    if (r.signer_key_id !== fields.signer_key_id) throw evidenceError('receipt.signer_key_id: differs from the signed one');
    signatureHex = r.signature;
  } else {
    const r = readMembers(receipt, 'receipt', ['v', 'service_epoch', 'signer_key_id', 'signature']);
    if (r.v !== 1) throw evidenceError('receipt.v: must be 1');
    const post: Record<string, unknown> = {};
    for (const name of POST_MEMBERS) post[name] = a[name];
    fields = checkFields({ ...post, service_epoch: r.service_epoch, signer_key_id: r.signer_key_id }, 'answer');
    canonical = canonicalBytes({ ...fields, v: 1 });
    signatureHex = r.signature;
  }
  const signature = readHexMember(signatureHex, ED25519_SIGNATURE_BYTES, 'receipt.signature');
  if (!(signerPublicKey instanceof Uint8Array) || signerPublicKey.length !== 32) {
    throw new TypeError('signerPublicKey must be 32 bytes');
  }
  if (toHex(serviceKeyId(signerPublicKey)) !== fields.signer_key_id) {
    throw evidenceError('receipt.signer_key_id: is not the key id of the given signer');
  }
  if (!verifyEd25519(signerPublicKey, receiptSignatureMessage(canonical), signature)) {
    throw evidenceError('receipt.signature: does not verify');
  }
  return fields;
}
