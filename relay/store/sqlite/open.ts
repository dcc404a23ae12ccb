/**
 * Opening the SQLite database (better-sqlite3): WAL, synchronous=FULL, foreign keys, busy
 * timeout, then every migration not yet applied, each in its own transaction and recorded in
 * `schema_migrations`. Only relay/store/ imports the driver.
 *
 * Integers are read as JavaScript numbers (safeIntegers off): every integer column holds
 * milliseconds, positions or counts far below 2^53.
 *
 * The database file is made mode 0600 before SQLite opens it, and SQLite gives the -wal and
 * -shm files it creates the database file's own mode, so no copy of the data is readable by
 * other users of the machine even for a moment (the data directory is 0700 as well). A file
 * left wider by an older version is narrowed on open, its -wal and -shm with it.
 */
import Database from 'better-sqlite3';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS, type Migration } from './migrations/index.js';
import { SqliteDb } from './connection.js';

/** The driver's own connection (SQLite-only code: pragmas, backups, WAL checkpoints). */
export type RawDatabase = Database.Database;

export const DATABASE_FILE = 'relay.sqlite';

/** Open `dataDir/relay.sqlite` (created with the directory if needed), or an in-memory database. */
export function openDatabase(dataDir: string): SqliteDb {
  return new SqliteDb(openRawDatabase(dataDir));
}

/** The migrated driver connection behind `openDatabase`. */
export function openRawDatabase(dataDir: string): RawDatabase {
  let db: RawDatabase;
  if (dataDir === ':memory:') {
    db = new Database(':memory:');
  } else {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, DATABASE_FILE);
    ownerOnlyDatabaseFile(file);
    db = new Database(file);
    db.pragma('journal_mode = WAL');
  }
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  try {
    migrate(db, MIGRATIONS);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** SQLite's files beside a database: the write-ahead log and its shared-memory index. */
const SIDE_FILES = ['-wal', '-shm', '-journal'] as const;

/**
 * Make `file` (empty: SQLite reads an empty file as a new database) with mode 0600, or hold
 * an existing one and its side files to 0600.
 */
export function ownerOnlyDatabaseFile(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, ...SIDE_FILES.map((side) => file + side)]) {
    if (existsSync(path)) chmodSync(path, 0o600);
  }
}

/** Apply, in id order, every migration whose id is not yet in `schema_migrations`. */
export function migrate(db: RawDatabase, migrations: readonly Migration[]): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const ids = migrations.map((m) => m.id);
  for (let i = 1; i < ids.length; i++) {
    if (ids[i]! <= ids[i - 1]!) throw new Error(`migrations out of order at id ${ids[i]}`);
  }
  const done = new Set(
    (db.prepare('SELECT id FROM schema_migrations').all() as { id: number }[]).map((r) => r.id),
  );
  const record = db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.id)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.id, m.name, Date.now());
    }).immediate();
    applied.push(m.id);
  }
  return applied;
}
