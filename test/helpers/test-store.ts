/**
 * Which store the relay tests run on: SQLite (the default) or, with `SVC_TEST_STORE=postgres`,
 * PostgreSQL on the cluster test/helpers/postgres.ts provides (SVC_TEST_DATABASE_URL, or one
 * it starts). One setting picks for the whole run, so the same test files cover both stores.
 *
 * On PostgreSQL each relay gets a database of its own (`freshDatabase`), dropped when the
 * relay closes; its data directory still holds the service key files, as in production.
 * Tests about SQLite itself (its file, WAL, PRAGMAs, backup and restore of its file) skip on
 * PostgreSQL with `describe.skipIf(onPostgres)(...)` and say why in their name or a comment.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../../relay/store/database.js';
import { freshDatabase, testPostgres } from './postgres.js';

export const TEST_STORE_ENV = 'SVC_TEST_STORE';

/** True when this run tests the PostgreSQL store. */
export const onPostgres = process.env[TEST_STORE_ENV] === 'postgres';

/** Why a SQLite-only test does not run here (for skip messages). */
export const SQLITE_ONLY = 'SQLite only: this test is about the SQLite file itself';

/** Said in the title of a SQLite-only test where this run, on PostgreSQL, skips it. */
export const ON_POSTGRES_SKIP = onPostgres ? ` (skipped: ${SQLITE_ONLY})` : '';

/** Where a test relay keeps its data, and how to remove it once the relay is closed. */
export interface TestDatabase {
  /** What openStore takes: the data directory (SQLite) or a postgres:// URL. */
  readonly location: string;
  /** Remove the database (PostgreSQL); nothing for SQLite, whose file goes with its directory. */
  drop(): Promise<void>;
}

let cluster: ReturnType<typeof testPostgres> | undefined;
/** The database of each data directory a test keeps (a relay restarted on it finds its data). */
const kept = new Map<string, Promise<string>>();

async function newDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  cluster ??= testPostgres();
  if (cluster.url === undefined) throw new Error(`${TEST_STORE_ENV}=postgres, but ${cluster.skipReason ?? 'no PostgreSQL cluster'}`);
  return await freshDatabase({ adminUrl: cluster.url });
}

/**
 * The database a test relay on `dataDir` opens. With `keep` (a data directory the test made and
 * may start a relay on again, in-process or as a process) the same database each time, never
 * dropped (the test cluster goes whole); otherwise a fresh one, dropped by `drop`.
 */
export async function testDatabase(dataDir: string, keep = false): Promise<TestDatabase> {
  if (!onPostgres) return { location: dataDir, drop: async () => undefined };
  if (keep) {
    let url = kept.get(dataDir);
    if (url === undefined) {
      url = newDatabase().then((d) => d.url);
      kept.set(dataDir, url);
    }
    return { location: await url, drop: async () => undefined };
  }
  const database = await newDatabase();
  return { location: database.url, drop: database.drop };
}

/**
 * Many rows in one statement, for tests that fill a table up to a limit (a round trip per row
 * is slow on PostgreSQL): `WITH RECURSIVE n(i)` counting 1..count, to put before an
 * `INSERT ... SELECT ... FROM n`, and `bytesOf(text)`, distinct bytes from a distinct text
 * expression in each database's words.
 */
export function numbered(count: number): string {
  return `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})`;
}

export function bytesOf(db: { dialect: 'sqlite' | 'postgres' }, text: string): string {
  return db.dialect === 'postgres' ? `convert_to(${text}, 'UTF8')` : `CAST(${text} AS BLOB)`;
}

/**
 * Everything the relay stored, to search for text or bytes that must (or must not) be there:
 * on SQLite every file under the data directory (database, WAL, shared memory, in their raw
 * bytes); on PostgreSQL every row of every table of the relay's database as text, where bytea
 * shows as hex, so bytes are also looked for in hex.
 */
export async function storedContent(relay: { store: { db: Db }; dataDir: string }): Promise<(needle: string | Uint8Array) => boolean> {
  const bytes = (n: string | Uint8Array): Buffer => (typeof n === 'string' ? Buffer.from(n, 'utf8') : Buffer.from(n));
  if (relay.store.db.dialect === 'sqlite') {
    const files: Buffer[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const p = join(dir, name);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(readFileSync(p));
      }
    };
    walk(relay.dataDir);
    return (needle) => files.some((f) => f.includes(bytes(needle)));
  }
  const db = relay.store.db;
  const tables = await db.prepare('SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename').pluck<string>().all();
  const rows: string[] = [];
  for (const table of tables) rows.push(...(await db.prepare(`SELECT t::text FROM "${table}" t`).pluck<string>().all()));
  const text = rows.join('\n');
  return (needle) => text.includes(bytes(needle).toString('hex')) || (typeof needle === 'string' && text.includes(needle));
}

/** Rows a statement of `insertRows` and `deleteWhereIn` carries at most. */
const ROWS_PER_STATEMENT = 500;

/**
 * `rows` into `into` ("table (column, …)"), ROWS_PER_STATEMENT rows to a multi-row INSERT, for
 * the tests that fill a table to a limit (10,000 admins, 10,000 SPACES): one INSERT a row is
 * 10,000 round trips to PostgreSQL, seconds each time. Runs in the caller's transaction if one
 * is open; `?` placeholders, so both stores take it.
 */
export async function insertRows(db: Db, into: string, rows: readonly (readonly unknown[])[]): Promise<void> {
  for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(at, at + ROWS_PER_STATEMENT);
    const values = chunk.map((r) => `(${r.map(() => '?').join(', ')})`).join(', ');
    await db.prepare(`INSERT INTO ${into} VALUES ${values}`).run(...chunk.flat());
  }
}

/** `DELETE FROM table WHERE <where> AND column IN (values)`, ROWS_PER_STATEMENT values at a time; `where` may take `params`. */
export async function deleteWhereIn(db: Db, table: string, column: string, values: readonly unknown[], where = 'TRUE', params: readonly unknown[] = []): Promise<void> {
  for (let at = 0; at < values.length; at += ROWS_PER_STATEMENT) {
    const chunk = values.slice(at, at + ROWS_PER_STATEMENT);
    await db.prepare(`DELETE FROM ${table} WHERE ${where} AND ${column} IN (${chunk.map(() => '?').join(', ')})`).run(...params, ...chunk);
  }
}

/** A `spaces` row's columns as the tests that fill SPACES to a limit write it (`insertRows`' `into`). */
export const SPACES_COLUMNS =
  'spaces (space_id, name, owner, title, description, visibility, oracle, join_policy, signed_only, status, categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours, created_at, updated_at)';

/** A private, invite-only, active SPACE as a row of SPACES_COLUMNS, from its id, name and owner. */
export function privateSpaceRow([spaceId, name, owner]: readonly unknown[]): unknown[] {
  return [spaceId, name, owner, '', '', 'private', 0, 'invite', 0, 'active', '[]', 0, 0, 'members', 4, 0, 0];
}
