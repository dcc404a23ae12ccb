/**
 * The task suite: `tasks.next` claims per second on a list of 10,000 tasks with `after`
 * dependencies, over HTTP against the real relay process, beside the in-process ceiling measured
 * in the same run.
 *
 *   ceiling ×c (no HTTP)   relay/tasks/commands.ts `nextTask` then `doneTask` in this process on
 *                          its own data directory, c claimers (1, 16) at once: the same commands
 *                          (checks under the write lock, the claim, one commit with
 *                          synchronous=FULL in WAL, grouped by the commit queue) without HTTP.
 *                          The baseline of the HTTP row with the same c.
 *   http ×c                c claimers (1, 16), each its own KEY on one keep-alive connection
 *                          (undici Pool), each asking `next`, then finishing the task it got with
 *                          `done` (its own result post, no confirmation asked, so the task is
 *                          accepted and the tasks waiting for it come free), then asking again.
 *
 * A claim is a `next` that handed out a task the caller did not hold; claims per second count
 * the `next` calls begun and answered inside the round, latency is of `next` alone. Each loop
 * also spends a `done`, so the claim rate is the rate of the whole take-and-finish loop, as an
 * agent runs it. The list: task n > 64 waits for n − 64 and n − 33, so about 32 tasks are
 * claimable at any moment and every `next` passes tasks that still wait; it is topped up to
 * 10,000 not yet accepted before every case's round. The relay runs with
 * SVC_RELAY_NO_RATE_LIMITS=1 (otherwise 30 writes a minute per KEY) and shares the machine's
 * cores with this process (the clients). Progress goes to stderr on a terminal only.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Pool } from 'undici';
import { appendPost } from '../relay/posts/append.js';
import type { Store } from '../relay/store/index.js';
import { doneTask, nextTask } from '../relay/tasks/commands.js';
import { mintToken, type MintedToken } from '../test/helpers/relay.js';
import { collectGarbage, progress, summarizeLatency, type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, expectCall, openInProcess, randomSigner, registerKey, spawnBenchRelay, tempDataDir, type InProcessRelay } from './relay-fixture.js';

const LIST = 10_000;
const CLAIMERS = [1, 16] as const;
const MAX_CLAIMERS = 16;
/** Tasks added at once while filling over HTTP; below 33, so every `after` names a task already stored. */
const ADD_WAVE = 16;

const ROUNDS = 4;
const WARMUP_MS = 200;
const ROUND_MS = 800;

/** The `after` of task `n`: the tasks 64 and 33 before it. */
function afterOf(n: number): number[] {
  return n > 64 ? [n - 64, n - 33] : [];
}

const latencyOf = (ms: readonly number[]) => summarizeLatency(ms.map((x) => x * 1e6));
const best = (rounds: readonly number[]): number => Math.max(...rounds);

interface CaseResult {
  opsPerSec: number[];
  latencyMs: number[];
}

/** One round's figures from `claimers` loops that each run `next` then `done` until the round ends. */
async function runRound(
  claimers: number,
  next: (i: number) => Promise<{ number: number | null; claimed: boolean }>,
  done: (i: number, number: number) => Promise<void>,
): Promise<CaseResult> {
  collectGarbage();
  const latencyMs: number[] = [];
  const measureFrom = performance.now() + WARMUP_MS;
  const end = measureFrom + ROUND_MS;
  let claims = 0;
  const worker = async (i: number): Promise<void> => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const got = await next(i);
      const t1 = performance.now();
      if (got.number === null) throw new Error('tasks: the list ran dry; make the round shorter or the list longer');
      if (got.claimed && t0 >= measureFrom && t1 <= end) {
        latencyMs.push(t1 - t0);
        claims++;
      }
      // Finished even past the end, so no claimer starts the next round holding a task.
      await done(i, got.number);
    }
  };
  await Promise.all(Array.from({ length: claimers }, (_, i) => worker(i)));
  return { opsPerSec: [(claims * 1000) / ROUND_MS], latencyMs };
}

// ---------------------------------------------------------------------------------------------
// Ceiling: the task commands in this process, no HTTP.

interface Ceiling {
  r: InProcessRelay;
  space: string;
  spaceRowId: number;
  owner: string;
  claimers: string[];
  posts: string[];
}

/** Top the SPACE's list up to LIST tasks not yet accepted, straight through the store in one transaction. */
async function topUpInStore(store: Store, spaceRowId: number, owner: string): Promise<void> {
  await store.db.transaction(async () => {
    const { lastNumber, notAccepted } = await store.tasks.counts(spaceRowId);
    for (let n = lastNumber + 1; n <= lastNumber + LIST - notAccepted; n++) {
      await store.tasks.insert({ spaceRowId, title: `task ${n}`, body: 'bench', tag: null, after: afterOf(n), createdBy: owner, now: Date.now() });
    }
  }).immediate();
}

async function ceilingSetup(): Promise<Ceiling> {
  const r = await openInProcess();
  const owner = await registerKey(r, randomSigner());
  const claimers: string[] = [];
  for (let i = 0; i < MAX_CLAIMERS; i++) claimers.push(await registerKey(r, randomSigner()));
  const space = await createSpaceInStore(r, owner, `tasks-${randomUUID().slice(0, 8)}`, { taskConfirmations: 0 });
  for (const k of claimers) await r.store.members.admit(space, { peer: k, role: 'writer', tags: [], broughtInBy: owner }, owner, Date.now());
  const posts = await Promise.all(claimers.map(async (k) => (await appendPost(r.ctx, space.name, k, { kind: 'result', body: 'bench result' })).post.postId));
  await topUpInStore(r.store, space.id, owner);
  return { r, space: space.name, spaceRowId: space.id, owner, claimers, posts };
}

async function runCeiling(c: Ceiling, claimers: number): Promise<CaseResult> {
  await topUpInStore(c.r.store, c.spaceRowId, c.owner);
  return await runRound(
    claimers,
    async (i) => {
      const a = await nextTask(c.r.ctx, c.claimers[i]!, c.space, { tag: undefined, verify: false });
      return { number: a.task === null ? null : (a.task.number as number), claimed: a.claimed && !a.renewed };
    },
    async (i, n) => void (await doneTask(c.r.ctx, c.claimers[i]!, c.space, String(n), c.posts[i]!)),
  );
}

// ---------------------------------------------------------------------------------------------
// HTTP against the relay process.

interface HttpList {
  url: string;
  space: string;
  owner: MintedToken;
  claimers: MintedToken[];
  posts: string[];
  /** Tasks added so far (the last number). */
  added: number;
  accepted: number;
}

/** Top the list up to LIST not yet accepted through tasks.add, in waves of ADD_WAVE at once. */
async function topUpOverHttp(l: HttpList): Promise<void> {
  const missing = LIST - (l.added - l.accepted);
  const pool = new Pool(l.url, { connections: ADD_WAVE, pipelining: 1 });
  const headers = { authorization: `Bearer ${l.owner.token}`, 'content-type': 'application/json' };
  try {
    for (let sent = 0; sent < missing; ) {
      const wave = Math.min(ADD_WAVE, missing - sent);
      await Promise.all(
        Array.from({ length: wave }, async (_, k) => {
          const n = l.added + k + 1;
          const body = JSON.stringify({ title: `task ${n}`, body: 'bench', after: afterOf(n) });
          const res = await pool.request({ path: `/v1/spaces/${l.space}/tasks`, method: 'POST', headers, body });
          const text = await res.body.text();
          if (res.statusCode !== 201) throw new Error(`tasks.add refused: ${res.statusCode} ${text}`);
        }),
      );
      l.added += wave;
      sent += wave;
      if (sent % 1000 < ADD_WAVE) progress(`tasks: filling the list ${sent}/${missing}`);
    }
  } finally {
    await pool.close();
  }
}

async function runHttp(l: HttpList, claimers: number): Promise<CaseResult> {
  await topUpOverHttp(l);
  const pool = new Pool(l.url, { connections: claimers, pipelining: 1 });
  const headers = (i: number) => ({ authorization: `Bearer ${l.claimers[i]!.token}`, 'content-type': 'application/json' });
  const nextBody = '{}';
  const doneBodies = l.posts.map((p) => JSON.stringify({ post_id: p }));
  try {
    return await runRound(
      claimers,
      async (i) => {
        const res = await pool.request({ path: `/v1/spaces/${l.space}/tasks/next`, method: 'POST', headers: headers(i), body: nextBody });
        const a = (await res.body.json()) as { task: { number: number } | null; claimed: boolean; renewed: boolean };
        if (res.statusCode !== 200) throw new Error(`tasks.next refused: ${res.statusCode} ${JSON.stringify(a)}`);
        return { number: a.task?.number ?? null, claimed: a.claimed && !a.renewed };
      },
      async (i, n) => {
        const res = await pool.request({ path: `/v1/spaces/${l.space}/tasks/${n}/done`, method: 'POST', headers: headers(i), body: doneBodies[i]! });
        const text = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`tasks.done refused: ${res.statusCode} ${text}`);
        l.accepted++;
      },
    );
  } finally {
    await pool.close();
  }
}

async function httpSetup(url: string): Promise<HttpList> {
  const owner = await mintToken(url);
  const claimers = await Promise.all(Array.from({ length: MAX_CLAIMERS }, async () => await mintToken(url)));
  const space = `bench-tasks-${randomUUID().slice(0, 6)}`;
  // A private SPACE asks no confirmation by default: `done` accepts at once.
  await expectCall(201, `${url}/v1/spaces`, 'POST', owner.token, { name: space, title: 'bench' });
  const posts: string[] = [];
  for (const k of claimers) {
    await expectCall(201, `${url}/v1/spaces/${space}/members/${k.peerId}`, 'PUT', owner.token, { role: 'writer' });
    posts.push((await expectCall(201, `${url}/v1/spaces/${space}/posts`, 'POST', k.token, { kind: 'result', body: 'bench result' })).post_id);
  }
  return { url, space, owner, claimers, posts, added: 0, accepted: 0 };
}

async function run(): Promise<SuiteReport> {
  progress('tasks: setting up');
  const ceiling = await ceilingSetup();
  const dataDir = tempDataDir('svc-bench-tasks-');
  const relay = await spawnBenchRelay(dataDir);
  try {
    const list = await httpSetup(relay.url);
    const cases = new Map<string, CaseResult>();
    const add = (name: string, r: CaseResult) => {
      const acc = cases.get(name) ?? { opsPerSec: [], latencyMs: [] };
      acc.opsPerSec.push(...r.opsPerSec);
      acc.latencyMs.push(...r.latencyMs);
      cases.set(name, acc);
    };
    const ceilName = (c: number) => `ceiling ×${c} (no HTTP)`;
    const httpName = (c: number) => `http ×${c}`;
    // Interleaved rounds: every case once per round, so machine noise spreads over all of them.
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CLAIMERS) {
        progress(`tasks: round ${round + 1}/${ROUNDS}, ${c} claimer${c === 1 ? '' : 's'}`);
        add(ceilName(c), await runCeiling(ceiling, c));
        add(httpName(c), await runHttp(list, c));
      }
    }
    progress('');

    const rows: Row[] = [];
    const notes: string[] = [];
    for (const c of CLAIMERS) {
      const ceil = cases.get(ceilName(c))!;
      const http = cases.get(httpName(c))!;
      const ceilOps = best(ceil.opsPerSec);
      const httpOps = best(http.opsPerSec);
      rows.push({ name: ceilName(c), opsPerSec: ceilOps, latency: latencyOf(ceil.latencyMs), note: 'next + done per claim' });
      rows.push({ name: httpName(c), opsPerSec: httpOps, baseline: ceilName(c), latency: latencyOf(http.latencyMs), note: `${((httpOps / ceilOps) * 100).toFixed(0)}% of the ceiling` });
    }
    notes.push(
      `claims per second: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms after ${WARMUP_MS} ms of warm-up, on a list topped up to ` +
        `${LIST.toLocaleString('en-US')} tasks not yet accepted before every round (task n waits for n − 64 and n − 33); each claim is followed by its done; ` +
        'p50/p99/max are of next alone; "vs baseline": time per claim ÷ the in-process ceiling\'s at the same number of claimers; ' +
        'relay process with SVC_RELAY_NO_RATE_LIMITS=1, synchronous=FULL; the commit queue (relay/posts/commit-queue.ts) commits the commands that arrive together in one transaction',
      `tasks taken and finished over HTTP in this run: ${list.accepted.toLocaleString('en-US')}, of ${list.added.toLocaleString('en-US')} added`,
    );
    return { rows, notes };
  } finally {
    progress('');
    await relay.kill('SIGTERM');
    ceiling.r.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export const tasksSuite: Suite = {
  name: 'tasks',
  title: 'tasks.next claims over HTTP on a list of 10,000 tasks with after dependencies vs the in-process ceiling',
  run,
};
