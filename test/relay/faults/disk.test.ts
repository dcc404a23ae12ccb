/**
 * A relay process whose disk fills up while posts are appended (a 4 MiB tmpfs holding its data
 * directory and checkpoint log, with a ballast file taking all of it but 256 KiB once the relay
 * started): every append the disk
 * refuses is answered BUSY (503, the envelope, Retry-After: "service full", nothing written),
 * never a fault or a hang; reads go on; the process keeps running; once space is freed appends
 * are taken again without a restart; SIGTERM stops it with 0; and after a restart every post it
 * acknowledged is there with its seq, the chain going on without a gap.
 */
import { writeFileSync, rmSync, mkdirSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintToken, spawnRelay, type SpawnedRelay } from '../../helpers/relay.js';
import { append, mountTmpfs, postsById, type Acked, type Answered } from '../../helpers/faults.js';
import { onPostgres } from '../../helpers/test-store.js';

// The disk that fills is the SQLite database's; on the PostgreSQL test store the database is elsewhere.
const fs = onPostgres ? { reason: "SQLite only: the database's own disk fills" } : mountTmpfs('4m');
const reason = 'reason' in fs ? fs.reason : undefined;
let relay: SpawnedRelay | undefined;

afterAll(async () => {
  await relay?.kill('SIGKILL');
  if (!('reason' in fs)) fs.unmount();
});

describe.skipIf(reason !== undefined)(`a disk that fills up under appends${reason ? ` (skipped: ${reason})` : ''}`, () => {
  it('refuses each append it cannot store with BUSY and Retry-After, keeps reading, takes appends again once space is freed, and loses no acknowledged post across a restart', async () => {
    if ('reason' in fs) return;
    const dataDir = join(fs.dir, 'data');
    mkdirSync(dataDir);
    const start = () => spawnRelay(dataDir, { env: { SVC_RELAY_NO_RATE_LIMITS: '1' } });
    relay = await start();
    const k = await mintToken(relay.url);
    const space = 'disk-full';
    const created = await fetch(`${relay.url}/v1/spaces`, { method: 'POST', headers: { authorization: `Bearer ${k.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: space }) });
    expect(created.status).toBe(201);
    // The database and its write-ahead log after the migrations take most of a small disk (more
    // with each migration, and the log more while a checkpoint waits): the ballast leaves the
    // appends a known room, measured now.
    const ballast = join(fs.dir, 'ballast');
    const free = () => {
      const s = statfsSync(fs.dir);
      return s.bavail * s.bsize;
    };
    writeFileSync(ballast, Buffer.alloc(Math.max(0, free() - 256 * 1024), 1));

    // Four senders at once until the disk has refused twenty appends in a row.
    const acked: Acked[] = [];
    const refused: Answered[] = [];
    let inARow = 0;
    let n = 0;
    const sender = async () => {
      while (inARow < 20 && n < 3000) {
        const r = await append(relay!.url, k.token, space, `post ${n++} ${'x'.repeat(3000)}`);
        if (r.acked) {
          acked.push(r.acked);
          inARow = 0;
        } else {
          refused.push(r.answer);
          inARow++;
        }
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    expect(acked.length).toBeGreaterThan(10);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const r of refused) {
      expect(r.status).toBe(503);
      const e = JSON.parse(r.text).error;
      expect(e.code).toBe('BUSY');
      expect(e.detail).toMatch(/disk space/);
      expect(Number(r.retryAfter)).toBeGreaterThan(0);
    }
    expect(relay.process.exitCode).toBeNull();

    // Reads still work while the disk is full.
    const read = await fetch(`${relay.url}/v1/spaces/${space}/posts?limit=5`, { headers: { authorization: `Bearer ${k.token}` } });
    expect(read.status).toBe(200);

    // Space comes back: the same process takes appends again.
    rmSync(ballast);
    const again = await append(relay.url, k.token, space, 'after the ballast went');
    expect(again.answer.status).toBe(201);
    acked.push(again.acked!);

    expect(await relay.kill('SIGTERM')).toBe(0);
    relay = await start();
    const stored = await postsById(relay.url, k.token, space);
    for (const a of acked) expect(stored.get(a.postId)?.seq, `post ${a.postId}`).toBe(a.seq);
    const seqs = [...stored.values()].map((p) => Number(p.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    const next = await append(relay.url, k.token, space, 'after the restart');
    expect(next.acked?.seq).toBe(String(seqs.length + 1));
    expect(await relay.kill('SIGTERM')).toBe(0);
    relay = undefined;
  }, 180_000);
});
