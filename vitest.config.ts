import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * `npm test` runs the suite with every relay on SQLite; `npm run test:postgres`
 * (SVC_TEST_STORE=postgres) runs it again on PostgreSQL, together with the files about the
 * PostgreSQL store itself (its connection, schema, SEEK, several processes, migrate), against
 * one throwaway cluster the global setup starts for the run, and without the files that would
 * run the same on either store (STORE_INDEPENDENT_FILES).
 *
 * The files run in as many worker processes as there are cores, two at least, each taking the
 * next file when it is done, and a worker keeps what it loaded from one file to the next
 * (`isolate: false`): the relay, the bridge and the helpers are loaded once per worker instead of
 * once per file, a quarter of the suite's CPU time before. So a test file closes what it started
 * (relays, bridges, servers, timers) and puts back any process-wide setting it changes (umask,
 * environment); a port it lets go and needs again comes from test/helpers/ports.ts.
 *
 * Files tagged `slow` (a `@module-tag slow` line in their header: the fuzz, the package, the
 * browser, and those that mostly start relay processes) are left out by `npm run test:quick`.
 */
const onPostgres = process.env.SVC_TEST_STORE === 'postgres';
const POSTGRES_STORE_FILES = ['test/postgres/**/*.test.ts'];
/**
 * Files that run the same on either store, left out of `npm run test:postgres`: what they start
 * keeps its own SQLite data directory whatever SVC_TEST_STORE says (the installed package's
 * relay, the relay on an older Node, the documents' backup and restore), so a second run would
 * repeat them exactly, about three minutes of a two-core machine. test/suite.test.ts holds each
 * to that: none may start a relay or open a database on the test store.
 */
export const STORE_INDEPENDENT_FILES = ['test/e2e/package-install.test.ts', 'test/launch/node-version.test.ts', 'test/docs/commands.test.ts'];

/**
 * The files tagged slow start first, each group in vitest's own order (the longest first by the
 * last run's times where it has them, else the larger files first). With two workers, a long
 * file started last runs alone at the end while the other worker has nothing left: on a fresh
 * clone (CI's, with no times kept) the relay fuzz, a small file of three and a half minutes,
 * started among the last, and the SQLite run took 594 s where its files took 978 s of the two
 * workers' time.
 */
class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = new Set(sorted.filter((f) => /^\s*\*\s*@module-tag slow\b/m.test(readFileSync(f.moduleId, 'utf8'))));
    return [...sorted.filter((f) => slow.has(f)), ...sorted.filter((f) => !slow.has(f))];
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...(onPostgres ? STORE_INDEPENDENT_FILES : POSTGRES_STORE_FILES)],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // test/setup/skip-reasons.ts lists every skipped test with why, which the default reporter does not.
    reporters: ['default', './test/setup/skip-reasons.ts'],
    maxWorkers: Math.max(2, availableParallelism()),
    isolate: false,
    sequence: { sequencer: SlowFirst },
    tags: [{ name: 'slow', description: 'seconds of processes, builds or generated requests; left out by npm run test:quick' }],
    // temp-root.ts last: the folders the others make are outside the run's temporary folder.
    globalSetup: ['test/setup/bridge-bundle.ts', 'test/setup/relay-build.ts', ...(onPostgres ? ['test/setup/postgres.ts'] : []), 'test/setup/temp-root.ts'],
  },
});
