/**
 * The bridge's local cache of one KEY: `<SVC_HOME>/cache/<key>.sqlite`, SQLite in WAL mode.
 *
 * Several bridges of one KEY on one machine share the file, so every change is ONE SQL
 * statement or one immediate transaction (no read-modify-write across processes), and the
 * busy timeout makes a writer wait for another instead of failing.
 *
 * What it keeps, per relay (a SPACE name means something only at one relay):
 * - cursors: per SPACE and for the mailbox, the `after` position the agent has been SHOWN
 *   items up to. They only move forward (spec/3-errors.md CURSOR_AHEAD: "never rewind").
 * - conversation cursors: the same, per conversation (its message `seq`), in a table of their
 *   own (listed apart from SPACE and mailbox cursors, since a conversation's head is read from
 *   another route); the epoch re-check of bridge/epoch.ts walks both lists, and a conversation
 *   read past its head is answered CURSOR_AHEAD by the relay and set back by the reading tool.
 * - checkpoints: the newest checkpoint seen per SPACE and stream (spec/1-concepts.md "Chains,
 *   checkpoints and proofs": a later one that does not extend it means changed history). The
 *   continuity check itself is shared/checkpoint.ts `checkExtends`; this only remembers.
 * - service epochs: the `service_epoch` last seen (spec "Versioning" 6: when it changes,
 *   re-check `head_seq` and `status` of each SPACE held), and apart from it the epoch the
 *   cursors were last re-checked against (so whichever tool notices a change first, the
 *   re-check still happens once).
 * - sealed pairs (protocol/sealed.md §3, §4, §9): per conversation id, the two peer ids, the
 *   commitment first seen and the pair's one secret, as bytes the caller sealed with the KEY's
 *   local box (bridge/sealed-pairs.ts; this file never holds a secret in the clear). Kept once
 *   and never replaced, so a relay that later shows another commitment or pair is caught.
 * - service roots: the relay's `service_root_key`, pinned on first sight (trust on first use);
 *   receipts and checkpoints are checked against the pinned root, never a later one.
 * - relay identities: a relay is its root key, not its address. Another relay at the same address
 *   (a new data directory, another operator) is followed only once accepted
 *   (bridge/relay-identity.ts), and everything above is kept per identity: each method's `relay`
 *   (an address) stands for the identity accepted there now. The identity pinned first at an
 *   address keeps the address itself as its key (so a cache from before stays whole); each one
 *   accepted later is keyed `<address>#<root key>`, and one accepted back finds its own again.
 * - kept answers: the last answers of a few reads (own identity, a SPACE's last page, a standing
 *   read such as the own dossier), as served, with when, to answer from while the relay cannot be
 *   reached; at most KEPT_ANSWERS_MAX per relay identity, the oldest dropped.
 * - after a restore that lost positions (spec "Space status" `closed`, `replaced_by`;
 *   shared/recovery.ts): the signed recovery notices this bridge verified (as served, to be
 *   verified again when read back), the SPACES it followed that were closed and the SPACE that
 *   continues each, and every kept checkpoint a notice declared lost, kept apart when a
 *   checkpoint of what survived takes its place: what this bridge once verified is never
 *   deleted.
 *
 * Positions are 64-bit decimal strings (spec "Encoding conventions"), compared as numbers.
 */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { parseDecimal } from '../shared/encoding.js';
import { BridgeError } from './errors.js';
import { POSIX } from './files.js';
import { checkKeyName, type KeyDirectory } from './keys.js';
import { closer, immediate, migrate, openSqliteFile, statement, type DatabaseSync } from './sqlite.js';

export type CursorScope =
  | { readonly kind: 'space'; readonly space: string }
  | { readonly kind: 'mailbox' }
  | { readonly kind: 'conversation'; readonly conversation: string };
export type CheckpointStream = 'posts' | 'events';

export interface SavedCursor {
  readonly kind: 'space' | 'mailbox';
  /** SPACE name; '' for the mailbox. */
  readonly space: string;
  readonly after: string;
  readonly updatedAt: number;
}

export interface SeenCheckpoint {
  /** 64 lowercase hex. */
  readonly checkpointId: string;
  readonly first: string;
  readonly last: string;
  /** The served checkpoint as JSON text, exactly as received (for re-verification). */
  readonly served: string;
  readonly seenAt: number;
}

export interface EpochNote {
  /** The epoch seen before, undefined the first time. */
  readonly previous: string | undefined;
  /** True when a previous epoch was seen and differs. */
  readonly changed: boolean;
}

/** A conversation's saved cursor. */
export interface SavedConversationCursor {
  readonly conversation: string;
  readonly after: string;
}

/** A recovery notice this bridge verified, as the relay served it (JSON text). */
export interface KeptRecovery {
  /** 64 lowercase hex. */
  readonly recoveryId: string;
  readonly spaceId: string;
  readonly served: string;
  readonly seenAt: number;
}

/** A followed SPACE the relay shows closed, and the SPACE that continues it. */
export interface ClosedSpace {
  readonly space: string;
  readonly spaceId: string;
  /** The continuation's name; undefined when the relay names none. */
  readonly replacedBy: string | undefined;
  /** The verified recovery notice that declares the loss, if any. */
  readonly recoveryId: string | undefined;
  readonly notedAt: number;
}

/** A kept checkpoint a verified recovery notice declared lost, kept apart. */
export interface LostCheckpoint extends SeenCheckpoint {
  readonly space: string;
  readonly stream: CheckpointStream;
  readonly recoveryId: string;
  readonly lostAt: number;
}

/** A relay identity accepted at an address: its root key, and whether it is the one followed now. */
export interface RelayIdentity {
  readonly rootKey: string;
  readonly acceptedAt: number;
  readonly current: boolean;
}

/** An answer of the relay kept to answer from while it cannot be reached: JSON text as served. */
export interface KeptAnswer {
  readonly served: string;
  readonly readAt: number;
}

/** A sealed pair as kept: `pair` is the two peer ids ascending, joined by `:`; `sealed` the secret sealed at rest. */
export interface KeptSealedPair {
  readonly conversationId: string;
  readonly pair: string;
  readonly commitment: string;
  readonly sealed: Uint8Array;
  readonly source: 'created' | 'lock';
}

export interface Cache {
  readonly path: string;
  cursor(relay: string, scope: CursorScope): string | undefined;
  /** Move the cursor to `after` if that is further; true when it moved. */
  advanceCursor(relay: string, scope: CursorScope, after: string, now: number): boolean;
  /** The saved SPACE and mailbox cursors (conversation cursors are not listed). */
  cursors(relay: string): SavedCursor[];
  /** The saved conversation cursors. */
  conversationCursors(relay: string): SavedConversationCursor[];
  forgetCursor(relay: string, scope: CursorScope): void;
  checkpoint(relay: string, space: string, stream: CheckpointStream): SeenCheckpoint | undefined;
  /** Keep `cp` if it ends later than the one kept; true when it was kept. */
  noteCheckpoint(relay: string, space: string, stream: CheckpointStream, cp: SeenCheckpoint): boolean;
  /** The SPACE names with a kept checkpoint. */
  checkpointSpaces(relay: string): string[];
  /**
   * A verified recovery notice `recoveryId` declared the kept checkpoint `lostId` lost: keep it
   * apart and keep `cp` (of what survived) in its place, in one transaction. False (nothing
   * changed) when the kept checkpoint is no longer `lostId`.
   */
  replaceLostCheckpoint(relay: string, space: string, stream: CheckpointStream, lostId: string, cp: SeenCheckpoint, recoveryId: string, now: number): boolean;
  lostCheckpoints(relay: string): LostCheckpoint[];
  /** Keep a verified notice; the first one kept under an id stays. */
  keepRecovery(relay: string, r: KeptRecovery): void;
  recoveries(relay: string): KeptRecovery[];
  /** Note a followed SPACE as closed (a later note of the same SPACE replaces it). */
  noteClosedSpace(relay: string, c: ClosedSpace): void;
  closedSpace(relay: string, space: string): ClosedSpace | undefined;
  closedSpaces(relay: string): ClosedSpace[];
  serviceEpoch(relay: string): string | undefined;
  noteServiceEpoch(relay: string, epoch: string, now: number): EpochNote;
  /** The epoch the saved cursors were last re-checked against. */
  cursorsCheckedEpoch(relay: string): string | undefined;
  noteCursorsChecked(relay: string, epoch: string, now: number): void;
  /** Keep a sealed pair unless one is kept for the conversation already (the first stays). */
  keepSealedPair(relay: string, k: KeptSealedPair, now: number): void;
  sealedPair(relay: string, conversationId: string): KeptSealedPair | undefined;
  /** The sealed pairs kept for `pair` (two peer ids ascending, joined by `:`). */
  sealedPairsOf(relay: string, pair: string): KeptSealedPair[];
  /** The pinned service root key (64 hex), if any. */
  serviceRoot(relay: string): string | undefined;
  /** Pin `rootKey` unless a root is already pinned; returns the pinned one. */
  pinServiceRoot(relay: string, rootKey: string, now: number): string;
  /**
   * Follow the relay whose root key is `rootKey` at address `relay` from now on: it is pinned in
   * place of the one pinned before, whose cursors, checkpoints and the rest stay kept apart
   * under its own identity (used again when it is accepted back).
   */
  acceptServiceRoot(relay: string, rootKey: string, now: number): void;
  /** The relay identities accepted at address `relay` (none when only the first pin was ever made). */
  relayIdentities(relay: string): RelayIdentity[];
  /** The key the identity followed now at address `relay` keeps its rows under (for the stores beside this one). */
  relayScope(relay: string): string;
  /** Keep the answer `what` (JSON text as served), replacing the one kept before. */
  keepAnswer(relay: string, what: string, served: string, now: number): void;
  keptAnswer(relay: string, what: string): KeptAnswer | undefined;
  close(): void;
}

/** Kept answers per relay identity at most. */
export const KEPT_ANSWERS_MAX = 256;

/** The methods whose `relay` names the identity followed now at that address, not the address. */
type AddressMethods = 'path' | 'close' | 'serviceRoot' | 'pinServiceRoot' | 'acceptServiceRoot' | 'relayIdentities' | 'relayScope';
const PER_IDENTITY: Record<Exclude<keyof Cache, AddressMethods>, true> = {
  cursor: true,
  advanceCursor: true,
  cursors: true,
  conversationCursors: true,
  forgetCursor: true,
  checkpoint: true,
  noteCheckpoint: true,
  checkpointSpaces: true,
  replaceLostCheckpoint: true,
  lostCheckpoints: true,
  keepRecovery: true,
  recoveries: true,
  noteClosedSpace: true,
  closedSpace: true,
  closedSpaces: true,
  serviceEpoch: true,
  noteServiceEpoch: true,
  cursorsCheckedEpoch: true,
  noteCursorsChecked: true,
  keepSealedPair: true,
  sealedPair: true,
  sealedPairsOf: true,
  keepAnswer: true,
  keptAnswer: true,
};

/** `cache` with every per-identity method given the key `scopeOf(address)` instead of the address. */
export function perIdentity(cache: Cache, scopeOf: (relay: string) => string): Cache {
  const out: Record<string, unknown> = { ...cache };
  for (const name of Object.keys(PER_IDENTITY) as (keyof typeof PER_IDENTITY)[]) {
    const method = cache[name] as (relay: string, ...rest: unknown[]) => unknown;
    out[name] = (relay: string, ...rest: unknown[]) => method(scopeOf(relay), ...rest);
  }
  return out as unknown as Cache;
}

/** Numbered schema steps, applied in order once each (PRAGMA user_version); never edited. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE cursors (
     relay TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('space', 'mailbox')),
     space TEXT NOT NULL,
     after TEXT NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (relay, kind, space)
   ) STRICT;
   CREATE TABLE checkpoints (
     relay TEXT NOT NULL,
     space TEXT NOT NULL,
     stream TEXT NOT NULL CHECK (stream IN ('posts', 'events')),
     checkpoint_id TEXT NOT NULL,
     first TEXT NOT NULL,
     last TEXT NOT NULL,
     served TEXT NOT NULL,
     seen_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space, stream)
   ) STRICT;
   CREATE TABLE service_epochs (
     relay TEXT PRIMARY KEY,
     epoch TEXT NOT NULL,
     seen_at INTEGER NOT NULL
   ) STRICT;`,
  `CREATE TABLE cursor_checks (
     relay TEXT PRIMARY KEY,
     epoch TEXT NOT NULL,
     checked_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE service_roots (
     relay TEXT PRIMARY KEY,
     root_key TEXT NOT NULL CHECK (length(root_key) = 64),
     seen_at INTEGER NOT NULL
   ) STRICT;`,
  `CREATE TABLE conversation_cursors (
     relay TEXT NOT NULL,
     conversation_id TEXT NOT NULL,
     after TEXT NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (relay, conversation_id)
   ) STRICT;`,
  `CREATE TABLE sealed_pairs (
     relay TEXT NOT NULL,
     conversation_id TEXT NOT NULL,
     pair TEXT NOT NULL CHECK (length(pair) = 129),
     commitment TEXT NOT NULL CHECK (length(commitment) = 64),
     sealed BLOB NOT NULL,
     source TEXT NOT NULL CHECK (source IN ('created', 'lock')),
     kept_at INTEGER NOT NULL,
     PRIMARY KEY (relay, conversation_id)
   ) STRICT;
   CREATE INDEX sealed_pairs_by_pair ON sealed_pairs (relay, pair);`,
  `CREATE TABLE recoveries (
     relay TEXT NOT NULL,
     recovery_id TEXT NOT NULL CHECK (length(recovery_id) = 64),
     space_id TEXT NOT NULL,
     served TEXT NOT NULL,
     seen_at INTEGER NOT NULL,
     PRIMARY KEY (relay, recovery_id)
   ) STRICT;
   CREATE TABLE closed_spaces (
     relay TEXT NOT NULL,
     space TEXT NOT NULL,
     space_id TEXT NOT NULL,
     replaced_by TEXT,
     recovery_id TEXT,
     noted_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space)
   ) STRICT;
   CREATE TABLE lost_checkpoints (
     relay TEXT NOT NULL,
     space TEXT NOT NULL,
     stream TEXT NOT NULL CHECK (stream IN ('posts', 'events')),
     checkpoint_id TEXT NOT NULL,
     first TEXT NOT NULL,
     last TEXT NOT NULL,
     served TEXT NOT NULL,
     seen_at INTEGER NOT NULL,
     recovery_id TEXT NOT NULL,
     lost_at INTEGER NOT NULL,
     PRIMARY KEY (relay, space, stream, checkpoint_id)
   ) STRICT;`,
  `CREATE TABLE relay_identities (
     relay TEXT NOT NULL,
     root_key TEXT NOT NULL CHECK (length(root_key) = 64),
     scope TEXT NOT NULL UNIQUE,
     accepted_at INTEGER NOT NULL,
     PRIMARY KEY (relay, root_key)
   ) STRICT;
   CREATE TABLE kept_answers (
     relay TEXT NOT NULL,
     what TEXT NOT NULL,
     served TEXT NOT NULL,
     read_at INTEGER NOT NULL,
     PRIMARY KEY (relay, what)
   ) STRICT;`,
];

/** SQL: is decimal text `a` greater than decimal text `b` (no leading zeros, at most 20 digits)? */
const GREATER = (a: string, b: string) => `(length(${a}) > length(${b}) OR (length(${a}) = length(${b}) AND ${a} > ${b}))`;

function position(text: string, field: string): string {
  try {
    parseDecimal(text, field, 0n, (1n << 64n) - 1n);
  } catch {
    throw new TypeError(`${field}: expected a decimal position, got ${JSON.stringify(text)}`);
  }
  return text;
}

function scopeKey(scope: Exclude<CursorScope, { kind: 'conversation' }>): [string, string] {
  return scope.kind === 'mailbox' ? ['mailbox', ''] : ['space', scope.space];
}

/**
 * Make the SQLite file at `path` with mode 0600 before SQLite opens it (an empty file is a new
 * database to SQLite, and SQLite gives the -wal and -shm files it creates the database file's
 * own mode), or hold an existing one and its side files to 0600: the cache is the user's alone
 * from its first byte.
 */
export function ownerOnlySqliteFile(path: string): void {
  if (!POSIX) return;
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
}

export function cachePath(dir: KeyDirectory, keyName: string): string {
  return join(dir.cacheDir, `${checkKeyName(keyName)}.sqlite`);
}

/** Open (and make) the cache of KEY `keyName` in the key directory. */
export function openCache(dir: KeyDirectory, keyName: string): Cache {
  const path = cachePath(dir, keyName);
  let db: DatabaseSync;
  try {
    ownerOnlySqliteFile(path);
    db = openSqliteFile(path);
    migrate(db, MIGRATIONS);
  } catch (e) {
    throw new BridgeError('KEY_FILE', `cannot open the local cache ${path}: ${(e as Error).message}`, 'Check the key directory; the cache can be deleted safely (cursors restart).', undefined, {
      cause: e,
    });
  }

  const selCursor = statement<[string, string, string], { after: string }>(db, 'SELECT after FROM cursors WHERE relay = ? AND kind = ? AND space = ?');
  const upCursor = statement<[string, string, string, string, number]>(
    db,
    `INSERT INTO cursors (relay, kind, space, after, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (relay, kind, space) DO UPDATE SET after = excluded.after, updated_at = excluded.updated_at
     WHERE ${GREATER('excluded.after', 'cursors.after')}`,
  );
  const listCursors = statement<[string], { kind: 'space' | 'mailbox'; space: string; after: string; updated_at: number }>(
    db,
    'SELECT kind, space, after, updated_at FROM cursors WHERE relay = ? ORDER BY kind, space',
  );
  const delCursor = statement<[string, string, string]>(db, 'DELETE FROM cursors WHERE relay = ? AND kind = ? AND space = ?');
  const selConversation = statement<[string, string], { after: string }>(db, 'SELECT after FROM conversation_cursors WHERE relay = ? AND conversation_id = ?');
  const upConversation = statement<[string, string, string, number]>(
    db,
    `INSERT INTO conversation_cursors (relay, conversation_id, after, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (relay, conversation_id) DO UPDATE SET after = excluded.after, updated_at = excluded.updated_at
     WHERE ${GREATER('excluded.after', 'conversation_cursors.after')}`,
  );
  const delConversation = statement<[string, string]>(db, 'DELETE FROM conversation_cursors WHERE relay = ? AND conversation_id = ?');
  const listConversations = statement<[string], { conversation_id: string; after: string }>(
    db,
    'SELECT conversation_id, after FROM conversation_cursors WHERE relay = ? ORDER BY conversation_id',
  );
  const selCheckpoint = statement<[string, string, string], { checkpoint_id: string; first: string; last: string; served: string; seen_at: number }>(
    db,
    'SELECT checkpoint_id, first, last, served, seen_at FROM checkpoints WHERE relay = ? AND space = ? AND stream = ?',
  );
  const upCheckpoint = statement<[string, string, string, string, string, string, string, number]>(
    db,
    `INSERT INTO checkpoints (relay, space, stream, checkpoint_id, first, last, served, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (relay, space, stream) DO UPDATE SET checkpoint_id = excluded.checkpoint_id, first = excluded.first,
       last = excluded.last, served = excluded.served, seen_at = excluded.seen_at
     WHERE ${GREATER('excluded.last', 'checkpoints.last')}`,
  );
  const listCheckpointSpaces = statement<[string], { space: string }>(db, 'SELECT DISTINCT space FROM checkpoints WHERE relay = ? ORDER BY space');
  const setCheckpoint = statement<[string, string, string, string, number, string, string, string, string]>(
    db,
    `UPDATE checkpoints SET checkpoint_id = ?, first = ?, last = ?, served = ?, seen_at = ?
     WHERE relay = ? AND space = ? AND stream = ? AND checkpoint_id = ?`,
  );
  const insLost = statement<[string, number, string, string, string]>(
    db,
    `INSERT OR IGNORE INTO lost_checkpoints (relay, space, stream, checkpoint_id, first, last, served, seen_at, recovery_id, lost_at)
     SELECT relay, space, stream, checkpoint_id, first, last, served, seen_at, ?, ? FROM checkpoints
     WHERE relay = ? AND space = ? AND stream = ?`,
  );
  type LostRow = { space: string; stream: CheckpointStream; checkpoint_id: string; first: string; last: string; served: string; seen_at: number; recovery_id: string; lost_at: number };
  const listLost = statement<[string], LostRow>(
    db,
    'SELECT space, stream, checkpoint_id, first, last, served, seen_at, recovery_id, lost_at FROM lost_checkpoints WHERE relay = ? ORDER BY lost_at, space, stream',
  );
  const insRecovery = statement<[string, string, string, string, number]>(
    db,
    'INSERT OR IGNORE INTO recoveries (relay, recovery_id, space_id, served, seen_at) VALUES (?, ?, ?, ?, ?)',
  );
  const listRecoveries = statement<[string], { recovery_id: string; space_id: string; served: string; seen_at: number }>(
    db,
    'SELECT recovery_id, space_id, served, seen_at FROM recoveries WHERE relay = ? ORDER BY seen_at, recovery_id',
  );
  type ClosedRow = { space: string; space_id: string; replaced_by: string | null; recovery_id: string | null; noted_at: number };
  const upClosed = statement<[string, string, string, string | null, string | null, number]>(
    db,
    `INSERT INTO closed_spaces (relay, space, space_id, replaced_by, recovery_id, noted_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (relay, space) DO UPDATE SET space_id = excluded.space_id, replaced_by = excluded.replaced_by,
       recovery_id = excluded.recovery_id, noted_at = excluded.noted_at`,
  );
  const selClosed = statement<[string, string], ClosedRow>(db, 'SELECT space, space_id, replaced_by, recovery_id, noted_at FROM closed_spaces WHERE relay = ? AND space = ?');
  const listClosed = statement<[string], ClosedRow>(db, 'SELECT space, space_id, replaced_by, recovery_id, noted_at FROM closed_spaces WHERE relay = ? ORDER BY noted_at, space');
  const closedOf = (r: ClosedRow): ClosedSpace => ({
    space: r.space,
    spaceId: r.space_id,
    replacedBy: r.replaced_by ?? undefined,
    recoveryId: r.recovery_id ?? undefined,
    notedAt: r.noted_at,
  });
  const selEpoch = statement<[string], { epoch: string }>(db, 'SELECT epoch FROM service_epochs WHERE relay = ?');
  const upEpoch = statement<[string, string, number]>(
    db,
    `INSERT INTO service_epochs (relay, epoch, seen_at) VALUES (?, ?, ?)
     ON CONFLICT (relay) DO UPDATE SET epoch = excluded.epoch, seen_at = excluded.seen_at`,
  );
  const selChecked = statement<[string], { epoch: string }>(db, 'SELECT epoch FROM cursor_checks WHERE relay = ?');
  const upChecked = statement<[string, string, number]>(
    db,
    `INSERT INTO cursor_checks (relay, epoch, checked_at) VALUES (?, ?, ?)
     ON CONFLICT (relay) DO UPDATE SET epoch = excluded.epoch, checked_at = excluded.checked_at`,
  );
  type PairRow = { conversation_id: string; pair: string; commitment: string; sealed: Uint8Array; source: 'created' | 'lock' };
  const insPair = statement<[string, string, string, string, Uint8Array, string, number]>(
    db,
    'INSERT OR IGNORE INTO sealed_pairs (relay, conversation_id, pair, commitment, sealed, source, kept_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const selPair = statement<[string, string], PairRow>(db, 'SELECT conversation_id, pair, commitment, sealed, source FROM sealed_pairs WHERE relay = ? AND conversation_id = ?');
  const selPairsOf = statement<[string, string], PairRow>(db, 'SELECT conversation_id, pair, commitment, sealed, source FROM sealed_pairs WHERE relay = ? AND pair = ? ORDER BY kept_at');
  const pairOf = (r: PairRow): KeptSealedPair => ({ conversationId: r.conversation_id, pair: r.pair, commitment: r.commitment, sealed: new Uint8Array(r.sealed), source: r.source });
  const selRoot = statement<[string], { root_key: string }>(db, 'SELECT root_key FROM service_roots WHERE relay = ?');
  // One statement: a racing bridge's pin wins or ours does, never both (INSERT OR IGNORE).
  const pinRoot = statement<[string, string, number]>(db, 'INSERT OR IGNORE INTO service_roots (relay, root_key, seen_at) VALUES (?, ?, ?)');
  // The identity followed now at an address: the pinned root's row, if it has one (else the address itself).
  const selScope = statement<[string], { scope: string }>(
    db,
    `SELECT i.scope FROM service_roots s JOIN relay_identities i ON i.relay = s.relay AND i.root_key = s.root_key WHERE s.relay = ?`,
  );
  const insIdentity = statement<[string, string, string, number]>(db, 'INSERT OR IGNORE INTO relay_identities (relay, root_key, scope, accepted_at) VALUES (?, ?, ?, ?)');
  const setRoot = statement<[string, string, number]>(
    db,
    `INSERT INTO service_roots (relay, root_key, seen_at) VALUES (?, ?, ?)
     ON CONFLICT (relay) DO UPDATE SET root_key = excluded.root_key, seen_at = excluded.seen_at`,
  );
  const listIdentities = statement<[string], { root_key: string; accepted_at: number }>(
    db,
    'SELECT root_key, accepted_at FROM relay_identities WHERE relay = ? ORDER BY accepted_at, root_key',
  );
  const upAnswer = statement<[string, string, string, number]>(
    db,
    `INSERT INTO kept_answers (relay, what, served, read_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (relay, what) DO UPDATE SET served = excluded.served, read_at = excluded.read_at`,
  );
  const trimAnswers = statement<[string, string, number]>(
    db,
    `DELETE FROM kept_answers WHERE relay = ? AND what NOT IN
       (SELECT what FROM kept_answers WHERE relay = ? ORDER BY read_at DESC, what LIMIT ?)`,
  );
  const selAnswer = statement<[string, string], { served: string; read_at: number }>(db, 'SELECT served, read_at FROM kept_answers WHERE relay = ? AND what = ?');
  const noteEpoch = (relay: string, epoch: string, now: number): EpochNote =>
    immediate(db, () => {
      const previous = selEpoch.get(relay)?.epoch;
      upEpoch.run(relay, epoch, now);
      return { previous, changed: previous !== undefined && previous !== epoch };
    });

  const scopeOf = (relay: string): string => selScope.get(relay)?.scope ?? relay;

  const cache: Cache = {
    path,
    cursor: (relay, scope) =>
      scope.kind === 'conversation' ? selConversation.get(relay, scope.conversation)?.after : selCursor.get(relay, ...scopeKey(scope))?.after,
    advanceCursor: (relay, scope, after, now) =>
      Number(
        (scope.kind === 'conversation'
          ? upConversation.run(relay, scope.conversation, position(after, 'after'), now)
          : upCursor.run(relay, ...scopeKey(scope), position(after, 'after'), now)
        ).changes,
      ) === 1,
    cursors: (relay) =>
      listCursors.all(relay).map((r) => ({ kind: r.kind, space: r.space, after: r.after, updatedAt: r.updated_at })),
    conversationCursors: (relay) => listConversations.all(relay).map((r) => ({ conversation: r.conversation_id, after: r.after })),
    forgetCursor: (relay, scope) =>
      void (scope.kind === 'conversation' ? delConversation.run(relay, scope.conversation) : delCursor.run(relay, ...scopeKey(scope))),
    checkpoint(relay, space, stream) {
      const r = selCheckpoint.get(relay, space, stream);
      return r && { checkpointId: r.checkpoint_id, first: r.first, last: r.last, served: r.served, seenAt: r.seen_at };
    },
    noteCheckpoint(relay, space, stream, cp) {
      if (!/^[0-9a-f]{64}$/.test(cp.checkpointId)) throw new TypeError('checkpointId: expected 64 lowercase hex');
      return (
        Number(upCheckpoint.run(relay, space, stream, cp.checkpointId, position(cp.first, 'first'), position(cp.last, 'last'), cp.served, cp.seenAt).changes) === 1
      );
    },
    checkpointSpaces: (relay) => listCheckpointSpaces.all(relay).map((r) => r.space),
    replaceLostCheckpoint(relay, space, stream, lostId, cp, recoveryId, now) {
      if (!/^[0-9a-f]{64}$/.test(cp.checkpointId)) throw new TypeError('checkpointId: expected 64 lowercase hex');
      if (!/^[0-9a-f]{64}$/.test(recoveryId)) throw new TypeError('recoveryId: expected 64 lowercase hex');
      const first = position(cp.first, 'first');
      const last = position(cp.last, 'last');
      return immediate(db, () => {
        if (selCheckpoint.get(relay, space, stream)?.checkpoint_id !== lostId) return false;
        insLost.run(recoveryId, now, relay, space, stream);
        setCheckpoint.run(cp.checkpointId, first, last, cp.served, cp.seenAt, relay, space, stream, lostId);
        return true;
      });
    },
    lostCheckpoints: (relay) =>
      listLost.all(relay).map((r) => ({
        space: r.space,
        stream: r.stream,
        checkpointId: r.checkpoint_id,
        first: r.first,
        last: r.last,
        served: r.served,
        seenAt: r.seen_at,
        recoveryId: r.recovery_id,
        lostAt: r.lost_at,
      })),
    keepRecovery(relay, r) {
      if (!/^[0-9a-f]{64}$/.test(r.recoveryId)) throw new TypeError('recoveryId: expected 64 lowercase hex');
      insRecovery.run(relay, r.recoveryId, r.spaceId, r.served, r.seenAt);
    },
    recoveries: (relay) => listRecoveries.all(relay).map((r) => ({ recoveryId: r.recovery_id, spaceId: r.space_id, served: r.served, seenAt: r.seen_at })),
    noteClosedSpace: (relay, c) => void upClosed.run(relay, c.space, c.spaceId, c.replacedBy ?? null, c.recoveryId ?? null, c.notedAt),
    closedSpace(relay, space) {
      const r = selClosed.get(relay, space);
      return r && closedOf(r);
    },
    closedSpaces: (relay) => listClosed.all(relay).map(closedOf),
    serviceEpoch: (relay) => selEpoch.get(relay)?.epoch,
    noteServiceEpoch: (relay, epoch, now) => noteEpoch(relay, epoch, now),
    cursorsCheckedEpoch: (relay) => selChecked.get(relay)?.epoch,
    noteCursorsChecked: (relay, epoch, now) => void upChecked.run(relay, epoch, now),
    keepSealedPair(relay, k, now) {
      if (!/^[0-9a-f]{64}:[0-9a-f]{64}$/.test(k.pair)) throw new TypeError('pair: two peer ids joined by ":"');
      if (!/^[0-9a-f]{64}$/.test(k.commitment)) throw new TypeError('commitment: expected 64 lowercase hex');
      if (k.conversationId === '') throw new TypeError('conversationId: expected an id');
      insPair.run(relay, k.conversationId, k.pair, k.commitment, Buffer.from(k.sealed), k.source, now);
    },
    sealedPair(relay, conversationId) {
      const r = selPair.get(relay, conversationId);
      return r && pairOf(r);
    },
    sealedPairsOf: (relay, pair) => selPairsOf.all(relay, pair).map(pairOf),
    serviceRoot: (relay) => selRoot.get(relay)?.root_key,
    pinServiceRoot(relay, rootKey, now) {
      if (!/^[0-9a-f]{64}$/.test(rootKey)) throw new TypeError('rootKey: expected 64 lowercase hex');
      pinRoot.run(relay, rootKey, now);
      return selRoot.get(relay)!.root_key;
    },
    acceptServiceRoot(relay, rootKey, now) {
      if (!/^[0-9a-f]{64}$/.test(rootKey)) throw new TypeError('rootKey: expected 64 lowercase hex');
      immediate(db, () => {
        const pinned = selRoot.get(relay)?.root_key;
        if (pinned === rootKey) return;
        // The identity followed until now keeps its key: the address for the one pinned first.
        if (pinned !== undefined) insIdentity.run(relay, pinned, scopeOf(relay), now);
        insIdentity.run(relay, rootKey, pinned === undefined ? relay : `${relay}#${rootKey}`, now);
        setRoot.run(relay, rootKey, now);
      });
    },
    relayIdentities(relay) {
      const pinned = selRoot.get(relay)?.root_key;
      return listIdentities.all(relay).map((r) => ({ rootKey: r.root_key, acceptedAt: r.accepted_at, current: r.root_key === pinned }));
    },
    relayScope: scopeOf,
    keepAnswer(relay, what, served, now) {
      immediate(db, () => {
        upAnswer.run(relay, what, served, now);
        trimAnswers.run(relay, relay, KEPT_ANSWERS_MAX);
      });
    },
    keptAnswer(relay, what) {
      const r = selAnswer.get(relay, what);
      return r && { served: r.served, readAt: r.read_at };
    },
    close: closer(db),
  };
  return perIdentity(cache, scopeOf);
}
