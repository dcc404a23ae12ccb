/**
 * `svc-relay backup <file>`: a consistent copy of a serving relay's data, made from another
 * process while the relay keeps answering (relay/store/backup-file.ts: SQLite's online backup
 * API over one snapshot of the write-ahead log), with the service key files of the data
 * directory in the same file. The copy is written beside the target as `<file>.partial`,
 * checked (`PRAGMA quick_check`), then renamed, so `<file>` is only ever a whole backup.
 */
import { existsSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CERTIFICATE_FILE, CHALLENGE_SECRET_FILE, ROOT_SEED_FILE, SIGNER_SEED_FILE } from '../service-keys.js';
import { DATABASE_FILE } from '../store/sqlite/open.js';
import { copyDatabase, sealBackup } from '../store/sqlite/backup-file.js';
import { CommandError } from './command-error.js';
import { terminalProgress } from './progress.js';

/** The key files a data directory holds (relay/service-keys.ts); the root and signer seeds must be there. */
export const KEY_FILES = [ROOT_SEED_FILE, SIGNER_SEED_FILE, CERTIFICATE_FILE, CHALLENGE_SECRET_FILE] as const;
const REQUIRED_KEY_FILES = [ROOT_SEED_FILE, SIGNER_SEED_FILE];

export const BACKUP_FORMAT = 'svc-relay-backup';

export interface BackupOptions {
  dataDir: string;
  target: string;
  now: () => number;
}

export interface BackupResult {
  file: string;
  pages: number;
  keyFiles: string[];
}

export async function backup(opts: BackupOptions): Promise<BackupResult> {
  const dataDir = resolve(opts.dataDir);
  const source = join(dataDir, DATABASE_FILE);
  if (!existsSync(source)) {
    throw new CommandError(`no relay database at ${source}; pass --data DIR, the data directory the relay serves from`, 2);
  }
  const target = resolve(opts.target);
  if (existsSync(target)) throw new CommandError(`${target} already exists; name a new file (a backup never overwrites one)`, 2);
  if (!existsSync(dirname(target)) || !statSync(dirname(target)).isDirectory()) {
    throw new CommandError(`${dirname(target)} is not a directory; create it first or name a file in an existing directory`, 2);
  }
  const keyFiles: { name: string; content: Uint8Array }[] = [];
  for (const name of KEY_FILES) {
    const path = join(dataDir, name);
    if (!existsSync(path)) {
      if (REQUIRED_KEY_FILES.includes(name)) {
        throw new CommandError(`${dataDir} has no ${name}: a backup without the service keys could not sign for the restored relay; back up the data directory the relay runs on`, 2);
      }
      continue;
    }
    keyFiles.push({ name, content: new Uint8Array(readFileSync(path)) });
  }

  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  const progress = terminalProgress(`backing up ${basename(source)}`, 'pages');
  try {
    const pages = await copyDatabase(source, partial, (p) => progress.update(p.totalPages - p.remainingPages, p.totalPages));
    progress.finish();
    sealBackup(
      partial,
      { format: BACKUP_FORMAT, version: 1, created_at: new Date(opts.now()).toISOString(), data_dir: dataDir, pages, files: keyFiles.map((f) => f.name) },
      keyFiles,
    );
    renameSync(partial, target);
    return { file: target, pages, keyFiles: keyFiles.map((f) => f.name) };
  } catch (e) {
    progress.finish();
    rmSync(partial, { force: true });
    if (e instanceof CommandError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    const hint = code === 'ENOSPC' ? ' (the disk is full: free space or write the backup to another disk)' : '';
    throw new CommandError(`the backup failed, nothing was written to ${target}: ${(e as Error).message}${hint}`, 1);
  }
}
