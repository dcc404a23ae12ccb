/**
 * Group commit for posts.append (relay/posts/commit-queue.ts): several appends may share one
 * commit if each 201 is sent only after its commit.
 *
 * Over the real app: appends sent together, some of them refused, each get their own answer;
 * every accepted one is stored at a gap-free position and its chain verifies; a refusal rolls
 * back only itself; a replay of a key first sent in the same batch answers that post. The
 * same-batch cases go through `app.inject` issued in one turn of the event loop, and the queue's
 * counters show they shared one transaction.
 *
 * The queue itself on a real SQLite database: a work that throws rolls back its savepoint
 * alone; a COMMIT that fails (a deferred foreign key) rejects every work of the batch and
 * leaves nothing behind; more than a batch's worth of works runs in order over several commits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { postJson, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { expectChainVerifies } from '../../helpers/chain.js';
import { signedPost, spaceWithWriters, startWithWriters } from '../../helpers/posts.js';
import { toHex } from '../../../shared/encoding.js';
import { verifyReceipt } from '../../../shared/receipt.js';
import { CommitQueue, commitQueueFor } from '../../../relay/posts/commit-queue.js';
import { openDatabase } from '../../../relay/store/sqlite/open.js';
import { sqliteRaw } from '../../../relay/store/sqlite/connection.js';
import type { Db } from '../../../relay/store/database.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

let relay: RunningRelay;
let signerKey: Uint8Array;
let owner: MintedToken;
let writers: MintedToken[];

beforeAll(async () => {
  ({ relay, signerKey, owner, writers } = await startWithWriters(16));
});
afterAll(async () => {
  await relay.close();
});

/** A fresh private SPACE with every writer admitted. */
const newSpace = async (): Promise<SpaceRow> => await spaceWithWriters(relay, owner, writers);

const auth = (t: MintedToken) => ({ authorization: `Bearer ${t.token}` });

/** The refill of every write bucket (30 a minute, burst 60 per KEY). */
const restWriters = () => relay.clock.advance(90_000);

function signed(w: MintedToken, space: SpaceRow, body: string, key: string = randomUUID()) {
  return signedPost(w, space, { kind: 'result', body, idempotency_key: key }).submission;
}

/** A 201 answer names a stored post at the same position, with a receipt that verifies. */
async function expectStored(answer: any): Promise<void> {
  verifyReceipt(answer, signerKey);
  const row = (await relay.store.posts.byPostId(answer.post_id))!;
  expect(row, answer.post_id).toBeDefined();
  expect(String(row.seq)).toBe(answer.seq);
  expect(toHex(row.chainHash)).toBe(answer.chain_hash);
}

describe('appends sent together over HTTP, some refused', () => {
  it('each refusal answers its own code, every accepted post is stored gap-free, nothing else is rolled back', async () => {
    restWriters();
    const space = await newSpace();
    const elsewhere = await newSpace();
    const mine = await postJson(`${relay.url}/v1/spaces/${space.name}/posts`, { kind: 'obs', body: 'the first' }, auth(writers[0]!));
    const foreign = await postJson(`${relay.url}/v1/spaces/${elsewhere.name}/posts`, { kind: 'obs', body: 'not here' }, auth(writers[0]!));
    expect([mine.status, foreign.status]).toEqual([201, 201]);

    type Expect = 'stored' | 'conflict-pair' | 'replay-pair' | 'REPLY_TARGET_NOT_FOUND' | 'REVISION_TARGET_NOT_FOUND';
    const sends: { w: MintedToken; body: unknown; expect: Expect; group?: string }[] = [];
    writers.forEach((w, wi) => {
      sends.push({ w, body: { kind: 'obs', body: `plain ${wi}` }, expect: 'stored' });
      sends.push({ w, body: signed(w, space, `signed ${wi}`), expect: 'stored' });
      sends.push({ w, body: { kind: 'obs', body: `reply ${wi}`, reply_to: mine.body.post_id }, expect: 'stored' });
      if (wi % 4 === 0) {
        // The same key with different content: one is written, the other refused.
        const key = `conflict-${wi}`;
        sends.push({ w, body: { kind: 'obs', body: 'one', idempotency_key: key }, expect: 'conflict-pair', group: key });
        sends.push({ w, body: { kind: 'obs', body: 'other', idempotency_key: key }, expect: 'conflict-pair', group: key });
      }
      if (wi % 4 === 1) {
        // The same key and content twice: one is written, the other is its replay.
        const s = signed(w, space, `twice ${wi}`, `twice-${wi}`);
        sends.push({ w, body: s, expect: 'replay-pair', group: `twice-${wi}` });
        sends.push({ w, body: s, expect: 'replay-pair', group: `twice-${wi}` });
      }
      if (wi % 4 === 2) {
        sends.push({ w, body: { kind: 'obs', reply_to: randomUUID() }, expect: 'REPLY_TARGET_NOT_FOUND' });
        sends.push({ w, body: { kind: 'obs', reply_to: foreign.body.post_id }, expect: 'REPLY_TARGET_NOT_FOUND' });
      }
      if (wi % 4 === 3) {
        // Someone else's post, and no post at all.
        sends.push({ w, body: { kind: 'obs', supersedes: mine.body.post_id }, expect: 'REVISION_TARGET_NOT_FOUND' });
        sends.push({ w, body: { kind: 'obs', retracts: randomUUID() }, expect: 'REVISION_TARGET_NOT_FOUND' });
      }
    });

    const answers = await Promise.all(sends.map(async (s) => await postJson(`${relay.url}/v1/spaces/${space.name}/posts`, s.body, auth(s.w))));

    const written: any[] = [];
    const groups = new Map<string, { status: number; body: any }[]>();
    answers.forEach((a, i) => {
      const s = sends[i]!;
      if (s.expect === 'stored') {
        expect(a.status, JSON.stringify(a.body)).toBe(201);
        written.push(a.body);
      } else if (s.group !== undefined) {
        groups.set(s.group, [...(groups.get(s.group) ?? []), a]);
      } else {
        expect(a.body.error?.code, JSON.stringify(a.body)).toBe(s.expect);
      }
    });
    for (const [group, pair] of groups) {
      const statuses = pair.map((a) => a.status).sort();
      const first = pair.find((a) => a.status === 201 && a.body.replayed === false)!;
      expect(first, group).toBeDefined();
      written.push(first.body);
      if (group.startsWith('conflict')) {
        expect(statuses).toEqual([201, 409]);
        expect(pair.find((a) => a.status === 409)!.body.error.code).toBe('IDEMPOTENCY_CONFLICT');
      } else {
        expect(statuses).toEqual([201, 201]);
        const replay = pair.find((a) => a.body.replayed === true)!.body;
        expect(replay).toMatchObject({ replayed: true, post_id: first.body.post_id, seq: first.body.seq });
        expect(replay.receipt.signature).toBe(first.body.receipt.signature);
      }
    }

    // The first post plus every 201: positions 2..n+1, each once, each stored as answered.
    const seqs = written.map((b) => Number(b.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: written.length }, (_, i) => i + 2));
    for (const b of written) await expectStored(b);
    expect((await relay.store.posts.head(space.id)).seq).toBe(written.length + 1);
    await expectChainVerifies(relay, space, written.length + 1);
    // The other SPACE did not move.
    expect((await relay.store.posts.head(elsewhere.id)).seq).toBe(1);
  });
});

// Appends issued in one turn reach the queue in that turn only where the reads before it answer
// without a round trip (SQLite): on PostgreSQL they arrive over several turns, in any order,
// and commit in several batches. Not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`appends in one batch${ON_POSTGRES_SKIP}`, () => {
  /** Issue every append in one turn of the event loop; the queue drains them in one batch. */
  async function sendInOneTurn(space: SpaceRow, sends: { w: MintedToken; body: unknown }[]) {
    const queue = commitQueueFor(relay.store.db);
    const before = { ...queue.stats };
    const answers = await Promise.all(
      sends.map(async (s) =>
        await relay.app.inject({ method: 'POST', url: `/v1/spaces/${space.name}/posts`, headers: auth(s.w), payload: s.body as object }),
      ),
    );
    return {
      answers: answers.map((r) => ({ status: r.statusCode, body: r.json() as any })),
      batches: queue.stats.batches - before.batches,
      works: queue.stats.works - before.works,
    };
  }

  it('share one commit; a replay of a key first sent in the same batch answers that post', async () => {
    restWriters();
    const space = await newSpace();
    const [a, b, c] = writers as [MintedToken, MintedToken, MintedToken];
    const once = signed(a, space, 'once', 'same-batch-key');
    const { answers, batches, works } = await sendInOneTurn(space, [
      { w: a, body: once },
      { w: b, body: { kind: 'obs', body: 'between' } },
      { w: a, body: once },
      { w: c, body: { kind: 'obs', body: 'last' } },
    ]);
    expect({ batches, works }).toEqual({ batches: 1, works: 4 });
    expect(answers.map((x) => x.status)).toEqual([201, 201, 201, 201]);
    expect(answers.map((x) => x.body.replayed)).toEqual([false, false, true, false]);
    expect(answers.map((x) => x.body.seq)).toEqual(['1', '2', '1', '3']);
    expect(answers[2]!.body).toMatchObject({ replayed: true, post_id: answers[0]!.body.post_id });
    expect(answers[2]!.body.receipt.signature).toBe(answers[0]!.body.receipt.signature);
    for (const i of [0, 1, 3]) await expectStored(answers[i]!.body);
    await expectChainVerifies(relay, space, 3);
  });

  it('a refused append rolls back only itself: the posts around it keep consecutive positions', async () => {
    restWriters();
    const space = await newSpace();
    const [a, b, c, d] = writers as [MintedToken, MintedToken, MintedToken, MintedToken];
    const { answers, batches, works } = await sendInOneTurn(space, [
      { w: a, body: { kind: 'obs', body: 'first', idempotency_key: 'k1' } },
      { w: a, body: { kind: 'obs', body: 'changed', idempotency_key: 'k1' } }, // same key, other content
      { w: b, body: { kind: 'obs', body: 'second', to: [c.peerId] } },
      { w: c, body: { kind: 'obs', reply_to: randomUUID() } }, // no such post
      { w: d, body: signed(d, space, 'signed first', 'k2') },
      { w: d, body: { kind: 'obs', body: 'signed first', idempotency_key: 'k2' } }, // signed-ness changed
      { w: c, body: { kind: 'obs', body: 'third' } },
    ]);
    expect({ batches, works }).toEqual({ batches: 1, works: 7 });
    expect(answers.map((x) => x.status)).toEqual([201, 409, 201, 422, 201, 409, 201]);
    expect(answers.map((x) => x.body.error?.code)).toEqual([
      undefined,
      'IDEMPOTENCY_CONFLICT',
      undefined,
      'REPLY_TARGET_NOT_FOUND',
      undefined,
      'IDEMPOTENCY_CONFLICT',
      undefined,
    ]);
    expect([0, 2, 4, 6].map((i) => answers[i]!.body.seq)).toEqual(['1', '2', '3', '4']);
    for (const i of [0, 2, 4, 6]) await expectStored(answers[i]!.body);
    await expectChainVerifies(relay, space, 4);
    // The delivery written by the second post survived the refusals around it.
    const mail = (await relay.store.mailbox.list(c.peerId, 0, 100)).filter((m) => m.postId === answers[2]!.body.post_id);
    expect(mail).toHaveLength(1);
  });
});

// the queue over a SQLite database opened here: not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`the commit queue on a real database${ON_POSTGRES_SKIP}`, () => {
  let db: Db;
  beforeAll(async () => {
    db = openDatabase(':memory:');
    await db.exec(`
      CREATE TABLE cq_parent (id INTEGER PRIMARY KEY) STRICT;
      CREATE TABLE cq_child (parent INTEGER NOT NULL REFERENCES cq_parent (id) DEFERRABLE INITIALLY DEFERRED) STRICT;
    `);
  });
  afterAll(async () => await db.close());

  const insertParent = (id: number) => async () => (await db.prepare('INSERT INTO cq_parent (id) VALUES (?)').run(id)).changes;
  const parents = async () => ((await db.prepare('SELECT id FROM cq_parent ORDER BY id').all()) as { id: number }[]).map((r) => r.id);
  const clear = async () => await db.exec('DELETE FROM cq_child; DELETE FROM cq_parent;');

  it('a work that throws rolls back its own writes and rejects only its own promise', async () => {
    await clear();
    const queue = new CommitQueue(db);
    const refusal = new Error('refused');
    const results = await Promise.allSettled([
      queue.enqueue(insertParent(1)),
      queue.enqueue(async () => {
        await insertParent(2)();
        throw refusal;
      }),
      queue.enqueue(insertParent(3)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: refusal },
      { status: 'fulfilled', value: 1 },
    ]);
    expect(await parents()).toEqual([1, 3]);
    expect(queue.stats).toMatchObject({ batches: 1, works: 3 });
  });

  it('a COMMIT that fails rejects every work of the batch and writes nothing', async () => {
    await clear();
    const queue = new CommitQueue(db);
    const results = await Promise.allSettled([
      queue.enqueue(insertParent(10)),
      // A deferred foreign key is checked at COMMIT only: the savepoint succeeds, the commit fails.
      queue.enqueue(async () => (await db.prepare('INSERT INTO cq_child (parent) VALUES (?)').run(999)).changes),
      queue.enqueue(insertParent(11)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of results) expect(String((r as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(await parents()).toEqual([]);
    expect(sqliteRaw(db).inTransaction).toBe(false);
    expect(queue.stats.batches).toBe(0);
    // The queue still works after a failed batch.
    await expect(queue.enqueue(insertParent(12))).resolves.toBe(1);
    expect(await parents()).toEqual([12]);
  });

  it('more works than a batch holds run in arrival order over several commits', async () => {
    await clear();
    const queue = new CommitQueue(db, 4);
    const order: number[] = [];
    const values = await Promise.all(
      Array.from({ length: 10 }, async (_, i) =>
        await queue.enqueue(async () => {
          order.push(i);
          await insertParent(100 + i)();
          return i;
        }),
      ),
    );
    expect(values).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(order).toEqual(values);
    expect(queue.stats).toMatchObject({ batches: 3, works: 10, largest: 4 });
    expect(await parents()).toEqual(Array.from({ length: 10 }, (_, i) => 100 + i));
  });

  it('works arriving over several turns while a batch is open all wait for it and then share the next commit', async () => {
    await clear();
    const queue = new CommitQueue(db);
    const turn = () => new Promise((r) => setImmediate(r));
    // The first work yields the event loop inside its transaction, as every statement does on
    // PostgreSQL (a round trip); three more arrive meanwhile, each on a turn of its own.
    const first = queue.enqueue(async () => {
      for (let i = 0; i < 6; i++) await turn();
      return await insertParent(30)();
    });
    const later: Promise<number>[] = [];
    for (let i = 0; i < 3; i++) {
      await turn();
      later.push(queue.enqueue(insertParent(31 + i)));
    }
    expect(await Promise.all([first, ...later])).toEqual([1, 1, 1, 1]);
    expect(queue.stats).toMatchObject({ batches: 2, works: 4, largest: 3 });
    expect(await parents()).toEqual([30, 31, 32, 33]);
  });

  it('a statement outside the batch waits for its transaction, so it never joins or sees it', async () => {
    await clear();
    const queue = new CommitQueue(db);
    let seenInside: number[] | undefined;
    const outside: number[][] = [];
    const work = await queue.enqueue(async () => {
      await insertParent(20)();
      // Yield inside the transaction: other code runs now.
      await new Promise((r) => setTimeout(r, 20));
      seenInside = await parents();
      return 1;
    });
    // Started while the batch's transaction is open (after its first statement).
    await new Promise((r) => setTimeout(r, 5));
    outside.push(await parents());
    await work;
    expect(seenInside).toEqual([20]);
    // The outside read waited for the COMMIT: it saw the batch whole, never half of it.
    expect(outside).toEqual([[20]]);
  });

  it('a batch size that is not a positive integer is refused', () => {
    expect(() => new CommitQueue(db, 0)).toThrow(RangeError);
  });
});
