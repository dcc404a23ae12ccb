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
  /** Stop the worker (its connection closes); the relay's connection checkpoints again. */
  stop(): void;
}

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
  const takeBack = (): void => {
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  };
  worker.on('error', (e: Error) => {
    if (stopping) return; // stopped before it had opened (a store closed at once): nothing lost
    report(`the worker failed (${e.message}); the relay's connection checkpoints again`);
    takeBack();
  });
  worker.on('exit', () => {
    if (!stopping) takeBack();
  });
  return {
    stop() {
      if (stopping) return;
      stopping = true;
      takeBack();
      worker.postMessage('stop');
    },
  };
}
