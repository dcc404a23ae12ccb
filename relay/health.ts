/**
 * Health (spec/2-endpoints.md "health", 3-errors.md): `/healthz` answers 503 `{ok:false, reason}`
 * when the database does not answer a trivial query, or when a disk the relay writes to is
 * nearly full: the one holding the database (and its write-ahead log) and the one holding the
 * checkpoint log, which operators put on another disk. A write that finds its disk full fails
 * (SQLITE_FULL, and a checkpoint that cannot be logged is not published), so the probe says so
 * while there is still room to act.
 *
 * Free space is what an unprivileged writer may still use (`bavail`, as `df` shows it), read
 * with statfs and kept for a few seconds: a flood of probes (600 a minute per address are
 * allowed) costs one system call per disk per period, and concurrent probes share the one read
 * in flight. The reason names the disk by its role, never by its path: the probe is public.
 */
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DEFAULT_MIN_FREE_DISK, minFreeBytes, type FreeDiskRule } from './config.js';

/** How long a disk reading is reused. */
export const DISK_READING_TTL_MS = 5_000;

/** A directory whose file system the relay writes to, and its role (shown in `reason`). */
export interface Volume {
  readonly role: string;
  readonly path: string;
}

/** One file system as last read. */
export interface DiskReading {
  readonly role: string;
  /** Bytes an unprivileged writer may still use; undefined when the read failed. */
  readonly free: number | undefined;
  readonly total: number | undefined;
  /** The free bytes the rule asks for on this disk. */
  readonly min: number;
  /** Why the read failed (an errno code), if it did. */
  readonly error?: string | undefined;
}

export type Health = { ok: true } | { ok: false; reason: string };

export interface HealthCheck {
  check(): Promise<Health>;
  /** Every volume's reading, at most DISK_READING_TTL_MS old (metrics read them too). */
  disks(): Promise<readonly DiskReading[]>;
}

/** The volumes of a relay: its data directory, and the checkpoint log's directory when it has one. */
export function relayVolumes(dataDir: string, checkpointLogPath: string | undefined): Volume[] {
  if (dataDir === ':memory:') return [];
  const volumes: Volume[] = [{ role: 'database', path: dataDir }];
  if (checkpointLogPath !== undefined) volumes.push({ role: 'checkpoint log', path: dirname(checkpointLogPath) });
  return volumes;
}

/** "1.5 GiB": sizes in the reason, in binary units. */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let i = 0;
  while (value >= 1024 && i < units.length - 1) {
    value /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[i]}`;
}

export function createHealthCheck(opts: {
  ping: () => Promise<boolean>;
  volumes: readonly Volume[];
  rule?: FreeDiskRule | undefined;
  now?: () => number;
  ttlMs?: number;
}): HealthCheck {
  const rule = opts.rule ?? DEFAULT_MIN_FREE_DISK;
  const now = opts.now ?? (() => performance.now());
  const ttl = opts.ttlMs ?? DISK_READING_TTL_MS;
  let kept: { at: number; readings: readonly DiskReading[] } | undefined;
  let reading: Promise<readonly DiskReading[]> | undefined;

  async function readOne(v: Volume): Promise<DiskReading> {
    try {
      const s = await statfs(v.path);
      const total = s.blocks * s.bsize;
      return { role: v.role, free: s.bavail * s.bsize, total, min: minFreeBytes(rule, total) };
    } catch (e) {
      return { role: v.role, free: undefined, total: undefined, min: 0, error: (e as NodeJS.ErrnoException).code ?? 'unknown error' };
    }
  }

  function disks(): Promise<readonly DiskReading[]> {
    if (kept !== undefined && now() - kept.at < ttl) return Promise.resolve(kept.readings);
    reading ??= Promise.all(opts.volumes.map(readOne)).then((readings) => {
      kept = { at: now(), readings };
      reading = undefined;
      return readings;
    });
    return reading;
  }

  return {
    disks,
    async check() {
      if (!(await opts.ping())) return { ok: false, reason: 'database unreachable' };
      for (const d of await disks()) {
        if (d.free === undefined) return { ok: false, reason: `cannot read the free space of the ${d.role} disk (${d.error})` };
        if (d.free < d.min) {
          return { ok: false, reason: `${d.role} disk nearly full: ${formatBytes(d.free)} free, below the ${formatBytes(d.min)} asked (--min-free-disk)` };
        }
      }
      return { ok: true };
    },
  };
}
