/**
 * A relay's SQLite database read as one consistent snapshot, for `svc-relay migrate` (the
 * driver side; relay/backup/migrate.ts holds the command).
 *
 * The file is opened read-only (the database is never written; SQLite may re-create its
 * shared-memory index, `-shm`, beside it, as any reader does) and one read
 * transaction is held from the first read to `close`: in WAL mode every statement then reads
 * the same snapshot of the log, so a copy made table by table is of one moment even if
 * something commits meanwhile (which a stopped relay does not).
 *
 * What is copied: every table of the relay's schema except `schema_migrations` (the target has
 * its own) and SEEK's index (`seek_*`: derived from the posts, and FTS5 cannot give its terms
 * back; the target rebuilds it from `posts`).
 */
import Database from 'better-sqlite3';

/** Tables never copied: the migrations record and SEEK's derived index (FTS5 and its shadow tables). */
export function isCopiedTable(name: string): boolean {
  return name !== 'schema_migrations' && !name.startsWith('seek_') && !name.startsWith('sqlite_');
}

export interface SqliteSnapshot {
  readonly file: string;
  /** Ids recorded in `schema_migrations`, ascending. */
  migrationIds(): number[];
  /** The copied tables (isCopiedTable), by name. */
  tables(): string[];
  /** A table's column names as declared. */
  columns(table: string): string[];
  /** True when the table has SQLite's implicit rowid (not WITHOUT ROWID). */
  hasRowid(table: string): boolean;
  count(table: string): number;
  /**
   * The rows of `table` as arrays of the values of `select` (column names, or `rowid`), in
   * storage order, or ascending by the `order` columns (NULLs first). No other statement may
   * run on the snapshot while the iterator is open.
   */
  rows(table: string, select: readonly string[], order?: readonly string[]): IterableIterator<unknown[]>;
  /** One value of service_state, or undefined. */
  state(key: string): string | undefined;
  /** SEEK's watermark (the highest posts.id the source indexed). */
  seekWatermark(): number;
  /** SEEK documents up to `upto` (post_row, space_row_id, public, unscoped), by post_row. */
  seekDocs(upto: number): IterableIterator<[number, number, number, number]>;
  close(): void;
}

function quoted(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Open `file` read-only and begin the read transaction every later read shares. */
export function openSnapshot(file: string): SqliteSnapshot {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const isRelay = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'spaces', 'posts')").get() as { n: number };
    if (isRelay.n !== 3) throw new Error(`${file} is not a relay database (no schema_migrations, spaces and posts tables)`);
    db.exec('BEGIN');
    // The first read fixes the snapshot every later read sees.
    db.prepare('SELECT count(*) FROM schema_migrations').get();
  } catch (e) {
    db.close();
    throw e;
  }
  const tableSql = new Map(
    (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as { name: string; sql: string | null }[]).map((r) => [r.name, r.sql ?? '']),
  );
  return {
    file,
    migrationIds: () => (db.prepare('SELECT id FROM schema_migrations ORDER BY id').pluck().all() as number[]),
    tables: () => [...tableSql.keys()].filter(isCopiedTable).sort(),
    columns: (table) => (db.prepare(`PRAGMA table_info(${quoted(table)})`).all() as { name: string }[]).map((c) => c.name),
    hasRowid: (table) => !/WITHOUT\s+ROWID/i.test(tableSql.get(table) ?? ''),
    count: (table) => (db.prepare(`SELECT count(*) FROM ${quoted(table)}`).pluck().get() as number),
    rows(table, select, order) {
      const name = (c: string) => (c === 'rowid' ? 'rowid' : quoted(c));
      const by =
        order !== undefined ? ` ORDER BY ${order.map(name).join(', ')}` : !/WITHOUT\s+ROWID/i.test(tableSql.get(table) ?? '') ? ' ORDER BY rowid' : '';
      const sql = `SELECT ${select.map(name).join(', ')} FROM ${quoted(table)}${by}`;
      return db.prepare(sql).raw(true).iterate() as IterableIterator<unknown[]>;
    },
    state: (key) => (db.prepare('SELECT value FROM service_state WHERE key = ?').pluck().get(key) as string | undefined),
    seekWatermark: () => (db.prepare('SELECT indexed_upto FROM seek_state WHERE id = 1').pluck().get() as number | undefined) ?? 0,
    seekDocs: (upto) =>
      db.prepare('SELECT post_row, space_row_id, public, unscoped FROM seek_docs WHERE post_row <= ? ORDER BY post_row').raw(true).iterate(upto) as IterableIterator<
        [number, number, number, number]
      >,
    close() {
      if (!db.open) return;
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    },
  };
}
