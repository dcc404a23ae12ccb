/**
 * `svc-relay restore <backup> --data <dir> --checkpoint-log <file>`: start a data directory from
 * a backup, and tell clients honestly what it lost (spec/1-concepts.md "Space status",
 * Versioning 6; shared/recovery.ts).
 *
 * Steps, in this order so a relay started on the directory at any moment is safe:
 * 1. check everything before writing anything: the backup reads as one (and passes SQLite's
 *    quick_check), the directory is new or empty, every line of the checkpoint log reads and
 *    its checkpoints verify under the backup's root key;
 * 2. `restore.lock` in the directory (a relay started now refuses to start until the database
 *    is in place), then the key files, then the database: copied beside its place, the backup
 *    table dropped, newer migrations applied, the read-only flag and the log's place set, renamed
 *    into place. From
 *    here a relay started on the directory serves reads and answers writes SERVICE_READ_ONLY;
 * 3. one write transaction: compare with the log (relay/backup/plan.ts), store the log's
 *    checkpoints the backup lacks, and when positions were lost a new service epoch, each cut
 *    SPACE closed and continued, one signed notice per SPACE (with its withheld form for
 *    outsiders when it names a chain they may not read: relay/recovery-forms.ts); the
 *    read-only flag cleared. A restore that lost nothing keeps the epoch and closes nothing;
 * 4. a `restore` line appended to the checkpoint log (fsync'd), which the restored relay keeps
 *    appending; `restore.lock` removed.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readServedCheckpoint, verifyCheckpoint, type ReadCheckpoint } from '../../shared/checkpoint.js';
import { fromHex, toHex } from '../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed } from '../../shared/identity.js';
import { signRecovery, type RecoveryChain } from '../../shared/recovery.js';
import { readCertificate, renderSigner } from '../../shared/service-keys.js';
import { SPACE_NAME_MAX_CHARS } from '../../shared/limits.js';
import { openCheckpointLog, readCheckpointLog, type LogEntry, type RestoreCut } from '../checkpoint-log.js';
import { newUuid, type Random } from '../ids.js';
import { signOutsidersForm } from '../recovery-forms.js';
import { writeFileAtomic } from '../secret-files.js';
import { CERTIFICATE_FILE, ROOT_SEED_FILE, loadServiceKeys } from '../service-keys.js';
import { CHECKPOINT_LOG_KEY, EPOCH_KEY, READ_ONLY_KEY } from '../service-mode.js';
import { readBackup, prepareRestoredDatabase, type BackupContents } from '../store/sqlite/backup-file.js';
import { DATABASE_FILE } from '../store/sqlite/open.js';
import { openStore, type Store } from '../store/index.js';
import type { SpaceRow } from '../store/spaces.js';
import { KEY_FILES } from './backup.js';
import { CommandError } from './command-error.js';
import { planRestore, type Cut, type StreamView } from './plan.js';

/** Present in a data directory while a restore works in it. */
export const RESTORE_LOCK_FILE = 'restore.lock';

export interface RestoreOptions {
  backup: string;
  dataDir: string;
  /** The log to compare with and keep appending; null restores without one (nothing compared). */
  checkpointLog: string | null;
  now: () => number;
  random: Random;
  /** Tests only: once the database is in place, wait here until this file is removed. */
  pauseFile?: string | undefined;
}

export interface RestoreResult {
  previousEpoch: string;
  serviceEpoch: string;
  closed: { name: string; replacedBy: string; chains: RecoveryChain[] }[];
  /** Where each cut stream now ends, as the log's `restore` line records it. */
  cuts: RestoreCut[];
  imported: number;
  missing: string[];
  checkpointLog: string | null;
  tornLogLine: boolean;
}

function readLog(path: string, rootKey: Uint8Array): { entries: LogEntry[]; torn: boolean; read: (e: LogEntry, line: number) => ReadCheckpoint | undefined } {
  let log;
  try {
    log = readCheckpointLog(path);
  } catch (e) {
    throw new CommandError(`checkpoint log ${path}: ${(e as Error).message}; pass the log the relay kept`, 2);
  }
  const verified = new Map<LogEntry, ReadCheckpoint>();
  log.entries.forEach((entry, i) => {
    if (!('checkpoint' in entry)) return;
    try {
      verified.set(entry, verifyCheckpoint(entry.checkpoint, rootKey));
    } catch (e) {
      const why = (e as { detail?: string }).detail ?? (e as Error).message;
      throw new CommandError(`checkpoint log ${path} line ${i + 1}: ${why}; this log is not of the relay this backup was made from`, 2);
    }
  });
  return { entries: log.entries, torn: log.torn, read: (e) => verified.get(e) };
}

function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/** The first free name `<name>-2`, `<name>-3`, … within the SPACE name length. */
async function continuationName(name: string, taken: (n: string) => Promise<boolean>): Promise<string> {
  for (let k = 2; ; k++) {
    const suffix = `-${k}`;
    const candidate = `${name.slice(0, SPACE_NAME_MAX_CHARS - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!(await taken(candidate))) return candidate;
  }
}

function streamView(store: Store): StreamView {
  return {
    spaceRowId: async (spaceId) => (await store.spaces.bySpaceId(spaceId))?.id,
    head: async (rowId, stream) => await store.checkpoints.streamHead(rowId, stream),
    linkAt: async (rowId, stream, position) => toHex((await store.checkpoints.links(rowId, stream, position, position))[0]!.chainHash),
    async latest(rowId, stream) {
      const c = await store.checkpoints.latest(rowId, stream);
      return c === undefined ? undefined : { last: Number(c.fields.last), id: toHex(c.id) };
    },
  };
}

async function waitWhileExists(file: string): Promise<void> {
  writeFileSync(file, `${process.pid}\n`);
  while (existsSync(file)) await new Promise((r) => setTimeout(r, 50));
}

export async function restore(opts: RestoreOptions): Promise<RestoreResult> {
  const backupFile = resolve(opts.backup);
  const dataDir = resolve(opts.dataDir);
  // 1. Check everything before writing anything.
  if (!existsSync(backupFile)) throw new CommandError(`${backupFile}: no such file; name the file svc-relay backup wrote`, 2);
  let contents: BackupContents;
  try {
    contents = readBackup(backupFile);
  } catch (e) {
    throw new CommandError(`${backupFile} is not a relay backup: ${(e as Error).message}`, 2);
  }
  if (!isEmptyDir(dataDir)) {
    throw new CommandError(`${dataDir} is not empty; restore into a new or empty directory (nothing there is overwritten)`, 2);
  }
  const rootSeed = contents.files.get(ROOT_SEED_FILE);
  if (rootSeed === undefined) throw new CommandError(`${backupFile} holds no ${ROOT_SEED_FILE}; it cannot be restored`, 2);
  const rootKey = signerFromSeed(fromHex(Buffer.from(rootSeed).toString('utf8').trim(), 32, ROOT_SEED_FILE)).publicKey;
  const logPath = opts.checkpointLog === null ? null : resolve(opts.checkpointLog);
  if (logPath !== null && !existsSync(logPath)) {
    throw new CommandError(
      `checkpoint log ${logPath} not found; pass --checkpoint-log FILE, the log the lost relay kept (on another disk), or --without-checkpoint-log to restore without comparing (clients holding newer checkpoints then see the history change, unexplained)`,
      2,
    );
  }
  const log = logPath === null ? { entries: [], torn: false, read: () => undefined } : readLog(logPath, rootKey);

  // 2. The lock, the key files, then the database with the read-only flag.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const startedAt = new Date(opts.now()).toISOString();
  writeFileAtomic(dataDir, RESTORE_LOCK_FILE, `${JSON.stringify({ pid: process.pid, backup: backupFile, started_at: startedAt })}\n`);
  try {
    for (const name of KEY_FILES) {
      const content = contents.files.get(name);
      if (content !== undefined) writeFileAtomic(dataDir, name, Buffer.from(content).toString('utf8'));
    }
    const placing = join(dataDir, `${DATABASE_FILE}.restoring`);
    copyFileSync(backupFile, placing);
    // The log's place goes in with the flag: a relay started from here on appends where the restore compared.
    const state: Record<string, string> = { [READ_ONLY_KEY]: JSON.stringify({ restore: backupFile, started_at: startedAt }) };
    if (logPath !== null) state[CHECKPOINT_LOG_KEY] = logPath;
    prepareRestoredDatabase(placing, state);
    renameSync(placing, join(dataDir, DATABASE_FILE));
    if (opts.pauseFile !== undefined) await waitWhileExists(opts.pauseFile);

    // 3. Compare and settle in one transaction.
    const certificate = contents.files.get(CERTIFICATE_FILE);
    const dev = certificate !== undefined && readCertificate(Buffer.from(JSON.parse(Buffer.from(certificate).toString('utf8')).certificate, 'base64url')).development;
    const keys = loadServiceKeys({ dataDir, dev, now: opts.now(), random: opts.random });
    const store = await openStore(dataDir, { walCheckpoints: false });
    let result: RestoreResult;
    try {
      result = await settle(store, keys, log, logPath, opts);
    } finally {
      await store.close();
    }
    // 4. Mark the log, then the directory is the relay's.
    if (logPath !== null) {
      const out = openCheckpointLog(logPath);
      try {
        out.append({ restore: { at: new Date(opts.now()).toISOString(), previous_epoch: result.previousEpoch, service_epoch: result.serviceEpoch, cuts: result.cuts } });
      } finally {
        out.close();
      }
    }
    rmSync(join(dataDir, RESTORE_LOCK_FILE), { force: true });
    return { ...result, tornLogLine: log.torn };
  } catch (e) {
    if (e instanceof CommandError) throw e;
    throw new CommandError(`the restore did not finish: ${(e as Error).message}; remove ${dataDir} and run the restore again`, 1);
  }
}

async function settle(
  store: Store,
  keys: ReturnType<typeof loadServiceKeys>,
  log: { entries: LogEntry[]; read: (e: LogEntry, line: number) => ReadCheckpoint | undefined },
  logPath: string | null,
  opts: RestoreOptions,
): Promise<RestoreResult> {
  const actor = peerIdHexOf(fromHex(keys.rootKey, 32));
  return await store.db
    .transaction(async (): Promise<RestoreResult> => {
      const plan = await planRestore(log.entries, log.read, streamView(store));
      for (const { spaceRowId, checkpoint } of plan.imports) {
        if (!await store.checkpoints.insert(spaceRowId, checkpoint, renderSigner(checkpoint.signer), Date.parse(checkpoint.fields.created_at))) {
          throw new Error(`checkpoint ${toHex(checkpoint.id)} from the log does not extend the stored ones`);
        }
      }
      const previousEpoch = await store.state.get(EPOCH_KEY) ?? newUuid(opts.random);
      const serviceEpoch = plan.cuts.length > 0 ? newUuid(opts.random) : previousEpoch;
      await store.state.set(EPOCH_KEY, serviceEpoch);
      const now = opts.now();
      const bySpace = new Map<number, Cut[]>();
      for (const cut of plan.cuts) bySpace.set(cut.spaceRowId, [...(bySpace.get(cut.spaceRowId) ?? []), cut]);
      const closed: RestoreResult['closed'] = [];
      const records: RestoreCut[] = [];
      for (const [rowId, cuts] of bySpace) {
        const space = (await store.spaces.byRowId(rowId))!;
        const chains = cuts.map((c) => c.chain).sort((a, b) => (a.stream === b.stream ? 0 : a.stream === 'posts' ? -1 : 1));
        const next = await continueOrFind(store, space, actor, serviceEpoch, now, opts.random);
        const notice = signRecovery(keys.signer, {
          space_id: space.spaceId,
          name: space.name,
          replaced_by: next.name,
          replaced_by_space_id: next.spaceId,
          previous_epoch: previousEpoch,
          service_epoch: serviceEpoch,
          chains,
          created_at: new Date(now).toISOString(),
        });
        await store.recovery.insert(rowId, notice, keys.rendering, now, signOutsidersForm(keys, notice, space, now));
        closed.push({ name: space.name, replacedBy: next.name, chains });
        for (const c of chains) records.push({ space_id: space.spaceId, stream: c.stream, survived_last: c.survived_last });
      }
      await store.state.remove(READ_ONLY_KEY);
      return {
        previousEpoch,
        serviceEpoch,
        closed,
        cuts: records,
        imported: plan.imports.length,
        missing: plan.missing,
        checkpointLog: logPath,
        tornLogLine: false,
      };
    })
    .immediate();
}

/** Close `space` and make its continuation; a SPACE an earlier restore closed keeps its continuation. */
async function continueOrFind(store: Store, space: SpaceRow, actor: string, serviceEpoch: string, now: number, random: Random): Promise<SpaceRow> {
  if (space.status === 'closed' && space.replacedBy !== null) {
    const existing = await store.spaces.byName(space.replacedBy);
    if (existing !== undefined) return existing;
  }
  const name = await continuationName(space.name, async (n) => await store.spaces.byName(n) !== undefined);
  return await store.recovery.continueSpace({ closed: space, spaceId: newUuid(random), name, actor, serviceEpoch, now });
}
