/**
 * The bridge's SQLite files (bridge/cache/cache-file.ts, bridge/sealed/sealed-cache.ts) over Node's own
 * `node:sqlite`, so the bridge loads no native module and runs as one bundled file
 * (`/bridge.mjs`) with no `node_modules`. The relay keeps better-sqlite3 (relay/store/).
 *
 * Each file is opened the same way: a writer waits up to 5 s for another process's write lock
 * instead of failing (busy timeout), WAL so readers never block the writer, and
 * `synchronous=NORMAL` (in WAL mode a power loss may drop the last commits but never corrupts
 * the file; everything kept here can be learnt again from the relay). Every multi-statement
 * change is one immediate transaction: the write lock is taken at BEGIN, so two bridges of one
 * KEY never interleave a read and a write.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';

export type { DatabaseSync, SQLInputValue };

/** A prepared statement with its parameter list `P` and row shape `R` stated once, where it is prepared. */
export interface Statement<P extends readonly unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): { changes: number | bigint };
}

/**
 * `sql` as a statement prepared once, when first run; `P` and `R` describe what the SQL takes and
 * returns (node:sqlite reads numbers as numbers, blobs as Uint8Array). A file's module names all
 * its statements when it opens the file, and a start runs few of them: preparing each at open
 * was a good part of opening the cache file.
 */
export function statement<P extends readonly SQLInputValue[] | [Record<string, SQLInputValue>], R = never>(db: DatabaseSync, sql: string): Statement<P, R> {
  let prepared: Statement<P, R> | undefined;
  const ready = () => (prepared ??= db.prepare(sql) as unknown as Statement<P, R>);
  return {
    get: (...params) => ready().get(...params),
    all: (...params) => ready().all(...params),
    run: (...params) => ready().run(...params),
  };
}

/** Open (and make) the SQLite file at `path` with the settings above. */
export function openSqliteFile(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  try {
    db.exec('PRAGMA busy_timeout = 5000');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/**
 * Run `work` in one immediate transaction: committed when it returns, rolled back when it
 * throws (the error is thrown on). `work` is synchronous; nothing else runs on this connection
 * meanwhile.
 */
export function immediate<T>(db: DatabaseSync, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  let out: T;
  try {
    out = work();
    db.exec('COMMIT');
  } catch (e) {
    try {
      db.exec('ROLLBACK');
    } catch {
      // No transaction is open any more: SQLite already rolled it back (a full disk, an I/O error).
    }
    throw e;
  }
  return out;
}

/**
 * Bring the schema to `steps.length`: each numbered step not applied yet (PRAGMA user_version)
 * runs once, in order, all in one immediate transaction (two bridges opening a new file at
 * once apply them once). A file already there, as at every start after the first, is only read:
 * no write lock is taken.
 */
export function migrate(db: DatabaseSync, steps: readonly string[]): void {
  const version = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number | bigint }).user_version);
  if (version() >= steps.length) return;
  immediate(db, () => {
    const at = version();
    for (let i = at; i < steps.length; i++) db.exec(steps[i]!);
    if (at < steps.length) db.exec(`PRAGMA user_version = ${steps.length}`);
  });
}

/** Close once; a second close does nothing (as the callers expect of a cache's close). */
export function closer(db: DatabaseSync): () => void {
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    db.close();
  };
}
