/**
 * The Cluster (relay/store/cluster.ts) of the relay processes on one PostgreSQL database:
 * topics over LISTEN/NOTIFY (./wakeups.ts), jobs one process at a time under a session
 * advisory lock, token buckets in the `rate_buckets` table.
 */
import type pg from 'pg';
import type { BucketSpend, Cluster, SoloJob } from '../cluster.js';
import type { PostgresDb } from './connection.js';
import { CHECKPOINTER_LOCK } from './locks.js';
import { PostgresWakeups } from './wakeups.js';

const SOLO_LOCKS: Record<SoloJob, bigint> = { checkpointer: CHECKPOINTER_LOCK };

/**
 * Run `fn` while holding the session advisory lock `key` on one pooled connection, or answer
 * undefined at once when another session holds it. The lock is the connection's: a process
 * that dies mid-pass loses its connection and with it the lock, so the next pass elsewhere
 * takes over.
 */
export async function runAlone<T>(pool: pg.Pool, key: bigint, fn: () => Promise<T>, log: (m: string) => void): Promise<T | undefined> {
  const client = await pool.connect();
  const onError = (e: Error): void => log(`the connection holding a job's lock failed: ${e.message}`);
  client.on('error', onError);
  let broken: Error | undefined;
  try {
    const got = Boolean((await client.query<{ got: number }>('SELECT pg_try_advisory_lock($1) AS got', [key.toString()])).rows[0]?.got);
    if (!got) return undefined;
    try {
      return await fn();
    } finally {
      // A connection that cannot unlock is destroyed, which ends its session and its lock.
      await client.query('SELECT pg_advisory_unlock($1)', [key.toString()]).catch((e: unknown) => (broken = e as Error));
    }
  } catch (e) {
    broken ??= e as Error;
    throw e;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

/**
 * One token bucket spent in one statement: refilled for the time since it was last touched,
 * then charged `cost` when it holds that much. A row is made full on first use. Concurrent
 * spends of one row take turns on its row lock, so every process sees every spend. The table
 * is UNLOGGED (./migrations/002_rate_buckets.ts): buckets are not worth a disk write, and a
 * crash of the server only refills them.
 */
const SPEND = `
INSERT INTO rate_buckets AS b (bucket, key, tokens, at, granted)
VALUES (@bucket, @key,
        CASE WHEN @capacity::float8 >= @cost::float8 THEN @capacity::float8 - @cost::float8 ELSE @capacity::float8 END,
        @now::bigint, @capacity::float8 >= @cost::float8)
ON CONFLICT (bucket, key) DO UPDATE SET
  tokens = LEAST(@capacity::float8, b.tokens + GREATEST(0, @now::bigint - b.at) * @perMs::float8)
         - CASE WHEN LEAST(@capacity::float8, b.tokens + GREATEST(0, @now::bigint - b.at) * @perMs::float8) >= @cost::float8
                THEN @cost::float8 ELSE 0 END,
  at = GREATEST(b.at, @now::bigint),
  granted = LEAST(@capacity::float8, b.tokens + GREATEST(0, @now::bigint - b.at) * @perMs::float8) >= @cost::float8
RETURNING tokens, granted`;

/** Rows untouched for this long are full again whatever their rate, and are swept. */
const SWEEP_EVERY_MS = 10 * 60_000;

export async function startPostgresCluster(
  db: PostgresDb,
  url: string,
  options: { log: (m: string) => void; applicationName?: string | undefined },
): Promise<Cluster> {
  const { log } = options;
  const wakeups = new PostgresWakeups({ pool: db.pool, url, log, applicationName: options.applicationName });
  await wakeups.start();
  const spend = db.prepare<Record<string, unknown>, { tokens: number; granted: boolean }>(SPEND);
  // A spend outside any transaction runs alone, on a pooled connection. Inside a transaction (a
  // notice limit spent while an append delivers) it runs on the transaction's own connection, in
  // a savepoint, so its bucket row stays locked until COMMIT: every wait on that row is then one
  // PostgreSQL sees, and a cycle of them is a deadlock it breaks (the transaction runs again). A
  // spend sent on a second connection from inside a transaction could wait for a row this
  // transaction, or one waiting on this transaction's locks, holds: a wait PostgreSQL cannot see,
  // which held the transaction open until its idle-in-transaction limit. Writers delivering to
  // one KEY already take turns on its mailbox's lock, so the row adds little waiting. A spend
  // for a write that then rolls back is rolled back with it.
  const spendTx = db.transaction(async (values: Record<string, unknown>) => await spend.get(values));
  let lastSweep = 0;
  /** The sweep under way, which closing waits for: the pool it uses ends after the cluster. */
  let sweeping: Promise<void> | undefined;
  let closing = false;
  /** The longest refill seen per bucket (ms from empty to full), for the sweep. */
  const refillMs = new Map<string, number>();
  const sweep = async (now: number): Promise<void> => {
    lastSweep = now;
    for (const [bucket, ms] of refillMs) {
      await db.pool.query('DELETE FROM rate_buckets WHERE bucket = $1 AND at < $2', [bucket, now - ms]);
    }
  };
  return {
    publish: (topic) => wakeups.publish(topic),
    subscribe: (listener) => wakeups.subscribe(listener),
    onResync: (listener) => wakeups.onResync(listener),
    runAlone: async (job, fn) => await runAlone(db.pool, SOLO_LOCKS[job], fn, log),
    async take(s: BucketSpend) {
      refillMs.set(s.bucket, Math.max(refillMs.get(s.bucket) ?? 0, Math.ceil(s.capacity / s.perMs)));
      const values = { bucket: s.bucket, key: s.key, capacity: s.capacity, perMs: s.perMs, cost: s.cost, now: Math.floor(s.now) };
      const row = (db.inTransaction ? await spendTx(values) : await spend.get(values))!;
      if (s.now - lastSweep > SWEEP_EVERY_MS && !closing) {
        sweeping = sweep(s.now).catch((e: unknown) => log(`sweeping rate buckets failed: ${(e as Error).message}`));
      }
      if (row.granted) return { wait: 0, remaining: Math.floor(row.tokens) };
      return { wait: Math.max(1, Math.ceil((s.cost - row.tokens) / s.perMs / 1000)), remaining: Math.floor(row.tokens) };
    },
    async close() {
      closing = true;
      await sweeping;
      await wakeups.stop();
    },
  };
}
