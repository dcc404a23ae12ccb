/**
 * What vitest.config.ts promises about the suite: a file it leaves out of `npm run
 * test:postgres` as running the same on either store (STORE_INDEPENDENT_FILES) starts no relay
 * and opens no database on the test store, so nothing of the PostgreSQL run is lost by leaving
 * it out. Read from each file's text: none of the helpers that put a relay or a database on the
 * test store (test/helpers/relay.ts and those built on it), no store opened directly, no
 * `--database` given to a relay it spawns.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORE_INDEPENDENT_FILES } from '../vitest.config.js';
import { REPO_ROOT } from './helpers/relay.js';

/** Names that follow SVC_TEST_STORE: a relay or a database there. */
const ON_THE_TEST_STORE = [
  'startRelay',
  'spawnRelay',
  'spawnBenchRelay',
  'startLocalhostRelay',
  'startWithWriters',
  'startFlowWorld',
  'runAgentFlows',
  'startProxiedBridge',
  'twoCallers',
  'spawnOnDatabase',
  'spawnProcesses',
  'testDatabase',
  'onPostgres',
  'openStore',
  'openPostgresStore',
  'openInProcess',
  'SVC_TEST_STORE',
  'SVC_TEST_DATABASE_URL',
  '--database',
];

/** The names of ON_THE_TEST_STORE that `text` uses, as whole words. */
function storeNamesIn(text: string): string[] {
  return ON_THE_TEST_STORE.filter((name) => new RegExp(`(^|[^\\w-])${name.replace(/-/g, '\\-')}(?![\\w-])`).test(text));
}

describe('the files run on one store only', () => {
  it('tells a file that starts a relay on the test store from one that does not', () => {
    expect(storeNamesIn("const relay = await startRelay({ dev: true });")).toEqual(['startRelay']);
    expect(storeNamesIn("spawn(bin, ['--port', '0', '--database', url])")).toEqual(['--database']);
    expect(storeNamesIn("spawn(bin, ['--port', '0', '--data', dir]); startRelayLater(); const onPostgresish = 1;")).toEqual([]);
  });

  it.each(STORE_INDEPENDENT_FILES)('%s exists and puts nothing on the test store', (file) => {
    const path = join(REPO_ROOT, file);
    expect(existsSync(path)).toBe(true);
    expect(storeNamesIn(readFileSync(path, 'utf8'))).toEqual([]);
  });
});
