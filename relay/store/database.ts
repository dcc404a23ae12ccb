/**
 * The one database interface the relay's stores are written against, implemented twice:
 * SQLite in one file (relay/store/sqlite/, the embedded default) and PostgreSQL shared by any
 * number of relay processes (relay/store/postgres/). Routes, policy and the append pipeline see
 * only the stores built on it (relay/store/index.ts), never which database answers.
 *
 * The shape follows the prepared-statement style the stores were first written in
 * (better-sqlite3), made asynchronous because a PostgreSQL query is a network round trip:
 *
 * - `prepare(sql)` answers a statement; `get` (first row or undefined), `all` (every row) and
 *   `run` (changes) bind positional `?` parameters, or named `@name` ones from one object.
 *   SQL is written once for both databases; where the dialects differ a store asks
 *   `db.dialect` (the PostgreSQL side translates `?` and `@name` to `$n` itself).
 * - `transaction(fn)` wraps an async function: calling the wrapper runs `fn` inside one
 *   transaction (BEGIN … COMMIT, ROLLBACK when `fn` throws); called inside another transaction
 *   it runs as a savepoint, rolled back alone when it throws. `.immediate(...)` takes the write
 *   lock at BEGIN (SQLite: BEGIN IMMEDIATE; PostgreSQL: the relay's write lock, below).
 *   Statements issued while `fn` runs, from any store and through any number of awaits, run
 *   inside that transaction: the open transaction travels with the async context
 *   (AsyncLocalStorage), so a store method called from inside a caller's transaction joins it
 *   without being handed a connection.
 * - Statements outside any transaction run on their own (autocommit) and see only committed
 *   data: never another caller's open transaction.
 *
 * Write serialisation. Counters the protocol requires gap-free (`seq`, `revision`,
 * `mailbox_seq`) are read and incremented inside the writing transaction; an immediate
 * transaction is the one writer at a time on SQLite (the database's write lock) and, on
 * PostgreSQL, holds a transaction-scoped advisory lock that every relay process takes before
 * writing, so the same reads see the same heads on both and a number is never issued twice.
 */

export type Dialect = 'sqlite' | 'postgres';

/**
 * What a statement started after its database was closed throws: the relay is stopping and a
 * request (or a background pass) still running reached the store after it. The HTTP layer
 * answers it as a busy service, to be retried, without reporting a fault.
 */
export class StoreClosedError extends Error {
  readonly code = 'STORE_CLOSED';
  constructor() {
    super('the database is closed: the relay is stopping');
  }
}

export interface RunResult {
  /** Rows inserted, updated or deleted. */
  changes: number;
}

/** Parameters: positional values, or one object for `@name` parameters. */
export type BindParameters = unknown[] | Record<string, unknown>;

/**
 * A prepared statement. `P` types the parameters (a tuple, or a record for named ones), `R`
 * a row. Values come back as the stores expect them on both databases: integers as numbers,
 * BLOB/BYTEA as Uint8Array (a Buffer), TEXT as strings, NULL as null.
 */
export interface Statement<P extends BindParameters = unknown[], R = unknown> {
  get(...params: ParamList<P>): Promise<R | undefined>;
  all(...params: ParamList<P>): Promise<R[]>;
  run(...params: ParamList<P>): Promise<RunResult>;
  /** The same statement answering each row's first column instead of the row. */
  pluck<V = unknown>(): Statement<P, V>;
}

type ParamList<P extends BindParameters> = P extends unknown[] ? P : [P];

/** A function made transactional by `Db.transaction`. */
export interface Transaction<A extends unknown[], R> {
  (...args: A): Promise<R>;
  /** The same, taking the write lock at BEGIN (a read-then-write that must not interleave). */
  immediate(...args: A): Promise<R>;
  /**
   * The same for reads that must agree with each other (a page and its head): every statement
   * sees one snapshot of the database. SQLite: a read transaction is one snapshot already;
   * PostgreSQL: REPEATABLE READ. Inside another transaction, a savepoint of it.
   */
  snapshot(...args: A): Promise<R>;
}

export interface Db {
  readonly dialect: Dialect;
  /** Where the data lives, for logs and messages: a file path, ':memory:' or a URL without its password. */
  readonly name: string;
  prepare<P extends BindParameters = unknown[], R = unknown>(sql: string): Statement<P, R>;
  /** Run one or more statements with no parameters (schema, maintenance). */
  exec(sql: string): Promise<void>;
  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): Transaction<A, R>;
  /** True while the calling async context is inside an open transaction. */
  readonly inTransaction: boolean;
  /**
   * Run `fn` once the calling context's transaction has committed (dropped if it rolls back),
   * or on the next turn when there is none: how a store tells waiters "read again" only when
   * what they will read is there for every connection to see.
   */
  afterCommit(fn: () => void): void;
  /**
   * A number that moves when a writer outside this process commits, so a cache of database
   * values needs reading again only when it has moved. SQLite: `PRAGMA data_version` (another
   * connection to the file: a restore, a tool). PostgreSQL: undefined; other relay processes
   * write all the time, so read the database instead.
   */
  externalVersion(): number | undefined;
  /** True until `close`. */
  readonly open: boolean;
  close(): Promise<void>;
}

/** Both drivers read a BLOB/BYTEA as a Buffer; the stores hand out plain Uint8Array views of it. */
export function plainBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
