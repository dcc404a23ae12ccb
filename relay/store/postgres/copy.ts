/**
 * Writing a copied relay into PostgreSQL, for `svc-relay migrate` (the driver side;
 * relay/backup/migrate.ts holds the command): what the target already holds, the schema's
 * tables and columns as the catalogue says, the order foreign keys need, and rows inserted in
 * batches.
 *
 * Rows go in as multi-row INSERTs with parameters (`pg` has no COPY FROM STDIN without another
 * package): a batch is as many rows as fit in PostgreSQL's 65,535 parameters and about 8 MiB of
 * values, so a post table of large bodies does not build one huge message.
 */
import type pg from 'pg';

/** A connection to the target (a PostgresDb pool's), for code outside relay/store/. */
export type TargetClient = pg.ClientBase;

/** Rows here do not make a database "in use": the migrations record (seek_state is looked at below). */
const BOOKKEEPING = new Set(['schema_migrations']);

const MAX_PARAMETERS = 65_535;
const MAX_BATCH_ROWS = 5_000;
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/** Every table of the current schema (by name), with its columns in declared order. */
export async function schemaTables(client: pg.ClientBase): Promise<Map<string, string[]>> {
  const rows = await client.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const tables = new Map<string, string[]>();
  for (const r of rows.rows) {
    const list = tables.get(r.table_name) ?? [];
    list.push(r.column_name);
    tables.set(r.table_name, list);
  }
  return tables;
}

/** Rows counted at most per table when telling what a used database holds. */
export const IN_USE_COUNT_BOUND = 1000;

/**
 * The tables of the current schema that hold data, with their rows (up to IN_USE_COUNT_BOUND):
 * a database a relay (or anything else) has used. The schema alone, as the relay's migrations
 * leave it, holds none.
 */
export async function tablesInUse(client: pg.ClientBase): Promise<{ table: string; rows: number }[]> {
  const used: { table: string; rows: number }[] = [];
  for (const table of [...(await schemaTables(client)).keys()].sort()) {
    if (BOOKKEEPING.has(table)) continue;
    const t = client.escapeIdentifier(table);
    // seek_state's one row at watermark 0 is what the schema starts with.
    const where = table === 'seek_state' ? ' WHERE indexed_upto <> 0' : '';
    // Counted up to a bound: how much a used table holds past it does not matter here.
    const n = Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM (SELECT 1 FROM ${t}${where} LIMIT ${IN_USE_COUNT_BOUND}) s`)).rows[0]?.n ?? 0);
    if (n > 0) used.push({ table, rows: n });
  }
  return used;
}

/**
 * `tables` ordered so that every table comes after the tables its foreign keys name (the
 * catalogue's constraints; a key to a table outside the list is ignored). Ties keep name order.
 */
export async function foreignKeyOrder(client: pg.ClientBase, tables: readonly string[]): Promise<string[]> {
  const rows = await client.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.relname AS child, p.relname AS parent
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_class p ON p.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype = 'f' AND n.nspname = current_schema()`,
  );
  const wanted = new Set(tables);
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]));
  for (const r of rows.rows) {
    if (wanted.has(r.child) && wanted.has(r.parent) && r.child !== r.parent) parents.get(r.child)!.add(r.parent);
  }
  const ordered: string[] = [];
  const placed = new Set<string>();
  const pending = [...tables].sort();
  while (pending.length > 0) {
    const i = pending.findIndex((t) => [...parents.get(t)!].every((p) => placed.has(p)));
    if (i < 0) throw new Error(`foreign keys form a cycle among ${pending.join(', ')}`);
    const [t] = pending.splice(i, 1) as [string];
    ordered.push(t);
    placed.add(t);
  }
  return ordered;
}

function sizeOf(value: unknown): number {
  if (typeof value === 'string') return value.length * 3;
  if (value instanceof Uint8Array) return value.byteLength;
  return 8;
}

/**
 * Inserts rows into one table in batches. `add` queues a row (values in `columns` order) and
 * sends a batch once it is full; `flush` sends the rest. Answers rows written so far.
 */
export function batchInserter(client: pg.ClientBase, table: string, columns: readonly string[]) {
  const head = `INSERT INTO ${client.escapeIdentifier(table)} (${columns.map((c) => client.escapeIdentifier(c)).join(', ')}) VALUES `;
  const maxRows = Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(MAX_PARAMETERS / columns.length)));
  let values: unknown[] = [];
  let rows = 0;
  let bytes = 0;
  let written = 0;
  const send = async (): Promise<void> => {
    if (rows === 0) return;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      tuples.push(`(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
    }
    await client.query(head + tuples.join(', '), values);
    written += rows;
    values = [];
    rows = 0;
    bytes = 0;
  };
  return {
    async add(row: readonly unknown[]): Promise<void> {
      for (const v of row) {
        values.push(v);
        bytes += sizeOf(v);
      }
      rows++;
      if (rows >= maxRows || bytes >= MAX_BATCH_BYTES) await send();
    },
    async flush(): Promise<number> {
      await send();
      return written;
    },
  };
}

/** The primary key columns of `table`, in key order (empty when it has none). */
export async function primaryKey(client: pg.ClientBase, table: string): Promise<string[]> {
  const rows = await client.query<{ column: string }>(
    `SELECT a.attname AS column
       FROM pg_index i
       JOIN pg_class c ON c.oid = i.indrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
      WHERE i.indisprimary AND c.relname = $1 AND n.nspname = current_schema()
      ORDER BY k.ord`,
    [table],
  );
  return rows.rows.map((r) => r.column);
}

/**
 * Every row of `table` (values of `columns`, as arrays) ordered by `order` ascending with NULLs
 * first (SQLite's order), in batches of `batch`, through a cursor inside a read-only
 * transaction on `client` (one snapshot, and no table read whole into memory).
 */
export async function* orderedRows(
  client: pg.ClientBase,
  table: string,
  columns: readonly string[],
  order: readonly string[],
  batch = 2_000,
): AsyncGenerator<unknown[][]> {
  const id = (c: string) => client.escapeIdentifier(c);
  const sql = `SELECT ${columns.map(id).join(', ')} FROM ${id(table)} ORDER BY ${order.map((c) => `${id(c)} NULLS FIRST`).join(', ')}`;
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    await client.query(`DECLARE rows NO SCROLL CURSOR FOR ${sql}`);
    for (;;) {
      const rs = await client.query<unknown[]>({ text: `FETCH ${batch} FROM rows`, rowMode: 'array' });
      if (rs.rows.length === 0) break;
      yield rs.rows;
    }
  } finally {
    await client.query('COMMIT').catch(() => undefined);
  }
}
