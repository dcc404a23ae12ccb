import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `npm test` runs the suite with every relay on SQLite; `npm run test:postgres`
 * (SVC_TEST_STORE=postgres) runs it again on PostgreSQL, together with the files about the
 * PostgreSQL store itself (its connection, schema, SEEK, several processes, migrate), against
 * one throwaway cluster the global setup starts for the run.
 */
const onPostgres = process.env.SVC_TEST_STORE === 'postgres';
const POSTGRES_STORE_FILES = ['test/postgres/**/*.test.ts'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(onPostgres ? [] : POSTGRES_STORE_FILES)],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // test/setup/skip-reasons.ts lists every skipped test with why, which the default reporter does not.
    reporters: ['default', './test/setup/skip-reasons.ts'],
    globalSetup: ['test/setup/bridge-bundle.ts', ...(onPostgres ? ['test/setup/postgres.ts'] : [])],
  },
});
