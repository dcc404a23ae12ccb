/**
 * Small secret files in the data directory: 32 random bytes as hex, mode 0600, written
 * atomically (temporary file, fsync, rename, fsync of the directory) so a crash leaves either
 * no file or the whole one.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fromHex, toHex } from '../shared/encoding.js';

/** Write `text` to `dir/name` atomically with mode 0600. */
export function writeFileAtomic(dir: string, name: string, text: string): void {
  const path = join(dir, name);
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // Some file systems refuse to open a directory for fsync; the rename is still atomic.
  }
}

/** Read `dir/name` if it exists. */
export function readTextFile(dir: string, name: string): string | undefined {
  const path = join(dir, name);
  if (!existsSync(path)) return undefined;
  return readFileSync(path, 'utf8');
}

/**
 * The 32-byte secret kept in `dir/name`, created from `random` on first use.
 * With dir ':memory:' nothing is written and every call makes a new secret.
 */
export function loadOrCreateSecret(dir: string, name: string, random: (n: number) => Uint8Array): Uint8Array {
  if (dir === ':memory:') return random(32);
  const text = readTextFile(dir, name);
  if (text !== undefined) return fromHex(text.trim(), 32, name);
  const secret = random(32);
  writeFileAtomic(dir, name, `${toHex(secret)}\n`);
  return secret;
}
