/**
 * A relay process whose database and write-ahead log are made unwritable while it serves (the
 * immutable flag: even its open descriptors then refuse writes, as a file system gone read-only
 * does): each write is answered SERVICE_READ_ONLY (503, the envelope, Retry-After: reads work,
 * retry the write later), never a fault; reads go on; once the files are writable again the
 * same process takes writes; and a restart has every acknowledged post. The shared-memory index
 * (`-shm`) is left alone: SQLite maps it into memory, and a file taken away under a mapping ends
 * any process with SIGBUS, which no program can answer.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintToken, spawnRelay, tempDataDir, type SpawnedRelay } from '../../helpers/relay.js';
import { append, immutableFlagWorks, postsById, setImmutable, type Acked } from '../../helpers/faults.js';
import { onPostgres } from '../../helpers/test-store.js';

const dataDir = tempDataDir('svc-readonly-');
// The SQLite files made immutable; on the PostgreSQL test store the database is elsewhere.
const flag = onPostgres ? { ok: false as const, reason: "SQLite only: the database's files are made read-only" } : immutableFlagWorks(dataDir);
const files = [join(dataDir, 'relay.sqlite'), join(dataDir, 'relay.sqlite-wal')];
let relay: SpawnedRelay | undefined;
let locked = false;

afterAll(async () => {
  if (locked) setImmutable(files, false);
  await relay?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(!flag.ok)(`a database made read-only under a running relay${flag.ok ? '' : ` (skipped: ${flag.reason})`}`, () => {
  it('answers writes SERVICE_READ_ONLY with Retry-After while reads go on, takes writes again once writable, and keeps every acknowledged post', async () => {
    const start = () => spawnRelay(dataDir, { env: { SVC_RELAY_NO_RATE_LIMITS: '1' } });
    relay = await start();
    const k = await mintToken(relay.url);
    const auth = { authorization: `Bearer ${k.token}`, 'content-type': 'application/json' };
    const space = 'read-only';
    expect((await fetch(`${relay.url}/v1/spaces`, { method: 'POST', headers: auth, body: JSON.stringify({ name: space }) })).status).toBe(201);
    const acked: Acked[] = [];
    for (let i = 0; i < 5; i++) acked.push((await append(relay.url, k.token, space, `before ${i}`)).acked!);

    setImmutable(files, true);
    locked = true;
    for (let i = 0; i < 3; i++) {
      const r = await append(relay.url, k.token, space, `while read-only ${i}`);
      expect(r.answer.status).toBe(503);
      const e = JSON.parse(r.answer.text).error;
      expect(e.code).toBe('SERVICE_READ_ONLY');
      expect(e.request_id).toMatch(/-/);
      expect(Number(r.answer.retryAfter)).toBeGreaterThan(0);
    }
    // Another kind of write, through another store: refused the same way.
    const other = await fetch(`${relay.url}/v1/spaces`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'read-only-two' }) });
    expect(other.status).toBe(503);
    expect((await postsById(relay.url, k.token, space)).size).toBe(5);
    expect(relay.process.exitCode).toBeNull();

    setImmutable(files, false);
    locked = false;
    const again = await append(relay.url, k.token, space, 'writable again');
    expect(again.answer.status).toBe(201);
    acked.push(again.acked!);

    expect(await relay.kill('SIGTERM')).toBe(0);
    relay = await start();
    const stored = await postsById(relay.url, k.token, space);
    for (const a of acked) expect(stored.get(a.postId)?.seq).toBe(a.seq);
    expect(stored.size).toBe(acked.length);
    expect(await relay.kill('SIGTERM')).toBe(0);
    relay = undefined;
  }, 120_000);
});
