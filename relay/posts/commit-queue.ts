/**
 * Group commit for posts.append. Durability allows batching several appends into one commit as
 * long as each 201 is sent only after the commit that holds its post (DESIGN.md "Storage": WAL
 * with synchronous=FULL).
 *
 * With synchronous=FULL every COMMIT waits for an fsync (about a millisecond). One commit per
 * append makes concurrent writers queue behind each other's fsyncs; here the appends that
 * arrive together share one:
 *
 * - a route prepares its append with no lock held (body, signature, object), then `enqueue`s
 *   the part that must run under the write lock;
 * - the queue drains on the next turn of the event loop (setImmediate, never a timer, so a lone
 *   append waits for nothing), one batch at a time (works arriving meanwhile wait for the next),
 *   and runs up to COMMIT_BATCH_MAX pending works in ONE immediate
 *   transaction, each inside its own savepoint: a work that throws (a refusal such as
 *   IDEMPOTENCY_CONFLICT) rolls back only itself, and the works after it see the database as if
 *   it had never been tried (a batch of one is its own transaction, no savepoint needed). Works
 *   run in arrival order and each sees the ones before it, so
 *   `seq` stays gap-free and a replay of a key first sent in the same batch answers that post;
 * - only after COMMIT returns does each promise settle: resolved with the work's value, or
 *   rejected with its own error. If the transaction fails as a whole (BEGIN, COMMIT, or SQLite
 *   rolling everything back after an I/O error), nothing was written and every promise of the
 *   batch is rejected: no answer claims a post that is not on disk.
 *
 * Where the database takes several writers at once (PostgreSQL: locks by what a write touches,
 * relay/store/postgres/locks.ts), a work names its locks and the queue keeps several lanes, a
 * SPACE's works always in the same one: each lane runs its batches one at a time as above, under
 * the locks its works name, taken at BEGIN, and lanes run side by side, so appends to different
 * SPACES do not wait for each other's batch. A work that names none takes the wide lock. SQLite
 * has one writer and one lane.
 *
 * A stateful resource (the pending list), hence a class; one per database, found with
 * `commitQueueFor(db)` like the long-poll notifier (relay/posts/notify.ts).
 */
import type { Db, Transaction, WriteLocks } from '../store/database.js';

/** Works per transaction at most; the rest wait for the next turn. */
export const COMMIT_BATCH_MAX = 64;

interface Pending {
  work: () => Promise<unknown>;
  /** What the work touches; undefined: the wide lock. */
  locks: WriteLocks | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Counters since the queue was made (diagnostics; tests read them to see what shared a commit). */
export interface CommitQueueStats {
  /** Transactions committed. */
  batches: number;
  /** Works that ran in a committed transaction (refused ones included). */
  works: number;
  /** Works in the largest committed transaction. */
  largest: number;
}

/**
 * Told of each committed batch (metrics): its works, the whole transaction's time and its
 * COMMIT's alone, which is where synchronous=FULL waits for the fsync, in seconds.
 */
export type BatchObserver = (works: number, transactionSeconds: number, commitSeconds: number) => void;

interface Lane {
  pending: Pending[];
  scheduled: boolean;
  /** A batch is between BEGIN and its promises settling; the lane's next waits for it. */
  running: boolean;
}

/** The locks of every work of a batch, or undefined (the wide lock) when one names none. */
function locksOfBatch(items: readonly Pending[]): WriteLocks | undefined {
  if (items.length === 1) return items[0]!.locks;
  const spaces: number[] = [];
  const conversations: string[] = [];
  const keys: string[] = [];
  const mailboxes: string[] = [];
  for (const { locks } of items) {
    if (locks === undefined) return undefined;
    spaces.push(...(locks.spaces ?? []));
    conversations.push(...(locks.conversations ?? []));
    keys.push(...(locks.keys ?? []));
    mailboxes.push(...(locks.mailboxes ?? []));
  }
  return { spaces, conversations, keys, mailboxes };
}

/** A lane for `locks`: by its first SPACE (else conversation, else KEY); wide works in lane 0. */
function laneIndex(locks: WriteLocks | undefined, lanes: number): number {
  if (lanes === 1 || locks === undefined) return 0;
  const first = locks.spaces?.[0] ?? locks.conversations?.[0] ?? locks.keys?.[0];
  if (first === undefined) return 0;
  if (typeof first === 'number') return first % lanes;
  let h = 0;
  for (let i = 0; i < first.length; i++) h = (h * 31 + first.charCodeAt(i)) >>> 0;
  return h % lanes;
}

export class CommitQueue {
  private readonly lanes: Lane[];
  /** SQLite: one writer, which needs no locks named. */
  private readonly oneWriter: boolean;
  readonly stats: CommitQueueStats = { batches: 0, works: 0, largest: 0 };
  /** Set to be told of each committed batch; unset, no clock is read. */
  observer: BatchObserver | undefined;
  /** When the batch's last work ended (performance.now()): COMMIT runs from there. */
  private worksEnded = 0;
  private readonly runBatch: (batch: readonly Pending[], locks: WriteLocks | undefined) => Promise<Outcome[]>;
  /** A work in a transaction of its own: a savepoint inside the batch's, or alone (`.immediate`). */
  private readonly inSavepoint: Transaction<[() => Promise<unknown>], unknown>;

  constructor(
    db: Db,
    private readonly maxBatch: number = COMMIT_BATCH_MAX,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch: a positive integer');
    this.lanes = Array.from({ length: Math.max(1, db.writers) }, () => ({ pending: [], scheduled: false, running: false }));
    this.oneWriter = db.dialect === 'sqlite';
    // A transaction function called while a transaction is open runs as a SAVEPOINT, rolled
    // back to (and released) when it throws (relay/store/database.ts).
    this.inSavepoint = db.transaction((work: () => Promise<unknown>) => work());
    const batch = db.transaction(async (items: readonly Pending[]): Promise<Outcome[]> => {
      const outcomes: Outcome[] = [];
      // One after another, in arrival order: each work sees the ones before it.
      for (const item of items) outcomes.push(await this.runOne(item));
      if (this.observer !== undefined) this.worksEnded = performance.now();
      return outcomes;
    });
    this.runBatch = (items, locks) => (locks === undefined ? batch.immediate(items) : batch.under(locks, items));
  }

  /**
   * Run `work` under the locks of what it touches (`locks`; none named: the wide lock) in the
   * next batch; settles after that batch's COMMIT. `work` must not open its own top-level
   * transaction (its statements join the batch's), and touches nothing `locks` does not name
   * (mailbox deliveries lock their KEYS themselves, before COMMIT).
   */
  enqueue<T>(work: () => Promise<T>, locks?: WriteLocks): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const lane = this.lanes[laneIndex(locks, this.lanes.length)]!;
      lane.pending.push({ work, locks, resolve: resolve as (value: unknown) => void, reject });
      this.schedule(lane);
    });
  }

  /** Works waiting for a batch (diagnostics and tests). */
  get waiting(): number {
    return this.lanes.reduce((n, lane) => n + lane.pending.length, 0);
  }

  private schedule(lane: Lane): void {
    if (lane.scheduled || lane.running) return;
    lane.scheduled = true;
    setImmediate(() => void this.drain(lane));
  }

  private async drain(lane: Lane): Promise<void> {
    lane.scheduled = false;
    const items = lane.pending.splice(0, this.maxBatch);
    if (items.length === 0) return;
    // One batch at a time: what arrives while this one waits for the write lock, its statements
    // and its COMMIT goes into the next, so concurrent appends share a commit. (Starting a
    // transaction per turn instead would, on PostgreSQL, where each statement is a round trip,
    // queue one-append transactions on the write lock, each paying its own COMMIT.)
    lane.running = true;
    try {
      await this.runAndSettle(items);
    } finally {
      lane.running = false;
      if (lane.pending.length > 0) this.schedule(lane);
    }
  }

  private async runAndSettle(items: readonly Pending[]): Promise<void> {
    if (items.length === 1) return await this.runAlone(items[0]!);
    let outcomes: Outcome[];
    const observer = this.observer;
    const started = observer === undefined ? 0 : performance.now();
    try {
      // SQLite: every batch is the one writer, whatever its works name.
      outcomes = await this.runBatch(items, this.oneWriter ? undefined : locksOfBatch(items));
    } catch (e) {
      // Nothing of this batch is on disk.
      for (const item of items) item.reject(e);
      return;
    }
    this.stats.batches++;
    this.stats.works += items.length;
    this.stats.largest = Math.max(this.stats.largest, items.length);
    if (observer !== undefined) {
      const ended = performance.now();
      observer(items.length, (ended - started) / 1000, (ended - this.worksEnded) / 1000);
    }
    items.forEach((item, i) => {
      const o = outcomes[i]!;
      if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  }

  /**
   * A batch of one needs no savepoint: a refusal rolls back the transaction, which holds nothing
   * else, and rejects the work's promise with it, as a refusal inside a batch does. Two
   * statements fewer for a lone append (two round trips on PostgreSQL).
   */
  private async runAlone(item: Pending): Promise<void> {
    const observer = this.observer;
    const started = observer === undefined ? 0 : performance.now();
    let value: unknown;
    try {
      const run = async (): Promise<unknown> => {
        const v = await item.work();
        if (observer !== undefined) this.worksEnded = performance.now();
        return v;
      };
      value = await (item.locks === undefined || this.oneWriter ? this.inSavepoint.immediate(run) : this.inSavepoint.under(item.locks, run));
    } catch (e) {
      item.reject(e);
      return;
    }
    this.stats.batches++;
    this.stats.works++;
    this.stats.largest = Math.max(this.stats.largest, 1);
    if (observer !== undefined) {
      const ended = performance.now();
      observer(1, (ended - started) / 1000, (ended - this.worksEnded) / 1000);
    }
    item.resolve(value);
  }

  /**
   * One work in its savepoint, inside the batch's transaction. Some errors (SQLITE_FULL, I/O
   * errors, a lost PostgreSQL connection) end the whole transaction; the database side then
   * refuses every later savepoint and the COMMIT, so the batch fails as a whole and every
   * promise of it is rejected.
   */
  private async runOne(item: Pending): Promise<Outcome> {
    try {
      return { ok: true, value: await this.inSavepoint(item.work) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

const byDatabase = new WeakMap<Db, CommitQueue>();

/** The commit queue of one database (the store's `db`), made on first use. */
export function commitQueueFor(db: Db): CommitQueue {
  let q = byDatabase.get(db);
  if (q === undefined) {
    q = new CommitQueue(db);
    byDatabase.set(db, q);
  }
  return q;
}
