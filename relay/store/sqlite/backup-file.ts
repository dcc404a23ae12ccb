/**
 * The backup file (the driver side of `svc-relay backup` and `svc-relay restore`;
 * relay/backup/ holds the commands).
 *
 * A backup is one SQLite file: a page-by-page copy of the relay's database made with SQLite's
 * online backup API while the relay serves, plus one table the copy gains afterwards,
 * `svc_backup (name, content)`, holding the manifest (`name` = 'manifest.json') and the service
 * key files of the data directory. It is in rollback-journal mode, so it is the whole backup by
 * itself (no -wal beside it), and it opens with any SQLite tool.
 *
 * Consistency: the copy runs inside one read transaction on the source connection, so every
 * step reads the same snapshot of the write-ahead log; without it, each commit of the serving
 * relay between two steps would restart the copy from the first page, and under steady appends
 * it would never end.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { MIGRATIONS } from './migrations/index.js';
import { migrate, ownerOnlyDatabaseFile } from './open.js';

/** The table a backup gains beside the relay's own. */
export const BACKUP_TABLE = 'svc_backup';
export const MANIFEST_NAME = 'manifest.json';

export interface CopyProgress {
  totalPages: number;
  remainingPages: number;
}

/** Pages copied per step: small enough to report progress often, large enough to be quick. */
const PAGES_PER_STEP = 1024;

/** Why `file` cannot be a relay database to back up, or undefined. */
function relayDatabaseProblem(db: Database.Database): string | undefined {
  const row = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'spaces', 'posts')").get() as { n: number };
  return row.n === 3 ? undefined : 'it is not a relay database (no schema_migrations, spaces and posts tables)';
}

/**
 * Copy the database `source` to `target` (a new file) with the online backup API, in steps,
 * from one snapshot. The source is only read. Answers the number of pages copied.
 */
export async function copyDatabase(source: string, target: string, onProgress: (p: CopyProgress) => void): Promise<number> {
  const db = new Database(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const problem = relayDatabaseProblem(db);
    if (problem !== undefined) throw new Error(`${source}: ${problem}`);
    ownerOnlyDatabaseFile(target);
    db.exec('BEGIN');
    // The first read fixes the snapshot every step copies.
    db.prepare('SELECT count(*) FROM schema_migrations').get();
    let total = 0;
    await db.backup(target, {
      progress(p) {
        total = p.totalPages;
        onProgress(p);
        return PAGES_PER_STEP;
      },
    });
    db.exec('COMMIT');
    return total;
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
  }
}

/**
 * Finish a copy as a backup: store the manifest and files in `svc_backup`, switch the file to
 * rollback-journal mode, and check it (`PRAGMA quick_check`). Throws when the check fails.
 */
export function sealBackup(file: string, manifest: object, files: readonly { name: string; content: Uint8Array }[]): void {
  const db = new Database(file, { fileMustExist: true });
  try {
    db.pragma('journal_mode = DELETE');
    db.exec(`CREATE TABLE ${BACKUP_TABLE} (name TEXT PRIMARY KEY, content BLOB NOT NULL) STRICT`);
    const insert = db.prepare(`INSERT INTO ${BACKUP_TABLE} (name, content) VALUES (?, ?)`);
    db.transaction(() => {
      insert.run(MANIFEST_NAME, Buffer.from(JSON.stringify(manifest)));
      for (const f of files) insert.run(f.name, Buffer.from(f.content));
    })();
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy does not pass SQLite's quick_check: ${String(check)}`);
  } finally {
    db.close();
  }
}

export interface BackupContents {
  manifest: Record<string, unknown>;
  /** Key files by name. */
  files: Map<string, Uint8Array>;
}

/**
 * Read a backup's manifest and files. Throws an Error saying why when `file` is not a backup
 * made by `svc-relay backup` (not SQLite, no svc_backup table, no manifest) or fails SQLite's
 * quick_check.
 */
export function readBackup(file: string): BackupContents {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new Error(`cannot open it: ${(e as Error).message}`);
  }
  try {
    let rows: { name: string; content: Buffer }[];
    try {
      rows = db.prepare(`SELECT name, content FROM ${BACKUP_TABLE}`).all() as { name: string; content: Buffer }[];
    } catch (e) {
      const why = /file is not a database/i.test((e as Error).message) ? 'it is not an SQLite file' : `it has no ${BACKUP_TABLE} table`;
      throw new Error(`${why}, so it was not made by svc-relay backup`);
    }
    const files = new Map(rows.map((r) => [r.name, new Uint8Array(r.content)]));
    const manifestBytes = files.get(MANIFEST_NAME);
    if (manifestBytes === undefined) throw new Error(`its ${BACKUP_TABLE} table has no ${MANIFEST_NAME}`);
    files.delete(MANIFEST_NAME);
    let manifest: unknown;
    try {
      manifest = JSON.parse(Buffer.from(manifestBytes).toString('utf8'));
    } catch {
      throw new Error(`its ${MANIFEST_NAME} is not JSON`);
    }
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw new Error(`its ${MANIFEST_NAME} is not an object`);
    const problem = relayDatabaseProblem(db);
    if (problem !== undefined) throw new Error(problem);
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`it does not pass SQLite's quick_check: ${String(check)}`);
    return { manifest: manifest as Record<string, unknown>, files };
  } finally {
    db.close();
  }
}

/**
 * Turn a copy of a backup at `file` into a relay database: drop `svc_backup`, apply the
 * migrations a newer relay has, store each `state` value (the restore's read-only flag first
 * of all), and switch to WAL. Run before the file is put in place.
 */
export function prepareRestoredDatabase(file: string, state: Readonly<Record<string, string>>): void {
  if (!existsSync(file)) throw new Error(`${file}: missing`);
  ownerOnlyDatabaseFile(file);
  const db = new Database(file, { fileMustExist: true });
  try {
    const upsert = db.prepare('INSERT INTO service_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
    db.transaction(() => {
      db.exec(`DROP TABLE ${BACKUP_TABLE}`);
      for (const [key, value] of Object.entries(state)) upsert.run(key, value);
    })();
    migrate(db, MIGRATIONS);
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
}
