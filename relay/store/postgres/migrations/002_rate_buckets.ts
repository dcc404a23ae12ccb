import type { Migration } from './types.js';

/**
 * Token buckets every relay process on this database spends (relay/store/postgres/cluster.ts,
 * relay/http/rate-limit.ts), PostgreSQL only: on SQLite one process owns the database and
 * keeps its buckets in memory. One row per bucket and key (a KEY, an address, a network,
 * "service"): the tokens left after the last spend, when that was (ms), and whether that spend
 * was granted (what the spending statement answers).
 *
 * UNLOGGED: no write-ahead log for a value that changes on every request and is worth nothing
 * after a crash (the server empties an unlogged table when it recovers, which only refills
 * every bucket), and not copied to replicas.
 */
export const migration: Migration = {
  id: 2,
  name: 'rate_buckets',
  sql: `
CREATE UNLOGGED TABLE rate_buckets (
  bucket TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  at BIGINT NOT NULL,
  granted BOOLEAN NOT NULL,
  PRIMARY KEY (bucket, key)
);
`,
};
