/**
 * /healthz (spec/2-endpoints.md "health"): 200 `{ok:true}`, or 503 `{ok:false, reason}` when
 * the database does not answer or a disk the relay writes to is nearly full. The disk cases
 * run on a small tmpfs mounted for the test (root only; skipped with the reason otherwise),
 * filled by a real file; the threshold case also runs anywhere with a minimum above the free
 * space of the test's own disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { minFreeBytes, parseMinFreeDisk } from '../../relay/config.js';
import { createHealthCheck, relayVolumes } from '../../relay/health.js';
import { call, startRelay, type RunningRelay } from '../helpers/relay.js';

const MiB = 1024 * 1024;

/** Mount a tmpfs of `mib` MiB; the mount point, or why it could not be mounted. */
function mountTmpfs(mib: number): { dir: string } | { why: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-health-fs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { why: `cannot mount a tmpfs here: ${((e as { stderr?: Buffer }).stderr?.toString() || (e as Error).message).trim()}` };
  }
}

function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
}

/** Fill `dir` with one file until `leave` bytes stay free (as an unprivileged writer sees it). */
function fillUntil(dir: string, leave: number): string {
  const s = statfsSync(dir);
  const free = s.bavail * s.bsize;
  const path = join(dir, 'filler');
  writeFileSync(path, Buffer.alloc(Math.max(0, free - leave)));
  return path;
}

const relays: RunningRelay[] = [];
afterEach(async () => {
  for (const r of relays.splice(0)) await r.close();
});

describe('--min-free-disk', () => {
  it('reads sizes in bytes and binary or decimal units, shares in percent, and 0 as no minimum', () => {
    expect(parseMinFreeDisk('1073741824')).toEqual({ bytes: 1024 ** 3 });
    expect(parseMinFreeDisk('2GiB')).toEqual({ bytes: 2 * 1024 ** 3 });
    expect(parseMinFreeDisk('500MB')).toEqual({ bytes: 500e6 });
    expect(parseMinFreeDisk('5%')).toEqual({ percent: 5 });
    expect(minFreeBytes(parseMinFreeDisk('0'), 1e12)).toBe(0);
  });

  it('refuses what is neither a size nor a share, naming the flag', () => {
    for (const bad of ['', 'lots', '5 %', '100%', '-1', '1PB', '99999999999999999999']) {
      expect(() => parseMinFreeDisk(bad)).toThrow(/--min-free-disk/);
    }
  });

  it('by default asks 1 GiB of a large disk and 5% of a small one', () => {
    const rule = { bytes: 1024 ** 3, percent: 5 };
    expect(minFreeBytes(rule, 1e12)).toBe(1024 ** 3);
    expect(minFreeBytes(rule, 4 * 1024 ** 3)).toBe(Math.ceil(0.05 * 4 * 1024 ** 3));
  });
});

describe('/healthz', () => {
  it('answers 200 {ok:true} while the database answers and the disk has room', async () => {
    const relay = await startRelay({ config: { minFreeDisk: { bytes: 1 } } });
    relays.push(relay);
    const r = await call(relay, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true });
  });

  it('answers 503 naming the database disk when it has less free space than the relay asks', async () => {
    const relay = await startRelay({ config: { minFreeDisk: { bytes: Number.MAX_SAFE_INTEGER } } });
    relays.push(relay);
    const r = await call(relay, 'GET', '/healthz');
    expect(r.status).toBe(503);
    expect(r.body.ok).toBe(false);
    expect(r.body.reason).toMatch(/^database disk nearly full: .* free, below the .* asked \(--min-free-disk\)$/);
    // The probe is public: the reason names the disk by its role, never by its path.
    expect(r.body.reason).not.toContain(relay.dataDir);
  });

  it('answers 503 "database unreachable" once the database no longer answers', async () => {
    const relay = await startRelay();
    relays.push(relay);
    await relay.store.db.close();
    const r = await call(relay, 'GET', '/healthz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ ok: false, reason: 'database unreachable' });
  });
});

const fs = mountTmpfs(8);
afterAll(() => {
  if ('dir' in fs) unmount(fs.dir);
});

describe.skipIf('why' in fs)(`on a small real file system${'why' in fs ? ` (skipped: ${fs.why})` : ''}`, () => {
  const dir = 'dir' in fs ? fs.dir : '';

  it('a relay whose data disk fills past the minimum answers 503 saying how much is free and how much it asks', async () => {
    const dataDir = join(dir, 'relay');
    mkdirSync(dataDir);
    const relay = await startRelay({ dataDir, config: { minFreeDisk: { bytes: 2 * MiB } } });
    relays.push(relay);
    const filler = fillUntil(dir, 1 * MiB);
    try {
      const full = await call(relay, 'GET', '/healthz');
      const freeAfter = statfsSync(dir).bavail * statfsSync(dir).bsize;
      expect(full.status).toBe(503);
      const said = /^database disk nearly full: ([\d.]+) (KiB|MiB) free, below the 2\.0 MiB asked/.exec(full.body.reason);
      expect(said, full.body.reason).not.toBeNull();
      // The relay keeps writing while the test runs (the WAL worker copies the migrations' pages
      // into the database file), so what it reports lies between what the filler left and what
      // is free once it has answered: never more than 1 MiB, never less than the disk has now.
      const reported = Number(said![1]) * (said![2] === 'MiB' ? MiB : 1024);
      expect(reported).toBeLessThanOrEqual(1 * MiB);
      expect(reported).toBeGreaterThanOrEqual(freeAfter - 1024);
    } finally {
      rmSync(filler);
    }
  });

  it('the checkpoint log disk counts as the database disk does', async () => {
    const logDir = join(dir, 'log');
    mkdirSync(logDir, { recursive: true });
    const check = createHealthCheck({
      ping: async () => true,
      volumes: relayVolumes(mkdtempSync(join(tmpdir(), 'svc-health-data-')), join(logDir, 'checkpoints.log')),
      rule: { bytes: 2 * MiB },
      ttlMs: 0,
    });
    expect(await check.check()).toEqual({ ok: true });
    const filler = fillUntil(dir, 1 * MiB);
    try {
      const health = await check.check();
      expect(health.ok).toBe(false);
      expect(health.ok === false && health.reason).toMatch(/^checkpoint log disk nearly full/);
    } finally {
      rmSync(filler);
    }
  });

  it('a reading is kept for its time, so a flood of probes reads the disk once per period', async () => {
    let now = 0;
    const check = createHealthCheck({ ping: async () => true, volumes: [{ role: 'database', path: dir }], rule: { bytes: 2 * MiB }, now: () => now });
    expect(await check.check()).toEqual({ ok: true });
    const filler = fillUntil(dir, 1 * MiB);
    try {
      now = 4_999;
      expect(await check.check()).toEqual({ ok: true });
      now = 5_000;
      expect((await check.check()).ok).toBe(false);
    } finally {
      rmSync(filler);
    }
    now = 10_000;
    expect(await check.check()).toEqual({ ok: true });
  });
});
