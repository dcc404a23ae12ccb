/**
 * The relay's SQLite files are readable by their owner only: the database, its write-ahead
 * log and its shared-memory index are mode 0600 from the moment they exist, inside the 0700
 * data directory, after writes too; a database left 0644 by an older version is narrowed on
 * open. The real relay, real SQLite, real appends over HTTP.
 */
import { chmodSync, existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../../relay/store/sqlite/open.js';
import { openStore } from '../../../relay/store/index.js';
import { post, newSpace } from '../../helpers/posts.js';
import { mintToken, startRelay, tempDataDir, type RunningRelay } from '../../helpers/relay.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

const mode = (path: string) => statSync(path).mode & 0o777;
const files = (dir: string) => ['', '-wal', '-shm'].map((side) => join(dir, DATABASE_FILE + side));

let previousUmask: number;
beforeAll(() => {
  // The usual umask, under which a file created without a mode is 0644.
  previousUmask = process.umask(0o022);
});
afterAll(() => {
  process.umask(previousUmask);
});

// the modes of SQLite's database files: not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`the relay data directory${ON_POSTGRES_SKIP}`, () => {
  it('holds the database, -wal and -shm at mode 0600 after start and after writes, in a 0700 directory', async () => {
    const parent = tempDataDir();
    const relay: RunningRelay = await startRelay({ dataDir: join(parent, 'data') });
    try {
      expect(mode(relay.dataDir)).toBe(0o700);
      for (const f of files(relay.dataDir)) {
        expect(existsSync(f), f).toBe(true);
        expect(mode(f), f).toBe(0o600);
      }
      const owner = await mintToken(relay.url);
      const space = await newSpace(relay, owner);
      for (let i = 0; i < 5; i++) await post(relay, owner, space, { kind: 'obs', body: `write ${i}` });
      for (const f of files(relay.dataDir)) expect(mode(f), f).toBe(0o600);
    } finally {
      await relay.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('narrows a database and its side files left at 0644 when it opens them again', async () => {
    const dir = tempDataDir();
    const store = await openStore(dir);
    await store.db.exec('CREATE TABLE IF NOT EXISTS mode_probe (x INTEGER)');
    for (const f of files(dir)) chmodSync(f, 0o644);
    const again = await openStore(dir);
    try {
      for (const f of files(dir)) expect(mode(f), f).toBe(0o600);
    } finally {
      await again.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
