/**
 * The few pieces of SQL the stores write differently for SQLite and PostgreSQL, so a statement
 * is still written once with these in it (and the SQLite text stays what it always was):
 *
 * - `greatest` / `least`: SQLite's scalar `max(a, b)` / `min(a, b)`; PostgreSQL's GREATEST and
 *   LEAST (there `max`/`min` are aggregates only). Neither store's version of NULL handling
 *   matters here: every use compares NOT NULL columns or COALESCEs first.
 * - `param(p, type)`: PostgreSQL infers one type per parameter from where it first appears and
 *   cannot infer one from `? IS NULL` alone; the cast names it. SQLite takes the parameter as
 *   it is.
 * - `jsonEach(p, type)`: the elements of a JSON array parameter as rows of one column `value`
 *   (SQLite's json_each; PostgreSQL's json_array_elements_text, whose text is cast to the
 *   column type it is compared with).
 * - `instr`: SQLite's instr(haystack, needle), PostgreSQL's strpos (same arguments, same answer).
 * - `bool(expr)`: a comparison as 0 or 1 (SQLite answers integers; PostgreSQL booleans).
 * - `fixed(p)`: a parameter whose value must not steer SQLite's plan. SQLite built with
 *   SQLITE_ENABLE_STAT4 (better-sqlite3's build) prepares a statement again on each new binding
 *   of a parameter compared with an indexed column whenever the value could change the plan, as
 *   it can for a head read (`col = ? ORDER BY seq DESC LIMIT 1`, `max(seq) … col = ?`): a parse
 *   and a plan on every call, the posts head measured at 15.6 µs a read against 5.2 µs. Unary
 *   `+` makes the parameter an expression the planner does not look into; the index still
 *   serves the equality. PostgreSQL plans a prepared statement without it.
 */
import type { Db } from './database.js';

export type SqlType = 'text' | 'bigint';

export interface Dialect {
  readonly greatest: string;
  readonly least: string;
  /** The position of a substring (1-based, 0 when absent): SQLite's instr, PostgreSQL's strpos. */
  readonly instr: string;
  /** SQLite's `INDEXED BY name` (a plan the store insists on); nothing on PostgreSQL, which has no such hint. */
  indexedBy(index: string): string;
  param(p: string, type: SqlType): string;
  jsonEach(p: string, type?: SqlType): string;
  bool(expr: string): string;
  fixed(p: string): string;
}

const SQLITE: Dialect = {
  greatest: 'max',
  least: 'min',
  instr: 'instr',
  indexedBy: (index) => `INDEXED BY ${index}`,
  param: (p) => p,
  jsonEach: (p) => `SELECT value FROM json_each(${p})`,
  bool: (expr) => expr,
  fixed: (p) => `+${p}`,
};

const POSTGRES: Dialect = {
  greatest: 'GREATEST',
  least: 'LEAST',
  instr: 'strpos',
  indexedBy: () => '',
  param: (p, type) => `${p}::${type}`,
  jsonEach: (p, type = 'text') =>
    type === 'text'
      ? `SELECT value FROM json_array_elements_text(${p}::json)`
      : `SELECT value::${type} AS value FROM json_array_elements_text(${p}::json)`,
  bool: (expr) => `(${expr})::int`,
  fixed: (p) => p,
};

export function dialectOf(db: Pick<Db, 'dialect'>): Dialect {
  return db.dialect === 'postgres' ? POSTGRES : SQLITE;
}
