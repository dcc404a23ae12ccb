/**
 * The two chains of a SPACE (protocol/objects.md §8, spec/1-concepts.md "Chains, checkpoints
 * and proofs"): posts by `seq` and governance events by `revision`, both from 1, gap-free.
 *
 *   object genesis = H(L("object-genesis") || uuid16(space_id))
 *   admission      = H(L("object-admission") || u64(admitted_revision) || control_hash)
 *   post link      = H(L("object-chain") || uuid16 || u64(seq) || admission || previous || object_id)
 *   control genesis= H(L("control-genesis") || uuid16)
 *   command_id     = H(L("control") || event canonical)
 *   event link     = H(L("control-chain") || uuid16 || u64(revision) || previous || command_id)
 *
 * `previous` is the genesis for position 1, else the link of the position before. The verifiers
 * walk stored links (read back from the database or an export, so not trusted) and name the
 * first position that does not hold.
 */
import { SvcError } from './errors.js';
import { I64_MAX, equalBytes, isHex, isUuid, parseDecimal, toDecimal, u64, uuid16 } from './encoding.js';
import { canonicalBytes, readCanonicalObject, type JsonObject } from './canonical.js';
import { labelledHash } from './labels.js';
import { objectIdOf } from './objects.js';

/** A position in a chain (seq or revision). */
export type Position = bigint | number;

const HASH_BYTES = 32;

function assertHash(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== HASH_BYTES) {
    throw new TypeError(`${name} must be 32 bytes`);
  }
}

/** A position as a bigint within [min, 2^63 - 1]; positions are stored as SQLite integers. */
function position(value: Position, name: string, min: bigint): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer`);
  if (typeof value !== 'number' && typeof value !== 'bigint') throw new TypeError(`${name} must be a number or bigint`);
  const v = BigInt(value);
  if (v < min || v > I64_MAX) throw new RangeError(`${name} must be between ${min} and ${I64_MAX}`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Posts

/** "Previous link" of seq 1, and the predecessor of the first posts checkpoint. */
export function objectGenesis(spaceId: string): Uint8Array {
  return labelledHash('object-genesis', uuid16(spaceId, 'space_id'));
}

/**
 * The governance state a post was admitted under. Revision 0 (no event yet) uses the control
 * genesis as its control hash (labels.md, `control-genesis`).
 */
export function objectAdmission(revision: Position, controlChainHash: Uint8Array): Uint8Array {
  const r = position(revision, 'revision', 0n);
  assertHash(controlChainHash, 'controlChainHash');
  return labelledHash('object-admission', u64(r), controlChainHash);
}

export interface PostLinkInput {
  spaceId: string;
  seq: Position;
  admission: Uint8Array;
  previous: Uint8Array;
  objectId: Uint8Array;
}

/** A post's `chain_hash`. */
export function postLink(input: PostLinkInput): Uint8Array {
  const seq = position(input.seq, 'seq', 1n);
  assertHash(input.admission, 'admission');
  assertHash(input.previous, 'previous');
  assertHash(input.objectId, 'objectId');
  return labelledHash(
    'object-chain',
    uuid16(input.spaceId, 'space_id'),
    u64(seq),
    input.admission,
    input.previous,
    input.objectId,
  );
}

// ---------------------------------------------------------------------------------------------
// Governance log

/** "Previous link" of revision 1, and the predecessor of the first events checkpoint. */
export function controlGenesis(spaceId: string): Uint8Array {
  return labelledHash('control-genesis', uuid16(spaceId, 'space_id'));
}

export interface ControlLinkInput {
  spaceId: string;
  revision: Position;
  previous: Uint8Array;
  commandId: Uint8Array;
}

/** A governance event's `chain_hash`. */
export function controlLink(input: ControlLinkInput): Uint8Array {
  const revision = position(input.revision, 'revision', 1n);
  assertHash(input.previous, 'previous');
  assertHash(input.commandId, 'commandId');
  return labelledHash('control-chain', uuid16(input.spaceId, 'space_id'), u64(revision), input.previous, input.commandId);
}

/** A governance event as the relay writes it (objects.md §8). */
export interface GovernanceEvent {
  spaceId: string;
  revision: Position;
  /** Hex peer id of who acted. */
  actor: string;
  /** Event name such as `space.created`. */
  event: string;
  /** Service-defined members per event (api-notes.md). */
  payload: JsonObject;
}

/** canonical({"actor","event","payload","revision": decimal string,"space_id","v":1}). */
export function governanceEventBytes(e: GovernanceEvent): Uint8Array {
  if (!isUuid(e.spaceId)) throw new TypeError('spaceId must be a lowercase uuid');
  if (!isHex(e.actor, 32)) throw new TypeError('actor must be a peer id (64 lowercase hex)');
  if (typeof e.event !== 'string' || e.event.length === 0) throw new TypeError('event must be a non-empty string');
  if (e.payload === null || typeof e.payload !== 'object' || Array.isArray(e.payload)) {
    throw new TypeError('payload must be a JSON object');
  }
  return canonicalBytes({
    actor: e.actor,
    event: e.event,
    payload: e.payload,
    revision: toDecimal(position(e.revision, 'revision', 1n)),
    space_id: e.spaceId,
    v: 1,
  });
}

const EVENT_MEMBERS = ['actor', 'event', 'payload', 'revision', 'space_id', 'v'];

/**
 * Read an event's canonical bytes strictly (from an export or a proof: attacker-controlled).
 * Throws INVALID_REQUEST naming `field`.
 */
export function readGovernanceEvent(bytes: Uint8Array, field = 'event'): GovernanceEvent & { revision: bigint } {
  const o = readCanonicalObject(bytes, field);
  const keys = Object.keys(o);
  for (const k of keys) {
    if (!EVENT_MEMBERS.includes(k)) throw new SvcError('INVALID_REQUEST', `${field}: unknown member ${k}`);
  }
  for (const k of EVENT_MEMBERS) {
    if (!(k in o)) throw new SvcError('INVALID_REQUEST', `${field}: missing member ${k}`);
  }
  if (o.v !== 1) throw new SvcError('INVALID_REQUEST', `${field}.v: must be 1`);
  if (!isHex(o.actor, 32)) throw new SvcError('INVALID_REQUEST', `${field}.actor: expected 64 lowercase hex`);
  if (typeof o.event !== 'string' || o.event === '') {
    throw new SvcError('INVALID_REQUEST', `${field}.event: expected a non-empty string`);
  }
  const payload = o.payload;
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new SvcError('INVALID_REQUEST', `${field}.payload: expected an object`);
  }
  if (!isUuid(o.space_id)) throw new SvcError('INVALID_REQUEST', `${field}.space_id: expected a lowercase uuid`);
  const revision = parseDecimal(o.revision, `${field}.revision`, 1n);
  return { spaceId: o.space_id, revision, actor: o.actor, event: o.event, payload };
}

/** command_id = H(L("control") || event canonical bytes). */
export function commandIdOf(eventBytes: Uint8Array): Uint8Array {
  if (!(eventBytes instanceof Uint8Array) || eventBytes.length === 0) throw new TypeError('eventBytes must be bytes');
  return labelledHash('control', eventBytes);
}

// ---------------------------------------------------------------------------------------------
// Walking stored chains

/** Where a walk starts: the genesis (default) or a link already trusted (a checkpoint's end). */
export interface ChainStart {
  /** Position of the trusted link; the walk checks from position + 1. */
  position: Position;
  chainHash: Uint8Array;
}

export type ChainVerdict =
  | { ok: true; count: number; head: { position: bigint; chainHash: Uint8Array } | undefined }
  | { ok: false; position: bigint; index: number; reason: string };

/** One stored post link. */
export interface StoredPostLink {
  seq: Position;
  objectId: Uint8Array;
  admission: Uint8Array;
  chainHash: Uint8Array;
  /** When present (members' proofs), the admission is recomputed from these two. */
  admittedRevision?: Position;
  admittedControlHash?: Uint8Array;
  /** When present, object_id is recomputed from it: H(L("object") || canonical). */
  canonical?: Uint8Array;
}

/** One stored governance link. */
export interface StoredControlLink {
  revision: Position;
  commandId: Uint8Array;
  chainHash: Uint8Array;
  /** When present, command_id is recomputed from it. */
  canonical?: Uint8Array;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.length === HASH_BYTES;
}

function asPosition(value: unknown): bigint | undefined {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  return undefined;
}

function startOf(spaceId: string, start: ChainStart | undefined, genesis: (s: string) => Uint8Array) {
  if (start === undefined) return { position: 0n, previous: genesis(spaceId) };
  assertHash(start.chainHash, 'start.chainHash');
  return { position: position(start.position, 'start.position', 1n), previous: start.chainHash };
}

/**
 * Walk post links in order from genesis (or from `start`): positions must be contiguous and
 * every link must equal the one recomputed from the previous. Reports the first bad link.
 */
export function verifyPostChain(spaceId: string, links: readonly StoredPostLink[], start?: ChainStart): ChainVerdict {
  if (!isUuid(spaceId)) throw new TypeError('spaceId must be a lowercase uuid');
  let { position: at, previous } = startOf(spaceId, start, objectGenesis);
  for (let i = 0; i < links.length; i++) {
    const link = links[i]!;
    const expected = at + 1n;
    const fail = (reason: string): ChainVerdict => ({ ok: false, position: expected, index: i, reason });
    if (expected > I64_MAX) return fail('position beyond 2^63 - 1');
    const seq = asPosition(link.seq);
    if (seq !== expected) return fail(`seq ${String(link.seq)} where ${expected} was due`);
    if (!isHash(link.objectId) || !isHash(link.admission) || !isHash(link.chainHash)) {
      return fail('a hash is not 32 bytes');
    }
    if (link.canonical !== undefined) {
      if (!(link.canonical instanceof Uint8Array)) return fail('canonical is not bytes');
      if (!equalBytes(objectIdOf(link.canonical), link.objectId)) return fail('object_id does not match the canonical bytes');
    }
    if (link.admittedRevision !== undefined || link.admittedControlHash !== undefined) {
      const revision = asPosition(link.admittedRevision);
      if (revision === undefined || revision < 0n || revision > I64_MAX || !isHash(link.admittedControlHash)) {
        return fail('admitted revision or control hash malformed');
      }
      const admission = objectAdmission(revision, link.admittedControlHash);
      if (!equalBytes(admission, link.admission)) return fail('admission does not match its revision and control hash');
    }
    const chainHash = postLink({ spaceId, seq, admission: link.admission, previous, objectId: link.objectId });
    if (!equalBytes(chainHash, link.chainHash)) return fail('chain_hash does not follow from the previous link');
    at = seq;
    previous = link.chainHash;
  }
  return { ok: true, count: links.length, head: at === 0n ? undefined : { position: at, chainHash: previous } };
}

/** Why an event's own bytes disagree with where it sits, or undefined. */
function eventMismatch(canonical: Uint8Array, spaceId: string, revision: bigint): string | undefined {
  let event: GovernanceEvent & { revision: bigint };
  try {
    event = readGovernanceEvent(canonical);
  } catch (e) {
    return e instanceof SvcError && e.detail !== undefined ? e.detail : 'event bytes unreadable';
  }
  if (event.spaceId !== spaceId) return 'event names another SPACE';
  if (event.revision !== revision) return `event says revision ${event.revision}`;
  return undefined;
}

/** Walk governance links in order from genesis (or from `start`); reports the first bad link. */
export function verifyControlChain(
  spaceId: string,
  links: readonly StoredControlLink[],
  start?: ChainStart,
): ChainVerdict {
  if (!isUuid(spaceId)) throw new TypeError('spaceId must be a lowercase uuid');
  let { position: at, previous } = startOf(spaceId, start, controlGenesis);
  for (let i = 0; i < links.length; i++) {
    const link = links[i]!;
    const expected = at + 1n;
    const fail = (reason: string): ChainVerdict => ({ ok: false, position: expected, index: i, reason });
    if (expected > I64_MAX) return fail('position beyond 2^63 - 1');
    const revision = asPosition(link.revision);
    if (revision !== expected) return fail(`revision ${String(link.revision)} where ${expected} was due`);
    if (!isHash(link.commandId) || !isHash(link.chainHash)) return fail('a hash is not 32 bytes');
    if (link.canonical !== undefined) {
      if (!(link.canonical instanceof Uint8Array) || link.canonical.length === 0) return fail('canonical is not bytes');
      if (!equalBytes(commandIdOf(link.canonical), link.commandId)) return fail('command_id does not match the canonical bytes');
      const problem = eventMismatch(link.canonical, spaceId, revision);
      if (problem !== undefined) return fail(problem);
    }
    const chainHash = controlLink({ spaceId, revision, previous, commandId: link.commandId });
    if (!equalBytes(chainHash, link.chainHash)) return fail('chain_hash does not follow from the previous link');
    at = revision;
    previous = link.chainHash;
  }
  return { ok: true, count: links.length, head: at === 0n ? undefined : { position: at, chainHash: previous } };
}
