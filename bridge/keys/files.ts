/**
 * Small file-system steps the key directory is built from: a private directory, a file made
 * once (link(2) refuses an existing name, so of two racing writers exactly one wins), and a
 * file replaced whole (write a temporary file, fsync, rename(2) over the old one, so a reader
 * sees the old bytes or the new bytes, never a mix or a half).
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BridgeError } from '../../tools/errors.js';

/** POSIX permission bits are meaningless on Windows; the checks are skipped there. */
export const POSIX = process.platform !== 'win32';

/** Make `dir` (and parents) if missing and hold it to mode 0700. */
export function privateDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (POSIX && (statSync(dir).mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
  } catch (e) {
    throw new BridgeError(
      'KEY_FILE',
      `cannot make the private directory ${dir}: ${(e as Error).message}`,
      'Check that the directory (SVC_HOME) is yours and writable, or point SVC_HOME elsewhere.',
      undefined,
      { cause: e },
    );
  }
}

/** Fsync a directory so a link or rename inside it survives a crash (no-op where unsupported). */
function syncDirectory(dir: string): void {
  if (!POSIX) return;
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the data itself is already synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Write `bytes` to a fresh temporary file beside `target` (mode 0600, fsynced); return its path. */
function writeTemporary(target: string, bytes: Uint8Array | string): string {
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    // The umask can only remove bits; set the mode exactly anyway.
    if (POSIX) fchmodSync(fd, 0o600);
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let at = 0;
    while (at < data.length) at += writeSync(fd, data, at, data.length - at);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  return tmp;
}

/**
 * Create `target` with `bytes` (mode 0600) unless it exists. Returns true when this call made
 * it, false when the name was already taken (by a racing process too): the caller then reads
 * what is there. The file appears complete or not at all.
 */
export function createOnce(target: string, bytes: Uint8Array | string): boolean {
  const tmp = writeTemporary(target, bytes);
  try {
    linkSync(tmp, target);
    syncDirectory(dirname(target));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(tmp);
  }
}

/** Replace `target` whole with `bytes` (mode 0600): readers see the old file or the new one. */
export function replaceWhole(target: string, bytes: Uint8Array | string): void {
  const tmp = writeTemporary(target, bytes);
  try {
    renameSync(tmp, target);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
  syncDirectory(dirname(target));
}

/** Refuse a secret file that others can read or write (like ssh does). */
export function checkPrivateFile(path: string): void {
  if (!POSIX) return;
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new BridgeError(
      'KEY_FILE',
      `${path} has mode ${mode.toString(8).padStart(4, '0')}: others could read the KEY`,
      `Run: chmod 600 ${path}`,
    );
  }
}
