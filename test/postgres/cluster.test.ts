/**
 * What relay processes on one PostgreSQL database share beyond its tables
 * (relay/store/postgres/cluster.ts, wakeups.ts), each "process" here a store of its own with
 * its own pool and listening connection on one fresh database of a real server: a wake-up
 * raised through one store wakes the waiters of another after its commit; a lost listening
 * connection comes back and wakes every waiter once; a job runs in one of them at a time;
 * a token bucket is spent by all.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPostgresStore, type Store } from '../../relay/store/index.js';
import { notifierFor } from '../../relay/posts/notify.js';
import { createTokenEvents, type TokenEvent } from '../../relay/token-events.js';
import { PAYLOAD_MAX_BYTES, payloads } from '../../relay/store/postgres/wakeups.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';

describe('wake-up payloads', () => {
  it('gather many topics into as few notifications as fit under PostgreSQL’s 8000 bytes, each naming its sender first', () => {
    const topics = Array.from({ length: 3000 }, (_, i) => `m:${i.toString(16).padStart(64, '0')}`);
    const out = payloads('abcdef0123456789', topics);
    expect(out.length).toBeGreaterThan(1);
    expect(out.length).toBeLessThanOrEqual(Math.ceil((topics.length * 67) / (PAYLOAD_MAX_BYTES - 17)) + 1);
    for (const p of out) {
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(PAYLOAD_MAX_BYTES);
      expect(p.split('\n')[0]).toBe('abcdef0123456789');
    }
    expect(out.flatMap((p) => p.split('\n').slice(1))).toEqual(topics);
    expect(payloads('abcdef0123456789', [])).toEqual([]);
  });
});

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** postgres-cluster.test.ts skipped: ${cluster.skipReason} ***\n\n`);
afterAll(() => cluster.stop());

const quiet = { log: () => undefined };

describe.skipIf(cluster.url === undefined)(`several stores on one PostgreSQL database${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  let fresh: FreshDatabase;
  let a: Store;
  let b: Store;

  beforeEach(async () => {
    fresh = await freshDatabase();
    a = await openPostgresStore(fresh.url, { ...quiet, applicationName: 'svc-test-a' });
    b = await openPostgresStore(fresh.url, { ...quiet, applicationName: 'svc-test-b' });
  });
  afterEach(async () => {
    await a?.close();
    await b?.close();
    await fresh?.drop();
  });

  it('a wake-up raised in one store’s transaction wakes another store’s waiter only after the commit', async () => {
    const waiting = notifierFor(a.db).waitSpace(7, 20_000);
    let woken = false;
    void waiting.then((w) => (woken = w));
    await b.db.transaction(async () => {
      notifierFor(b.db).space(7);
      await new Promise((r) => setTimeout(r, 300));
      expect(woken).toBe(false);
    }).immediate();
    const started = Date.now();
    expect(await waiting).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a rolled-back transaction wakes nobody elsewhere, and a wake-up names only its own topic', async () => {
    const other = notifierFor(a.db).waitMailbox('someone-else', 1500);
    const same = notifierFor(a.db).waitSpace(8, 1500);
    await b.db
      .transaction(async () => {
        notifierFor(b.db).space(8);
        throw new Error('undone');
      })
      .immediate()
      .catch(() => undefined);
    notifierFor(b.db).mailbox('someone');
    expect(await same).toBe(false);
    expect(await other).toBe(false);
  });

  it('many topics in one turn all arrive', async () => {
    const waits = Array.from({ length: 400 }, (_, i) => notifierFor(a.db).waitMailbox(`k${i.toString().padStart(60, '0')}`, 20_000));
    for (let i = 0; i < 400; i++) notifierFor(b.db).mailbox(`k${i.toString().padStart(60, '0')}`);
    expect(await Promise.all(waits)).toEqual(waits.map(() => true));
  });

  it('when the listening connection is lost it listens again and wakes every waiter once, long before their wait ends', async () => {
    const waits = [notifierFor(a.db).waitSpace(1, 20_000), notifierFor(a.db).waitMailbox('p', 20_000)];
    const admin = new pg.Client({ connectionString: fresh.url });
    await admin.connect();
    try {
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'svc-test-a wake-ups' AND datname = current_database()`,
      );
      expect(killed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    const started = Date.now();
    expect(await Promise.all(waits)).toEqual([true, true]);
    expect(Date.now() - started).toBeLessThan(10_000);
    // And it listens again: a wake-up from the other store arrives.
    const again = notifierFor(a.db).waitSpace(2, 20_000);
    notifierFor(b.db).space(2);
    expect(await again).toBe(true);
  });

  it('a job runs in one store at a time: the other skips while it runs and runs once it is done', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = a.cluster!.runAlone('checkpointer', async () => {
      await held;
      return 'a';
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(await b.cluster!.runAlone('checkpointer', async () => 'b')).toBeUndefined();
    release();
    expect(await first).toBe('a');
    expect(await b.cluster!.runAlone('checkpointer', async () => 'b')).toBe('b');
  });

  it('a job that throws gives the lock back', async () => {
    await expect(a.cluster!.runAlone('checkpointer', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await b.cluster!.runAlone('checkpointer', async () => 'b')).toBe('b');
  });

  it('a token bucket is spent by every store: its capacity holds across them and refills with time', async () => {
    const spend = { bucket: 'writes', key: 'peer-1', capacity: 3, perMs: 1 / 1000, cost: 1 };
    const now = 1_000_000;
    const answers = await Promise.all([a, b, a, b].map((s) => s.cluster!.take({ ...spend, now })));
    expect(answers.map((r) => r.wait === 0).sort()).toEqual([false, true, true, true]);
    expect(await a.cluster!.take({ ...spend, now })).toEqual({ wait: 1, remaining: 0 });
    expect(await b.cluster!.take({ ...spend, key: 'peer-2', now })).toEqual({ wait: 0, remaining: 2 });
    expect(await b.cluster!.take({ ...spend, now: now + 1000 })).toEqual({ wait: 0, remaining: 0 });
  });

  it('a bucket spent inside a transaction uses the transaction’s own connection: a pool of one does not wait for a second', async () => {
    const one = await openPostgresStore(fresh.url, { ...quiet, poolSize: 1, connectTimeoutMs: 2000 });
    try {
      const spend = { bucket: 'noticesToKey', key: 'peer-1', capacity: 2, perMs: 1 / 1000, cost: 1, now: 5_000_000 };
      const inside = await one.db.transaction(async () => await one.cluster!.take(spend)).immediate();
      expect(inside).toEqual({ wait: 0, remaining: 1 });
      expect(await a.cluster!.take(spend)).toEqual({ wait: 0, remaining: 0 });
    } finally {
      await one.close();
    }
  });

  it('a token revocation told in one store is told in the other, once, for one token or every token of the KEY', async () => {
    const told = createTokenEvents(a.cluster);
    const hearing = createTokenEvents(b.cluster);
    const heard: TokenEvent[] = [];
    const mine: TokenEvent[] = [];
    hearing.on((e) => heard.push(e));
    told.on((e) => mine.push(e));
    told.emit({ peerId: 'ab12', tokenId: '5f0c8e4e-0000-4000-8000-000000000001' });
    told.emit({ peerId: 'ab12', tokenId: null });
    for (let i = 0; i < 50 && heard.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual([
      { peerId: 'ab12', tokenId: '5f0c8e4e-0000-4000-8000-000000000001' },
      { peerId: 'ab12', tokenId: null },
    ]);
    expect(mine).toHaveLength(2);
    told.unlink();
    hearing.unlink();
  });
});
