/**
 * The findings suite: a page of 50 findings (`GET /v1/spaces/{name}/findings?limit=50`) against
 * a page of 50 posts of the same SPACE (`GET /v1/spaces/{name}/posts?limit=50`, the baseline),
 * over HTTP from a real relay process, on SQLite and on PostgreSQL.
 *
 * A finding's entry needs reads of its own beside the page's (its sources, what cites it, the
 * warns and fails and task rejects that contest it, the task it is the result of): some five
 * short statements each, which on PostgreSQL are round trips. The SPACE holds 20 results, 50
 * findings each citing two of them, and 2,000 open tasks (a finding is often a task's result, and
 * its entry names the task). Each case is called one call after another; the cases run
 * in interleaved rounds and a case's figure is the median call of its best round.
 *
 * PostgreSQL: SVC_BENCH_DATABASE_URL, or a throwaway cluster (scripts/postgres.mjs); when none
 * can be had, the PostgreSQL rows are left out and the notes say why.
 */
import { rmSync } from 'node:fs';
import { Agent, request } from 'undici';
import { mintToken } from '../test/helpers/relay.js';
import { benchDatabase, type BenchDatabase } from './appends-postgres.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { progress, type Row, type Suite, type SuiteReport } from './harness.js';

const RESULTS = 20;
const FINDINGS = 50;
/** Tasks in the SPACE beside them (open, none with a result): what each finding's task question looks through. */
const TASKS = 2_000;
const PAGE = 50;
const ROUNDS = 5;
const CALLS = 40;
const WARMUP_CALLS = 20;

async function callJson(agent: Agent, url: string, token: string, method: 'GET' | 'POST', body?: unknown): Promise<any> {
  const res = await request(url, {
    method,
    dispatcher: agent,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The rows of one store: a relay on `dataDir` (and `database` when PostgreSQL), filled, then measured. */
async function measureStore(label: string, dataDir: string, args: string[]): Promise<Row[]> {
  const relay = await spawnBenchRelay(dataDir, {}, args);
  const agent = new Agent({ connections: 2 });
  try {
    progress(`findings (${label}): filling a SPACE`);
    const { token } = await mintToken(relay.url);
    const name = `findings-${label}`;
    await callJson(agent, `${relay.url}/v1/spaces`, token, 'POST', { name });
    const postsUrl = `${relay.url}/v1/spaces/${name}/posts`;
    const results: string[] = [];
    for (let i = 0; i < RESULTS; i++) results.push((await callJson(agent, postsUrl, token, 'POST', { kind: 'result', title: `run ${i}`, body: `p50 ${10 + i} ms` })).post_id);
    for (let i = 0; i < FINDINGS; i++) {
      const data = { claim: `claim ${i}`, status: 'proposed', confidence: 'medium', sources: [results[i % RESULTS], results[(i + 7) % RESULTS]] };
      await callJson(agent, postsUrl, token, 'POST', { kind: 'finding', title: `finding ${i}`, data });
    }
    const tasksUrl = `${relay.url}/v1/spaces/${name}/tasks`;
    for (let wave = 0; wave < TASKS; wave += 16) {
      progress(`findings (${label}): adding tasks, ${wave} of ${TASKS}`);
      await Promise.all(Array.from({ length: Math.min(16, TASKS - wave) }, (_, i) => callJson(agent, tasksUrl, token, 'POST', { title: `task ${wave + i}`, body: 'bench' })));
    }
    const findingsUrl = `${relay.url}/v1/spaces/${name}/findings?limit=${PAGE}`;
    const first = await callJson(agent, findingsUrl, token, 'GET');
    if (first.items.length !== PAGE) throw new Error(`the findings page held ${first.items.length} findings, not ${PAGE}`);
    const cases = [
      { name: `${label}: posts page of ${PAGE}`, url: `${postsUrl}?limit=${PAGE}&order=desc` },
      { name: `${label}: findings page of ${PAGE}`, url: findingsUrl, baseline: `${label}: posts page of ${PAGE}` },
    ];
    const best = new Map<string, number[]>();
    for (const c of cases) for (let i = 0; i < WARMUP_CALLS; i++) await callJson(agent, c.url, token, 'GET');
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of cases) {
        progress(`findings (${label}): round ${round + 1} of ${ROUNDS}, ${c.name}`);
        const ms: number[] = [];
        for (let i = 0; i < CALLS; i++) {
          const t0 = performance.now();
          await callJson(agent, c.url, token, 'GET');
          ms.push(performance.now() - t0);
        }
        ms.sort((a, b) => a - b);
        const kept = best.get(c.name);
        if (kept === undefined || ms[ms.length >> 1]! < kept[kept.length >> 1]!) best.set(c.name, ms);
      }
    }
    return cases.map((c) => {
      const ms = best.get(c.name)!;
      const mid = ms[ms.length >> 1]!;
      const p99 = ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.99) - 1)]!;
      return {
        name: c.name,
        opsPerSec: 1000 / mid,
        latency: { count: ms.length, p50: mid * 1e6, p99: p99 * 1e6, max: ms[ms.length - 1]! * 1e6 },
        ...(c.baseline === undefined ? {} : { baseline: c.baseline }),
      };
    });
  } finally {
    progress('');
    await agent.close();
    await relay.kill('SIGTERM');
  }
}

async function run(): Promise<SuiteReport> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const sqliteDir = tempDataDir('svc-bench-findings-');
  try {
    rows.push(...(await measureStore('sqlite', sqliteDir, [])));
  } finally {
    rmSync(sqliteDir, { recursive: true, force: true });
  }
  let database: BenchDatabase | undefined;
  try {
    database = benchDatabase();
  } catch (e) {
    notes.push(`PostgreSQL rows left out: ${(e as Error).message}`);
  }
  if (database !== undefined) {
    const pgDir = tempDataDir('svc-bench-findings-pg-');
    try {
      rows.push(...(await measureStore('postgres', pgDir, ['--database', database.url])));
      notes.push(`PostgreSQL: ${database.origin}`);
    } finally {
      database.stop();
      rmSync(pgDir, { recursive: true, force: true });
    }
  }
  notes.unshift(
    `a SPACE of ${RESULTS} results, ${FINDINGS} findings citing two of them each and ${TASKS} open tasks; ${CALLS} calls one after another per round, ${ROUNDS} interleaved rounds, the median call of the best round; one relay process (SVC_RELAY_NO_RATE_LIMITS=1)`,
    'vs baseline: the findings page\'s time ÷ a page of as many posts of the same SPACE, newest first, on the same store',
  );
  return { rows, notes };
}

export const findingsSuite: Suite = {
  name: 'findings',
  title: `a page of ${PAGE} findings against a page of ${PAGE} posts, over HTTP, SQLite and PostgreSQL`,
  run,
};
