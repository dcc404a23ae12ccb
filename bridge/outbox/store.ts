/**
 * The outbox: posts and messages this bridge signed (or sealed) while the relay could not be
 * reached, kept durably in the KEY's cache file (`<SVC_HOME>/cache/<key>.sqlite`, bridge/cache/cache-file.ts)
 * until the relay answers again (bridge/outbox/send.ts sends them).
 *
 * Several bridges of one KEY share the file, so what one process does is one statement or one
 * immediate transaction (bridge/cache/sqlite.ts), never a read then a write apart:
 * - Order: items are kept per relay with a `target` (a SPACE, a conversation, the recipients of a
 *   new conversation); an item is sent only when no older item of its target is left, so a
 *   SPACE's posts reach it in the order they were written. Across targets, oldest first.
 * - Claims: a sender takes an item with a lease (its own id and an expiry) inside BEGIN
 *   IMMEDIATE, so two bridges never send the same item at once; it gives the item back (sent,
 *   refused, or to retry) under the same lease. A lease that expired (a bridge that crashed
 *   while sending) can be taken over: the idempotency key then makes a second send the same post.
 * - Notices: what the model must be told later (an item the relay refused, one delivered) waits
 *   in `outbox_notices` until a tool call takes it (DELETE … RETURNING: each notice shown once).
 * - Known SPACES: the id and sealing of each SPACE this KEY posted to, so a post can be signed
 *   while the relay cannot be asked (a signed post names its SPACE's uuid).
 *
 * The tables are this module's own; its schema steps are numbered in `outbox_schema` (the
 * file's `PRAGMA user_version` belongs to bridge/cache/cache-file.ts), applied once each, never edited.
 */
import { randomUUID } from 'node:crypto';
import { BridgeError } from '../../tools/errors.js';
import type { KnownSpace, OutboxCaps, OutboxCheck, OutboxEntry, OutboxKind, OutboxSummary } from '../../tools/ports.js';
import { closer, immediate, openSqliteFile, statement, type DatabaseSync } from '../cache/sqlite.js';

export interface OutboxItem extends OutboxEntry {
  readonly id: number;
  readonly createdAt: number;
  readonly attempts: number;
  readonly lastError: string | undefined;
}

export interface OutboxStore {
  readonly owner: string;
  /**
   * Keep an item (after the caps are checked in the same transaction); its id. `failure` is why
   * it could not be sent, and the relay's wait (Retry-After) as a time, if it asked for one.
   */
  add(e: OutboxEntry, caps: OutboxCaps, now: number, failure?: { readonly error: string; readonly notBefore: number }): number;
  /** The item waiting with this idempotency key for `target`, if any. */
  queuedKey(relay: string, target: string, idempotencyKey: string): number | undefined;
  /** Whether any item waits for `target`. */
  waiting(relay: string, target: string): boolean;
  /** Take the oldest item free to send (no older item of its target, no live lease, its wait over). */
  claim(relay: string, now: number, leaseMs: number): OutboxItem | undefined;
  /** The claimed item was delivered: remove it, and keep `notice` if given. False if the lease was lost. */
  delivered(id: number, notice: string | undefined, now: number): boolean;
  /** The relay refused the claimed item for good: remove it and keep `notice`. */
  refused(id: number, notice: string, now: number): boolean;
  /** The send failed for now: give the item back with the error and the relay's wait, if any. */
  failed(id: number, error: string, notBefore: number, now: number): void;
  /** Take every waiting notice of `relay` (each is handed to one caller once). */
  takeNotices(relay: string): string[];
  summary(relay: string, now: number): OutboxSummary;
  rememberSpace(relay: string, name: string, s: KnownSpace, now: number): void;
  knownSpace(relay: string, name: string): KnownSpace | undefined;
  close(): void;
}

/** Numbered schema steps of the outbox's own tables. */
const STEPS: readonly string[] = [
  `CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     relay TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('post', 'message')),
     target TEXT NOT NULL,
     label TEXT NOT NULL,
     path TEXT NOT NULL,
     query TEXT NOT NULL,
     body TEXT NOT NULL,
     idempotency_key TEXT NOT NULL,
     checks TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     last_error TEXT,
     last_error_at INTEGER,
     not_before INTEGER NOT NULL DEFAULT 0,
     lease_owner TEXT,
     lease_until INTEGER
   ) STRICT;
   CREATE INDEX outbox_by_target ON outbox (relay, target, id);
   CREATE TABLE outbox_notices (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     relay TEXT NOT NULL,
     text TEXT NOT NULL,
     noted_at INTEGER NOT NULL
   ) STRICT;
   CREATE TABLE outbox_spaces (
     relay TEXT NOT NULL,
     name TEXT NOT NULL,
     space_id TEXT NOT NULL,
     sealed INTEGER NOT NULL CHECK (sealed IN (0, 1)),
     seen_at INTEGER NOT NULL,
     PRIMARY KEY (relay, name)
   ) STRICT;`,
];

/**
 * Whether the outbox's tables are at the newest step already, as at every start after the first:
 * a read, which takes no write lock (a transaction to find nothing to do would take one at every
 * start, and wait on another bridge of the same KEY writing).
 */
function outboxCurrent(db: DatabaseSync): boolean {
  try {
    const row = db.prepare('SELECT version FROM outbox_schema').get() as { version: number } | undefined;
    return row !== undefined && row.version >= STEPS.length;
  } catch {
    // No outbox_schema yet (a cache file no outbox opened): the steps below make it.
    return false;
  }
}

function migrateOutbox(db: DatabaseSync): void {
  if (outboxCurrent(db)) return;
  immediate(db, () => {
    db.exec('CREATE TABLE IF NOT EXISTS outbox_schema (version INTEGER NOT NULL) STRICT');
    const row = db.prepare('SELECT version FROM outbox_schema').get() as { version: number } | undefined;
    const at = row?.version ?? 0;
    for (let i = at; i < STEPS.length; i++) db.exec(STEPS[i]!);
    if (row === undefined) db.prepare('INSERT INTO outbox_schema (version) VALUES (?)').run(STEPS.length);
    else if (at < STEPS.length) db.prepare('UPDATE outbox_schema SET version = ?').run(STEPS.length);
  });
}

type Row = {
  id: number;
  relay: string;
  kind: OutboxKind;
  target: string;
  label: string;
  path: string;
  query: string;
  body: string;
  idempotency_key: string;
  checks: string;
  created_at: number;
  attempts: number;
  last_error: string | null;
};

function itemOf(r: Row): OutboxItem {
  return {
    id: r.id,
    relay: r.relay,
    kind: r.kind,
    target: r.target,
    label: r.label,
    path: r.path,
    query: JSON.parse(r.query) as Record<string, string>,
    body: JSON.parse(r.body) as unknown,
    idempotencyKey: r.idempotency_key,
    check: JSON.parse(r.checks) as OutboxCheck,
    createdAt: r.created_at,
    attempts: r.attempts,
    lastError: r.last_error ?? undefined,
  };
}

/**
 * The outbox in the cache file at `path` (made by bridge/cache/cache-file.ts `openCache`). Its
 * `owner` names this process in leases: `given`, else a random UUID made when first needed (a
 * start leases nothing before its client's opening requests are answered, and loads no crypto
 * module for them: bridge/keys/keys.ts `deferredInfo`).
 */
export function openOutbox(path: string, given?: string): OutboxStore {
  let made = given;
  const ownerId = () => (made ??= randomUUID());
  let db: DatabaseSync | undefined;
  try {
    db = openSqliteFile(path);
    migrateOutbox(db);
  } catch (e) {
    db?.close();
    throw new BridgeError('KEY_FILE', `cannot open the outbox in ${path}: ${(e as Error).message}`, 'Check the key directory and that its disk has room.', undefined, { cause: e });
  }
  const d = db;
  const totals = statement<[string], { n: number; bytes: number | null }>(d, 'SELECT count(*) AS n, sum(length(body)) AS bytes FROM outbox WHERE relay = ?');
  const insert = statement<[string, string, string, string, string, string, string, string, string, number, string | null, number | null, number]>(
    d,
    `INSERT INTO outbox (relay, kind, target, label, path, query, body, idempotency_key, checks, created_at, last_error, last_error_at, not_before)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const lastId = statement<[], { id: number }>(d, 'SELECT last_insert_rowid() AS id');
  const byKey = statement<[string, string, string], { id: number }>(d, 'SELECT id FROM outbox WHERE relay = ? AND target = ? AND idempotency_key = ? LIMIT 1');
  const anyFor = statement<[string, string], { one: number }>(d, 'SELECT 1 AS one FROM outbox WHERE relay = ? AND target = ? LIMIT 1');
  const candidate = statement<[string, number, number], Row>(
    d,
    `SELECT id, relay, kind, target, label, path, query, body, idempotency_key, checks, created_at, attempts, last_error
     FROM outbox o
     WHERE o.relay = ?
       AND NOT EXISTS (SELECT 1 FROM outbox e WHERE e.relay = o.relay AND e.target = o.target AND e.id < o.id)
       AND (o.lease_until IS NULL OR o.lease_until <= ?)
       AND o.not_before <= ?
     ORDER BY o.id LIMIT 1`,
  );
  const lease = statement<[string, number, number]>(d, 'UPDATE outbox SET lease_owner = ?, lease_until = ? WHERE id = ?');
  const remove = statement<[number, string]>(d, 'DELETE FROM outbox WHERE id = ? AND lease_owner = ?');
  const addNotice = statement<[string, string, number]>(d, 'INSERT INTO outbox_notices (relay, text, noted_at) VALUES (?, ?, ?)');
  const relayOf = statement<[number], { relay: string }>(d, 'SELECT relay FROM outbox WHERE id = ?');
  const giveBack = statement<[string, number, number, number, string]>(
    d,
    `UPDATE outbox SET attempts = attempts + 1, last_error = ?, last_error_at = ?, not_before = ?, lease_owner = NULL, lease_until = NULL
     WHERE id = ? AND lease_owner = ?`,
  );
  const take = statement<[string], { id: number; text: string }>(d, 'DELETE FROM outbox_notices WHERE relay = ? RETURNING id, text');
  const perTarget = statement<[string], { kind: OutboxKind; label: string; n: number; first: number }>(
    d,
    'SELECT kind, label, count(*) AS n, min(id) AS first FROM outbox WHERE relay = ? GROUP BY target ORDER BY first',
  );
  const oldest = statement<[string], { at: number | null }>(d, 'SELECT min(created_at) AS at FROM outbox WHERE relay = ?');
  const newestError = statement<[string], { last_error: string; last_error_at: number }>(
    d,
    'SELECT last_error, last_error_at FROM outbox WHERE relay = ? AND last_error IS NOT NULL ORDER BY last_error_at DESC LIMIT 1',
  );
  const waitUntil = statement<[string], { at: number | null }>(d, 'SELECT max(not_before) AS at FROM outbox WHERE relay = ?');
  const upSpace = statement<[string, string, string, number, number]>(
    d,
    `INSERT INTO outbox_spaces (relay, name, space_id, sealed, seen_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (relay, name) DO UPDATE SET space_id = excluded.space_id, sealed = excluded.sealed, seen_at = excluded.seen_at`,
  );
  const selSpace = statement<[string, string], { space_id: string; sealed: number }>(d, 'SELECT space_id, sealed FROM outbox_spaces WHERE relay = ? AND name = ?');

  const store: OutboxStore = {
    get owner() {
      return ownerId();
    },
    add(e, caps, now, failure) {
      const body = JSON.stringify(e.body);
      return immediate(d, () => {
        const t = totals.get(e.relay)!;
        const bytes = Number(t.bytes ?? 0);
        if (t.n + 1 > caps.maxItems || bytes + Buffer.byteLength(body) > caps.maxBytes) {
          // `relay` keys a relay identity: its address, then `#` and its root key for one accepted later (tools/cache/cache.ts).
          throw new BridgeError(
            'OUTBOX_FULL',
            `the relay at ${e.relay.split('#')[0]} cannot be reached and this KEY's outbox is full (${t.n} items, ${Math.ceil(bytes / 1024)} KiB; at most ${caps.maxItems} items and ${Math.floor(caps.maxBytes / 1048576)} MiB): nothing was queued or sent`,
            'Wait until the relay answers again (svc_whoami shows the outbox and its last error; the bridge sends it by itself), then write again; or check SVC_API and that the relay runs.',
          );
        }
        insert.run(
          e.relay,
          e.kind,
          e.target,
          e.label,
          e.path,
          JSON.stringify(e.query),
          body,
          e.idempotencyKey,
          JSON.stringify(e.check),
          now,
          failure?.error ?? null,
          failure === undefined ? null : now,
          failure?.notBefore ?? 0,
        );
        return Number(lastId.get()!.id);
      });
    },
    queuedKey: (relay, target, key) => byKey.get(relay, target, key)?.id,
    waiting: (relay, target) => anyFor.get(relay, target) !== undefined,
    claim: (relay, now, leaseMs) =>
      immediate(d, () => {
        const r = candidate.get(relay, now, now);
        if (r === undefined) return undefined;
        lease.run(ownerId(), now + leaseMs, r.id);
        return itemOf(r);
      }),
    delivered: (id, notice, now) =>
      immediate(d, () => {
        const relay = relayOf.get(id)?.relay;
        if (Number(remove.run(id, ownerId()).changes) !== 1) return false;
        if (notice !== undefined && relay !== undefined) addNotice.run(relay, notice, now);
        return true;
      }),
    refused: (id, notice, now) => store.delivered(id, notice, now),
    failed: (id, error, notBefore, now) => void giveBack.run(error, now, notBefore, id, ownerId()),
    takeNotices: (relay) =>
      take
        .all(relay)
        .sort((x, y) => x.id - y.id)
        .map((r) => r.text),
    summary(relay, now) {
      const t = totals.get(relay)!;
      const err = newestError.get(relay);
      const wait = waitUntil.get(relay)?.at ?? null;
      return {
        count: t.n,
        bytes: Number(t.bytes ?? 0),
        oldestAt: oldest.get(relay)?.at ?? undefined,
        targets: perTarget.all(relay).map((r) => ({ kind: r.kind, label: r.label, count: r.n })),
        lastError: err === undefined ? undefined : { text: err.last_error, at: err.last_error_at },
        notBefore: wait !== null && wait > now ? wait : undefined,
      };
    },
    rememberSpace: (relay, name, s, now) => void upSpace.run(relay, name, s.spaceId, s.sealed ? 1 : 0, now),
    knownSpace(relay, name) {
      const r = selSpace.get(relay, name);
      return r && { spaceId: r.space_id, sealed: r.sealed === 1 };
    },
    close: closer(d),
  };
  return store;
}
