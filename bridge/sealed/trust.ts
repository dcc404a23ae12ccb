/**
 * The member-side trust rules of a sealed SPACE (protocol/sealed.md §4, §5, §10), applied to
 * what `GET /v1/spaces/{name}/sealed` serves and to what this bridge remembers
 * (bridge/sealed/sealed-cache.ts). Everything served is attacker-controlled: the relay can show any
 * owner, list, generation or lock it likes, and these rules decide what the bridge accepts.
 *
 * - Owner: first contact takes the relay's word (that is what comparing fingerprints outside
 *   the service is for); a SPACE this KEY created is never met "for the first time". After that
 *   a new owner is accepted only through a keeper list the previous owner signed naming it as a
 *   keeper (one seen before, or the one served, checked now). Otherwise nothing from the new
 *   owner is trusted (SEALED_OWNER_UNTRUSTED); when the relay's `owner_was` is not the owner
 *   remembered, two hand-overs were missed and the person must compare fingerprints and clear
 *   what is remembered (`svc-bridge sealed <space> --forget`).
 * - Keeper list: its signature is checked against the signer's own KEY; it must be in force
 *   (shared/sealed/keepers.ts `listInForce`: signed by the owner in place, or by the previous
 *   owner while it names the new one and the new one signed none), else SEALED_LIST_FORGED; once
 *   the owner in place signed one, a list signed by anyone else is forged too. A revision older
 *   than the one remembered, none where one was seen, or other bytes under the same revision:
 *   SEALED_ROLLBACK.
 * - Generation: older than the newest seen, or another commitment for the same one:
 *   SEALED_ROLLBACK.
 * - Locks (`lockRefusal`): only from the owner or a keeper of the list in force
 *   (shared/sealed/keepers.ts `mayLock`), with the new-owner exception for the generation in use
 *   at the hand-over; for the generation in use or the staged one, under its served commitment.
 */
import { SvcError } from '../../shared/errors.js';
import { readBackLink, readCommitment, readGeneration } from '../../shared/sealed/generations.js';
import { displayFingerprint } from '../../shared/sealed/encryption-key.js';
import { readEnvelope, type SignatureEnvelope } from '../../shared/sealed/envelope.js';
import { listForged, mayLock, readKeeperList, verifyKeeperList, type KeeperList, type SpaceAuthority } from '../../shared/sealed/keepers.js';
import { readLock } from '../../shared/sealed/locks.js';
import { fromBase64url, isHex, isUuid } from '../../shared/encoding.js';
import { readKeyView, type PeerKey } from './encryption.js';
import { BridgeError } from '../../tools/errors.js';
import type { OwnerSeen, RememberedSpace, SeenList } from './sealed-cache.js';

// ---- reading sealed.status ---------------------------------------------------------------------

export interface ServedList {
  readonly revision: number;
  readonly bytes: Uint8Array;
  readonly envelope: SignatureEnvelope;
  readonly signedBy: PeerKey;
}

export interface ServedStaged {
  readonly generation: number;
  readonly commitment: string;
  readonly back: Uint8Array | null;
  readonly createdBy: string;
}

export interface ServedStatus {
  readonly name: string;
  readonly spaceId: string;
  readonly owner: PeerKey;
  /** The peer id of the owner it was handed over from, if the relay names one. */
  readonly ownerWas: string | null;
  readonly generation: number;
  readonly commitment: string;
  readonly staged: ServedStaged | null;
  /** Locks as served, read one by one by `readServedLock` (one bad lock spoils no other). */
  readonly locks: readonly unknown[];
  readonly keeperList: ServedList | null;
  /** The relay's `keeper` and `upkeep` readings: advisory. */
  readonly keeper: boolean;
  readonly upkeep: Readonly<Record<string, unknown>>;
}

function bad(field: string, rule: string): BridgeError {
  return new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: sealed.status ${field}: ${rule}`, 'Check that SVC_API points at an svc relay.');
}

function obj(v: unknown, field: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw bad(field, 'expected an object');
  return v as Record<string, unknown>;
}

/** Wire readers throw SvcError INVALID_REQUEST; from the relay that is a broken answer. */
function wire<T>(field: string, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof SvcError && e.code === 'INVALID_REQUEST') throw bad(field, e.detail ?? 'malformed');
    throw e;
  }
}

function readServedList(v: unknown): ServedList | null {
  if (v === null || v === undefined) return null;
  const l = obj(v, 'keeper_list');
  const revision = l.revision;
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 1) throw bad('keeper_list.revision', 'an integer >= 1');
  return {
    revision,
    bytes: wire('keeper_list.list', () => fromBase64url(l.list, 'list')),
    envelope: wire('keeper_list.signature', () => readEnvelope(l.signature)),
    signedBy: readKeyView(l.signed_by, 'keeper_list.signed_by'),
  };
}

/**
 * `owner_was` of a sealed.status answer: the previous owner's peer id, as the relay serves it
 * (its keys beside it as `owner_was_key`), or its key view, as relays serving it as an object
 * did; null when the SPACE was never handed over.
 */
function readOwnerWas(b: Record<string, unknown>): string | null {
  const v = b.owner_was;
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') {
    if (!isHex(v, 32)) throw bad('owner_was', 'expected a peer id');
    return v;
  }
  return readKeyView(v, 'owner_was').peerId;
}

/** Read a sealed.status answer (relay/routes/sealed.ts `renderStatus`). */
export function readStatus(body: unknown): ServedStatus {
  const b = obj(body, 'answer');
  if (typeof b.space !== 'string') throw bad('space', 'expected the SPACE name');
  if (!isUuid(b.space_id)) throw bad('space_id', 'expected a lowercase uuid');
  if (b.suite !== 1) throw bad('suite', 'this bridge opens suite 1 only');
  const generation = wire('generation', () => readGeneration(b.generation));
  const commitment = b.commitment;
  if (!isHex(commitment, 32)) throw bad('commitment', 'expected 64 lowercase hex');
  let staged: ServedStaged | null = null;
  if (b.staged !== null && b.staged !== undefined) {
    const s = obj(b.staged, 'staged');
    if (!isHex(s.commitment, 32)) throw bad('staged.commitment', 'expected 64 lowercase hex');
    if (!isHex(s.created_by, 32)) throw bad('staged.created_by', 'expected a peer id');
    staged = {
      generation: wire('staged.generation', () => readGeneration(s.generation)),
      commitment: s.commitment,
      back: s.back === null || s.back === undefined ? null : wire('staged.back', () => readBackLink(s.back)),
      createdBy: s.created_by,
    };
  }
  if (!Array.isArray(b.locks)) throw bad('locks', 'expected an array');
  return {
    name: b.space,
    spaceId: b.space_id,
    owner: readKeyView(b.owner, 'owner'),
    ownerWas: readOwnerWas(b),
    generation,
    commitment,
    staged,
    locks: b.locks,
    keeperList: readServedList(b.keeper_list),
    keeper: b.keeper === true,
    upkeep: b.upkeep !== null && typeof b.upkeep === 'object' && !Array.isArray(b.upkeep) ? (b.upkeep as Record<string, unknown>) : {},
  };
}

export interface ServedLock {
  readonly generation: number;
  readonly lock: Uint8Array;
  /** The commitment the relay shows beside it (64 hex), if any. */
  readonly commitment: string | null;
  readonly sender: PeerKey;
}

/** One served lock (attacker-controlled), read strictly. */
export function readServedLock(v: unknown, i: number): ServedLock {
  const l = obj(v, `locks[${i}]`);
  return {
    generation: wire(`locks[${i}].generation`, () => readGeneration(l.generation)),
    lock: wire(`locks[${i}].lock`, () => readLock(l.lock)),
    commitment: l.commitment === null || l.commitment === undefined ? null : wire(`locks[${i}].commitment`, () => (readCommitment(l.commitment), l.commitment as string)),
    sender: readKeyView(l.sender, `locks[${i}].sender`),
  };
}

// ---- judging ---------------------------------------------------------------------------------

export interface HandOver {
  readonly previousOwner: string;
  readonly generation: number;
}

export interface Judged {
  /** Who owns the SPACE and the list in force, as this bridge accepts them. */
  readonly authority: SpaceAuthority;
  readonly handOver: HandOver | undefined;
  /** The memory to keep (bridge/sealed/sealed-cache.ts `remember`). */
  readonly memory: RememberedSpace;
  /** A keeper list seen for the first time, checked (to note). */
  readonly list: SeenList | undefined;
  /** An owner seen for the first time (to note). */
  readonly owner: OwnerSeen | undefined;
  /** What the person should know: first contact, an accepted new owner. */
  readonly notes: readonly string[];
}

export interface JudgeInput {
  readonly relay: string;
  /** This KEY's peer id. */
  readonly me: string;
  readonly status: ServedStatus;
  readonly remembered: RememberedSpace | undefined;
  /** Keeper lists seen before that `signer` signed, newest first. */
  readonly listsSignedBy: (signer: string) => readonly SeenList[];
  readonly now: number;
}

function fingerprintOf(k: PeerKey): string {
  return k.encryption === null ? 'no encryption key published' : `encryption key fingerprint ${displayFingerprint(k.encryption.fingerprint)}`;
}

const FORGET_FIX = (name: string) =>
  `Compare the owner's encryption key fingerprint with its person outside the service; if it is right, clear what this bridge remembers with \`svc-bridge sealed ${name} --forget\` and read again.`;

/** Whether `list` (bytes, checked when noted or now) names `peer` as a keeper. */
function names(list: KeeperList, peer: string): boolean {
  return list.keepers.includes(peer);
}

/** A checked keeper list as served: signature by its signer's own KEY, this SPACE. */
function checkServedList(served: ServedList, spaceId: string): KeeperList {
  try {
    const list = verifyKeeperList(served.bytes, served.envelope, served.signedBy.signer, spaceId);
    if (list.revision !== served.revision) throw new SvcError('SEALED_SIGNATURE_INVALID', `keeper_list.revision: ${served.revision} beside a list of revision ${list.revision}`);
    return list;
  } catch (e) {
    if (e instanceof SvcError) {
      throw new BridgeError(
        'SEALED_LIST_FORGED',
        `the keeper list the relay shows (revision ${served.revision}, signed by ${served.signedBy.peerId}) does not check: ${e.code}${e.detail ? ` (${e.detail})` : ''}`,
        'Nothing from this list is trusted; locks from KEYS it names are refused. Tell the SPACE owner.',
      );
    }
    throw e;
  }
}

/**
 * Apply the rules of §5 and §10 to a served status. Returns what to accept and remember, or
 * throws a BridgeError (SEALED_OWNER_UNTRUSTED, SEALED_LIST_FORGED, SEALED_ROLLBACK) saying
 * plainly what the relay showed and what was remembered.
 */
export function judgeStatus(input: JudgeInput): Judged {
  const { status: st, remembered: rem, me, now } = input;
  const notes: string[] = [];
  if (rem !== undefined && rem.spaceId !== st.spaceId) throw new TypeError('judgeStatus: remembered state of another SPACE');

  // Owner (§5).
  let owner = st.owner.peerId;
  let ownerWas: string | null = rem?.ownerWas ?? null;
  let newOwner: OwnerSeen | undefined;
  if (rem === undefined) {
    ownerWas = st.ownerWas;
    if (owner !== me) {
      notes.push(
        `First contact with sealed SPACE ${st.name}: took the relay's word that ${owner} owns it (${fingerprintOf(st.owner)}); compare that fingerprint with its person outside the service.`,
      );
    }
    newOwner = { owner, ownerWas, generation: st.generation, seenAt: now };
  } else if (owner !== rem.owner) {
    const previous = rem.owner;
    if (st.ownerWas !== previous) {
      throw new BridgeError(
        'SEALED_OWNER_UNTRUSTED',
        `the relay says ${owner} owns sealed SPACE ${st.name} and took it over from ${st.ownerWas ?? 'nobody'}, but the owner this bridge knew is ${previous}: at least two hand-overs were missed, so nothing from the new owner is trusted (${fingerprintOf(st.owner)})`,
        FORGET_FIX(st.name),
      );
    }
    const seen = input.listsSignedBy(previous).some((l) => {
      try {
        return names(readKeeperList(l.list), owner);
      } catch {
        return false;
      }
    });
    const served = st.keeperList !== null && st.keeperList.signedBy.peerId === previous && names(checkServedList(st.keeperList, st.spaceId), owner);
    if (!seen && !served) {
      throw new BridgeError(
        'SEALED_OWNER_UNTRUSTED',
        `the relay says ${owner} took sealed SPACE ${st.name} over from ${previous}, but no keeper list ${previous} signed names ${owner} as a keeper: nothing from the new owner is trusted (${fingerprintOf(st.owner)})`,
        FORGET_FIX(st.name),
      );
    }
    ownerWas = previous;
    notes.push(`Sealed SPACE ${st.name} changed owner: ${previous} handed it to ${owner}, who is named as a keeper in a list ${previous} signed (${fingerprintOf(st.owner)}).`);
    newOwner = { owner, ownerWas, generation: st.generation, seenAt: now };
  }

  // Keeper list (§5, §8).
  let list: KeeperList | null = null;
  let seenList: SeenList | undefined;
  const kl = st.keeperList;
  if (kl === null) {
    if (rem?.listRevision !== null && rem?.listRevision !== undefined) {
      throw new BridgeError(
        'SEALED_ROLLBACK',
        `the relay shows no keeper list for sealed SPACE ${st.name}, but this bridge saw revision ${rem.listRevision}: refused (a relay may not roll the list back)`,
        'Nothing is opened or sealed under what this relay shows now; try again later, and tell the SPACE owner if it persists.',
      );
    }
  } else {
    list = checkServedList(kl, st.spaceId);
    const remembered = rem?.listRevision ?? null;
    if (remembered !== null && kl.revision < remembered) {
      throw new BridgeError(
        'SEALED_ROLLBACK',
        `the relay shows keeper list revision ${kl.revision} for sealed SPACE ${st.name}, older than revision ${remembered} this bridge saw: refused (a relay may not roll the list back)`,
        'Nothing is opened or sealed under what this relay shows now; try again later, and tell the SPACE owner if it persists.',
      );
    }
    if (remembered !== null && kl.revision === remembered && rem?.list !== null && rem?.list !== undefined && Buffer.compare(Buffer.from(rem.list), Buffer.from(kl.bytes)) !== 0) {
      throw new BridgeError(
        'SEALED_ROLLBACK',
        `the relay shows another keeper list under revision ${kl.revision} for sealed SPACE ${st.name} than the one this bridge saw: refused`,
        'Tell the SPACE owner: two different lists carry one revision.',
      );
    }
    if (rem?.listSignedBy === owner && kl.signedBy.peerId !== owner) {
      throw new BridgeError(
        'SEALED_LIST_FORGED',
        `the keeper list the relay shows for sealed SPACE ${st.name} is signed by ${kl.signedBy.peerId}, but the owner ${owner} already signed one: refused`,
        'Locks from KEYS it names are refused. Tell the SPACE owner.',
      );
    }
    if (remembered === null || kl.revision > remembered) {
      seenList = { revision: kl.revision, list: kl.bytes, envelope: JSON.stringify(kl.envelope), signedBy: kl.signedBy.peerId };
    }
  }
  const authority: SpaceAuthority = {
    owner,
    latest: list === null || kl === null ? null : { list, signedBy: kl.signedBy.peerId },
    previousOwner: ownerWas ?? undefined,
  };
  if (listForged(authority)) {
    throw new BridgeError(
      'SEALED_LIST_FORGED',
      `the keeper list the relay shows for sealed SPACE ${st.name} (revision ${kl?.revision}) is signed by ${kl?.signedBy.peerId}, who is not its owner ${owner}${ownerWas ? ` (nor the previous owner ${ownerWas} naming ${owner} as a keeper)` : ''}: refused`,
      'Locks from KEYS it names are refused. Tell the SPACE owner.',
    );
  }

  // Generation (§5: no rollback).
  if (rem !== undefined && st.generation < rem.generation) {
    throw new BridgeError(
      'SEALED_ROLLBACK',
      `the relay shows generation ${st.generation} in use for sealed SPACE ${st.name}, older than generation ${rem.generation} this bridge saw: refused (a relay may not roll the key back)`,
      'Nothing is opened or sealed under what this relay shows now; try again later, and tell the SPACE owner if it persists.',
    );
  }
  if (rem !== undefined && st.generation === rem.generation && st.commitment !== rem.commitment) {
    throw new BridgeError(
      'SEALED_ROLLBACK',
      `the relay shows another commitment for generation ${st.generation} of sealed SPACE ${st.name} than the one this bridge saw: refused`,
      'Nothing is opened or sealed under what this relay shows now; tell the SPACE owner.',
    );
  }

  // The new-owner exception (§4): its own lock from the owner it took over from, for the
  // generation in use at the hand-over.
  let handOverGeneration: number | null = null;
  if (owner === me && ownerWas !== null) {
    handOverGeneration = rem?.owner === me && rem.handOverGeneration !== null ? rem.handOverGeneration : st.generation;
  }
  const handOver = owner === me && ownerWas !== null && handOverGeneration !== null ? { previousOwner: ownerWas, generation: handOverGeneration } : undefined;

  const keepList = seenList !== undefined || rem === undefined;
  const memory: RememberedSpace = {
    relay: input.relay,
    spaceId: st.spaceId,
    name: st.name,
    owner,
    ownerWas,
    handOverGeneration,
    generation: st.generation,
    commitment: st.commitment,
    listRevision: kl === null ? (rem?.listRevision ?? null) : keepList ? kl.revision : (rem?.listRevision ?? kl.revision),
    list: kl === null ? (rem?.list ?? null) : keepList ? kl.bytes : (rem?.list ?? kl.bytes),
    listSignedBy: kl === null ? (rem?.listSignedBy ?? null) : keepList ? kl.signedBy.peerId : (rem?.listSignedBy ?? kl.signedBy.peerId),
    createdHere: rem?.createdHere ?? false,
    firstSeenAt: rem?.firstSeenAt ?? now,
    updatedAt: now,
  };
  return { authority, handOver, memory, list: seenList, owner: newOwner, notes };
}

/**
 * Why a served lock is refused before it is opened, or undefined when its sender may lock for
 * this member (§4, §10) and it belongs to a generation the relay shows now.
 */
export function lockRefusal(lock: ServedLock, judged: Judged, status: ServedStatus, me: string): string | undefined {
  const allowed = mayLock({ sender: lock.sender.peerId, recipient: me, generation: lock.generation, authority: judged.authority, handOver: judged.handOver });
  if (!allowed) {
    return `refused a lock for generation ${lock.generation} from ${lock.sender.peerId}: it is neither the owner nor a keeper in the keeper list the owner signed`;
  }
  const expected = lock.generation === status.generation ? status.commitment : status.staged?.generation === lock.generation ? status.staged.commitment : undefined;
  if (expected === undefined) return `refused a lock for generation ${lock.generation}: neither the generation in use (${status.generation}) nor a staged one`;
  if (lock.commitment !== null && lock.commitment !== expected) return `refused a lock for generation ${lock.generation}: it names another commitment than the generation's`;
  return undefined;
}
