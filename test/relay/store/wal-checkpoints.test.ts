/**
 * WAL checkpoints on their own thread (relay/store/wal-checkpoints.ts): the relay's connection
 * never checkpoints inside a commit; the worker copies the log into the database file; if the
 * worker cannot run, or is stopped, the relay's connection checkpoints again.
 */
import { sqliteRaw } from '../../../relay/store/sqlite/connection.js';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../../relay/store/sqlite/open.js';
import { openStore, type Store } from '../../../relay/store/index.js';
import { CHECKPOINT_EVERY_MS, startWalCheckpoints } from '../../../relay/store/sqlite/wal-checkpoints.js';
import { tempDataDir } from '../../helpers/relay.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

const autocheckpoint = (store: Store) => sqliteRaw(store.db).pragma('wal_autocheckpoint', { simple: true }) as number;

async function until(test: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return test();
}

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

// SQLite's WAL and its checkpoints: not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`WAL checkpoints${ON_POSTGRES_SKIP}`, () => {
  it('leave the relay connection: its commits never checkpoint, and the worker copies the log into the database file', async () => {
    const dir = tempDataDir();
    store = await openStore(dir);
    expect(autocheckpoint(store)).toBe(0);
    const file = join(dir, DATABASE_FILE);
    const before = statSync(file).size;
    // 2 MiB in 64 commits, in a scratch table: pages that reach the file only by a checkpoint.
    await store.db.exec('CREATE TABLE scratch (b BLOB NOT NULL)');
    const insert = store.db.prepare('INSERT INTO scratch (b) VALUES (randomblob(32768))');
    for (let i = 0; i < 64; i++) await insert.run();
    expect(await until(() => statSync(file).size >= before + 2 * 1024 * 1024)).toBe(true);
    // The file reaching 2 MiB says the worker copied most of the burst, not all of it: a
    // checkpoint may still have the last frames to copy. The log starts over only at a write
    // that finds all of it copied, so wait until the file stops growing (four of the worker's
    // intervals with no change) before the next burst.
    let last = -1;
    let still = 0;
    expect(
      await until(() => {
        const size = statSync(file).size;
        still = size === last ? still + 1 : 0;
        last = size;
        return still >= (4 * CHECKPOINT_EVERY_MS) / 10;
      }),
    ).toBe(true);
    // The log starts over once copied: later commits do not grow it past what one burst needs.
    const wal = `${file}-wal`;
    for (let i = 0; i < 64; i++) await insert.run();
    await until(() => statSync(file).size >= before + 4 * 1024 * 1024);
    expect(statSync(wal).size).toBeLessThan(6 * 1024 * 1024);
  });

  it('come back to the relay connection, with the reason reported, when the worker cannot open the database', async () => {
    store = await openStore(tempDataDir());
    const reports: string[] = [];
    sqliteRaw(store.db).pragma('wal_autocheckpoint = 0');
    startWalCheckpoints(sqliteRaw(store.db), join(tempDataDir(), 'no-such.sqlite'), { report: (m) => reports.push(m) });
    expect(await until(() => autocheckpoint(store!) === 1000)).toBe(true);
    expect(reports.join('\n')).toMatch(/the worker failed/);
  });

  it('come back to the relay connection when stopped', async () => {
    store = await openStore(tempDataDir());
    const other = startWalCheckpoints(sqliteRaw(store.db), store.db.name);
    expect(autocheckpoint(store)).toBe(0);
    const stopped = other.stop();
    expect(autocheckpoint(store)).toBe(1000);
    await stopped;
  });

  // A process that exits while the worker is still inside better-sqlite3 aborts (FATAL ERROR
  // napi_get_last_error_info), so stopping must wait until the worker has left: once stop()
  // resolves, the worker's thread is gone from the process. (Its file descriptor may outlive it:
  // SQLite keeps a closed connection's descriptor while another connection of the process holds
  // locks on the file, since closing it would drop them.)
  it.skipIf(!existsSync('/proc/self/status'))('are done when stopped: the worker has left the process when stop() resolves', async () => {
    const threads = (): number => Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
    store = await openStore(tempDataDir(), { walCheckpoints: false });
    const file = store.db.name;
    const openOnFile = (): number =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === file;
        } catch {
          return false; // closed while listed
        }
      }).length;
    const before = threads();
    const own = openOnFile(); // the relay's connection
    for (let round = 0; round < 3; round++) {
      const worker = startWalCheckpoints(sqliteRaw(store.db), file);
      if (round > 0) expect(await until(() => openOnFile() > own)).toBe(true); // round 0: stopped while it starts
      await worker.stop();
      expect(threads()).toBe(before);
    }
  });

  it('are not started for a store opened for a moment (walCheckpoints: false): SQLite checkpoints on the connection', async () => {
    store = await openStore(tempDataDir(), { walCheckpoints: false });
    expect(autocheckpoint(store)).toBe(1000);
  });
});
