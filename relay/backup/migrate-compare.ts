/**
 * The last check of `svc-relay migrate`: every copied table read back from the target, row by
 * row and value by value, against the source snapshot. Counts and chains (./migrate-verify.ts)
 * prove the signed history; this proves the rest arrived byte for byte too: token hashes,
 * sealed ciphertext, settings, mailboxes, messages, tasks.
 *
 * Both sides are read in the same order: by the table's primary key (or every column, for a
 * table without one), ascending, NULLs first. Text compares bytewise on both (SQLite's BINARY,
 * PostgreSQL's COLLATE "C"), blobs and bytea alike, so equal tables give equal sequences.
 */
import { orderedRows, primaryKey, type TargetClient } from '../store/postgres/copy.js';
import type { SqliteSnapshot } from '../store/sqlite/snapshot.js';

export interface CompareInput {
  snapshot: SqliteSnapshot;
  /** A connection to the target, not in a transaction, reading integers as numbers (a PostgresDb pool's). */
  client: TargetClient;
  /** Per table, the columns copied (the target's). */
  plan: ReadonlyMap<string, readonly string[]>;
  /** Called with the rows compared so far. */
  progress?: (done: number) => void;
}

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  return a === b;
}

function shown(value: unknown): string {
  if (value === null) return 'NULL';
  if (value instanceof Uint8Array) return `x'${Buffer.from(value).toString('hex').slice(0, 16)}${value.length > 8 ? '…' : ''}'`;
  const text = String(value);
  return typeof value === 'string' ? JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text) : text;
}

/** Answers the first difference of each table, one line each (none when every table matches). */
export async function compareTables(input: CompareInput): Promise<string[]> {
  const problems: string[] = [];
  let done = 0;
  for (const [table, columns] of input.plan) {
    const key = await primaryKey(input.client, table);
    const order = key.length > 0 ? key : [...columns];
    const at = order.map((c) => columns.indexOf(c));
    const keyOf = (row: readonly unknown[]) => order.map((c, i) => `${c}=${shown(row[at[i]!])}`).join(', ');
    const source = input.snapshot.rows(table, columns, order);
    try {
      let found: string | undefined;
      let n = 0;
      outer: for await (const batch of orderedRows(input.client, table, columns, order)) {
        for (const row of batch) {
          n++;
          const expected = source.next();
          if (expected.done === true) {
            found = `row ${n} (${keyOf(row)}) is on the target only`;
            break outer;
          }
          const column = columns.findIndex((_, i) => !same(expected.value[i], row[i]));
          if (column >= 0) {
            const name = columns[column]!;
            found = `row ${n} (${keyOf(expected.value)}) differs in ${name}: ${shown(expected.value[column])} in the source, ${shown(row[column])} on the target`;
            break outer;
          }
        }
        done += batch.length;
        input.progress?.(done);
      }
      if (found === undefined) {
        const extra = source.next();
        if (extra.done !== true) found = `row ${n + 1} (${keyOf(extra.value)}) is missing on the target`;
      }
      if (found !== undefined) problems.push(`table ${table}: ${found}`);
    } finally {
      source.return?.();
    }
  }
  return problems;
}
