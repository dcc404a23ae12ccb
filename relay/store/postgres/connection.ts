/**
 * The PostgreSQL side of relay/store/database.ts over a `pg` pool, with the SQLite side's
 * semantics (relay/store/sqlite/connection.ts):
 *
 * - SQL arrives with `?` or `@name` parameters and is translated to `$n` once per statement
 *   (./sql.ts), which is then a named prepared statement on each connection (below).
 * - A statement outside any transaction runs on any pooled connection in autocommit, so it sees
 *   only committed data, never another caller's open transaction.
 * - `transaction(fn)` checks out one connection for the whole of `fn` and carries it through
 *   the async context (AsyncLocalStorage): every statement `fn` issues, through any number of
 *   awaits and stores, runs on that connection. A nested `transaction(...)` is a SAVEPOINT.
 * - `.immediate()` takes the relay's write lock (`pg_advisory_xact_lock`) right after BEGIN:
 *   writers in every relay process on this database take turns as SQLite's single writer
 *   does, and, at READ COMMITTED, each statement after the lock sees every earlier writer's
 *   commit, so a read-then-increment of a gap-free counter never issues a number twice.
 * - `afterCommit(fn)` runs `fn` on the turn after COMMIT (never after a rollback, nor for a
 *   savepoint rolled back), when every connection can read what the transaction wrote.
 *
 * Where PostgreSQL differs from SQLite: a failed statement aborts the whole (sub)transaction,
 * and until a rollback every later statement fails. A savepoint whose body throws rolls back
 * to itself, which makes the outer transaction usable again, exactly as on SQLite. A body that
 * catches a failed statement and goes on cannot commit what it did after it: the transaction
 * (or savepoint) then throws that first failure rather than commit (PostgreSQL would answer
 * COMMIT of an aborted transaction with a silent ROLLBACK).
 *
 * Values: int8 and numeric come back as numbers (every integer the relay stores, milliseconds,
 * positions and counts, is far below 2^53; COUNT and SUM answer int8 and numeric), booleans as
 * 1 or 0 as SQLite answers them, bytea as a Buffer, NULL as null. The type parsers are this pool's own, never pg's global ones.
 *
 * A lost connection rejects the statements on it and never crashes the process: the pool's
 * and every checked-out client's 'error' events are handled and logged.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { StoreClosedError, type BindParameters, type Db, type RunResult, type Statement, type Transaction } from '../database.js';
import { WRITE_LOCK } from './locks.js';
import { bindValues, translateSql, type TranslatedSql } from './sql.js';

export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How long to wait for a connection before a statement fails, in ms (default 10 s). */
  connectTimeoutMs?: number;
  /** Shown in pg_stat_activity (default 'svc-relay'). */
  applicationName?: string;
  /**
   * How long the server lets a connection sit idle inside a transaction before it ends the
   * session, in ms (default 60 s; 0: never). A relay process that stops answering (a network
   * partition, a process frozen mid-transaction) would otherwise hold the write lock, and every
   * writer of every process behind it, until TCP gives up, hours later.
   */
  idleInTransactionTimeoutMs?: number;
  /** Where connection trouble is reported (default: a line on stderr). */
  log?: (message: string) => void;
}

/** The open transaction of one async context. */
interface OpenTransaction {
  readonly client: pg.PoolClient;
  active: boolean;
  /** Savepoints open inside it (names are sp1, sp2, … by depth). */
  depth: number;
  /** True once the write lock is held (until the transaction ends). */
  locked: boolean;
  /** The first statement failure (or lost connection) PostgreSQL has not yet been rolled back past. */
  failed: unknown;
  /** Run after COMMIT (Db.afterCommit); a savepoint rolled back drops the ones added inside it. */
  committed: (() => void)[];
  /**
   * The statement before the next one on this connection settles. A connection runs one
   * statement at a time; code in a transaction may still start several at once (Promise.all
   * over a list), and pg's own queue for that is deprecated, so they take turns here.
   */
  turn: Promise<unknown>;
}

/**
 * Statements the relay prepares are few and fixed (each store prepares its own once), so each
 * distinct SQL text is translated once and becomes a named prepared statement: every pooled
 * connection parses it on first use and afterwards only binds and executes it, which answers
 * near twice as many small queries a second here as parsing each time. Past this many distinct
 * texts (SQL built per call) statements are translated per call and left unnamed, so neither
 * this map nor the server's per-connection statements grow without bound.
 */
const NAMED_STATEMENTS_LIMIT = 1000;

interface Prepared extends TranslatedSql {
  /** The prepared statement's name on every connection, or undefined to parse on each call. */
  readonly name: string | undefined;
}

/**
 * int8 (20) and numeric (1700) as JavaScript numbers; boolean (16) as 1 or 0, what SQLite
 * answers for a comparison or EXISTS, so a store reading such a column compares it the same
 * way on both databases.
 */
function relayTypes(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, 'text', Number);
  types.setTypeParser(1700, 'text', Number);
  types.setTypeParser(16, 'text', (v: string) => (v === 't' ? 1 : 0));
  return types;
}

/** The URL with its password replaced, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'postgres (unparsable URL)';
  }
}

/** Reads that must agree with each other: one snapshot for the whole transaction. */
const SNAPSHOT_BEGIN = 'BEGIN ISOLATION LEVEL REPEATABLE READ';

export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  readonly name: string;
  readonly pool: pg.Pool;
  private readonly context = new AsyncLocalStorage<OpenTransaction>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly log: (message: string) => void;
  private closed = false;
  /** Each open connection's end, for close to wait for. */
  private readonly connections = new Set<Promise<void>>();

  constructor(url: string, options: PostgresOptions = {}) {
    this.name = redactUrl(url);
    this.log = options.log ?? ((m) => process.stderr.write(`svc-relay: postgres: ${m}\n`));
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      application_name: options.applicationName ?? 'svc-relay',
      idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 60_000,
      // TCP keepalives notice a server (or the path to it) that vanished without closing.
      keepAlive: true,
      types: relayTypes(),
    });
    // An idle connection that breaks (server restart, network) is dropped by the pool; the next
    // statement opens a new one. Without a listener the event would end the process.
    // Once closed, a connection still on its way out (see close) failing is no news.
    this.pool.on('error', (e) => {
      if (!this.closed) this.log(`an idle connection failed and was dropped: ${e.message}`);
    });
    this.pool.on('connect', (client) => {
      const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
      this.connections.add(ended);
      void ended.then(() => this.connections.delete(ended));
    });
  }

  get open(): boolean {
    return !this.closed;
  }

  get inTransaction(): boolean {
    return this.context.getStore()?.active === true;
  }

  prepare<P extends BindParameters = unknown[], R = unknown>(sql: string): Statement<P, R> {
    return this.statement(this.translate(sql), false) as unknown as Statement<P, R>;
  }

  async exec(sql: string): Promise<void> {
    // No parameters: the simple query protocol, which takes several statements at once.
    const open = this.context.getStore();
    if (open?.active) await this.onTransaction(open, sql);
    else if (this.closed) throw new StoreClosedError();
    else await this.pool.query(sql);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): Transaction<A, R> {
    const run = async (immediate: boolean, args: A): Promise<R> => {
      const open = this.context.getStore();
      return open?.active ? await this.savepoint(open, immediate, fn, args) : await this.topLevel(immediate, fn, args);
    };
    const tx = (async (...args: A) => await run(false, args)) as Transaction<A, R>;
    tx.immediate = async (...args: A) => await run(true, args);
    tx.snapshot = async (...args: A) => {
      const open = this.context.getStore();
      return open?.active ? await this.savepoint(open, false, fn, args) : await this.topLevel(false, fn, args, SNAPSHOT_BEGIN);
    };
    return tx;
  }

  /** None: other relay processes commit all the time; callers read the database instead. */
  externalVersion(): undefined {
    return undefined;
  }

  afterCommit(fn: () => void): void {
    const open = this.context.getStore();
    if (open?.active) open.committed.push(fn);
    else setImmediate(() => this.runAfterCommit([fn]));
  }

  /**
   * End the pool: waits for checked-out connections (open transactions) to be given back, then
   * for every connection to have ended. The pool's own promise settles once it has asked its
   * idle connections to end, before the server has seen them go; whoever drops or restores the
   * database next would otherwise find them still there.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
    await Promise.all(this.connections);
  }

  private translate(sql: string): Prepared {
    let p = this.prepared.get(sql);
    if (p === undefined) {
      if (this.prepared.size >= NAMED_STATEMENTS_LIMIT) return { ...translateSql(sql), name: undefined };
      p = { ...translateSql(sql), name: `svc_${this.prepared.size + 1}` };
      this.prepared.set(sql, p);
    }
    return p;
  }

  private statement(sql: Prepared, pluck: boolean): Statement<unknown[], unknown> {
    const self = this;
    const rows = async (params: unknown[]): Promise<pg.QueryResult> => await self.query(sql, bindValues(sql, params), pluck);
    return {
      async get(...params: unknown[]) {
        const rs = await rows(params);
        return pluck ? (rs.rows[0] as unknown[] | undefined)?.[0] : rs.rows[0];
      },
      async all(...params: unknown[]) {
        const rs = await rows(params);
        return pluck ? rs.rows.map((r: unknown[]) => r[0]) : rs.rows;
      },
      async run(...params: unknown[]): Promise<RunResult> {
        return { changes: (await rows(params)).rowCount ?? 0 };
      },
      pluck<V>() {
        return self.statement(sql, true) as unknown as Statement<unknown[], V>;
      },
    };
  }

  private async query(sql: Prepared, values: unknown[], pluck: boolean): Promise<pg.QueryResult> {
    const config: pg.QueryConfig & { rowMode?: 'array' } = { text: sql.text, values };
    if (sql.name !== undefined) config.name = sql.name;
    if (pluck) config.rowMode = 'array';
    const open = this.context.getStore();
    if (open?.active) return await this.onTransaction(open, config);
    if (this.closed) throw new StoreClosedError();
    return await this.pool.query(config);
  }

  /** One statement on the transaction's connection, remembering a failure (PostgreSQL aborted the transaction). */
  private async onTransaction(open: OpenTransaction, config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    try {
      return await this.inTurn(open, config);
    } catch (e) {
      open.failed ??= e;
      throw e;
    }
  }

  /** One statement on the transaction's connection once the statements started before it have settled. */
  private async inTurn(open: OpenTransaction, config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    const statement = open.turn.then(async () => (typeof config === 'string' ? await open.client.query(config) : await open.client.query(config)));
    open.turn = statement.catch(() => undefined);
    return await statement;
  }

  private async topLevel<A extends unknown[], R>(immediate: boolean, fn: (...args: A) => Promise<R>, args: A, begin = 'BEGIN'): Promise<R> {
    if (this.closed) throw new StoreClosedError();
    const client = await this.pool.connect();
    const open: OpenTransaction = { client, active: true, depth: 0, locked: false, failed: undefined, committed: [], turn: Promise.resolve() };
    // While checked out, the pool no longer listens for this client's errors; a connection lost
    // now must not end the process. The statements on it reject on their own.
    const onError = (e: Error): void => {
      open.failed ??= e;
      this.log(`a connection in a transaction failed: ${e.message}`);
    };
    client.on('error', onError);
    // A connection whose ROLLBACK failed may be dead or still inside the transaction: it is
    // destroyed, never given back to the pool.
    let destroy: Error | undefined;
    try {
      let value: R;
      try {
        await client.query(begin);
        if (immediate) await this.lock(open);
        value = await this.context.run(open, async () => await fn(...args));
        if (open.failed !== undefined) throw open.failed;
        await this.inTurn(open, 'COMMIT');
      } catch (e) {
        await this.inTurn(open, 'ROLLBACK').catch((r: unknown) => (destroy = asError(r)));
        throw e;
      }
      if (open.committed.length > 0) {
        const after = open.committed;
        setImmediate(() => this.runAfterCommit(after));
      }
      return value;
    } finally {
      open.active = false;
      client.off('error', onError);
      client.release(destroy);
    }
  }

  /** Each callback on its own: one that throws is logged and does not keep the others from running. */
  private runAfterCommit(fns: readonly (() => void)[]): void {
    for (const fn of fns) {
      try {
        fn();
      } catch (e) {
        this.log(`an after-commit callback failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      }
    }
  }

  private async lock(open: OpenTransaction): Promise<void> {
    await this.onTransaction(open, { text: 'SELECT pg_advisory_xact_lock($1)', values: [WRITE_LOCK] });
    open.locked = true;
  }

  private async savepoint<A extends unknown[], R>(open: OpenTransaction, immediate: boolean, fn: (...args: A) => Promise<R>, args: A): Promise<R> {
    if (open.failed !== undefined) throw open.failed;
    // An immediate savepoint inside a transaction that did not take the write lock takes it now
    // (held to the transaction's end): its reads then see every earlier writer's commit.
    if (immediate && !open.locked) await this.lock(open);
    const name = `sp${++open.depth}`;
    const committedBefore = open.committed.length;
    try {
      await this.onTransaction(open, `SAVEPOINT ${name}`);
      try {
        const value = await fn(...args);
        if (open.failed !== undefined) throw open.failed;
        await this.onTransaction(open, `RELEASE SAVEPOINT ${name}`);
        return value;
      } catch (e) {
        open.committed.length = committedBefore;
        // Back to the savepoint: the transaction is usable again, as if the body never ran.
        // If even that fails (a lost connection), the transaction stays failed and the top
        // level rolls it back.
        try {
          await this.inTurn(open, `ROLLBACK TO SAVEPOINT ${name}`);
          await this.inTurn(open, `RELEASE SAVEPOINT ${name}`);
          open.failed = undefined;
        } catch (rollback) {
          open.failed = rollback;
        }
        throw e;
      }
    } finally {
      open.depth--;
    }
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
