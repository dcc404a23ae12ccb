/**
 * `svc-relay migrate --from DIR --to postgres://…`: move a relay from its SQLite file to a
 * PostgreSQL database, whole, and prove the copy before saying so.
 *
 * Steps:
 * 1. Check before writing anything: DIR holds a relay database at this version's schema, its
 *    root key file (checkpoints are verified under it) and no restore at work; no other process
 *    has the database open (a relay serving from it would append after the snapshot; seen on
 *    Linux through /proc, elsewhere the operator's word); the target holds no data (a database
 *    a relay already used, or anything else's, is refused untouched).
 * 2. Read the source from one snapshot (a read transaction on a read-only connection).
 * 3. Migrate the target's schema, then copy every table in foreign-key order in ONE
 *    transaction holding the relay's write lock: rows with their ids as they are (every
 *    reference stays right; tokens are stored as hashes and sealed records as ciphertext, so
 *    they are copied as stored), then every identity sequence moved past the copied ids. A
 *    copy that fails leaves the target as empty as it was.
 * 4. SEEK's index is derived data: the target's own (tsvector) index is built from the copied
 *    posts in post order, with the relay's own indexing code, so every post's unscoped
 *    decision is made exactly as it first was. Were this step cut short, the relay's indexer
 *    would finish it from the watermark.
 * 5. Verify the target (./migrate-verify.ts: counts, chains, checkpoints, notices, SEEK) and
 *    compare every copied row with the source's (./migrate-compare.ts); any problem fails the
 *    command, listing them, and leaves the target as it is for the operator to drop.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fromHex } from '../../shared/encoding.js';
import { signerFromSeed } from '../../shared/identity.js';
import { prepareDoc } from '../seek/indexer.js';
import { ROOT_SEED_FILE } from '../service-keys.js';
import { READ_ONLY_KEY } from '../service-mode.js';
import { PostgresDb } from '../store/postgres/connection.js';
import { IN_USE_COUNT_BOUND, batchInserter, foreignKeyOrder, schemaTables, tablesInUse } from '../store/postgres/copy.js';
import { advanceIdentities } from '../store/postgres/identities.js';
import { WRITE_LOCK } from '../store/postgres/locks.js';
import { migrate as migratePostgres } from '../store/postgres/migrate.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../store/postgres/migrations/index.js';
import { createPostgresSeekStore } from '../store/postgres/seek.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../store/sqlite/migrations/index.js';
import { DATABASE_FILE } from '../store/sqlite/open.js';
import { openSnapshot, type SqliteSnapshot } from '../store/sqlite/snapshot.js';
import { CommandError } from './command-error.js';
import { compareTables } from './migrate-compare.js';
import { verifyTarget, type VerifyResult } from './migrate-verify.js';
import { openersOf } from './openers.js';
import { terminalProgress, type Progress } from './progress.js';
import { RESTORE_LOCK_FILE } from './restore.js';

/** Posts indexed per SEEK step while building the target's index. */
const SEEK_STEP = 1_000;
/** The progress line is redrawn at most this often (and at the end). */
const REDRAW_MS = 200;

/** A terminal progress line redrawn at most every REDRAW_MS: a step may report thousands of times a second. */
function progressLine(what: string, unit: string): Progress {
  const line = terminalProgress(what, unit);
  let last = 0;
  return {
    update(done, total) {
      const now = Date.now();
      if (done < total && now - last < REDRAW_MS) return;
      last = now;
      line.update(done, total);
    },
    finish: () => line.finish(),
  };
}

export interface MigrateOptions {
  /** The SQLite relay's data directory. */
  dataDir: string;
  /** The target database's postgres:// URL. */
  url: string;
}

export interface MigrateResult {
  /** The target, without its password. */
  target: string;
  tables: number;
  rows: number;
  verified: VerifyResult;
}

function fail(message: string, code: 1 | 2 = 2): never {
  throw new CommandError(message, code);
}

/** The service's root public key from the data directory (read, never created). */
function rootKeyOf(dataDir: string): Uint8Array {
  const path = join(dataDir, ROOT_SEED_FILE);
  if (!existsSync(path)) {
    fail(`${dataDir} has no ${ROOT_SEED_FILE}: migrate from the data directory the relay ran on (its checkpoints are verified under the service's root key, and the relay on PostgreSQL signs with the same keys)`);
  }
  return signerFromSeed(fromHex(readFileSync(path, 'utf8').trim(), 32, ROOT_SEED_FILE)).publicKey;
}

/** Step 1, the source's side. */
function checkSource(dataDir: string): string {
  const file = join(dataDir, DATABASE_FILE);
  if (!existsSync(file)) fail(`no relay database at ${file}; pass --from DIR, the data directory the relay ran on`);
  if (existsSync(join(dataDir, RESTORE_LOCK_FILE))) {
    fail(`a restore is at work in ${dataDir} (${RESTORE_LOCK_FILE} is there); let it finish, stop the relay, then migrate`);
  }
  const openers = openersOf([file, `${file}-wal`]);
  if (openers !== undefined && openers.length > 0) {
    fail(`${file} is open in process ${openers.join(', ')} (a relay serving from it?): stop the relay first, so that nothing is written after the copy is made, then migrate and start the relay on PostgreSQL`);
  }
  return file;
}

function checkSchema(snapshot: SqliteSnapshot): void {
  const have = snapshot.migrationIds();
  const want = SQLITE_MIGRATIONS.map((m) => m.id);
  const newest = have.at(-1) ?? 0;
  if (newest > want.at(-1)!) fail(`${snapshot.file} was written by a newer svc-relay (schema ${newest}, this one knows ${want.at(-1)}): migrate with that version`);
  if (have.length !== want.length || have.some((id, i) => id !== want[i])) {
    fail(`${snapshot.file} is at schema ${newest} of ${want.at(-1)}: start this version of svc-relay on it once (it migrates on start), stop it, then migrate`);
  }
  if (snapshot.state(READ_ONLY_KEY) !== undefined) {
    fail(`${snapshot.file} is marked read-only by a restore that has not finished; finish the restore (run it again), then migrate`);
  }
}

/** The columns to copy per source table: the target's, each of which the source has (its implicit rowid included). */
function copyPlan(snapshot: SqliteSnapshot, target: Map<string, string[]>): Map<string, string[]> {
  const plan = new Map<string, string[]>();
  for (const table of snapshot.tables()) {
    const columns = target.get(table);
    if (columns === undefined) fail(`the target has no table ${table}; its schema is not this version's (was it made by another svc-relay?)`, 1);
    const source = new Set(snapshot.columns(table));
    for (const c of source) {
      if (!columns.includes(c)) fail(`the target's ${table} has no column ${c}; its schema is not this version's`, 1);
    }
    for (const c of columns) {
      if (!source.has(c) && !(c === 'rowid' && snapshot.hasRowid(table))) fail(`the source's ${table} has no column ${c} the target needs`, 1);
    }
    plan.set(table, columns);
  }
  // Tables only the PostgreSQL store has (state SQLite keeps in the process, such as rate
  // limits shared by every process) start empty, as on a new relay.
  return plan;
}

function refuseInUse(used: { table: string; rows: number }[], target: string): never {
  const list = used
    .slice(0, 5)
    .map((u) => `${u.table} (${u.rows >= IN_USE_COUNT_BOUND ? `${IN_USE_COUNT_BOUND.toLocaleString('en')}+` : u.rows} rows)`)
    .join(', ');
  fail(
    `${target} already holds data (${list}${used.length > 5 ? ', …' : ''}); migrate copies into an empty database only: create a new one (e.g. createdb -E UTF8 -T template0 svc) or, if nothing in this one is needed, drop and re-create it, then migrate again`,
  );
}

export async function migrateToPostgres(opts: MigrateOptions): Promise<MigrateResult> {
  const dataDir = resolve(opts.dataDir);
  const file = checkSource(dataDir);
  const rootKey = rootKeyOf(dataDir);
  let snapshot: SqliteSnapshot;
  try {
    snapshot = openSnapshot(file);
  } catch (e) {
    fail(`cannot read ${file}: ${(e as Error).message}`);
  }
  const db = new PostgresDb(opts.url, { poolSize: 2, applicationName: 'svc-relay migrate', log: () => undefined });
  try {
    checkSchema(snapshot);
    const counts = new Map(snapshot.tables().map((t) => [t, snapshot.count(t)] as const));
    const totalRows = [...counts.values()].reduce((a, b) => a + b, 0);
    let plan = new Map<string, string[]>();
    const client = await db.pool.connect().catch((e: unknown) =>
      fail(`cannot connect to ${db.name}: ${(e as Error).message}; check the URL, that the server is running, that the database exists (createdb -E UTF8 -T template0 NAME) and that this user may connect`),
    );
    try {
      const encoding = (await client.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]?.server_encoding;
      if (encoding !== 'UTF8') fail(`${db.name} is encoded ${encoding}; the relay needs UTF8: create the database with CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0`);
      // Step 1, the target's side: nothing in it yet, and no schema newer than this version's.
      const before = await schemaTables(client);
      if (before.has('schema_migrations')) {
        const known = new Set(POSTGRES_MIGRATIONS.map((m) => m.id));
        const ids = (await client.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => Number(r.id));
        if (ids.some((id) => !known.has(id))) fail(`${db.name} has a schema made by a newer svc-relay; migrate with that version, or into a new database`);
      }
      const used = await tablesInUse(client);
      if (used.length > 0) refuseInUse(used, db.name);

      // Step 2 and 3.
      await migratePostgres(client, POSTGRES_MIGRATIONS);
      plan = copyPlan(snapshot, await schemaTables(client));
      const order = await foreignKeyOrder(client, [...plan.keys()]);
      const copying = progressLine('copying', 'rows');
      let copied = 0;
      let table = '';
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [WRITE_LOCK.toString()]);
        // Again under the write lock: another migrate, or a relay started on the target meanwhile.
        const raced = await tablesInUse(client);
        if (raced.length > 0) refuseInUse(raced, db.name);
        for (table of order) {
          const columns = plan.get(table)!;
          const insert = batchInserter(client, table, columns);
          for (const row of snapshot.rows(table, columns)) {
            await insert.add(row);
            copying.update(++copied, totalRows);
          }
          await insert.flush();
        }
        table = '';
        await advanceIdentities(client);
        await client.query('COMMIT');
        copying.update(copied, totalRows);
        copying.finish();
      } catch (e) {
        copying.finish();
        await client.query('ROLLBACK').catch(() => undefined);
        if (e instanceof CommandError) throw e;
        const where = table === '' ? '' : ` while copying ${table}`;
        fail(`the copy failed${where}, and nothing was kept in ${db.name}: ${(e as Error).message}; fix the cause and run migrate again`, 1);
      }
    } finally {
      client.release();
    }

    try {
      return await indexAndVerify({ db, snapshot, plan, counts, totalRows, rootKey, file, url: opts.url });
    } catch (e) {
      if (e instanceof CommandError) throw e;
      fail(
        `the rows are copied into ${db.name}, but building SEEK's index or verifying them failed: ${(e as Error).message}; ` +
          `do not start a relay on it: drop it (${dropHint(opts.url)}) and run migrate again once the cause is fixed`,
        1,
      );
    }
  } finally {
    snapshot.close();
    await db.close();
  }
}

/** The SQL that drops the database `url` names, for messages. */
function dropHint(url: string): string {
  let name = '…';
  try {
    name = decodeURIComponent(new URL(url).pathname.slice(1)) || name;
  } catch {
    // Unparsable: the placeholder stays.
  }
  return `DROP DATABASE "${name.replaceAll('"', '""')}"`;
}

/** Steps 4 and 5, on the committed copy. */
async function indexAndVerify(input: {
  db: PostgresDb;
  snapshot: SqliteSnapshot;
  plan: ReadonlyMap<string, readonly string[]>;
  counts: ReadonlyMap<string, number>;
  totalRows: number;
  rootKey: Uint8Array;
  file: string;
  url: string;
}): Promise<MigrateResult> {
  const { db, snapshot, plan, counts, totalRows, rootKey, file } = input;
  // Step 4.
  const seek = createPostgresSeekStore(db);
  const indexing = progressLine('building the SEEK index', 'posts');
  const posts = counts.get('posts') ?? 0;
  let indexed = 0;
  try {
    for (;;) {
      const from = await seek.watermark();
      const batch = await seek.pending(from, SEEK_STEP);
      if (batch.length === 0) break;
      await seek.index(from, batch.at(-1)!.rowId, batch.map(prepareDoc));
      indexed += batch.length;
      indexing.update(indexed, posts);
    }
  } finally {
    indexing.finish();
  }

  // Step 5.
  const checking = progressLine('verifying', 'positions and checkpoints');
  let verified: VerifyResult;
  try {
    verified = await verifyTarget({
      db,
      rootKey,
      sourceCounts: counts,
      sourceSeekDocs: snapshot.seekDocs(snapshot.seekWatermark()),
      progress: (done, total) => checking.update(done, total),
    });
  } finally {
    checking.finish();
  }
  // Every other value, row by row.
  const comparing = progressLine('comparing', 'rows');
  const reader = await db.pool.connect();
  let differences: string[];
  try {
    differences = await compareTables({ snapshot, client: reader, plan, progress: (done) => comparing.update(done, totalRows) });
  } finally {
    comparing.finish();
    reader.release();
  }
  const problems = [...verified.problems, ...differences];
  if (problems.length > 0) {
    const more = verified.moreProblems > 0 ? `\n  … and ${verified.moreProblems} more` : '';
    fail(
      `the copy in ${db.name} does not verify:\n  ${problems.join('\n  ')}${more}\n` +
        `Do not start a relay on it. The target was left as it is: drop it (${dropHint(input.url)}). ` +
        `The source ${file} was only read and is unchanged; the relay can go on serving from it. ` +
        `Where a chain, checkpoint or notice fails and no row differs, the copy is faithful and the source itself holds those rows so; ` +
        `where rows differ, the copy is at fault: migrate again into a new database.`,
      1,
    );
  }
  return { target: db.name, tables: counts.size, rows: totalRows, verified };
}
