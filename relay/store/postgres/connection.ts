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
 * - `.under(locks)` takes the advisory locks of what the write touches (./locks.ts: the write
 *   gate shared, then its SPACES, conversations and KEYS in the global order) in the same round
 *   trip as BEGIN; `.immediate()` takes the write gate exclusive, the wide lock every other
 *   writer waits for. At READ COMMITTED each statement after a lock sees every earlier
 *   holder's commit, so a read-then-increment of a gap-free counter never issues a number
 *   twice. A lock a nested write adds must sort after every lock held (./locks.ts); one that
 *   does not is reported (thrown with SVC_LOCK_ORDER=strict, which the tests set).
 * - A transaction PostgreSQL aborts as a deadlock (40P01) or a serialization failure (40001)
 *   runs again from BEGIN, a few times, before its error is the caller's: the body is only
 *   database work, and nothing of the aborted attempt was committed or told.
 * - `atCommit(slot, item)` gathers items for one `slot.flush` run just before COMMIT.
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
import { StoreClosedError, type AtCommit, type BindParameters, type Db, type RunResult, type Statement, type Transaction, type WriteLocks } from '../database.js';
import { compareLocks, gateStatement, lockName, locksOf, lockStatement, type Lock } from './locks.js';
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
  /**
   * A lock taken out of the global order (./locks.ts): 'strict' throws (the tests), 'log'
   * reports it and takes the lock anyway (default: SVC_LOCK_ORDER, else 'log').
   */
  lockOrder?: 'strict' | 'log';
  /** Write transactions the group commit runs at once (default: half the pool, at least 1). */
  writers?: number;
}

/** A deadlock or a serialization failure: PostgreSQL rolled the attempt back; run it again. */
const RETRYABLE = new Set(['40P01', '40001']);
/** Attempts of one transaction before a deadlock or serialization failure is the caller's. */
const ATTEMPTS = 8;

/** What a transaction asks for at BEGIN: nothing, the locks of what it touches, or the wide lock. */
type Want = { kind: 'none' } | { kind: 'wide' } | { kind: 'under'; locks: WriteLocks };
const NONE: Want = { kind: 'none' };
const WIDE: Want = { kind: 'wide' };

/** The open transaction of one async context. */
interface OpenTransaction {
  readonly client: pg.PoolClient;
  active: boolean;
  /** Savepoints open inside it (names are sp1, sp2, … by depth). */
  depth: number;
  /** The write gate as held: not, shared (with the locks in `held`) or exclusive (the wide lock). */
  gate: 'none' | 'shared' | 'exclusive';
  /** The narrow locks held, by lockName, and the last in the global order. */
  held: Set<string>;
  last: Lock | undefined;
  /** Items for AtCommit slots, flushed before COMMIT. */
  atCommit: Map<AtCommit<unknown>, unknown[]>;
  /**
   * RELEASE SAVEPOINT of savepoints whose body succeeded, not sent yet: it goes in front of the
   * next statement sent as text (the next SAVEPOINT, the COMMIT), one round trip for both, or
   * alone before the next statement with parameters. Dropped when an enclosing savepoint rolls
   * back (that rolls back past them) or the transaction does.
   */
  release: string | undefined;
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
  private readonly lockOrder: 'strict' | 'log';
  readonly writers: number;
  /**
   * Messages sent to the server and answered (a multi-statement text counts once): what a
   * write costs in round trips, read by benchmarks and tests.
   */
  roundTrips = 0;
  /** Transactions run again after a deadlock or a serialization failure. */
  retries = 0;
  private closed = false;
  /** Each open connection's end, for close to wait for. */
  private readonly connections = new Set<Promise<void>>();

  constructor(url: string, options: PostgresOptions = {}) {
    this.name = redactUrl(url);
    this.log = options.log ?? ((m) => process.stderr.write(`svc-relay: postgres: ${m}\n`));
    this.lockOrder = options.lockOrder ?? (process.env.SVC_LOCK_ORDER === 'strict' ? 'strict' : 'log');
    this.writers = options.writers ?? Math.max(1, Math.floor((options.poolSize ?? 10) / 2));
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
    else {
      this.roundTrips++;
      await this.pool.query(sql);
    }
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): Transaction<A, R> {
    const run = async (want: Want, args: A): Promise<R> => {
      const open = this.context.getStore();
      return open?.active ? await this.savepoint(open, want, fn, args) : await this.topLevel(want, fn, args);
    };
    const tx = (async (...args: A) => await run(NONE, args)) as Transaction<A, R>;
    tx.immediate = async (...args: A) => await run(WIDE, args);
    tx.under = async (locks: WriteLocks, ...args: A) => await run({ kind: 'under', locks }, args);
    tx.snapshot = async (...args: A) => {
      const open = this.context.getStore();
      return open?.active ? await this.savepoint(open, NONE, fn, args) : await this.topLevel(NONE, fn, args, SNAPSHOT_BEGIN);
    };
    return tx;
  }

  /** Run `fn` outside the calling context's transaction: its statements run alone, on other connections. */
  async outside<T>(fn: () => Promise<T>): Promise<T> {
    return await this.context.exit(fn);
  }

  async lock(locks: WriteLocks): Promise<void> {
    const open = this.context.getStore();
    if (!open?.active) throw new Error('lock: only inside a transaction');
    const text = this.lockText(open, { kind: 'under', locks });
    if (text !== '') await this.onTransaction(open, text);
  }

  async atCommit<T>(slot: AtCommit<T>, item: T): Promise<void> {
    const open = this.context.getStore();
    if (!open?.active) {
      await this.transaction(async () => await slot.flush([item]))();
      return;
    }
    const items = open.atCommit.get(slot as AtCommit<unknown>);
    if (items === undefined) open.atCommit.set(slot as AtCommit<unknown>, [item]);
    else items.push(item);
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
    this.roundTrips++;
    return await this.pool.query(config);
  }

  /** One statement on the transaction's connection, remembering a failure (PostgreSQL aborted the transaction). */
  private async onTransaction(open: OpenTransaction, config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    if (open.release !== undefined) {
      const release = open.release;
      open.release = undefined;
      if (typeof config === 'string') config = `${release}; ${config}`;
      else await this.onTransaction(open, release);
    }
    this.roundTrips++;
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

  /** A top-level transaction, run again on a deadlock or serialization failure (RETRYABLE). */
  private async topLevel<A extends unknown[], R>(want: Want, fn: (...args: A) => Promise<R>, args: A, begin = 'BEGIN'): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(want, fn, args, begin);
      } catch (e) {
        if (attempt >= ATTEMPTS || !retryable(e)) throw e;
        this.retries++;
        // A little apart, so the writers a deadlock set against each other do not meet again at once.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));
      }
    }
  }

  private async attempt<A extends unknown[], R>(want: Want, fn: (...args: A) => Promise<R>, args: A, begin: string): Promise<R> {
    if (this.closed) throw new StoreClosedError();
    const client = await this.pool.connect();
    const open: OpenTransaction = {
      client,
      active: true,
      depth: 0,
      gate: 'none',
      held: new Set(),
      last: undefined,
      atCommit: new Map(),
      release: undefined,
      failed: undefined,
      committed: [],
      turn: Promise.resolve(),
    };
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
        // BEGIN and the locks in one round trip (a multi-statement text runs in order).
        const locks = this.lockText(open, want);
        this.roundTrips++;
        await this.inTurn(open, locks === '' ? begin : `${begin}; ${locks}`);
        value = await this.context.run(open, async () => {
          const v = await fn(...args);
          for (const [slot, items] of open.atCommit) {
            if (open.failed !== undefined) break;
            await slot.flush(items);
          }
          return v;
        });
        if (open.failed !== undefined) throw open.failed;
        await this.onTransaction(open, 'COMMIT');
      } catch (e) {
        await this.inTurn(open, 'ROLLBACK').catch((r: unknown) => (destroy = asError(r)));
        // A body that turned the deadlock into an error of its own is still the deadlock's victim.
        throw retryable(open.failed) ? open.failed : e;
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

  /**
   * The statements taking what `want` asks for and `open` does not hold yet, in the global order
   * (empty when nothing is missing); `open` counts them held from here on, since they run next.
   */
  private lockText(open: OpenTransaction, want: Want): string {
    if (want.kind === 'none' || open.gate === 'exclusive') return '';
    if (want.kind === 'wide') {
      if (open.gate === 'shared') this.outOfOrder(open, 'the wide lock');
      open.gate = 'exclusive';
      return gateStatement(true);
    }
    const missing = locksOf(want.locks).filter((l) => !open.held.has(lockName(l)));
    const texts: string[] = [];
    if (open.gate === 'none') {
      open.gate = 'shared';
      texts.push(gateStatement(false));
    }
    for (const l of missing) {
      if (open.last !== undefined && compareLocks(l, open.last) < 0) this.outOfOrder(open, `${lockName(l)} after ${lockName(open.last)}`);
      open.held.add(lockName(l));
      if (open.last === undefined || compareLocks(l, open.last) > 0) open.last = l;
      texts.push(lockStatement(l));
    }
    return texts.join('; ');
  }

  private outOfOrder(open: OpenTransaction, what: string): void {
    const message = `write lock out of order: ${what} (held: ${[...open.held].join(', ') || 'the write gate'})`;
    if (this.lockOrder === 'strict') throw new Error(message);
    this.log(message);
  }

  private async savepoint<A extends unknown[], R>(open: OpenTransaction, want: Want, fn: (...args: A) => Promise<R>, args: A): Promise<R> {
    if (open.failed !== undefined) throw open.failed;
    // Locks a nested write adds are taken before its SAVEPOINT, in the same round trip, and held
    // to the transaction's end (a lock taken inside a savepoint rolled back would be let go).
    const locks = this.lockText(open, want);
    const name = `sp${++open.depth}`;
    const committedBefore = open.committed.length;
    const atCommitBefore = new Map([...open.atCommit].map(([slot, items]) => [slot, items.length]));
    try {
      await this.onTransaction(open, locks === '' ? `SAVEPOINT ${name}` : `${locks}; SAVEPOINT ${name}`);
      try {
        const value = await fn(...args);
        if (open.failed !== undefined) throw open.failed;
        open.release = open.release === undefined ? `RELEASE SAVEPOINT ${name}` : `${open.release}; RELEASE SAVEPOINT ${name}`;
        return value;
      } catch (e) {
        open.committed.length = committedBefore;
        for (const [slot, items] of open.atCommit) items.length = atCommitBefore.get(slot) ?? 0;
        open.release = undefined;
        // Back to the savepoint: the transaction is usable again, as if the body never ran.
        // If even that fails (a lost connection), the transaction stays failed and the top
        // level rolls it back. A deadlock or serialization failure inside stays the
        // transaction's failure, so the top level runs the whole of it again.
        try {
          this.roundTrips++;
          await this.inTurn(open, `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
          if (!retryable(open.failed)) open.failed = undefined;
        } catch (rollback) {
          if (!retryable(open.failed)) open.failed = rollback;
        }
        throw e;
      }
    } finally {
      open.depth--;
    }
  }
}

function retryable(e: unknown): boolean {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && RETRYABLE.has(code);
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
