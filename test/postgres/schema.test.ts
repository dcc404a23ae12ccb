/**
 * The PostgreSQL schema (relay/store/postgres/migrations/) is SQLite's (relay/store/sqlite/
 * migrations/, all applied) table for table: the same tables, the same columns in the same
 * order with the same nullability and type class, the same primary keys, UNIQUE constraints,
 * foreign keys, CHECK constraints (counted) and named indexes (columns, uniqueness, partial
 * or not), so `svc-relay migrate` can copy table by table and the two cannot drift apart.
 * The differences are the ones relay/store/postgres/migrations/001_schema.ts documents, listed
 * here: a real `rowid` column where SQLite's implicit one pages a table, and the SEEK text
 * index (FTS5 there, a tsvector table here).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openRawDatabase, type RawDatabase } from '../../relay/store/sqlite/open.js';
import { migrate } from '../../relay/store/postgres/migrate.js';
import { advanceIdentities, identityColumns } from '../../relay/store/postgres/identities.js';
import { MIGRATIONS } from '../../relay/store/postgres/migrations/index.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';

/** Columns PostgreSQL adds: SQLite's implicit rowid, which these tables' stores page by. */
const EXTRA_COLUMNS: Record<string, string[]> = { invites: ['rowid'], join_requests: ['rowid'] };
/** SQLite's FTS5 table and its shadow tables; PostgreSQL's seek_text stands for them. */
const FTS = /^seek_text(_|$)/;
/** Tables only PostgreSQL has: what several relay processes share (SQLite's one process keeps it in memory). */
const POSTGRES_ONLY = new Set(['rate_buckets']);

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** postgres-schema.test.ts skipped: ${cluster.skipReason} ***\n\n`);

const databases: FreshDatabase[] = [];
let client: pg.Client;
let lite: RawDatabase;

/** An empty database of the test cluster, dropped at the end. */
async function emptyDatabase(): Promise<string> {
  const fresh = await freshDatabase({ empty: true });
  databases.push(fresh);
  return fresh.url;
}

beforeAll(async () => {
  if (cluster.url === undefined) return;
  client = new pg.Client({ connectionString: await emptyDatabase() });
  await client.connect();
  expect(await migrate(client)).toEqual(MIGRATIONS.map((m) => m.id));
  lite = openRawDatabase(':memory:');
}, 60_000);
afterAll(async () => {
  try {
    lite?.close();
    await client?.end();
    for (const d of databases) await d.drop();
  } finally {
    cluster.stop();
  }
});

const q = async <R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) => (await client.query<R>(sql, params)).rows;

/** The message PostgreSQL refuses `sql` with ('' when it runs). */
async function refusal(sql: string): Promise<string> {
  try {
    await q(sql);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

function liteTables(): string[] {
  return (
    lite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' ORDER BY name")
      .all() as { name: string }[]
  )
    .map((r) => r.name)
    .filter((n) => !FTS.test(n));
}

async function pgTables(): Promise<string[]> {
  const rows = await q<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'
      ORDER BY table_name COLLATE "C"`,
  );
  return rows.map((r) => r.table_name).filter((n) => n !== 'seek_text' && !POSTGRES_ONLY.has(n));
}

interface Column {
  name: string;
  type: string;
  notNull: boolean;
}

/** SQLite's declared type as the PostgreSQL type it maps to. */
const TYPE_MAP: Record<string, string> = { INTEGER: 'bigint', TEXT: 'text', BLOB: 'bytea' };

function liteColumns(table: string): { columns: Column[]; pk: string[] } {
  const info = lite.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; pk: number }[];
  const columns = info.map((c) => ({ name: c.name, type: TYPE_MAP[c.type] ?? c.type, notNull: c.notnull === 1 || c.pk > 0 }));
  const pk = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  return { columns, pk };
}

async function pgColumns(table: string): Promise<{ columns: Column[]; pk: string[] }> {
  const rows = await q<{ column_name: string; data_type: string; is_nullable: string }>(
    `SELECT column_name, data_type, is_nullable FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  const pk = await q<{ attname: string }>(
    `SELECT a.attname FROM pg_index i
       CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY k.n`,
    [table],
  );
  return {
    columns: rows.map((r) => ({ name: r.column_name, type: r.data_type, notNull: r.is_nullable === 'NO' })),
    pk: pk.map((r) => r.attname),
  };
}

/** `table(cols) -> ref(refcols) on delete X` for every foreign key. */
function liteForeignKeys(table: string): string[] {
  const rows = lite.prepare(`PRAGMA foreign_key_list(${table})`).all() as { id: number; table: string; from: string; to: string; on_delete: string }[];
  const byId = new Map<number, typeof rows>();
  for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  return [...byId.values()]
    .map((fk) => `${table}(${fk.map((c) => c.from)}) -> ${fk[0]!.table}(${fk.map((c) => c.to)}) on delete ${fk[0]!.on_delete.toLowerCase()}`)
    .sort();
}

const PG_DELETE: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null', d: 'set default' };

async function pgForeignKeys(table: string): Promise<string[]> {
  const rows = await q<{ ref: string; cols: string[]; refcols: string[]; del: string }>(
    `SELECT c.confrelid::regclass::text AS ref, c.confdeltype AS del,
            ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS cols,
            ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
                    JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS refcols
       FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = $1::regclass`,
    [table],
  );
  return rows.map((r) => `${table}(${r.cols.join(',')}) -> ${r.ref}(${r.refcols.join(',')}) on delete ${PG_DELETE[r.del]}`).sort();
}

interface Index {
  name: string;
  columns: string[];
  unique: boolean;
  partial: boolean;
}

/** SQLite's indexes of `table`: named ones (CREATE INDEX) and the column lists of its UNIQUE constraints. */
function liteIndexes(table: string): { named: Index[]; unique: string[] } {
  const list = lite.prepare(`PRAGMA index_list(${table})`).all() as { name: string; unique: number; origin: string; partial: number }[];
  const cols = (name: string) => (lite.prepare(`PRAGMA index_info(${name})`).all() as { seqno: number; name: string }[]).sort((a, b) => a.seqno - b.seqno).map((c) => c.name);
  return {
    named: list
      .filter((i) => i.origin === 'c')
      .map((i) => ({ name: i.name, columns: cols(i.name), unique: i.unique === 1, partial: i.partial === 1 }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
    unique: list.filter((i) => i.origin === 'u').map((i) => cols(i.name).join(',')).sort(),
  };
}

async function pgIndexes(table: string): Promise<{ named: Index[]; unique: string[] }> {
  const rows = await q<{ name: string; columns: string[]; unique: boolean; partial: boolean; constraint: string | null }>(
    `SELECT ic.relname AS name, i.indisunique AS unique, i.indpred IS NOT NULL AS partial,
            (SELECT con.contype::text FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.conrelid = i.indrelid) AS constraint,
            ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY k(n, o)
                    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) AS columns
       FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
      WHERE i.indrelid = $1::regclass`,
    [table],
  );
  return {
    named: rows
      .filter((r) => r.constraint === null)
      .map((r) => ({ name: r.name, columns: r.columns, unique: r.unique, partial: r.partial }))
      .sort((a, b) => (a.name < b.name ? -1 : 1)),
    unique: rows.filter((r) => r.constraint === 'u').map((r) => r.columns.join(',')).sort(),
  };
}

function liteChecks(table: string): number {
  const { sql } = lite.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string };
  return sql.match(/\bCHECK\s*\(/gi)?.length ?? 0;
}

async function pgChecks(table: string): Promise<number> {
  const [r] = await q<{ n: string }>("SELECT count(*) AS n FROM pg_constraint WHERE contype = 'c' AND conrelid = $1::regclass", [table]);
  return Number(r!.n);
}

describe.skipIf(cluster.url === undefined)(`the PostgreSQL schema against SQLite’s${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  it('has every table SQLite has and no other, the SEEK text index and shared rate limits aside', async () => {
    const tables = liteTables();
    expect(tables.length).toBeGreaterThan(40);
    expect(await pgTables()).toEqual(tables);
  });

  it('gives every table the same columns in the same order, with the same types, nullability and primary key', async () => {
    for (const table of liteTables()) {
      const want = liteColumns(table);
      const got = await pgColumns(table);
      const extra = EXTRA_COLUMNS[table] ?? [];
      expect(got.columns.filter((c) => !extra.includes(c.name)), table).toEqual(want.columns);
      expect(got.columns.filter((c) => extra.includes(c.name)), table).toEqual(extra.map((name) => ({ name, type: 'bigint', notNull: true })));
      expect(got.pk, table).toEqual(want.pk);
    }
  });

  it('has the same foreign keys, UNIQUE constraints, CHECK constraints and named indexes on every table', async () => {
    for (const table of liteTables()) {
      expect(await pgForeignKeys(table), table).toEqual(liteForeignKeys(table));
      const want = liteIndexes(table);
      const got = await pgIndexes(table);
      expect(got.named, table).toEqual(want.named);
      const extraUnique = EXTRA_COLUMNS[table] ?? [];
      expect(got.unique.filter((u) => !extraUnique.includes(u)), table).toEqual(want.unique);
      expect(await pgChecks(table), table).toBe(liteChecks(table));
    }
  });

  it('keeps SEEK’s terms as a tsvector under a GIN index, keyed by the post’s row', async () => {
    expect(liteColumns('seek_text').columns.map((c) => c.name)).toEqual(['terms']);
    const got = await pgColumns('seek_text');
    expect(got.columns).toEqual([
      { name: 'post_row', type: 'bigint', notNull: true },
      { name: 'terms', type: 'tsvector', notNull: true },
    ]);
    const [gin] = await q<{ n: string }>(
      `SELECT count(*) AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
        WHERE i.indrelid = 'seek_text'::regclass AND am.amname = 'gin'`,
    );
    expect(Number(gin!.n)).toBe(1);
  });

  it('compares every text column bytewise, as SQLite’s BINARY collation does', async () => {
    const other = await q<{ table_name: string; column_name: string; collation_name: string | null }>(
      `SELECT table_name, column_name, collation_name FROM information_schema.columns
        WHERE table_schema = 'public' AND data_type = 'text' AND table_name <> 'schema_migrations'
          AND collation_name IS DISTINCT FROM 'C'`,
    );
    expect(other).toEqual([]);
    const keys = ['b', 'B', 'a', 'é', 'Z', 'e', 'ﬁ', '😀', 'z', '~'];
    for (const k of keys) {
      await q('INSERT INTO service_state (key, value) VALUES ($1, $1)', [`order:${k}`]);
      lite.prepare('INSERT INTO service_state (key, value) VALUES (?, ?)').run(`order:${k}`, k);
    }
    const fromPg = (await q<{ key: string }>("SELECT key FROM service_state WHERE key LIKE 'order:%' ORDER BY key")).map((r) => r.key);
    const fromLite = (lite.prepare("SELECT key FROM service_state WHERE key LIKE 'order:%' ORDER BY key").all() as { key: string }[]).map((r) => r.key);
    expect(fromPg).toEqual(fromLite);
    expect(fromPg).toEqual([...fromPg].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });

  it('holds the constraints SQLite writes with booleans as integers: one mailbox target, flags 0 or 1', async () => {
    await q("INSERT INTO keys (peer_id, key_type, public_key, registered_at) VALUES ('p1', 'ed25519', 'k', 0)");
    expect(await refusal("INSERT INTO mailbox (peer, mailbox_seq, reason, delivered_at) VALUES ('p1', 1, 'x', 0)")).toMatch(/mailbox_check/);
    expect(
      await refusal("INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, request_id, delivered_at) VALUES ('p1', 1, 'x', 'a', 'b', 0)"),
    ).toMatch(/mailbox_check/);
    await q("INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, delivered_at) VALUES ('p1', 1, 'x', 'a', 0)");
    expect(
      await refusal(
        `INSERT INTO spaces (space_id, name, owner, title, description, visibility, oracle, join_policy, signed_only, status,
           categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours, created_at, updated_at)
         VALUES ('s', 'n', 'p1', '', '', 'public', 2, 'open', 0, 'active', '[]', 0, 1, 'members', 24, 0, 0)`,
      ),
    ).toMatch(/spaces_oracle_check/);
  });

  it('numbers identity rows itself and takes explicit ids, as a copy from SQLite gives them', async () => {
    const [a] = await q<{ id: string }>("INSERT INTO checkpoint_signers (key_id, rendering) VALUES ('k', 'r1') RETURNING id");
    await q("INSERT INTO checkpoint_signers (id, key_id, rendering) VALUES (100, 'k', 'r2')");
    expect(Number(a!.id)).toBe(1);
    const [inv] = await q<{ rowid: string }>(
      "INSERT INTO invites (id, space_row_id, code_hash, maker, role, tags_json, created_at) VALUES ('i1', 1, '\\x00', 'p1', 'reader', '[]', 0) RETURNING rowid",
    );
    expect(Number(inv!.rowid)).toBe(1);
  });

  it('moves every identity sequence past the ids a copy brought, so new rows never take one', async () => {
    expect(await identityColumns(client)).toEqual([
      'checkpoint_signers.id',
      'invites.rowid',
      'join_requests.rowid',
      'mirrors.id',
      'oracle_links.id',
      'posts.id',
      'recovery_notices.id',
      'spaces.id',
      'tasks.id',
      'witness_split_views.id',
    ]);
    await q("INSERT INTO checkpoint_signers (id, key_id, rendering) VALUES (200, 'k', 'copied')");
    await advanceIdentities(client);
    const [next] = await q<{ id: number }>("INSERT INTO checkpoint_signers (key_id, rendering) VALUES ('k', 'new') RETURNING id");
    expect(Number(next!.id)).toBe(201);
    const [empty] = await q<{ n: string }>("SELECT nextval(pg_get_serial_sequence('oracle_links', 'id')) AS n");
    expect(Number(empty!.n)).toBe(1);
  });

  it('is applied once when several relay processes start on a new database at the same moment', async () => {
    const url = await emptyDatabase();
    const applied = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          return await migrate(c);
        } finally {
          await c.end();
        }
      }),
    );
    expect(applied.flat()).toEqual(MIGRATIONS.map((m) => m.id));
    expect(await migrate(client)).toEqual([]);
  });
});
