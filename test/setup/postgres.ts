/**
 * vitest global setup: one throwaway PostgreSQL cluster for the whole run (test/helpers/
 * postgres.ts), unless SVC_TEST_DATABASE_URL already names one. The workers inherit its URL.
 * When it cannot be had, the PostgreSQL tests (and only they) fail with the reason under CI,
 * or are skipped with it said here once, loudly, elsewhere. Write locks taken out of order
 * throw (SVC_LOCK_ORDER=strict).
 */
import { POSTGRES_ERROR_ENV, POSTGRES_SKIP_ENV, testPostgres } from '../helpers/postgres.js';

export default function setup(): () => void {
  // Every write on PostgreSQL in this run, in process or in a relay process it starts, throws on
  // a lock taken out of the global order (relay/store/postgres/locks.ts) instead of logging it.
  process.env.SVC_LOCK_ORDER ??= 'strict';
  try {
    const cluster = testPostgres();
    if (cluster.skipReason !== undefined) {
      process.env[POSTGRES_SKIP_ENV] = cluster.skipReason;
      process.stderr.write(`\n*** ${cluster.skipReason} ***\n\n`);
    }
    return () => cluster.stop();
  } catch (e) {
    process.env[POSTGRES_ERROR_ENV] = (e as Error).message;
    return () => undefined;
  }
}
