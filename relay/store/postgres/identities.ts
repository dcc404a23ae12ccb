/**
 * After rows are copied into the PostgreSQL schema with their ids (`svc-relay migrate` copies
 * SQLite's row ids as they are, so every reference to them stays right), each identity
 * column's sequence still stands at its start and the next insert would be given an id
 * already taken. `advanceIdentities` moves every identity sequence of the schema past the
 * largest id its column holds, so new rows are numbered after the copied ones (an empty table
 * starts at 1).
 *
 * The identity columns are found in the catalogue, not listed here, so one added by a later
 * migration is covered without a change.
 */
import type pg from 'pg';

/** The identity columns of the current schema, as "table.column". */
export async function identityColumns(client: pg.ClientBase): Promise<string[]> {
  const rows = await client.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND is_identity = 'YES'
      ORDER BY table_name, column_name`,
  );
  return rows.rows.map((r) => `${r.table_name}.${r.column_name}`);
}

/** Set every identity sequence so its next value is one past its column's largest value. */
export async function advanceIdentities(client: pg.ClientBase): Promise<void> {
  for (const column of await identityColumns(client)) {
    const [table, name] = column.split('.') as [string, string];
    const t = client.escapeIdentifier(table);
    const c = client.escapeIdentifier(name);
    // setval(seq, n, false): the next nextval answers n.
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${c}) FROM ${t}), 0) + 1, false)`,
      [table, name],
    );
  }
}
