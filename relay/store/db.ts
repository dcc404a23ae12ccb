/**
 * Opening the SQLite database (better-sqlite3): WAL, synchronous=FULL, foreign keys, busy
 * timeout, then every migration not yet applied, each in its own transaction and recorded in
 * `schema_migrations`. Only relay/store/ imports the driver.
 *
 * Integers are read as JavaScript numbers (safeIntegers off): every integer column holds
 * milliseconds, positions or counts far below 2^53.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export type Db = Database.Database;

export const DATABASE_FILE = 'relay.sqlite';

/** better-sqlite3 reads a BLOB as a Buffer; the stores hand out plain Uint8Array views of it. */
export function plainBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Open `dataDir/relay.sqlite` (created with the directory if needed), or an in-memory database. */
export function openDatabase(dataDir: string): Db {
  let db: Db;
  if (dataDir === ':memory:') {
    db = new Database(':memory:');
  } else {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(join(dataDir, DATABASE_FILE));
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

/** Apply, in id order, every migration whose id is not yet in `schema_migrations`. */
export function migrate(db: Db, migrations: readonly Migration[]): number[] {
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
