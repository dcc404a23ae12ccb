/**
 * The bridge's local cache of one KEY (tools/cache/cache.ts `Cache`): `<SVC_HOME>/cache/<key>.sqlite`,
 * SQLite in WAL mode.
 *
 * Several bridges of one KEY on one machine share the file, so every change is ONE SQL
 * statement or one immediate transaction (no read-modify-write across processes), and the
 * busy timeout makes a writer wait for another instead of failing.
 */
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { parseDecimal } from '../../shared/encoding.js';
import { BridgeError } from '../../tools/errors.js';
import { POSIX } from '../keys/files.js';
import { checkKeyName, type KeyDirectory } from '../keys/keys.js';
import { closer, immediate, migrate, openSqliteFile, statement, type DatabaseSync } from './sqlite.js';
import { KEPT_ANSWERS_MAX, perIdentity, type Cache, type CheckpointStream, type ClosedSpace, type CursorScope, type EpochNote, type KeptSealedPair } from '../../tools/cache/cache.js';

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
