/**
 * The SQLite side of relay/store/database.ts over one better-sqlite3 connection.
 *
 * better-sqlite3 is synchronous: a statement runs to its end on the calling turn, so the
 * promises here are settled before they are returned and cost a microtask, not a round trip.
 * What the asynchronous interface adds is that a transaction's body may now await between its
 * statements, and other requests' code can run in those gaps. On one connection their
 * statements would land inside the open transaction (seeing, and committing or rolling back
 * with, work that is not theirs). So:
 *
 * - one transaction at a time: a top-level transaction waits for the previous one to end (a
 *   queue of promises; SQLite has one writer anyway);
 * - a statement outside any transaction, issued while another context's transaction is open,
 *   waits until that transaction ends, then runs; with no transaction open (nearly always) it
 *   runs at once;
 * - the open transaction travels with the async context (AsyncLocalStorage), so everything its
 *   body calls, however deep, runs inside it; a nested `transaction(...)` is a SAVEPOINT.
 *
 * Some failures (SQLITE_FULL, I/O errors) make SQLite roll the whole transaction back on its
 * own; a savepoint that sees the connection out of its transaction marks the transaction broken
 * and rethrows, so the top level reports the failure instead of committing what is left.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';
import type { AtCommit, BindParameters, Db, RunResult, Statement, Transaction, WriteLocks } from '../database.js';
import { keepParametersOutOfPlan } from './parameters.js';

type Raw = Database.Database;
type RawStatement = Database.Statement<unknown[], unknown>;

/** The open transaction of one async context. */
interface OpenTransaction {
  active: boolean;
  /** Savepoints open inside it (names are sp1, sp2, … by depth). */
  depth: number;
  /** SQLite rolled the transaction back under a savepoint: nothing may commit. */
  broken: unknown;
  /** Run after COMMIT (Db.afterCommit). */
  committed: (() => void)[];
  /** Items for AtCommit slots, flushed before COMMIT. */
  atCommit: Map<AtCommit<unknown>, unknown[]>;
}

export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  /** One writer: the database's write lock. */
  readonly writers = 1;
  private readonly context = new AsyncLocalStorage<OpenTransaction>();
  /** Settles when the transaction now open ends; undefined when none is open. */
  private current: Promise<void> | undefined;
  /** The tail of the queue of top-level transactions. */
  private tail: Promise<void> = Promise.resolve();
  private readonly dataVersion: RawStatement;
  /** The last `PRAGMA data_version` read and when (performance.now()). */
  private version = { value: 0, at: Number.NEGATIVE_INFINITY };
  /** BEGIN, COMMIT, SAVEPOINT spN, … prepared once (as better-sqlite3's own transactions do). */
  private readonly control = new Map<string, RawStatement>();

  constructor(readonly raw: Raw) {
    this.dataVersion = raw.prepare('PRAGMA data_version').pluck();
  }

  get name(): string {
    return this.raw.memory ? ':memory:' : this.raw.name;
  }

  get open(): boolean {
    return this.raw.open;
  }

  get inTransaction(): boolean {
    return this.context.getStore()?.active === true;
  }

  /** A statement prepared once and kept so (./parameters.ts: its plan reads no bound value). */
  prepare<P extends BindParameters = unknown[], R = unknown>(sql: string): Statement<P, R> {
    return this.wrap(this.prepareRaw(sql)) as unknown as Statement<P, R>;
  }

  /** A driver statement prepared as `prepare` prepares one, for SQLite-only code that steps it itself (an FTS5 walk). */
  prepareRaw(sql: string): RawStatement {
    return this.raw.prepare(keepParametersOutOfPlan(sql));
  }

  async exec(sql: string): Promise<void> {
    await this.turn();
    this.raw.exec(sql);
  }

  /**
   * Run synchronous code against the raw connection at a moment no other context's transaction
   * is open (SQLite-only code: pragmas, FTS5 walks, the backup API).
   */
  async withRaw<T>(fn: (raw: Raw) => T): Promise<T> {
    await this.turn();
    return fn(this.raw);
  }

  transaction<A extends unknown[], R>(fn: (...args: A) => Promise<R>): Transaction<A, R> {
    const run = (begin: string, args: A): Promise<R> => {
      const open = this.context.getStore();
      return open?.active ? this.savepoint(open, fn, args) : this.topLevel(begin, fn, args);
    };
    const tx = ((...args: A) => run('BEGIN', args)) as Transaction<A, R>;
    tx.immediate = (...args: A) => run('BEGIN IMMEDIATE', args);
    // What a write touches does not matter here: BEGIN IMMEDIATE makes it the one writer.
    tx.under = (_locks: WriteLocks, ...args: A) => run('BEGIN IMMEDIATE', args);
    // A read transaction in WAL mode reads one snapshot from its first statement on.
    tx.snapshot = (...args: A) => run('BEGIN', args);
    return tx;
  }

  afterCommit(fn: () => void): void {
    const open = this.context.getStore();
    if (open?.active) open.committed.push(fn);
    else setImmediate(fn);
  }

  /** Nothing to take: a transaction that writes already holds the database's one write lock. */
  async lock(_locks: WriteLocks): Promise<void> {
    if (!this.inTransaction) throw new Error('lock: only inside a transaction');
  }

  async atCommit<T>(slot: AtCommit<T>, item: T): Promise<void> {
    const open = this.context.getStore();
    if (!open?.active) {
      await this.transaction(async () => await slot.flush([item])).immediate();
      return;
    }
    const items = open.atCommit.get(slot as AtCommit<unknown>);
    if (items === undefined) open.atCommit.set(slot as AtCommit<unknown>, [item]);
    else items.push(item);
  }

  /**
   * `PRAGMA data_version`, read again at most once a millisecond: the token cache and the
   * service state ask on every request, a write several times, and a value a millisecond old is
   * what a request that began a millisecond earlier would have been told.
   */
  externalVersion(): number {
    const now = performance.now();
    if (now - this.version.at >= 1) this.version = { value: this.dataVersion.get() as number, at: now };
    return this.version.value;
  }

  async close(): Promise<void> {
    await this.tail;
    if (this.raw.open) this.raw.close();
  }

  /** Resolves when a statement outside any transaction may run. */
  private turn(): Promise<void> | undefined {
    if (this.current === undefined || this.inTransaction) return undefined;
    return this.waitIdle();
  }

  private async waitIdle(): Promise<void> {
    while (this.current !== undefined && !this.inTransaction) await this.current;
  }

  /**
   * A statement of the interface over a driver statement. better-sqlite3 answers on the calling
   * turn, so when nothing needs waiting for (no transaction open, or the caller inside the open
   * one: nearly always) the answer is a promise settled at once, made without an async function
   * (an append runs a dozen statements and more, each paying for the frame).
   */
  private wrap(stmt: RawStatement): Statement<unknown[], unknown> {
    return {
      get: (...params: unknown[]) => this.answer(() => stmt.get(...params)),
      all: (...params: unknown[]) => this.answer(() => stmt.all(...params)),
      run: (...params: unknown[]): Promise<RunResult> => this.answer(() => ({ changes: stmt.run(...params).changes })),
      pluck: <V>() => this.wrap(this.raw.prepare(stmt.source).pluck()) as unknown as Statement<unknown[], V>,
    };
  }

  /** `run` now, its answer (or its throw) as a settled promise; after the open transaction when it must wait. */
  private answer<T>(run: () => T): Promise<T> {
    if (!this.ready()) return this.waitIdle().then(run);
    try {
      return Promise.resolve(run());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A statement may run now: no transaction is open, or the caller is inside the open one. */
  private ready(): boolean {
    return this.current === undefined || this.context.getStore()?.active === true;
  }

  /** Run a transaction-control statement (no parameters), prepared on first use. */
  private command(sql: string): void {
    let stmt = this.control.get(sql);
    if (stmt === undefined) {
      stmt = this.raw.prepare(sql);
      this.control.set(sql, stmt);
    }
    stmt.run();
  }

  private async topLevel<A extends unknown[], R>(begin: string, fn: (...args: A) => Promise<R>, args: A): Promise<R> {
    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    const before = this.tail;
    this.tail = ended;
    await before;
    this.current = ended;
    const open: OpenTransaction = { active: true, depth: 0, broken: undefined, committed: [], atCommit: new Map() };
    try {
      this.command(begin);
      let value: R;
      try {
        value = await this.context.run(open, async () => {
          const v = await fn(...args);
          for (const [slot, items] of open.atCommit) await slot.flush(items);
          return v;
        });
        if (open.broken !== undefined) throw open.broken;
      } catch (e) {
        if (this.raw.inTransaction) this.command('ROLLBACK');
        throw e;
      }
      try {
        this.command('COMMIT');
      } catch (e) {
        if (this.raw.inTransaction) this.command('ROLLBACK');
        throw e;
      }
      if (open.committed.length > 0) {
        const after = open.committed;
        setImmediate(() => {
          for (const fn of after) fn();
        });
      }
      return value;
    } finally {
      open.active = false;
      this.current = undefined;
      release();
    }
  }

  private async savepoint<A extends unknown[], R>(open: OpenTransaction, fn: (...args: A) => Promise<R>, args: A): Promise<R> {
    if (open.broken !== undefined) throw open.broken;
    const name = `sp${++open.depth}`;
    const atCommitBefore = open.atCommit.size === 0 ? undefined : new Map([...open.atCommit].map(([slot, items]) => [slot, items.length]));
    this.command(`SAVEPOINT ${name}`);
    try {
      const value = await fn(...args);
      this.command(`RELEASE ${name}`);
      return value;
    } catch (e) {
      for (const [slot, items] of open.atCommit) items.length = atCommitBefore?.get(slot) ?? 0;
      if (this.raw.inTransaction) {
        this.command(`ROLLBACK TO ${name}`);
        this.command(`RELEASE ${name}`);
      } else {
        open.broken ??= e;
      }
      throw e;
    } finally {
      open.depth--;
    }
  }
}

/** The driver connection under `db`, for SQLite-only code (pragmas, benchmarks, tests); throws on another database. */
export function sqliteRaw(db: Db): Raw {
  if (!(db instanceof SqliteDb)) throw new Error(`${db.name}: this needs the SQLite store`);
  return db.raw;
}
