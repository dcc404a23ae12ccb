/**
 * Write locks on PostgreSQL (relay/store/postgres/locks.ts, relay/store/database.ts "Write
 * serialisation"): a write locks what it touches, so writers to different SPACES hold their
 * locks at the same time while writers to one SPACE take turns and count exactly; the wide lock
 * waits for every writer; a lock taken out of the global order throws under
 * SVC_LOCK_ORDER=strict (which the test run sets, so every operation the suite runs on
 * PostgreSQL is checked); a deadlock PostgreSQL reports is run again, never the caller's
 * failure; and over HTTP an append into one SPACE is answered while another SPACE's lock is
 * held, and mailbox positions delivered from many SPACES at once stay gap-free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { PostgresDb } from '../../relay/store/postgres/connection.js';
import { LOCK_KIND, locksOf } from '../../relay/store/postgres/locks.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';
import { startRelay, mintToken, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { admit, call, newSpace } from '../helpers/posts.js';
import { onPostgres } from '../helpers/test-store.js';

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** write-locks.test.ts skipped: ${cluster.skipReason} ***\n\n`);
afterAll(() => cluster.stop());

/** A promise and the function that settles it. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const promise = new Promise<void>((r) => (fire = r));
  return { promise, fire };
}

/** Wait until some session waits for an advisory lock on `kind`/`id` (pg_locks), asking the server each turn. */
async function untilWaiting(db: PostgresDb, kind: number, id: number): Promise<void> {
  for (;;) {
    const n = await db
      .prepare<[number, number], { n: number }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid::bigint = ? AND objid::bigint = ?
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      )
      .get(kind, id >>> 0);
    if ((n?.n ?? 0) > 0) return;
    await new Promise((r) => setImmediate(r));
  }
}

describe.skipIf(cluster.url === undefined)(`write locks on PostgreSQL${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  let fresh: FreshDatabase;
  let a: PostgresDb;
  let b: PostgresDb;

  beforeAll(async () => {
    fresh = await freshDatabase({ empty: true });
    // Two pools: two relay processes.
    a = new PostgresDb(fresh.url, { poolSize: 4, lockOrder: 'strict' });
    b = new PostgresDb(fresh.url, { poolSize: 4, lockOrder: 'strict' });
    await a.exec(`
      CREATE TABLE counters (space BIGINT PRIMARY KEY, n BIGINT NOT NULL);
      INSERT INTO counters SELECT g, 0 FROM generate_series(1, 4) g;
      CREATE TABLE issued (space BIGINT NOT NULL, n BIGINT NOT NULL);
    `);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await fresh?.drop();
  });

  it('writers to two SPACES hold their locks at once; a second writer to the same SPACE waits for the first to commit', async () => {
    const holding = signal();
    const release = signal();
    const first = a.transaction(async () => {
      await a.prepare('UPDATE counters SET n = n + 1 WHERE space = 1').run();
      holding.fire();
      await release.promise;
    }).under({ spaces: [1] });
    await holding.promise;
    // Another process writes SPACE 2 and commits while SPACE 1's writer is still open.
    await b.transaction(async () => await b.prepare('UPDATE counters SET n = n + 1 WHERE space = 2').run()).under({ spaces: [2] });
    // A writer to SPACE 1 waits on its lock (the server says so), then reads the first's commit.
    const second = b.transaction(async () => await b.prepare('SELECT n FROM counters WHERE space = 1').pluck<number>().get()).under({ spaces: [1] });
    await untilWaiting(a, LOCK_KIND.space, 1);
    release.fire();
    await first;
    expect(await second).toBe(1);
  });

  it('read-then-increment per SPACE from two pools, four SPACES at once: every counter ends exact, no number issued twice', async () => {
    await a.exec('UPDATE counters SET n = 0; DELETE FROM issued');
    const bump = (d: PostgresDb, space: number) =>
      d.transaction(async () => {
        const n = (await d.prepare('SELECT n FROM counters WHERE space = ?').pluck<number>().get(space))!;
        await new Promise((r) => setImmediate(r)); // let the other writers run between the read and the write
        await d.prepare('UPDATE counters SET n = ? WHERE space = ?').run(n + 1, space);
        await d.prepare('INSERT INTO issued (space, n) VALUES (?, ?)').run(space, n + 1);
      });
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const space = (i % 4) + 1;
        const d = i % 2 === 0 ? a : b;
        await bump(d, space).under({ spaces: [space] });
      }),
    );
    const rows = await a.prepare<[], { space: number; total: number; distinct: number; high: number }>(
      'SELECT space, count(*) AS total, count(DISTINCT n) AS distinct, max(n) AS high FROM issued GROUP BY space ORDER BY space',
    ).all();
    expect(rows).toEqual([1, 2, 3, 4].map((space) => ({ space, total: 50, distinct: 50, high: 50 })));
  });

  it('the wide lock waits for a narrow writer, and narrow writers wait for it', async () => {
    const holding = signal();
    const release = signal();
    const order: string[] = [];
    const narrow = a.transaction(async () => {
      holding.fire();
      await release.promise;
      order.push('narrow');
    }).under({ spaces: [3] });
    await holding.promise;
    const wide = b.transaction(async () => void order.push('wide')).immediate();
    await untilWaitingOnGate(a);
    release.fire();
    await Promise.all([narrow, wide]);
    expect(order).toEqual(['narrow', 'wide']);
    // And a narrow writer waits for the wide one.
    const wideHolding = signal();
    const wideRelease = signal();
    order.length = 0;
    const wide2 = b.transaction(async () => {
      wideHolding.fire();
      await wideRelease.promise;
      order.push('wide');
    }).immediate();
    await wideHolding.promise;
    const narrow2 = a.transaction(async () => void order.push('narrow')).under({ spaces: [4] });
    await untilWaitingOnGate(a);
    wideRelease.fire();
    await Promise.all([wide2, narrow2]);
    expect(order).toEqual(['wide', 'narrow']);
  });

  it('a lock out of the global order throws under the strict check; in order, and already held, it passes', async () => {
    // In order: a SPACE, then a KEY, then mailboxes, each added later by a nested write.
    await a.transaction(async () => {
      await a.transaction(async () => {
        await a.lock({ mailboxes: ['p1', 'p2'] });
      }).under({ spaces: [2], keys: ['k'] });
      await a.lock({ spaces: [1] }); // already held: nothing taken
    }).under({ spaces: [1, 2] });
    // A SPACE after a KEY.
    await expect(
      a.transaction(async () => await a.transaction(async () => undefined).under({ spaces: [1] })).under({ keys: ['k'] }),
    ).rejects.toThrow(/write lock out of order: space/);
    // A lower SPACE after a higher one.
    await expect(a.transaction(async () => await a.lock({ spaces: [1] })).under({ spaces: [4] })).rejects.toThrow(/out of order/);
    // The wide lock inside a narrow writer (an upgrade two writers could deadlock on).
    await expect(
      a.transaction(async () => await a.transaction(async () => undefined).immediate()).under({ spaces: [1] }),
    ).rejects.toThrow(/out of order: the wide lock/);
    // Named in any order, taken in the global one.
    expect(locksOf({ keys: ['x'], mailboxes: ['x'], spaces: [9, 2, 9], conversations: ['c'] }).map((l) => l.kind)).toEqual([
      'space',
      'space',
      'conversation',
      'key',
      'mailbox',
    ]);
  });

  it('a deadlock PostgreSQL breaks is run again: both writers commit, the retry counted', async () => {
    // Two writers forced into the inverse order with raw locks (what the ordering rule prevents).
    const heldA = signal();
    const heldB = signal();
    const retriesBefore = a.retries + b.retries;
    const take = (d: PostgresDb, id: number) => d.prepare('SELECT pg_advisory_xact_lock(1, ?)').run(id);
    const one = a.transaction(async () => {
      await take(a, 10);
      heldA.fire();
      await heldB.promise;
      await take(a, 11);
      await a.prepare('UPDATE counters SET n = n + 100 WHERE space = 4').run();
    })();
    const two = b.transaction(async () => {
      await take(b, 11);
      heldB.fire();
      await heldA.promise;
      await take(b, 10);
      await b.prepare('UPDATE counters SET n = n + 1000 WHERE space = 4').run();
    })();
    const before = (await a.prepare('SELECT n FROM counters WHERE space = 4').pluck<number>().get())!;
    await Promise.all([one, two]);
    expect(await a.prepare('SELECT n FROM counters WHERE space = 4').pluck<number>().get()).toBe(before + 1100);
    expect(a.retries + b.retries).toBe(retriesBefore + 1);
  });
});

/** Wait until some session of this database waits for the write gate (the one-number advisory lock; objsubid 1). */
async function untilWaitingOnGate(db: PostgresDb): Promise<void> {
  for (;;) {
    const n = await db
      .prepare<[], { n: number }>(
        `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      )
      .get();
    if ((n?.n ?? 0) > 0) return;
    await new Promise((r) => setImmediate(r));
  }
}

describe.skipIf(!onPostgres || cluster.url === undefined)('appends over HTTP lock their SPACE, not the relay', () => {
  let relay: RunningRelay;
  let owner: MintedToken;
  let readers: MintedToken[];
  let holder: pg.Client;

  beforeAll(async () => {
    relay = await startRelay({ rateLimits: false });
    owner = await mintToken(relay.url);
    readers = await Promise.all(Array.from({ length: 3 }, async () => await mintToken(relay.url)));
    holder = new pg.Client({ connectionString: relay.database });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await relay?.close();
  });

  const append = async (space: string, body: Record<string, unknown>) =>
    await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: owner.token, body });

  it('an append into one SPACE is answered while another SPACE’s lock is held; the held one is answered after', async () => {
    const held = await newSpace(relay, owner);
    const free = await newSpace(relay, owner);
    await holder.query('SELECT pg_advisory_lock($1, $2)', [LOCK_KIND.space, held.id]);
    let blocked: Promise<unknown> | undefined;
    try {
      blocked = append(held.name, { kind: 'obs', title: 'waits for its SPACE' });
      // Answered before it waited on the lock would be a failure of this test, not a hang.
      await Promise.race([untilWaiting(relay.store.db as PostgresDb, LOCK_KIND.space, held.id), blocked.then((r) => Promise.reject(new Error(`answered at once: ${JSON.stringify(r)}`)))]);
      const r = await append(free.name, { kind: 'obs', title: 'goes ahead' });
      expect(r.status).toBe(201);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_KIND.space, held.id]);
    }
    expect(((await blocked) as { status: number }).status).toBe(201);
  });

  it('posts into 8 SPACES at once, each to the same three KEYS: every mailbox numbered 1…n with no gap or repeat', async () => {
    const spaces = await Promise.all(Array.from({ length: 8 }, async () => await newSpace(relay, owner)));
    for (const s of spaces) for (const r of readers) await admit(relay, s, r, 'reader');
    const to = readers.map((r) => r.peerId).sort();
    const answers = await Promise.all(
      Array.from({ length: 48 }, async (_, i) => await append(spaces[i % 8]!.name, { kind: 'obs', title: `to all ${i}`, to })),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    for (const r of readers) {
      const seqs = await relay.store.db
        .prepare<[string], { mailbox_seq: number }>('SELECT mailbox_seq FROM mailbox WHERE peer = ? ORDER BY mailbox_seq')
        .pluck<number>()
        .all(r.peerId);
      expect(seqs).toEqual(Array.from({ length: 48 }, (_, i) => i + 1));
    }
  });
});
