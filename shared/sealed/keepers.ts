/**
 * Keeper lists and the trust rules built on them (protocol/sealed.md §4, §5, §8).
 *
 *   list   = canonical({"admission","change_every","keepers","revision","space_id","stampers","v":1})
 *   signed = L("sealed-keepers") || list                      signed by the owner; at most 8,192 bytes
 *
 * `keepers`: KEYS besides the owner that may lock (0 to 32, ascending; the owner is always a
 * keeper and never listed). `stampers`: KEYS whose stamps count (0 to 32, ascending).
 * `admission`: `stamped` or `open`. `change_every`: 60 to 604,800 seconds. `revision`: 1, then +1.
 *
 * Vouched for (who may be handed the key), by the list in force: the owner and every listed
 * keeper; every KEY when admission is open; otherwise a KEY holding a current stamp from the
 * owner, a listed keeper or a listed stamper. With no list only the owner vouches, through its
 * stamps. After a hand-over the previous owner's latest list stays in force (its signer's stamps
 * counting) until the new owner signs one, provided it names the new owner as a keeper.
 *
 * Lists and stamps are attacker-controlled; the relay's `vouched` flag is never an input here.
 */
import { canonicalBytes, readCanonicalObject } from '../canonical.js';
import { SvcError } from '../errors.js';
import { concatBytes, isHex, isUuid } from '../encoding.js';
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
import { stampCurrent, type Stamp } from './stamps.js';

export const KEEPER_LIST_MAX_BYTES = 8_192;
export const KEEPERS_MAX = 32;
export const STAMPERS_MAX = 32;
export const CHANGE_EVERY_MIN = 60;
export const CHANGE_EVERY_MAX = 604_800;
export const ADMISSIONS = ['stamped', 'open'] as const;
export type Admission = (typeof ADMISSIONS)[number];

export interface KeeperList {
  admission: Admission;
  change_every: number;
  keepers: string[];
  revision: number;
  space_id: string;
  stampers: string[];
  v: 1;
}

export interface KeeperListFields {
  space_id: string;
  revision: number;
  keepers: readonly string[];
  stampers: readonly string[];
  admission: Admission;
  change_every: number;
}

const MEMBERS = ['admission', 'change_every', 'keepers', 'revision', 'space_id', 'stampers', 'v'];

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

function peerList(value: unknown, max: number, field: string, reading: boolean): string[] {
  if (!Array.isArray(value) || value.length > max) throw bad(field, `0 to ${max} peer ids`);
  const list = reading ? value : [...value].sort();
  list.forEach((p, i) => {
    if (!isHex(p, 32)) throw bad(`${field}[${i}]`, 'expected a peer id, 64 lowercase hex');
    if (i > 0 && !((list[i - 1] as string) < p)) throw bad(`${field}[${i}]`, 'ascending without repeats');
  });
  return list as string[];
}

function checkMembers(src: Record<string, unknown>, field: string, reading: boolean): KeeperList {
  const at = (m: string): string => (field === '' ? m : `${field}.${m}`);
  if (!(ADMISSIONS as readonly unknown[]).includes(src.admission)) throw bad(at('admission'), 'stamped or open');
  const changeEvery = src.change_every;
  if (typeof changeEvery !== 'number' || !Number.isSafeInteger(changeEvery) || changeEvery < CHANGE_EVERY_MIN || changeEvery > CHANGE_EVERY_MAX) {
    throw bad(at('change_every'), `whole seconds, ${CHANGE_EVERY_MIN} to ${CHANGE_EVERY_MAX}`);
  }
  const revision = src.revision;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1) throw bad(at('revision'), 'an integer of at least 1');
  if (!isUuid(src.space_id)) throw bad(at('space_id'), 'expected a lowercase uuid');
  return {
    admission: src.admission as Admission,
    change_every: changeEvery,
    keepers: peerList(src.keepers, KEEPERS_MAX, at('keepers'), reading),
    revision,
    space_id: src.space_id,
    stampers: peerList(src.stampers, STAMPERS_MAX, at('stampers'), reading),
    v: 1,
  };
}

/** The list's canonical bytes; `keepers` and `stampers` are sorted, repeats and the owner refused. */
export function buildKeeperList(fields: KeeperListFields, owner: string): Uint8Array {
  const list = checkMembers(fields as unknown as Record<string, unknown>, '', false);
  if (list.keepers.includes(owner)) throw bad('keepers', 'the owner is always a keeper and never listed');
  const bytes = canonicalBytes(list);
  if (bytes.length > KEEPER_LIST_MAX_BYTES) throw bad('list', `over ${KEEPER_LIST_MAX_BYTES} bytes`);
  return bytes;
}

/** Read a list's bytes strictly: 1 to 8,192 bytes, canonical, exactly its members. */
export function readKeeperList(bytes: Uint8Array, field = 'list'): KeeperList {
  if (!(bytes instanceof Uint8Array) || bytes.length < 1 || bytes.length > KEEPER_LIST_MAX_BYTES) {
    throw bad(field, `must be 1 to ${KEEPER_LIST_MAX_BYTES} bytes`);
  }
  const o = readCanonicalObject(bytes, field);
  for (const k of MEMBERS) if (!Object.hasOwn(o, k)) throw bad(`${field}.${k}`, 'required');
  for (const k of Object.keys(o)) if (!MEMBERS.includes(k)) throw bad(`${field}.${k}`, 'not a member of a keeper list');
  if (o.v !== 1) throw bad(`${field}.v`, 'must be 1');
  return checkMembers(o, field, true);
}

/** L("sealed-keepers") || list: what the owner signs (a passkey signs its hash). */
export function keeperListSignedBytes(list: Uint8Array): Uint8Array {
  return concatBytes(label('sealed-keepers'), list);
}

export function signKeeperList(signer: Signer, list: Uint8Array): Ed25519Envelope {
  return signEnvelope(signer, keeperListSignedBytes(list));
}

/**
 * Read and verify a list signed by `signer` for `spaceId`. The signer is the owner who signed
 * it, so it must not be listed as a keeper. Throws INVALID_REQUEST for the shape and the SPACE,
 * SEALED_SIGNATURE_INVALID naming the failed signature check.
 */
export function verifyKeeperList(bytes: Uint8Array, envelope: SignatureEnvelope, signer: SignerKey, spaceId: string): KeeperList {
  const list = readKeeperList(bytes);
  if (list.space_id !== spaceId) throw bad('list.space_id', 'not this SPACE');
  if (list.keepers.includes(signer.peerId)) throw bad('list.keepers', 'the owner is always a keeper and never listed');
  if (!signerMatchesPeerId(signer)) throw new SvcError('SEALED_SIGNATURE_INVALID', "signer: the KEY's key does not hash to its peer id");
  verifyEnvelope(envelope, keeperListSignedBytes(bytes), signer, 'SEALED_SIGNATURE_INVALID', 'keeper list signature');
  return list;
}

/** `PUT …/sealed/keepers` body: `{"list": b64u, "alg", "signature", …}`. */
export function readKeeperListPut(body: unknown): { list: Uint8Array; envelope: SignatureEnvelope } {
  const { payload, envelope } = readEnvelopeBody(body, 'list');
  if (payload.length > KEEPER_LIST_MAX_BYTES) throw bad('list', `at most ${KEEPER_LIST_MAX_BYTES} bytes`);
  return { list: payload, envelope };
}

/** A new list takes the next revision (KEEPER_LIST_STALE with the expected revision as detail). */
export function checkNextRevision(list: KeeperList, latestRevision: number | null): void {
  const expected = (latestRevision ?? 0) + 1;
  if (list.revision !== expected) throw new SvcError('KEEPER_LIST_STALE', String(expected));
}

// ---- trust rules ----------------------------------------------------------------------------

/** A checked list and the KEY that signed it. */
export interface SignedKeeperList {
  list: KeeperList;
  signedBy: string;
}

/** Who owns the SPACE and the latest list seen; `previousOwner` when a hand-over was seen. */
export interface SpaceAuthority {
  owner: string;
  latest: SignedKeeperList | null;
  previousOwner?: string | undefined;
}

/**
 * The list that counts (§5, §8): the latest one when the owner in place signed it; after a
 * hand-over, the previous owner's latest while it names the new owner as a keeper and the new
 * owner has signed none; otherwise none (a list signed by anyone else is forged).
 */
export function listInForce(authority: SpaceAuthority): SignedKeeperList | null {
  const { owner, latest, previousOwner } = authority;
  if (latest === null) return null;
  if (latest.signedBy === owner) return latest;
  if (previousOwner !== undefined && latest.signedBy === previousOwner && latest.list.keepers.includes(owner)) return latest;
  return null;
}

/** Whether the latest list is signed by someone who may not sign it (bridge code SEALED_LIST_FORGED). */
export function listForged(authority: SpaceAuthority): boolean {
  return authority.latest !== null && listInForce(authority) === null;
}

/** The owner, or a KEY the list in force names as a keeper. */
export function isKeeper(peer: string, authority: SpaceAuthority): boolean {
  return peer === authority.owner || (listInForce(authority)?.list.keepers.includes(peer) ?? false);
}

/**
 * Whether a member accepts a lock (§4): from the owner, or from a keeper of the list in force.
 * The one exception: the KEY that just took the SPACE over (`recipient` = owner) accepts its own
 * lock from the owner it took over from, for the generation in use at the hand-over only.
 */
export function mayLock(input: {
  sender: string;
  recipient: string;
  generation: number;
  authority: SpaceAuthority;
  handOver?: { previousOwner: string; generation: number } | undefined;
}): boolean {
  if (isKeeper(input.sender, input.authority)) return true;
  const h = input.handOver;
  return (
    h !== undefined &&
    input.recipient === input.authority.owner &&
    input.sender === h.previousOwner &&
    input.generation === h.generation
  );
}

/** Who vouches under `authority`: members vouched by position, issuers whose stamps count. */
export function vouching(authority: SpaceAuthority): { open: boolean; members: Set<string>; issuers: Set<string> } {
  const inForce = listInForce(authority);
  const members = new Set([authority.owner]);
  const issuers = new Set([authority.owner]);
  if (inForce === null) return { open: false, members, issuers };
  issuers.add(inForce.signedBy);
  for (const k of inForce.list.keepers) {
    members.add(k);
    issuers.add(k);
  }
  for (const s of inForce.list.stampers) issuers.add(s);
  return { open: inForce.list.admission === 'open', members, issuers };
}

/**
 * Whether `peer` is vouched for at `now` (whole seconds), given the stamps it holds, each already
 * verified against its issuer's signature (stamps.ts `verifyStamp`). A stamp counts when it
 * names `peer`, comes from an issuer that counts and has not run out.
 */
export function isVouched(peer: string, stamps: readonly Stamp[], authority: SpaceAuthority, now: number): boolean {
  const v = vouching(authority);
  if (v.members.has(peer) || v.open) return true;
  return stamps.some((s) => s.peer_id === peer && v.issuers.has(s.issuer) && stampCurrent(s, now));
}
