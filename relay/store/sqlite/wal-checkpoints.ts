/**
 * WAL checkpoints on a thread of their own (SQLite "checkpoint": copying committed pages from
 * the write-ahead log back into the database file; nothing to do with the signed checkpoints of
 * relay/jobs/checkpointer.ts).
 *
 * Left to SQLite, the connection whose commit makes the log pass 1,000 pages runs the checkpoint
 * inside that COMMIT: on the relay's event loop, with two fsyncs, while every request waits.
 * Measured (bench appends, 1 KiB, 16 clients into one SPACE): a commit every ~100 ms took 4 to
 * 15 ms longer, and those stalls made most of the append p99. So the relay's connection never
 * checkpoints (`wal_autocheckpoint = 0`), and a worker thread with its own connection runs a
 * PASSIVE checkpoint every CHECKPOINT_EVERY_MS while something is left to copy (a commit since
 * the last one, by `PRAGMA data_version`, or frames a reader held back): PASSIVE waits for no
 * reader and no writer, so
 * appends go on while it copies, and once the whole log is copied the next commit starts the log
 * over from its beginning, which keeps it small. Crash safety is SQLite's either way.
 *
 * If the worker cannot run (its connection fails to open, the thread dies), the relay's
 * connection takes checkpoints back (`wal_autocheckpoint = 1000`, SQLite's default) and the
 * reason is reported: the log never grows without bound.
 *
 * The worker is a few lines of plain JavaScript evaluated from a string, so it runs the same
 * from the TypeScript sources (tests, tsx) and from dist/ without a file of its own to resolve.
 *
 * Stopping waits for the worker to close its connection and leave on its own. A worker
 * terminated from outside while it is inside better-sqlite3 (loading the addon, or in a call)
 * aborts the whole process ("FATAL ERROR: Error::New napi_get_last_error_info"); a
 * `process.exit()` terminates every worker, so the store's `close()` must have let it go first.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { RawDatabase as Db } from './open.js';

/** How often the worker checkpoints. */
export const CHECKPOINT_EVERY_MS = 50;
/** SQLite's own threshold, put back when the worker is gone. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
let seen = -1;
const timer = setInterval(() => {
  // data_version moves when another connection commits: nothing new, nothing to copy.
  const version = db.pragma('data_version', { simple: true });
  if (version === seen) return;
  seen = version;
  const [done] = db.pragma('wal_checkpoint(PASSIVE)');
  if (done.checkpointed < done.log) seen = -1; // a reader held frames back: again next time
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpoints {
  /**
   * Stop the worker; the relay's connection checkpoints again at once. Resolves when the
   * worker has closed its connection and exited, so a `process.exit()` after it is safe.
   */
  stop(): Promise<void>;
}

/** How long stopping waits for the worker (a checkpoint waits at most its busy_timeout, 5 s). */
const STOP_WAIT_MS = 15_000;

/**
 * Take WAL checkpoints off `db` (the relay's connection to `file`) onto a worker thread.
 * `report` hears why the worker stopped if it stops on its own.
 */
export function startWalCheckpoints(
  db: Db,
  file: string,
  opts: { everyMs?: number; report?: (message: string) => void } = {},
): WalCheckpoints {
  const report = opts.report ?? ((m: string) => process.stderr.write(`svc-relay: WAL checkpoints: ${m}\n`));
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  db.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, file, everyMs: opts.everyMs ?? CHECKPOINT_EVERY_MS } });
  worker.unref();
  let stopping = false;
  let exited = false;
  const gone = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const takeBack = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  };
  worker.on('error', (e: Error) => {
    if (stopping) return; // stopped before it had opened (a store closed at once): nothing lost
    report(`the worker failed (${e.message}); the relay's connection checkpoints again`);
    takeBack();
  });
  worker.on('exit', () => {
    exited = true;
    if (!stopping) takeBack();
  });
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      if (stopped !== undefined) return stopped;
      stopping = true;
      takeBack();
      worker.ref(); // a process with nothing else to wait for must not end before the worker has left
      if (exited) return (stopped = Promise.resolve());
      // The message waits in the worker's queue until its script has run (the addon loaded, the
      // connection open), so the worker closes and leaves by itself, never cut off mid-call.
      worker.postMessage('stop');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          report(`the worker did not stop within ${STOP_WAIT_MS / 1000} s; it is ended`);
          void worker.terminate().then(() => resolve());
        }, STOP_WAIT_MS);
        timer.unref();
      });
      stopped = Promise.race([gone, late]).finally(() => clearTimeout(timer));
      return stopped;
    },
  };
}
