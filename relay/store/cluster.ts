/**
 * What the relay processes sharing one database tell each other beyond its tables: a store on
 * PostgreSQL has one (relay/store/postgres/cluster.ts); on SQLite there is one process per
 * database file and `Store.cluster` is undefined.
 *
 * - Topics: short strings ("read again" wake-ups of relay/posts/notify.ts, token revocations,
 *   a SPACE whose governance changed, so the live streams following it are judged again)
 *   published after the commit that caused them and heard by every other process. Delivery is
 *   at most once; a process that may have missed some (its listening connection was lost) is
 *   told to resync, and every listener then re-reads as if woken: a spare re-read is harmless,
 *   a missed one would leave a long poll waiting for nothing.
 * - Jobs one process at a time: `runAlone` runs a background pass only when no other process
 *   runs the same job (the checkpointer signs each range once).
 * - Token buckets spent in the database (relay/http/rate-limit.ts), so a KEY's limits hold
 *   across processes as they hold in one.
 */

/** A background job that runs in one process at a time. */
export type SoloJob = 'checkpointer';

/** One spend from a shared token bucket: the same answer as BucketMap.take. */
export interface BucketSpend {
  bucket: string;
  key: string;
  /** Bucket size. */
  capacity: number;
  /** Tokens added per millisecond. */
  perMs: number;
  cost: number;
  now: number;
}

export interface Cluster {
  /** Tell every other process `topic` (gathered per turn of the event loop and sent together). */
  publish(topic: string): void;
  /** Hear the topics other processes publish; answers the function that stops listening. */
  subscribe(listener: (topic: string) => void): () => void;
  /** Hear that topics may have been missed: re-read everything a topic would have woken. */
  onResync(listener: () => void): () => void;
  /** Run `fn` unless another process runs `job` now (then answer undefined and run nothing). */
  runAlone<T>(job: SoloJob, fn: () => Promise<T>): Promise<T | undefined>;
  /** Spend from a bucket every process shares: 0 when allowed, else the seconds to wait, and the tokens left. */
  take(spend: BucketSpend): Promise<{ wait: number; remaining: number }>;
  /** Stop listening (the store closes the database after). */
  close(): Promise<void>;
}
