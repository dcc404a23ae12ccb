/**
 * Sealed SPACES' key records (migration 006; spec/1-concepts.md "Sealed key records", "States:
 * Sealed key"; protocol/sealed.md §3-§9): generations with commitments and back links, locks
 * per member and generation, keeper lists, stamps, the staged change, and the header and
 * ciphertext of each sealed post.
 *
 *   generation in use --stage (keeper)--> staged (one change at a time)
 *   staged --activate (keeper; every vouched member holds a lock)--> in use; older locks deleted
 *   staged --abandon (keeper)--> removed with its locks
 *
 * Every write is one immediate transaction that re-reads the SPACE and decides there who is a
 * keeper (the owner, or a member the list in force names) and who is vouched for (relay/sealed/
 * authority.ts), so a concurrent hand-over, list or removal cannot slip between check and write.
 * Signatures (keeper lists, stamps) are checked by the caller before, outside the lock.
 *
 * What the relay holds here opens nothing: commitments, back links and locks are sealed to
 * secrets only members' software has; headers are the routing the relay reads anyway.
 */
import { equalBytes } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import type { SignatureEnvelope } from '../../shared/sealed/envelope.js';
import { checkNextRevision, type KeeperList, type SpaceAuthority } from '../../shared/sealed/keepers.js';
import { stampCurrent, type Stamp } from '../../shared/sealed/stamps.js';
import { authorityOf, issuerCounts, keeperOf, listedKeepers, stampOf, vouchedFor, type StoredStamp } from '../sealed/authority.js';
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EncryptionKeyStore } from './encryption-keys.js';
import type { MemberStore } from './members.js';
import type { CreateSpaceInput, SpaceRow, SpaceStore } from './spaces.js';

export interface SealedSpaceState {
  spaceRowId: number;
  /** The generation in use. */
  generation: number;
  /** The owner the SPACE was last handed over from, and the generation in use then. */
  ownerWas: string | null;
  handedOverGeneration: number | null;
  /** The last keeper action (list, stamp for another KEY, locks, stage, activate, abandon). */
  keptAt: number | null;
  keptBy: string | null;
  /** First departure / keeper drop not yet covered by a key change (upkeep). */
  departedAt: number | null;
  keeperDroppedAt: number | null;
}

export interface GenerationRow {
  generation: number;
  commitment: Uint8Array;
  /** Null for generation 1. */
  back: Uint8Array | null;
  createdBy: string;
  stagedAt: number;
  /** Null while staged. */
  activatedAt: number | null;
  /** Last lock handed on for it while staged. */
  progressedAt: number | null;
}

export interface LockRow {
  generation: number;
  recipient: string;
  sender: string;
  lock: Uint8Array;
  createdAt: number;
}

export interface KeeperListRow {
  revision: number;
  list: Uint8Array;
  envelope: SignatureEnvelope;
  signedBy: string;
  createdAt: number;
}

export interface StampRow extends StoredStamp {
  stamp: Uint8Array;
  envelope: SignatureEnvelope;
  putBy: string;
  putAt: number;
}

export interface SealedItemRow {
  generation: number;
  header: Uint8Array;
  ciphertext: Uint8Array;
}

/** A KEY inside the SPACE without a lock for some generation. */
export interface UnlockedRow {
  peerId: string;
  role: string;
  stamp: StampRow | undefined;
}

interface Actor {
  space: SpaceRow;
  actor: string;
  now: number;
}

export interface SealedStore {
  /** Create a sealed SPACE with its first commitment and the creator's own lock (one transaction). */
  createSpace(input: CreateSpaceInput, first: { commitment: Uint8Array; lock: Uint8Array }): Promise<{ space: SpaceRow; revision: number }>;
  state(spaceRowId: number): Promise<SealedSpaceState | undefined>;
  generation(spaceRowId: number, generation: number): Promise<GenerationRow | undefined>;
  staged(spaceRowId: number): Promise<GenerationRow | undefined>;
  /** Activated generations, newest first, below `before` (exclusive). */
  chain(spaceRowId: number, before: number | undefined, limit: number): Promise<GenerationRow[]>;
  /** A KEY's locks (in use and staged), newest generation first. */
  locksFor(spaceRowId: number, recipient: string): Promise<LockRow[]>;
  latestList(spaceRowId: number): Promise<KeeperListRow | undefined>;
  stamp(spaceRowId: number, peer: string): Promise<StampRow | undefined>;
  /** Who keeps the SPACE as the relay's records say. */
  authority(space: SpaceRow): Promise<SpaceAuthority>;
  /** Owner or member the list in force names as a keeper. */
  isKeeper(space: SpaceRow, peer: string): Promise<boolean>;
  vouched(space: SpaceRow, peer: string, now: number): Promise<boolean>;
  /** Inside KEYS without a lock for `generation`, by peer id after `after`. */
  unlocked(space: SpaceRow, generation: number, after: string | undefined, limit: number): Promise<UnlockedRow[]>;
  /** How many vouched inside KEYS hold no lock for `generation`. */
  missingLocks(space: SpaceRow, generation: number, now: number): Promise<number>;
  /** How many KEYS holding the key in use are no longer vouched for (upkeep.lapsed). */
  lapsed(space: SpaceRow, now: number): Promise<number>;

  putKeeperList(a: Actor & { list: KeeperList; bytes: Uint8Array; envelope: SignatureEnvelope }): Promise<KeeperListRow>;
  /** Store a stamp (see putStamp in the file comment of routes/sealed.ts); `stored` false when an existing one stands. */
  putStamp(a: Actor & { stamp: Stamp; bytes: Uint8Array; envelope: SignatureEnvelope }): Promise<{ stamp: StampRow; stored: boolean }>;
  putLocks(a: Actor & { generation: number; commitment: Uint8Array; locks: Map<string, Uint8Array> }): Promise<{ stored: number; missing: number }>;
  stage(a: Actor & { generation: number; commitment: Uint8Array; back: Uint8Array }): Promise<GenerationRow>;
  activate(a: Actor & { generation: number }): Promise<{ generation: GenerationRow; changed: boolean }>;
  abandon(a: Actor & { generation: number }): Promise<GenerationRow>;

  /** A sealed post's header and ciphertext; MUST run inside the append's transaction. */
  insertItem(postRow: number, item: SealedItemRow): Promise<void>;
  item(postRow: number): Promise<SealedItemRow | undefined>;
  /** The generation in use (undefined for a SPACE that is not sealed). */
  generationInUse(spaceRowId: number): Promise<number | undefined>;

  /**
   * A KEY left or was removed: the next change becomes due (at once if it was a keeper). Its
   * locks go at that change's activation; until then it cannot read them (it is outside).
   * Runs in the removing transaction.
   */
  memberRemoved(space: SpaceRow, peer: string, now: number): Promise<void>;
  /** Hand-over of the SPACE to `taker`: ENCRYPTION_KEY_MISSING, SEALED_SUCCESSOR_NOT_KEEPER, SEALED_NEEDS_LOCK. */
  checkOwnerHandOver(space: SpaceRow, taker: string): Promise<void>;
  /** Record a hand-over of the SPACE (inside the accepting transaction). */
  ownerHandedOver(space: SpaceRow, giver: string, taker: string, now: number): Promise<void>;
  /** Run reads against one snapshot. */
  snapshot<T>(fn: () => Promise<T>): Promise<T>;
}

interface StateRow {
  space_row_id: number;
  generation: number;
  owner_was: string | null;
  handed_over_generation: number | null;
  kept_at: number | null;
  kept_by: string | null;
  departed_at: number | null;
  keeper_dropped_at: number | null;
}

interface GenRow {
  generation: number;
  commitment: Uint8Array;
  back: Uint8Array | null;
  created_by: string;
  staged_at: number;
  activated_at: number | null;
  progressed_at: number | null;
}

interface LockDbRow {
  generation: number;
  recipient: string;
  sender: string;
  lock: Uint8Array;
  created_at: number;
}

interface ListDbRow {
  revision: number;
  list: Uint8Array;
  envelope_json: string;
  signed_by: string;
  created_at: number;
}

interface StampDbRow {
  peer_id: string;
  issuer: string;
  not_after: number | null;
  stamp: Uint8Array;
  envelope_json: string;
  put_by: string;
  put_at: number;
}

const toState = (r: StateRow): SealedSpaceState => ({
  spaceRowId: r.space_row_id,
  generation: r.generation,
  ownerWas: r.owner_was,
  handedOverGeneration: r.handed_over_generation,
  keptAt: r.kept_at,
  keptBy: r.kept_by,
  departedAt: r.departed_at,
  keeperDroppedAt: r.keeper_dropped_at,
});

const toGeneration = (r: GenRow): GenerationRow => ({
  generation: r.generation,
  commitment: plainBytes(r.commitment),
  back: r.back === null ? null : plainBytes(r.back),
  createdBy: r.created_by,
  stagedAt: r.staged_at,
  activatedAt: r.activated_at,
  progressedAt: r.progressed_at,
});

const toLock = (r: LockDbRow): LockRow => ({
  generation: r.generation,
  recipient: r.recipient,
  sender: r.sender,
  lock: plainBytes(r.lock),
  createdAt: r.created_at,
});

const toList = (r: ListDbRow): KeeperListRow => ({
  revision: r.revision,
  list: plainBytes(r.list),
  envelope: JSON.parse(r.envelope_json) as SignatureEnvelope,
  signedBy: r.signed_by,
  createdAt: r.created_at,
});

const toStamp = (r: StampDbRow): StampRow => ({
  peerId: r.peer_id,
  issuer: r.issuer,
  notAfter: r.not_after,
  stamp: plainBytes(r.stamp),
  envelope: JSON.parse(r.envelope_json) as SignatureEnvelope,
  putBy: r.put_by,
  putAt: r.put_at,
});

export interface SealedDeps {
  spaces: SpaceStore;
  members: MemberStore;
  encryptionKeys: EncryptionKeyStore;
}

export function createSealedStore(db: Db, deps: SealedDeps): SealedStore {
  const sql = dialectOf(db);
  const { spaces, members, encryptionKeys } = deps;
  const selectState = db.prepare<[number], StateRow>('SELECT * FROM sealed_spaces WHERE space_row_id = ?');
  const insertState = db.prepare('INSERT INTO sealed_spaces (space_row_id, generation) VALUES (?, 1)');
  const markKept = db.prepare('UPDATE sealed_spaces SET kept_at = ?, kept_by = ? WHERE space_row_id = ?');
  const markDeparted = db.prepare('UPDATE sealed_spaces SET departed_at = coalesce(departed_at, ?) WHERE space_row_id = ?');
  const markKeeperDropped = db.prepare(
    'UPDATE sealed_spaces SET keeper_dropped_at = coalesce(keeper_dropped_at, ?) WHERE space_row_id = ?',
  );
  const setInUse = db.prepare(
    `UPDATE sealed_spaces SET generation = @generation,
       departed_at = CASE WHEN departed_at <= @stagedAt THEN NULL ELSE departed_at END,
       keeper_dropped_at = CASE WHEN keeper_dropped_at <= @stagedAt THEN NULL ELSE keeper_dropped_at END
     WHERE space_row_id = @space`,
  );
  const setHandedOver = db.prepare(
    'UPDATE sealed_spaces SET owner_was = ?, handed_over_generation = ? WHERE space_row_id = ?',
  );

  const selectGeneration = db.prepare<[number, number], GenRow>(
    'SELECT * FROM sealed_generations WHERE space_row_id = ? AND generation = ?',
  );
  const selectStaged = db.prepare<[number], GenRow>(
    'SELECT * FROM sealed_generations WHERE space_row_id = ? AND activated_at IS NULL',
  );
  const selectChain = db.prepare<[number, number, number], GenRow>(
    `SELECT * FROM sealed_generations WHERE space_row_id = ? AND activated_at IS NOT NULL AND generation < ?
     ORDER BY generation DESC LIMIT ?`,
  );
  const insertGeneration = db.prepare(
    `INSERT INTO sealed_generations (space_row_id, generation, commitment, back, created_by, staged_at, activated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const activateGeneration = db.prepare('UPDATE sealed_generations SET activated_at = ? WHERE space_row_id = ? AND generation = ?');
  const progressGeneration = db.prepare('UPDATE sealed_generations SET progressed_at = ? WHERE space_row_id = ? AND generation = ?');
  const deleteGeneration = db.prepare('DELETE FROM sealed_generations WHERE space_row_id = ? AND generation = ?');

  const selectLocksFor = db.prepare<[number, string], LockDbRow>(
    'SELECT * FROM sealed_locks WHERE space_row_id = ? AND recipient = ? ORDER BY generation DESC',
  );
  const selectLock = db.prepare<[number, number, string], LockDbRow>(
    'SELECT * FROM sealed_locks WHERE space_row_id = ? AND generation = ? AND recipient = ?',
  );
  const upsertLock = db.prepare(
    `INSERT INTO sealed_locks (space_row_id, generation, recipient, sender, lock, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (space_row_id, generation, recipient) DO UPDATE SET sender = excluded.sender, lock = excluded.lock,
       created_at = excluded.created_at`,
  );
  const deleteLocksBelow = db.prepare('DELETE FROM sealed_locks WHERE space_row_id = ? AND generation < ?');
  const deleteLocksOf = db.prepare('DELETE FROM sealed_locks WHERE space_row_id = ? AND generation = ?');
  // Locks of KEYS no longer inside (left, removed, or the owner a hand-over replaced).
  const deleteOutsiders = db.prepare(
    `DELETE FROM sealed_locks WHERE space_row_id = @space
        AND recipient <> (SELECT owner FROM spaces WHERE id = @space)
        AND NOT EXISTS (SELECT 1 FROM members m WHERE m.space_row_id = @space AND m.peer_id = sealed_locks.recipient)`,
  );

  const selectLatestList = db.prepare<[number], ListDbRow>(
    'SELECT * FROM sealed_keeper_lists WHERE space_row_id = ? ORDER BY revision DESC LIMIT 1',
  );
  const insertList = db.prepare(
    `INSERT INTO sealed_keeper_lists (space_row_id, revision, list, envelope_json, signed_by, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );

  const selectStamp = db.prepare<[number, string], StampDbRow>('SELECT * FROM sealed_stamps WHERE space_row_id = ? AND peer_id = ?');
  const upsertStamp = db.prepare(
    `INSERT INTO sealed_stamps (space_row_id, peer_id, issuer, not_after, stamp, envelope_json, put_by, put_at)
     VALUES (@space, @peer, @issuer, @notAfter, @stamp, @envelope, @putBy, @putAt)
     ON CONFLICT (space_row_id, peer_id) DO UPDATE SET issuer = excluded.issuer, not_after = excluded.not_after,
       stamp = excluded.stamp, envelope_json = excluded.envelope_json, put_by = excluded.put_by, put_at = excluded.put_at`,
  );

  // The KEYS inside a SPACE (owner and members) that hold no lock for a generation, with the
  // stamp each holds there; by peer id.
  const selectUnlocked = db.prepare<Record<string, unknown>, StampDbRow & { peer: string; role: string }>(
    `WITH inside (peer, role) AS (
       SELECT owner, 'owner' FROM spaces WHERE id = @space
       UNION ALL SELECT peer_id, role FROM members WHERE space_row_id = @space)
     SELECT i.peer, i.role, s.peer_id, s.issuer, s.not_after, s.stamp, s.envelope_json, s.put_by, s.put_at
       FROM inside i LEFT JOIN sealed_stamps s ON s.space_row_id = @space AND s.peer_id = i.peer
      WHERE (${sql.param('@after', 'text')} IS NULL OR i.peer > @after)
        AND NOT EXISTS (SELECT 1 FROM sealed_locks l WHERE l.space_row_id = @space AND l.generation = @generation AND l.recipient = i.peer)
      ORDER BY i.peer LIMIT @limit`,
  );
  // Holders of the key in use, with their stamps (upkeep.lapsed).
  const selectHolders = db.prepare<[number, number], { recipient: string; issuer: string | null; not_after: number | null }>(
    `SELECT l.recipient, s.issuer, s.not_after FROM sealed_locks l
       LEFT JOIN sealed_stamps s ON s.space_row_id = l.space_row_id AND s.peer_id = l.recipient
      WHERE l.space_row_id = ? AND l.generation = ?`,
  );

  const insertItemStmt = db.prepare('INSERT INTO sealed_posts (post_row, generation, header, ciphertext) VALUES (?, ?, ?, ?)');
  const selectItem = db.prepare<[number], { generation: number; header: Uint8Array; ciphertext: Uint8Array }>(
    'SELECT generation, header, ciphertext FROM sealed_posts WHERE post_row = ?',
  );
  const readTx = db.transaction(async (fn: () => Promise<unknown>) => await fn());

  async function stateOf(spaceRowId: number): Promise<SealedSpaceState> {
    const r = await selectState.get(spaceRowId);
    if (!r) throw new SvcError('SPACE_NOT_SEALED', 'this SPACE is not sealed');
    return toState(r);
  }

  async function authority(space: SpaceRow): Promise<SpaceAuthority> {
    const latest = await selectLatestList.get(space.id);
    const state = await selectState.get(space.id);
    return authorityOf(space.owner, latest && { list: plainBytes(latest.list), signedBy: latest.signed_by }, state?.owner_was ?? null);
  }

  async function stampRow(spaceRowId: number, peer: string): Promise<StampRow | undefined> {
    const r = await selectStamp.get(spaceRowId, peer);
    return r ? toStamp(r) : undefined;
  }

  async function isKeeper(space: SpaceRow, peer: string): Promise<boolean> {
    return await members.roleOf(space, peer) !== null && keeperOf(peer, await authority(space));
  }

  async function vouched(space: SpaceRow, peer: string, now: number, given?: Awaited<ReturnType<typeof authority>>): Promise<boolean> {
    const auth = given ?? (await authority(space));
    return vouchedFor(peer, await stampRow(space.id, peer), auth, now);
  }

  /** The SPACE as it stands inside the transaction, refusing a non-keeper and a closed SPACE. */
  async function keeperSpace(a: Actor): Promise<{ space: SpaceRow; state: SealedSpaceState; auth: SpaceAuthority }> {
    const space = await spaces.byRowId(a.space.id);
    if (!space) throw new SvcError('SPACE_NOT_FOUND');
    const state = await stateOf(space.id);
    const auth = await authority(space);
    if (await members.roleOf(space, a.actor) === null || !keeperOf(a.actor, auth)) {
      throw new SvcError('NOT_A_KEEPER', 'you are neither the owner nor a member the keeper list in force names');
    }
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
    return { space, state, auth };
  }

  async function missingLocks(space: SpaceRow, generation: number, now: number, given?: Awaited<ReturnType<typeof authority>>): Promise<number> {
    const auth = given ?? (await authority(space));
    let missing = 0;
    let after: string | null = null;
    for (;;) {
      const rows = await selectUnlocked.all({ space: space.id, generation, after, limit: 1000 });
      for (const r of rows) {
        const stamp = r.peer_id === null ? undefined : toStamp(r);
        if (vouchedFor(r.peer, stamp, auth, now)) missing++;
      }
      if (rows.length < 1000) return missing;
      after = rows[rows.length - 1]!.peer;
    }
  }

  const createTx = db.transaction(async (input: CreateSpaceInput, first: { commitment: Uint8Array; lock: Uint8Array }) => {
    if (!await encryptionKeys.get(input.owner)) {
      throw new SvcError('ENCRYPTION_KEY_MISSING', `${input.owner}: publish your encryption key (PUT /v1/me/encryption-key) first`);
    }
    if (await spaces.bySpaceId(input.spaceId)) throw new SvcError('INVALID_REQUEST', 'sealed.space_id: already in use; choose another');
    const created = await spaces.create(input);
    await insertState.run(created.space.id);
    await insertGeneration.run(created.space.id, 1, first.commitment, null, input.owner, input.now, input.now);
    await upsertLock.run(created.space.id, 1, input.owner, input.owner, first.lock, input.now);
    return created;
  });

  const putListTx = db.transaction(async (a: Actor & { list: KeeperList; bytes: Uint8Array; envelope: SignatureEnvelope }) => {
    const space = await spaces.byRowId(a.space.id);
    if (!space) throw new SvcError('SPACE_NOT_FOUND');
    await stateOf(space.id);
    if (a.actor !== space.owner) throw new SvcError('NOT_A_KEEPER', 'the owner alone signs the keeper list');
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
    const latest = await selectLatestList.get(space.id);
    checkNextRevision(a.list, latest?.revision ?? null);
    const before = listedKeepers(await authority(space));
    await insertList.run(space.id, a.list.revision, a.bytes, JSON.stringify(a.envelope), a.actor, a.now);
    // A keeper the new list drops stops being one at once: the next change is due now (§9).
    const after = new Set(listedKeepers(await authority(space)));
    if (before.some((k) => !after.has(k))) await markKeeperDropped.run(a.now, space.id);
    await markKept.run(a.now, a.actor, space.id);
    return toList((await selectLatestList.get(space.id))!);
  });

  const putStampTx = db.transaction(async (a: Actor & { stamp: Stamp; bytes: Uint8Array; envelope: SignatureEnvelope }) => {
    const space = await spaces.byRowId(a.space.id);
    if (!space) throw new SvcError('SPACE_NOT_FOUND');
    await stateOf(space.id);
    const forOther = a.stamp.peer_id !== a.actor;
    const auth = await authority(space);
    if (forOther) {
      if (a.stamp.issuer !== a.actor) {
        throw new SvcError('INVALID_REQUEST', 'stamp.issuer: a stamp for another KEY is put by its issuer, as a keeper');
      }
      if (await members.roleOf(space, a.actor) === null || !keeperOf(a.actor, auth)) {
        throw new SvcError('NOT_A_KEEPER', 'only a keeper puts a stamp it signed for another KEY');
      }
    }
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
    const existing = await stampRow(space.id, a.stamp.peer_id);
    // A keeper never replaces another issuer's stamp that still vouches (sealed.md §8).
    if (
      forOther &&
      existing !== undefined &&
      existing.issuer !== a.stamp.issuer &&
      issuerCounts(existing.issuer, auth) &&
      stampCurrent(stampOf(existing), Math.floor(a.now / 1000))
    ) {
      return { stamp: existing, stored: false };
    }
    await upsertStamp.run({
      space: space.id,
      peer: a.stamp.peer_id,
      issuer: a.stamp.issuer,
      notAfter: a.stamp.not_after ?? null,
      stamp: a.bytes,
      envelope: JSON.stringify(a.envelope),
      putBy: a.actor,
      putAt: a.now,
    });
    if (forOther) await markKept.run(a.now, a.actor, space.id);
    return { stamp: (await stampRow(space.id, a.stamp.peer_id))!, stored: true };
  });

  const putLocksTx = db.transaction(async (a: Actor & { generation: number; commitment: Uint8Array; locks: Map<string, Uint8Array> }) => {
    const { space, state, auth } = await keeperSpace(a);
    const staged = await selectStaged.get(space.id);
    const target =
      a.generation === state.generation
        ? await selectGeneration.get(space.id, state.generation)
        : staged !== undefined && staged.generation === a.generation
          ? staged
          : undefined;
    if (target === undefined) throw new SvcError('KEY_CHANGED', String(state.generation));
    // A chunk made for another commitment (an abandoned and re-staged change reuses the number).
    if (!equalBytes(plainBytes(target.commitment), a.commitment)) throw new SvcError('KEY_CHANGED', String(state.generation));
    for (const peer of a.locks.keys()) {
      // The detail is the recipient's bare peer id and nothing else: the code's own message
      // says what is wrong with it, and a keeper reads the detail to pass that KEY over and
      // send the rest again (the newer API's keeper matches it whole against a peer id).
      if (await members.roleOf(space, peer) === null) throw new SvcError('LOCK_RECIPIENT_NOT_A_MEMBER', peer);
      if (!await vouched(space, peer, a.now, auth)) throw new SvcError('LOCK_RECIPIENT_NOT_VOUCHED', peer);
    }
    for (const [peer, lock] of a.locks) await upsertLock.run(space.id, a.generation, peer, a.actor, lock, a.now);
    if (target.activated_at === null) await progressGeneration.run(a.now, space.id, a.generation);
    await markKept.run(a.now, a.actor, space.id);
    return { stored: a.locks.size, missing: await missingLocks(space, a.generation, a.now, auth) };
  });

  const stageTx = db.transaction(async (a: Actor & { generation: number; commitment: Uint8Array; back: Uint8Array }) => {
    const { space, state } = await keeperSpace(a);
    const staged = await selectStaged.get(space.id);
    if (staged) throw new SvcError('KEY_CHANGE_STAGED', `generation ${staged.generation} is staged; activate or abandon it first`);
    if (a.generation !== state.generation + 1) throw new SvcError('KEY_CHANGED', String(state.generation));
    await insertGeneration.run(space.id, a.generation, a.commitment, a.back, a.actor, a.now, null);
    await markKept.run(a.now, a.actor, space.id);
    return toGeneration((await selectGeneration.get(space.id, a.generation))!);
  });

  const activateTx = db.transaction(async (a: Actor & { generation: number }) => {
    const { space, state, auth } = await keeperSpace(a);
    const staged = await selectStaged.get(space.id);
    if (staged === undefined && a.generation === state.generation) {
      return { generation: toGeneration((await selectGeneration.get(space.id, state.generation))!), changed: false };
    }
    if (staged === undefined || staged.generation !== a.generation) throw new SvcError('KEY_CHANGED', String(state.generation));
    const missing = await missingLocks(space, a.generation, a.now, auth);
    if (missing > 0) throw new SvcError('LOCKS_MISSING', String(missing));
    await activateGeneration.run(a.now, space.id, a.generation);
    await setInUse.run({ generation: a.generation, stagedAt: staged.staged_at, space: space.id });
    // Back links reach the older generations; their locks are no longer needed. A KEY that left
    // or was removed (also during the change) loses its locks now.
    await deleteLocksBelow.run(space.id, a.generation);
    await deleteOutsiders.run({ space: space.id });
    await markKept.run(a.now, a.actor, space.id);
    return { generation: toGeneration((await selectGeneration.get(space.id, a.generation))!), changed: true };
  });

  const abandonTx = db.transaction(async (a: Actor & { generation: number }) => {
    const { space, state } = await keeperSpace(a);
    const staged = await selectStaged.get(space.id);
    if (staged === undefined || staged.generation !== a.generation) throw new SvcError('KEY_CHANGED', String(state.generation));
    await deleteLocksOf.run(space.id, a.generation);
    await deleteGeneration.run(space.id, a.generation);
    await markKept.run(a.now, a.actor, space.id);
    return toGeneration(staged);
  });

  return {
    createSpace: async (input, first) => await createTx.immediate(input, first),
    async state(spaceRowId) {
      const r = await selectState.get(spaceRowId);
      return r ? toState(r) : undefined;
    },
    async generation(spaceRowId, generation) {
      const r = await selectGeneration.get(spaceRowId, generation);
      return r ? toGeneration(r) : undefined;
    },
    async staged(spaceRowId) {
      const r = await selectStaged.get(spaceRowId);
      return r ? toGeneration(r) : undefined;
    },
    chain: async (spaceRowId, before, limit) =>
      (await selectChain.all(spaceRowId, before ?? Number.MAX_SAFE_INTEGER, limit)).map(toGeneration),
    locksFor: async (spaceRowId, recipient) => (await selectLocksFor.all(spaceRowId, recipient)).map(toLock),
    async latestList(spaceRowId) {
      const r = await selectLatestList.get(spaceRowId);
      return r ? toList(r) : undefined;
    },
    stamp: stampRow,
    authority,
    isKeeper,
    vouched: async (space, peer, now) => await vouched(space, peer, now),
    async unlocked(space, generation, after, limit) {
      return (await selectUnlocked.all({ space: space.id, generation, after: after ?? null, limit })).map((r) => ({
        peerId: r.peer,
        role: r.role,
        stamp: r.peer_id === null ? undefined : toStamp(r),
      }));
    },
    missingLocks: async (space, generation, now) => await missingLocks(space, generation, now),
    async lapsed(space, now) {
      const state = await selectState.get(space.id);
      if (!state) return 0;
      const auth = await authority(space);
      let n = 0;
      for (const r of await selectHolders.all(space.id, state.generation)) {
        const stamp = r.issuer === null ? undefined : { peerId: r.recipient, issuer: r.issuer, notAfter: r.not_after };
        if (!vouchedFor(r.recipient, stamp, auth, now)) n++;
      }
      return n;
    },
    putKeeperList: async (a) => await putListTx.under({ spaces: [a.space.id] }, a),
    putStamp: async (a) => await putStampTx.under({ spaces: [a.space.id] }, a),
    putLocks: async (a) => await putLocksTx.under({ spaces: [a.space.id] }, a),
    stage: async (a) => await stageTx.under({ spaces: [a.space.id] }, a),
    activate: async (a) => await activateTx.under({ spaces: [a.space.id] }, a),
    abandon: async (a) => await abandonTx.under({ spaces: [a.space.id] }, a),
    async insertItem(postRow, item) {
      await insertItemStmt.run(postRow, item.generation, item.header, item.ciphertext);
    },
    async item(postRow) {
      const r = await selectItem.get(postRow);
      return r ? { generation: r.generation, header: plainBytes(r.header), ciphertext: plainBytes(r.ciphertext) } : undefined;
    },
    generationInUse: async (spaceRowId) => (await selectState.get(spaceRowId))?.generation,
    async memberRemoved(space, peer, now) {
      if (!await selectState.get(space.id)) return;
      const wasKeeper = listedKeepers(await authority(space)).includes(peer);
      await markDeparted.run(now, space.id);
      if (wasKeeper) await markKeeperDropped.run(now, space.id);
    },
    async checkOwnerHandOver(space, taker) {
      const state = await selectState.get(space.id);
      if (!state) return;
      if (!await encryptionKeys.get(taker)) {
        throw new SvcError('ENCRYPTION_KEY_MISSING', `${taker}: publish your encryption key (PUT /v1/me/encryption-key) first`);
      }
      if (!listedKeepers(await authority(space)).includes(taker)) {
        throw new SvcError('SEALED_SUCCESSOR_NOT_KEEPER', `${taker}: the keeper list in force does not name you as a keeper`);
      }
      if (!await selectLock.get(space.id, state.generation, taker)) throw new SvcError('SEALED_NEEDS_LOCK', taker);
    },
    async ownerHandedOver(space, giver, _taker, now) {
      const state = await selectState.get(space.id);
      if (!state) return;
      await setHandedOver.run(giver, state.generation, space.id);
      // The previous owner leaves entirely and keeps nothing now: the key change is due at once
      // (sealed.md §9); its locks go at that change's activation.
      await markDeparted.run(now, space.id);
      await markKeeperDropped.run(now, space.id);
    },
    async snapshot<T>(fn: () => Promise<T>): Promise<T> {
      return (await readTx.snapshot(fn)) as T;
    },
  };
}
