/**
 * Recovery notices (spec 1-concepts "Space status" and Versioning 6; 2-endpoints recovery.list;
 * labels.md "What the service signs"; objects.md §9: the online key's purpose `recovery`).
 *
 *   notice      = canonical({"chains","created_at","name","previous_epoch","replaced_by",
 *                            "replaced_by_space_id","service_epoch","signer_key_id","space_id","v":1})
 *   recovery_id = H(L("recovery") ‖ notice)
 *   online key signs L("recovery-signature") ‖ recovery_id
 *
 * A relay restored from a backup that is older than checkpoints it had already signed has lost
 * positions that clients may hold receipts and checkpoints for. It starts a new service epoch,
 * closes each SPACE whose chain was cut, continues it in a new SPACE, and publishes one signed
 * notice per closed SPACE, so a client that kept a checkpoint past the surviving head can tell
 * a declared, signed loss from a history quietly rewritten.
 *
 * The members (every value a string, except `chains` and `v`):
 *
 * - `space_id`: uuid of the SPACE that was closed (it keeps its id, name and surviving posts;
 *   reads and export work, writes answer SPACE_CLOSED).
 * - `name`: that SPACE's name at the restore.
 * - `replaced_by`: the name of the SPACE that continues it (the closed SPACE's own
 *   `replaced_by` member says the same).
 * - `replaced_by_space_id`: the continuation's uuid (a fresh SPACE: its chains start at 1 from
 *   its own genesis; same members, roles and tags).
 * - `previous_epoch`: the `service_epoch` the restored backup was serving under; the lost
 *   receipts and checkpoints name it (or an epoch older still).
 * - `service_epoch`: the epoch the relay serves under from this restore on (never equal to
 *   `previous_epoch`).
 * - `chains`: one entry per stream of the SPACE that lost positions, `posts` before `events`,
 *   at least one, each exactly:
 *     - `stream`: `"posts"` or `"events"`;
 *     - `signed_last`: decimal, the last position a checkpoint of this stream had signed (what
 *       the relay's checkpoint log shows), greater than `survived_last`;
 *     - `signed_checkpoint_id`: hex id of that newest signed checkpoint;
 *     - `signed_ending_hash`: hex link at `signed_last`, as that checkpoint signed it;
 *     - `survived_last`: decimal, the stream's head after the restore (`"0"` when nothing
 *       survived); positions `survived_last + 1` to `signed_last` are gone for good;
 *     - `survived_hash`: hex link at `survived_last` (the stream's genesis when it is 0).
 * - `created_at`: when the notice was signed (ISO time, milliseconds, `Z`); the signer must be
 *   valid for it, purpose `recovery`.
 * - `signer_key_id`: the online key's key id.
 *
 * The withheld form. A SPACE's chains are not everyone's to read (spec/1-concepts.md "Roles
 * matrix": the posts and their checkpoints of a private or sealed SPACE, and every SPACE's
 * governance log, are its members' and owner's), yet anyone may read recovery.list. So the
 * relay also signs, beside a notice that names a chain some outsider may not read, the notice
 * with those chains withheld, and serves that to whoever may not read them:
 *
 *   withheld = canonical({"chains","created_at","full_recovery_id","name","previous_epoch",
 *                         "replaced_by","replaced_by_space_id","service_epoch","signer_key_id",
 *                         "space_id","v":1})
 *
 * with the id and signature formulas above. `full_recovery_id` is the id of the whole notice;
 * the other members are its own, except `created_at` and `signer_key_id` (when this form was
 * signed, and by which key) and `chains`: the same streams in the same order, each either as
 * the whole notice has it or withheld as
 * `{"stream","signed_last":null,"signed_checkpoint_id":null,"signed_ending_hash":null,
 *   "survived_last":null,"survived_hash":null,"unavailable":true}` (the `unavailable` marker:
 * not readable by this caller), at least one withheld. The member `full_recovery_id` tells the
 * forms apart: the reader of either refuses the other's members, so a withheld form never
 * passes for a whole notice. It declares no loss of any position (`recoveryExplains` is false
 * for a withheld stream).
 *
 * Served shape (`GET /v1/recovery`, each item):
 * `{"recovery_id","space_id","name","replaced_by","replaced_by_space_id","previous_epoch",
 *   "service_epoch","chains","created_at","canonical" (b64u),"signature" (128 hex),"signer":{signer}}`,
 * and for the withheld form also `"full_recovery_id"` after `recovery_id`; the repeated members
 * must equal the signed ones.
 *
 * Served notices are attacker-controlled: readers and verifiers throw
 * SvcError('CHECKPOINT_INVALID') with a detail naming the field, as for checkpoints.
 */
import { canonicalBytes, canonicalize, readCanonicalObject, type JsonObject } from './canonical.js';
import { streamGenesis, type CheckpointFields, type Stream } from './checkpoint.js';
import { concatBytes, fromBase64url, isHex, isUuid, parseDecimal, toBase64url, toHex } from './encoding.js';
import { label, labelledHash } from './labels.js';
import { SPACE_NAME_MAX_CHARS, SPACE_NAME_MIN_CHARS } from './limits.js';
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

/** How far one stream of a closed SPACE was signed and how far it survived. */
export interface RecoveryChain {
  readonly stream: Stream;
  readonly signed_last: string;
  readonly signed_checkpoint_id: string;
  readonly signed_ending_hash: string;
  readonly survived_last: string;
  readonly survived_hash: string;
}

/** A stream of a withheld form whose positions and links the caller may not read. */
export interface WithheldChain {
  readonly stream: Stream;
  readonly signed_last: null;
  readonly signed_checkpoint_id: null;
  readonly signed_ending_hash: null;
  readonly survived_last: null;
  readonly survived_hash: null;
  readonly unavailable: true;
}

/** A chain entry of a notice: whole, or (in a withheld form only) withheld. */
export type NoticeChain = RecoveryChain | WithheldChain;

/** The signed members of a whole notice, as on the wire. */
export interface RecoveryFields {
  readonly space_id: string;
  readonly name: string;
  readonly replaced_by: string;
  readonly replaced_by_space_id: string;
  readonly previous_epoch: string;
  readonly service_epoch: string;
  readonly chains: readonly RecoveryChain[];
  readonly created_at: string;
  readonly signer_key_id: string;
  readonly full_recovery_id?: undefined;
}

/** The signed members of a withheld form. */
export interface WithheldRecoveryFields extends Omit<RecoveryFields, 'chains' | 'full_recovery_id'> {
  readonly chains: readonly NoticeChain[];
  /** The id of the whole notice whose chains this form withholds. */
  readonly full_recovery_id: string;
}

/** Either form, as a reader finds it. */
export type NoticeFields = RecoveryFields | WithheldRecoveryFields;

export interface SignedRecovery {
  readonly fields: NoticeFields;
  readonly canonical: Uint8Array;
  readonly id: Uint8Array;
  readonly signature: Uint8Array;
}

/** The served shape (each item of recovery.list). */
export interface ServedRecovery {
  recovery_id: string;
  /** The withheld form only. */
  full_recovery_id?: string;
  space_id: string;
  name: string;
  replaced_by: string;
  replaced_by_space_id: string;
  previous_epoch: string;
  service_epoch: string;
  chains: NoticeChain[];
  created_at: string;
  canonical: string;
  signature: string;
  signer: ServedSigner;
}

export interface ReadRecovery extends SignedRecovery {
  readonly signer: ReadSigner;
}

/** A notice whose signature and signer passed; `trusted.development` must be shown. */
export interface VerifiedRecovery extends ReadRecovery {
  readonly trusted: TrustedSigner;
}

const SIGNED_MEMBERS = [
  'chains',
  'created_at',
  'name',
  'previous_epoch',
  'replaced_by',
  'replaced_by_space_id',
  'service_epoch',
  'signer_key_id',
  'space_id',
  'v',
] as const;

/** The withheld form's members: the whole notice's and `full_recovery_id`. */
const WITHHELD_SIGNED_MEMBERS = [...SIGNED_MEMBERS, 'full_recovery_id'] as const;

const CHAIN_MEMBERS = [
  'stream',
  'signed_last',
  'signed_checkpoint_id',
  'signed_ending_hash',
  'survived_last',
  'survived_hash',
] as const;

const WITHHELD_CHAIN_MEMBERS = [...CHAIN_MEMBERS, 'unavailable'] as const;

/** The members a served notice repeats from the signed ones. */
const REPEATED = [
  'space_id',
  'name',
  'replaced_by',
  'replaced_by_space_id',
  'previous_epoch',
  'service_epoch',
  'chains',
  'created_at',
] as const;

const SERVED_MEMBERS = ['recovery_id', ...REPEATED, 'canonical', 'signature', 'signer'] as const;
const WITHHELD_SERVED_MEMBERS = ['recovery_id', 'full_recovery_id', ...REPEATED, 'canonical', 'signature', 'signer'] as const;

/** Whether a chain entry is withheld (carries the `unavailable` marker). */
export function isWithheld(chain: NoticeChain): chain is WithheldChain {
  return 'unavailable' in chain;
}

/** The chain of `stream` a notice names with its positions, if any (a withheld one names none). */
export function readableChain(notice: NoticeFields, stream: Stream): RecoveryChain | undefined {
  const chain = (notice.chains as readonly NoticeChain[]).find((c) => c.stream === stream);
  return chain === undefined || isWithheld(chain) ? undefined : chain;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readName(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < SPACE_NAME_MIN_CHARS || value.length > SPACE_NAME_MAX_CHARS) {
    throw evidenceError(`${field}: expected a SPACE name`);
  }
  return value;
}

function checkChain(value: unknown, field: string, spaceId: string): RecoveryChain {
  const c = readMembers(value, field, CHAIN_MEMBERS);
  if (c.stream !== 'posts' && c.stream !== 'events') throw evidenceError(`${field}.stream: expected posts or events`);
  const signed = asEvidence(() => parseDecimal(c.signed_last, `${field}.signed_last`, 1n));
  const survived = asEvidence(() => parseDecimal(c.survived_last, `${field}.survived_last`, 0n));
  if (survived >= signed) throw evidenceError(`${field}.survived_last: must be below signed_last (nothing was lost)`);
  for (const name of ['signed_checkpoint_id', 'signed_ending_hash', 'survived_hash'] as const) {
    if (!isHex(c[name], 32)) throw evidenceError(`${field}.${name}: expected 64 lowercase hex`);
  }
  if (survived === 0n && c.survived_hash !== toHex(streamGenesis(spaceId, c.stream))) {
    throw evidenceError(`${field}.survived_hash: is not the ${c.stream} genesis`);
  }
  return {
    stream: c.stream,
    signed_last: c.signed_last as string,
    signed_checkpoint_id: c.signed_checkpoint_id as string,
    signed_ending_hash: c.signed_ending_hash as string,
    survived_last: c.survived_last as string,
    survived_hash: c.survived_hash as string,
  };
}

function checkWithheldChain(value: unknown, field: string): WithheldChain {
  const c = readMembers(value, field, WITHHELD_CHAIN_MEMBERS);
  if (c.stream !== 'posts' && c.stream !== 'events') throw evidenceError(`${field}.stream: expected posts or events`);
  for (const name of CHAIN_MEMBERS) {
    if (name !== 'stream' && c[name] !== null) throw evidenceError(`${field}.${name}: a withheld stream names no position or link`);
  }
  if (c.unavailable !== true) throw evidenceError(`${field}.unavailable: must be true`);
  return withheldChain(c.stream);
}

function withheldChain(stream: Stream): WithheldChain {
  return {
    stream,
    signed_last: null,
    signed_checkpoint_id: null,
    signed_ending_hash: null,
    survived_last: null,
    survived_hash: null,
    unavailable: true,
  };
}

/** Check every member; `withheld` reads the withheld form (which must withhold a chain and name the whole notice). */
function checkFields(f: Record<string, unknown>, field: string, withheld: boolean): NoticeFields {
  if (!isUuid(f.space_id)) throw evidenceError(`${field}.space_id: expected a lowercase uuid`);
  const name = readName(f.name, `${field}.name`);
  const replacedBy = readName(f.replaced_by, `${field}.replaced_by`);
  if (replacedBy === name) throw evidenceError(`${field}.replaced_by: names the closed SPACE itself`);
  if (!isUuid(f.replaced_by_space_id)) throw evidenceError(`${field}.replaced_by_space_id: expected a lowercase uuid`);
  if (f.replaced_by_space_id === f.space_id) throw evidenceError(`${field}.replaced_by_space_id: is the closed SPACE itself`);
  if (!isUuid(f.previous_epoch)) throw evidenceError(`${field}.previous_epoch: expected a lowercase uuid`);
  if (!isUuid(f.service_epoch)) throw evidenceError(`${field}.service_epoch: expected a lowercase uuid`);
  if (f.service_epoch === f.previous_epoch) throw evidenceError(`${field}.service_epoch: a restore that lost positions starts a new epoch`);
  if (!Array.isArray(f.chains) || f.chains.length < 1 || f.chains.length > 2) {
    throw evidenceError(`${field}.chains: expected one or two streams`);
  }
  const chains = f.chains.map((c: unknown, i: number): NoticeChain =>
    withheld && isObject(c) && Object.hasOwn(c, 'unavailable')
      ? checkWithheldChain(c, `${field}.chains[${i}]`)
      : checkChain(c, `${field}.chains[${i}]`, f.space_id as string),
  );
  if (chains.length === 2 && (chains[0]!.stream !== 'posts' || chains[1]!.stream !== 'events')) {
    throw evidenceError(`${field}.chains: posts comes before events, each once`);
  }
  if (withheld && !chains.some(isWithheld)) throw evidenceError(`${field}.chains: a withheld form withholds at least one stream`);
  readIsoMillis(f.created_at, `${field}.created_at`);
  if (!isHex(f.signer_key_id, 32)) throw evidenceError(`${field}.signer_key_id: expected 64 lowercase hex`);
  if (withheld && !isHex(f.full_recovery_id, 32)) throw evidenceError(`${field}.full_recovery_id: expected 64 lowercase hex`);
  const common = {
    space_id: f.space_id,
    name,
    replaced_by: replacedBy,
    replaced_by_space_id: f.replaced_by_space_id,
    previous_epoch: f.previous_epoch,
    service_epoch: f.service_epoch,
    created_at: f.created_at as string,
    signer_key_id: f.signer_key_id,
  };
  if (withheld) return { full_recovery_id: f.full_recovery_id as string, ...common, chains };
  return { ...common, chains: chains as RecoveryChain[] };
}

function toJson(f: NoticeFields): JsonObject {
  return {
    ...(f.full_recovery_id === undefined ? {} : { full_recovery_id: f.full_recovery_id }),
    space_id: f.space_id,
    name: f.name,
    replaced_by: f.replaced_by,
    replaced_by_space_id: f.replaced_by_space_id,
    previous_epoch: f.previous_epoch,
    service_epoch: f.service_epoch,
    chains: (f.chains as readonly NoticeChain[]).map((c) => ({ ...c })),
    created_at: f.created_at,
    signer_key_id: f.signer_key_id,
    v: 1,
  };
}

/** The notice's canonical bytes, whole or withheld form (checks every member). */
export function recoveryBytes(fields: NoticeFields): Uint8Array {
  const withheld = fields.full_recovery_id !== undefined;
  return canonicalBytes(toJson(checkFields(fields as unknown as Record<string, unknown>, 'recovery', withheld)));
}

/** recovery_id = H(L("recovery") ‖ notice). */
export function recoveryId(canonical: Uint8Array): Uint8Array {
  return labelledHash('recovery', canonical);
}

/** The bytes the online key signs: L("recovery-signature") ‖ recovery_id. */
export function recoverySignatureMessage(id: Uint8Array): Uint8Array {
  return concatBytes(label('recovery-signature'), id);
}

function signFields(signer: ServiceSigner, fields: NoticeFields): SignedRecovery {
  const canonical = recoveryBytes(fields);
  const id = recoveryId(canonical);
  return { fields, canonical, id, signature: signer.sign(recoverySignatureMessage(id)) };
}

/** Sign a whole notice with the online key; `signer_key_id` is the signer's. */
export function signRecovery(signer: ServiceSigner, input: Omit<RecoveryFields, 'signer_key_id'>): SignedRecovery {
  return signFields(signer, checkFields({ ...input, signer_key_id: signer.keyId }, 'recovery', false));
}

/**
 * Sign the withheld form of the whole notice `full`: the streams `withhold` answers true for
 * withheld, signed at `createdAt` by `signer`. Undefined when it withholds none (the whole
 * notice is then the one to serve).
 */
export function signWithheldRecovery(
  signer: ServiceSigner,
  full: SignedRecovery,
  withhold: (stream: Stream) => boolean,
  createdAt: string,
): SignedRecovery | undefined {
  if (full.fields.full_recovery_id !== undefined) throw new Error('signWithheldRecovery: takes a whole notice');
  if (!full.fields.chains.some((c) => withhold(c.stream))) return undefined;
  const fields = checkFields(
    {
      ...full.fields,
      chains: full.fields.chains.map((c): NoticeChain => (withhold(c.stream) ? withheldChain(c.stream) : c)),
      created_at: createdAt,
      signer_key_id: signer.keyId,
      full_recovery_id: toHex(full.id),
    },
    'recovery',
    true,
  );
  return signFields(signer, fields);
}

export function renderRecovery(notice: SignedRecovery, signer: ServedSigner): ServedRecovery {
  const f = notice.fields;
  return {
    recovery_id: toHex(notice.id),
    ...(f.full_recovery_id === undefined ? {} : { full_recovery_id: f.full_recovery_id }),
    space_id: f.space_id,
    name: f.name,
    replaced_by: f.replaced_by,
    replaced_by_space_id: f.replaced_by_space_id,
    previous_epoch: f.previous_epoch,
    service_epoch: f.service_epoch,
    chains: (f.chains as readonly NoticeChain[]).map((c) => ({ ...c })),
    created_at: f.created_at,
    canonical: toBase64url(notice.canonical),
    signature: toHex(notice.signature),
    signer,
  };
}

/**
 * Read notice canonical bytes strictly (canonical, exact members, every rule above): the
 * whole notice, or the withheld form when it has `full_recovery_id`.
 */
export function readRecoveryBytes(canonical: Uint8Array, field = 'recovery.canonical'): NoticeFields {
  const obj = asEvidence(() => readCanonicalObject(canonical, field));
  const withheld = Object.hasOwn(obj, 'full_recovery_id');
  readMembers(obj, field, withheld ? WITHHELD_SIGNED_MEMBERS : SIGNED_MEMBERS);
  if (obj.v !== 1) throw evidenceError(`${field}.v: must be 1`);
  return checkFields(obj, field, withheld);
}

/**
 * Read a served notice strictly: exact members, canonical signed bytes, `recovery_id` is the
 * formula of them, every repeated member equals the signed one, and the signer is the one the
 * notice names. Checks no signature.
 */
export function readServedRecovery(value: unknown, field = 'recovery'): ReadRecovery {
  const withheld = isObject(value) && Object.hasOwn(value, 'full_recovery_id');
  const served = readMembers(value, field, withheld ? WITHHELD_SERVED_MEMBERS : SERVED_MEMBERS);
  const canonical = asEvidence(() => fromBase64url(served.canonical, `${field}.canonical`));
  const fields = readRecoveryBytes(canonical, `${field}.canonical`);
  // The served form must be the signed one: a whole notice never passes as withheld, nor the reverse.
  if ((fields.full_recovery_id !== undefined) !== withheld) throw evidenceError(`${field}.full_recovery_id: differs from the signed form`);
  const id = recoveryId(canonical);
  if (served.recovery_id !== toHex(id)) throw evidenceError(`${field}.recovery_id: is not the id of canonical`);
  if (withheld && served.full_recovery_id !== fields.full_recovery_id) throw evidenceError(`${field}.full_recovery_id: differs from the signed member`);
  for (const name of REPEATED) {
    const same =
      name === 'chains'
        ? asEvidence(() => canonicalize(served.chains)) === canonicalize(fields.chains)
        : served[name] === fields[name];
    if (!same) throw evidenceError(`${field}.${name}: differs from the signed member`);
  }
  return { fields, canonical, id, ...readServiceSignature(served, fields.signer_key_id, field) };
}

/**
 * A served notice, fully: strict read, the signature under the signer's key, and the signer
 * (key id, certificate, root signature, purpose `recovery`, valid at `created_at`, root equals
 * `trustedRoot`). The caller shows `trusted.development`.
 */
export function verifyRecovery(value: unknown, trustedRoot: Uint8Array, field = 'recovery'): VerifiedRecovery {
  const read = readServedRecovery(value, field);
  const trusted = verifyServiceSignature(read, recoverySignatureMessage(read.id), { trustedRoot, purpose: 'recovery', at: read.fields.created_at }, field);
  return { ...read, trusted };
}

/**
 * Whether a notice declares the loss of a checkpoint a reader kept: same SPACE, a chain entry
 * for its stream, the kept range reaches past what survived and not past what was signed, and
 * when it is the newest signed one, its id and ending link are the ones the notice names. A
 * reader that holds such a checkpoint accepts a later one that does not extend it (and moves
 * to `replaced_by`) only with a verified notice for which this answers true. A withheld
 * stream explains nothing.
 */
export function recoveryExplains(notice: NoticeFields, kept: CheckpointFields, keptId: Uint8Array): boolean {
  if (notice.space_id !== kept.space_id) return false;
  const chain = readableChain(notice, kept.stream);
  if (chain === undefined) return false;
  const last = BigInt(kept.last);
  if (last <= BigInt(chain.survived_last) || last > BigInt(chain.signed_last)) return false;
  if (last === BigInt(chain.signed_last)) {
    return toHex(keptId) === chain.signed_checkpoint_id && kept.ending_hash === chain.signed_ending_hash;
  }
  return true;
}
