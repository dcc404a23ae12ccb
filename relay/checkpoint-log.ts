/**
 * The checkpoint log: every checkpoint the relay signs is also appended, one JSON line each and
 * fsync'd, to a file outside the database (`--checkpoint-log FILE`, default
 * `<data>/checkpoints.log`; operators put it on another disk). It is what a restore compares
 * a backup with: a checkpoint in the log past what the backup holds means clients may hold
 * receipts and checkpoints for positions the backup lost (relay/backup/restore.ts).
 *
 * Lines:
 *   {"checkpoint": <served checkpoint, objects.md §11 shape, with its signer>}
 *   {"restore": {"at","previous_epoch","service_epoch","cuts":[{"space_id","stream","survived_last"}]}}
 *
 * A checkpoint line is written before the checkpoint is stored, so every checkpoint a client
 * could have read is in the log (a crash in between leaves one the database never served,
 * which a restore treats like any other). A `restore` line marks where a restore cut streams:
 * checkpoints before it past `survived_last` no longer count for those streams. A last line
 * cut short by a crash has no newline: reading leaves it out, and opening the log to append
 * cuts it off first, so the next line never runs into it.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { ServedCheckpoint, Stream } from '../shared/checkpoint.js';

export const CHECKPOINT_LOG_FILE = 'checkpoints.log';

/** The default place: beside the database. */
export function defaultCheckpointLog(dataDir: string): string {
  return resolve(join(dataDir, CHECKPOINT_LOG_FILE));
}

export interface RestoreCut {
  space_id: string;
  stream: Stream;
  survived_last: string;
}

export interface RestoreMarker {
  at: string;
  previous_epoch: string;
  service_epoch: string;
  cuts: RestoreCut[];
}

export type LogEntry = { checkpoint: ServedCheckpoint } | { restore: RestoreMarker };

export interface CheckpointLog {
  readonly path: string;
  /** Bytes of a line cut short by a crash that opening removed from the end (0 almost always). */
  readonly droppedTail: number;
  /** Append one line and fsync it before returning. */
  append(entry: LogEntry): void;
  close(): void;
}

/** Open (creating it and its directory, mode 0600) the log at `path` for appending. */
export function openCheckpointLog(path: string): CheckpointLog {
  const full = resolve(path);
  mkdirSync(dirname(full), { recursive: true, mode: 0o700 });
  const repair = openSync(full, 'a+', 0o600);
  let droppedTail = 0;
  try {
    droppedTail = dropTornTail(repair);
  } finally {
    closeSync(repair);
  }
  let fd: number | undefined = openSync(full, 'a', 0o600);
  return {
    path: full,
    droppedTail,
    append(entry) {
      if (fd === undefined) throw new Error(`checkpoint log ${full} is closed`);
      writeSync(fd, `${JSON.stringify(entry)}\n`);
      fsyncSync(fd);
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/** Cut the file back to just after its last newline; answers the bytes removed. */
function dropTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (at >= 0) {
      const keep = start + at + 1;
      if (keep < size) {
        ftruncateSync(fd, keep);
        fsyncSync(fd);
      }
      return size - keep;
    }
    end = start;
  }
  if (size > 0) {
    ftruncateSync(fd, 0);
    fsyncSync(fd);
  }
  return size;
}

export interface ReadLog {
  entries: LogEntry[];
  /** A last line without its newline (a write cut short) was left out. */
  torn: boolean;
}

/**
 * Read every entry of the log. A complete line that is not an entry is an error naming the
 * line: a log that is not ours must not be half-believed. The members of a checkpoint are
 * checked by the caller (shared/checkpoint.ts), which also verifies its signature.
 */
export function readCheckpointLog(path: string): ReadLog {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const entries: LogEntry[] = [];
  lines.forEach((line, i) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`line ${i + 1} is not JSON`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`line ${i + 1} is not a log entry`);
    const keys = Object.keys(value);
    if (keys.length !== 1 || (keys[0] !== 'checkpoint' && keys[0] !== 'restore')) {
      throw new Error(`line ${i + 1} is not a log entry (expected "checkpoint" or "restore")`);
    }
    entries.push(value as LogEntry);
  });
  return { entries, torn: last !== '' };
}
