/**
 * Checkpoints (protocol/objects.md §11, §13 step 6; labels.md "What the service signs").
 *
 *   checkpoint    = canonical({"created_at","ending_hash","first","last","merkle_root",
 *                              "predecessor_hash","previous_checkpoint_id"?,"service_epoch",
 *                              "signer_key_id","space_id","stream","v":1})
 *   checkpoint_id = H(L("checkpoint") ‖ checkpoint)
 *   online key signs L("checkpoint-signature") ‖ checkpoint_id
 *
 * A checkpoint signs one contiguous range of one stream (`posts` or `events`) of one SPACE:
 * `last − first + 1` ≤ 1,024; the first of a stream starts at 1 with the stream's genesis as
 * predecessor and has no `previous_checkpoint_id` member (absent, not null); each later one
 * starts at the previous `last + 1`, names the previous id and its predecessor is the previous
 * `ending_hash`. A later checkpoint that does not extend one a reader kept means the history
 * changed.
 *
 * Served checkpoints and proofs are attacker-controlled: readers and verifiers throw
 * SvcError('CHECKPOINT_INVALID') with a detail naming the field or the broken rule.
 */
import { canonicalBytes, readCanonicalObject, type JsonObject } from './canonical.js';
import { controlGenesis, objectGenesis } from './chain.js';
import { concatBytes, fromBase64url, isHex, isUuid, parseDecimal, toBase64url, toHex } from './encoding.js';
import { label, labelledHash } from './labels.js';
import { CHECKPOINT_MAX_POSITIONS } from './limits.js';
import { eventLeaf, postLeaf, verifyInclusion } from './merkle.js';
import {
  asEvidence,
  evidenceError,
  readHexMember,
  readIsoMillis,
  readMembers,
  readServiceSignature,
  verifyServiceSignature,
  type ReadSigner,
  type ServedSigner,
  type ServiceSigner,
  type TrustedSigner,
} from './service-keys.js';

export const STREAMS = ['posts', 'events'] as const;
export type Stream = (typeof STREAMS)[number];

/** The signed members, as on the wire; `previous_checkpoint_id` null means the member is absent. */
export interface CheckpointFields {
  readonly space_id: string;
  readonly stream: Stream;
  readonly first: string;
  readonly last: string;
  readonly predecessor_hash: string;
  readonly ending_hash: string;
  readonly merkle_root: string;
  readonly previous_checkpoint_id: string | null;
  readonly service_epoch: string;
  readonly signer_key_id: string;
  readonly created_at: string;
}

/** What a checkpoint is known by: its id and its signed members. */
export interface CheckpointLink {
  readonly id: Uint8Array;
  readonly fields: CheckpointFields;
}

export interface SignedCheckpoint extends CheckpointLink {
  readonly canonical: Uint8Array;
  readonly signature: Uint8Array;
}

/** The served shape (list and proof answers). */
export interface ServedCheckpoint {
  checkpoint_id: string;
  stream: Stream;
  first: string;
  last: string;
  previous_checkpoint_id: string | null;
  predecessor_hash: string;
  ending_hash: string;
  merkle_root: string;
  service_epoch: string;
  created_at: string;
  canonical: string;
  signature: string;
  signer: ServedSigner;
}

/** A served checkpoint read strictly: consistent with itself, nothing trusted yet. */
export interface ReadCheckpoint extends SignedCheckpoint {
  readonly signer: ReadSigner;
}

/** A checkpoint whose signature and signer passed; `signer.development` must be shown. */
export interface VerifiedCheckpoint extends ReadCheckpoint {
  readonly trusted: TrustedSigner;
}

const SIGNED_REQUIRED = [
  'created_at',
  'ending_hash',
  'first',
  'last',
  'merkle_root',
  'predecessor_hash',
  'service_epoch',
  'signer_key_id',
  'space_id',
  'stream',
  'v',
] as const;

const SERVED_MEMBERS = [
  'checkpoint_id',
  'stream',
  'first',
  'last',
  'previous_checkpoint_id',
  'predecessor_hash',
  'ending_hash',
  'merkle_root',
  'service_epoch',
  'created_at',
  'canonical',
  'signature',
  'signer',
] as const;

/** The members a served checkpoint repeats from the signed ones. */
const REPEATED = [
  'stream',
  'first',
  'last',
  'previous_checkpoint_id',
  'predecessor_hash',
  'ending_hash',
  'merkle_root',
  'service_epoch',
  'created_at',
] as const;

/** The hash before position 1 of a stream (objects.md §11: the stream's genesis). */
export function streamGenesis(spaceId: string, stream: Stream): Uint8Array {
  return stream === 'posts' ? objectGenesis(spaceId) : controlGenesis(spaceId);
}

function checkShapes(f: Record<string, unknown>, field: string): CheckpointFields {
  if (!isUuid(f.space_id)) throw evidenceError(`${field}.space_id: expected a lowercase uuid`);
  if (f.stream !== 'posts' && f.stream !== 'events') throw evidenceError(`${field}.stream: expected posts or events`);
  asEvidence(() => parseDecimal(f.first, `${field}.first`, 1n));
  asEvidence(() => parseDecimal(f.last, `${field}.last`, 1n));
  for (const name of ['predecessor_hash', 'ending_hash', 'merkle_root', 'signer_key_id'] as const) {
    if (!isHex(f[name], 32)) throw evidenceError(`${field}.${name}: expected 64 lowercase hex`);
  }
  if (f.previous_checkpoint_id !== null && !isHex(f.previous_checkpoint_id, 32)) {
    throw evidenceError(`${field}.previous_checkpoint_id: expected 64 lowercase hex`);
  }
  if (!isUuid(f.service_epoch)) throw evidenceError(`${field}.service_epoch: expected a lowercase uuid`);
  readIsoMillis(f.created_at, `${field}.created_at`);
  return {
    space_id: f.space_id,
    stream: f.stream,
    first: f.first as string,
    last: f.last as string,
    predecessor_hash: f.predecessor_hash as string,
    ending_hash: f.ending_hash as string,
    merkle_root: f.merkle_root as string,
    previous_checkpoint_id: f.previous_checkpoint_id as string | null,
    service_epoch: f.service_epoch,
    signer_key_id: f.signer_key_id as string,
    created_at: f.created_at as string,
  };
}

/**
 * The range rules of objects.md §11: 1 ≤ first ≤ last, at most 1,024 positions; the first
 * checkpoint of a stream (and only it) starts at 1, names no previous checkpoint, and its
 * predecessor is the stream's genesis.
 */
export function checkRange(fields: CheckpointFields, field = 'checkpoint'): void {
  const first = BigInt(fields.first);
  const last = BigInt(fields.last);
  if (first < 1n) throw evidenceError(`${field}.first: must be at least 1`);
  if (last < first) throw evidenceError(`${field}.last: an empty range is never signed`);
  if (last - first + 1n > BigInt(CHECKPOINT_MAX_POSITIONS)) {
    throw evidenceError(`${field}: covers more than ${CHECKPOINT_MAX_POSITIONS} positions`);
  }
  if (first === 1n) {
    if (fields.previous_checkpoint_id !== null) {
      throw evidenceError(`${field}.previous_checkpoint_id: the first checkpoint of a stream names none`);
    }
    if (fields.predecessor_hash !== toHex(streamGenesis(fields.space_id, fields.stream))) {
      throw evidenceError(`${field}.predecessor_hash: is not the ${fields.stream} genesis`);
    }
  } else if (fields.previous_checkpoint_id === null) {
    throw evidenceError(`${field}.previous_checkpoint_id: missing for a range that starts after 1`);
  }
}

/** The checkpoint's canonical bytes (checks shapes and range rules). */
export function checkpointBytes(fields: CheckpointFields): Uint8Array {
  const f = checkShapes(fields as unknown as Record<string, unknown>, 'checkpoint');
  checkRange(f);
  const { previous_checkpoint_id, ...rest } = f;
  const obj: JsonObject = { ...rest, v: 1 };
  if (previous_checkpoint_id !== null) obj.previous_checkpoint_id = previous_checkpoint_id;
  return canonicalBytes(obj);
}

/** checkpoint_id = H(L("checkpoint") ‖ checkpoint). */
export function checkpointId(canonical: Uint8Array): Uint8Array {
  return labelledHash('checkpoint', canonical);
}

/** The bytes the online key signs: L("checkpoint-signature") ‖ checkpoint_id. */
export function checkpointSignatureMessage(id: Uint8Array): Uint8Array {
  return concatBytes(label('checkpoint-signature'), id);
}

/** Sign a range with the online key; `signer_key_id` is the signer's. */
export function signCheckpoint(signer: ServiceSigner, input: Omit<CheckpointFields, 'signer_key_id'>): SignedCheckpoint {
  const fields: CheckpointFields = { ...input, signer_key_id: signer.keyId };
  const canonical = checkpointBytes(fields);
  const id = checkpointId(canonical);
  return { fields, canonical, id, signature: signer.sign(checkpointSignatureMessage(id)) };
}

export function renderCheckpoint(checkpoint: SignedCheckpoint, signer: ServedSigner): ServedCheckpoint {
  const f = checkpoint.fields;
  return {
    checkpoint_id: toHex(checkpoint.id),
    stream: f.stream,
    first: f.first,
    last: f.last,
    previous_checkpoint_id: f.previous_checkpoint_id,
    predecessor_hash: f.predecessor_hash,
    ending_hash: f.ending_hash,
    merkle_root: f.merkle_root,
    service_epoch: f.service_epoch,
    created_at: f.created_at,
    canonical: toBase64url(checkpoint.canonical),
    signature: toHex(checkpoint.signature),
    signer,
  };
}

/** Read checkpoint canonical bytes strictly (canonical, exact members, range rules). */
export function readCheckpointBytes(canonical: Uint8Array, field = 'checkpoint.canonical'): CheckpointFields {
  const obj = asEvidence(() => readCanonicalObject(canonical, field));
  readMembers(obj, field, SIGNED_REQUIRED, ['previous_checkpoint_id']);
  if (obj.v !== 1) throw evidenceError(`${field}.v: must be 1`);
  if (Object.hasOwn(obj, 'previous_checkpoint_id') && obj.previous_checkpoint_id === null) {
    throw evidenceError(`${field}.previous_checkpoint_id: absent in the first checkpoint, never null`);
  }
  const fields = checkShapes({ previous_checkpoint_id: null, ...obj }, field);
  checkRange(fields, field);
  return fields;
}

/**
 * Read a served checkpoint strictly: exact members, canonical signed bytes, the served
 * `checkpoint_id` is the formula of them, every repeated member equals the signed one, and
 * the signer is the one the checkpoint names. Checks no signature.
 */
export function readServedCheckpoint(value: unknown, field = 'checkpoint'): ReadCheckpoint {
  const served = readMembers(value, field, SERVED_MEMBERS);
  const canonical = asEvidence(() => fromBase64url(served.canonical, `${field}.canonical`));
  const fields = readCheckpointBytes(canonical, `${field}.canonical`);
  const id = checkpointId(canonical);
  if (served.checkpoint_id !== toHex(id)) throw evidenceError(`${field}.checkpoint_id: is not the id of canonical`);
  for (const name of REPEATED) {
    if (served[name] !== fields[name]) throw evidenceError(`${field}.${name}: differs from the signed member`);
  }
  return { fields, canonical, id, ...readServiceSignature(served, fields.signer_key_id, field) };
}

/**
 * A served checkpoint, fully: strict read, checkpoint signature under the signer's key, and
 * the signer (key id, certificate, root signature, purpose `checkpoint`, dates at
 * `created_at`, root equals `trustedRoot`). The caller shows `trusted.development`.
 */
export function verifyCheckpoint(value: unknown, trustedRoot: Uint8Array, field = 'checkpoint'): VerifiedCheckpoint {
  const read = readServedCheckpoint(value, field);
  const trusted = verifyServiceSignature(read, checkpointSignatureMessage(read.id), { trustedRoot, purpose: 'checkpoint', at: read.fields.created_at }, field);
  return { ...read, trusted };
}

/**
 * The continuity rule (objects.md §11, spec "Chains, checkpoints and proofs"): `next` must be
 * the checkpoint right after `kept` in the same stream of the same SPACE, name it, and start
 * from its ending link. Anything else means the history changed: CHECKPOINT_INVALID with a
 * detail starting "history changed".
 */
export function checkExtends(kept: CheckpointLink, next: CheckpointLink): void {
  const k = kept.fields;
  const n = next.fields;
  if (n.space_id !== k.space_id || n.stream !== k.stream) {
    throw evidenceError('history changed: the checkpoint is of another SPACE or stream');
  }
  if (n.previous_checkpoint_id !== toHex(kept.id)) {
    throw evidenceError('history changed: previous_checkpoint_id does not name the kept checkpoint');
  }
  if (BigInt(n.first) !== BigInt(k.last) + 1n) {
    throw evidenceError(`history changed: first is ${n.first}, the kept checkpoint ends at ${k.last}`);
  }
  if (n.predecessor_hash !== k.ending_hash) {
    throw evidenceError('history changed: predecessor_hash is not the kept ending_hash');
  }
}

/** checkExtends along a run of later checkpoints, oldest first; returns the newest. */
export function checkExtendsAll(kept: CheckpointLink, later: readonly CheckpointLink[]): CheckpointLink {
  let at = kept;
  for (const next of later) {
    checkExtends(at, next);
    at = next;
  }
  return at;
}

/** A leaf to prove: one post (stream `posts`) or governance event (stream `events`). */
export interface ProvenLeaf {
  readonly spaceId: string;
  readonly stream: Stream;
  /** seq or revision. */
  readonly position: bigint;
  /** object_id or command_id. */
  readonly id: Uint8Array;
  readonly chainHash: Uint8Array;
}

export interface InclusionEvidence {
  /** The served `leaf` (hex), when the answer carries one. */
  readonly leaf?: unknown;
  /** The served checkpoint. */
  readonly checkpoint: unknown;
  /** The served `{leaf_index, tree_size, path}`. */
  readonly inclusion: unknown;
}

/** Longer than any path a 1,024-position range can give; a longer one is refused unread. */
const MAX_PATH = 16;

/**
 * objects.md §13 step 6: the leaf formula gives the leaf (and the served one, if any); the
 * path leads to `merkle_root` with index `position − first` and size `last − first + 1` from
 * the signed range (the served ones must agree); the checkpoint is read strictly and its
 * signature, certificate, dates and root are checked against `trustedRoot`. Returns the
 * verified checkpoint; the caller warns when `trusted.development` is true.
 */
export function verifyCheckpointInclusion(
  leaf: ProvenLeaf,
  evidence: InclusionEvidence,
  trustedRoot: Uint8Array,
): VerifiedCheckpoint {
  const leafHash =
    leaf.stream === 'posts'
      ? postLeaf(leaf.spaceId, leaf.position, leaf.id, leaf.chainHash)
      : eventLeaf(leaf.spaceId, leaf.position, leaf.id, leaf.chainHash);
  if (evidence.leaf !== undefined && evidence.leaf !== toHex(leafHash)) {
    throw evidenceError('leaf: is not the leaf formula of the post');
  }
  const checkpoint = verifyCheckpoint(evidence.checkpoint, trustedRoot);
  const f = checkpoint.fields;
  if (f.space_id !== leaf.spaceId) throw evidenceError('checkpoint.space_id: is not the SPACE of the post');
  if (f.stream !== leaf.stream) throw evidenceError(`checkpoint.stream: is not ${leaf.stream}`);
  const first = BigInt(f.first);
  const last = BigInt(f.last);
  if (leaf.position < first || leaf.position > last) {
    throw evidenceError(`checkpoint: range ${f.first}-${f.last} does not cover ${leaf.position}`);
  }
  const index = Number(leaf.position - first);
  const size = Number(last - first + 1n);
  const inc = readMembers(evidence.inclusion, 'inclusion', ['leaf_index', 'tree_size', 'path']);
  if (inc.leaf_index !== index) throw evidenceError(`inclusion.leaf_index: the signed range gives ${index}`);
  if (inc.tree_size !== size) throw evidenceError(`inclusion.tree_size: the signed range gives ${size}`);
  if (!Array.isArray(inc.path) || inc.path.length > MAX_PATH) {
    throw evidenceError(`inclusion.path: expected at most ${MAX_PATH} hashes`);
  }
  const path = inc.path.map((h: unknown, i: number) => readHexMember(h, 32, `inclusion.path[${i}]`));
  const root = readHexMember(f.merkle_root, 32, 'checkpoint.merkle_root');
  verifyInclusion(leafHash, index, size, path, root);
  return checkpoint;
}
