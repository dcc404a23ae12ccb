/**
 * `npm run bench -- appends --store postgres`: signed 1 KiB appends over HTTP into relay
 * processes on one PostgreSQL database, beside the SQLite store and the in-process ceiling
 * measured in the same run.
 *
 *   http 1 KiB <layout> ×<c> <store>   c concurrent clients (1, 16, 64), one KEY each, as in the
 *                                      SQLite suite (bench/appends.ts): "sqlite, 1 relay", the
 *                                      relay on its own SQLite file; "postgres, 1 relay"; and
 *                                      "postgres, 2 relays", two processes on the one database
 *                                      (same SPACES and KEYS), client i talking to process i mod 2.
 *   ceiling 1 KiB (no HTTP, sqlite)    the baseline every ratio is against: bench/appends-cases.ts's
 *                                      ceiling, appendPost one after another, a commit each.
 *   in-process 1 KiB ×1 postgres       the same on the PostgreSQL store: what one round trip
 *                                      per statement and a durable COMMIT cost, no HTTP.
 *   in-process 1 KiB ×16 <store>       16 concurrent appends in this process through the group
 *                                      commit the HTTP route uses (appendPostGrouped), no HTTP:
 *                                      what the store takes when HTTP and the clients are out of
 *                                      the way (closest to a figure measured without HTTP).
 *
 * The database: SVC_BENCH_DATABASE_URL names one the bench may fill (tables are created by the
 * relay's migrations; every run adds new SPACES and KEYS); unset, a throwaway cluster is
 * started in a temporary directory with scripts/postgres.mjs (fsync and synchronous_commit
 * on, so a COMMIT is as durable as SQLite's with synchronous=FULL) and removed at the end.
 * Everything shares the machine: the clients, every relay process and the PostgreSQL server.
 * Progress goes to stderr on a terminal only.
 *
 * `--db-latency 1ms` measures scaling instead, through a proxy that adds the round trip of a
 * database on another machine (runScaling, below): 1, 2 and 4 relay processes, one SPACE and 64
 * SPACES, 16 and 64 clients, and how busy the machine's cores were in each case. `--processes
 * 1,2`, `--clients 16` and `--rounds 1` make it smaller.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { appendPostGrouped } from '../relay/posts/append.js';
import type { SpawnedRelay } from '../test/helpers/relay.js';
import {
  best,
  ceilingSetup,
  latencyOf,
  LAYOUTS,
  p99Of,
  ROUND_MS,
  ROUNDS,
  runCeiling,
  runHttp,
  setUpWriters,
  signedBody,
  WARMUP_MS,
  type CaseResult,
  type Layout,
  type Space,
  type Writer,
} from './appends-cases.js';
import { collectGarbage, formatDuration, progress, type Row, type SuiteReport } from './harness.js';
import { startLatencyProxy, type LatencyProxy } from './latency-proxy.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const CLIENTS = [1, 16, 64] as const;
const SIZE = { label: '1 KiB', bytes: 1024 } as const;
const IN_PROCESS_CLIENTS = 16;
/** What the public service of this protocol reports: appends/s at 16 clients, PostgreSQL in memory, no HTTP, no signature checks. */
const PUBLIC_SERVICE_AT_16 = 5163;
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'postgres.mjs');

export interface BenchDatabase {
  url: string;
  /** How it was had, for the notes. */
  origin: string;
  stop(): void;
}

/** SVC_BENCH_DATABASE_URL, or a throwaway cluster (scripts/postgres.mjs) with a database of its own. */
export function benchDatabase(): BenchDatabase {
  const given = process.env.SVC_BENCH_DATABASE_URL;
  if (given) return { url: given, origin: 'SVC_BENCH_DATABASE_URL', stop() {} };
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-pg-'));
  const started = spawnSync(process.execPath, [SCRIPT, 'start', '--dir', dir, '--database', 'svc_bench'], { encoding: 'utf8' });
  if (started.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start a PostgreSQL cluster (or set SVC_BENCH_DATABASE_URL): ${started.stderr.trim()}`);
  }
  return {
    url: started.stdout.trim(),
    origin: 'a throwaway cluster (scripts/postgres.mjs: fsync on, synchronous_commit on, default shared_buffers)',
    stop() {
      const s = spawnSync(process.execPath, [SCRIPT, 'stop', '--dir', dir], { encoding: 'utf8' });
      if (s.status !== 0) process.stderr.write(`bench: stopping the PostgreSQL cluster failed: ${s.stderr}\n`);
    },
  };
}

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
  } finally {
    await client.end();
  }
}

type Ceiling = Awaited<ReturnType<typeof ceilingSetup>>;

/** `clients` appends at a time in this process through the group commit, into the ceiling's SPACE. */
async function runGrouped(c: Ceiling, clients: number, expected: number): Promise<CaseResult> {
  const count = Math.ceil(expected * ((WARMUP_MS + ROUND_MS) / 1000) * 1.5) + 50;
  const bodies = Array.from({ length: count }, (_, k) => JSON.parse(signedBody(c.signer, c.author, c.space, SIZE.bytes, k)) as unknown);
  let k = 0;
  const next = (): unknown => bodies[k++] ?? JSON.parse(signedBody(c.signer, c.author, c.space, SIZE.bytes, k));
  collectGarbage();
  const latencyMs: number[] = [];
  const started = performance.now();
  const measureFrom = started + WARMUP_MS;
  const end = measureFrom + ROUND_MS;
  let done = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      await appendPostGrouped(c.r.ctx, c.space.name, c.author, next());
      const t1 = performance.now();
      if (t0 >= measureFrom && t1 <= end) {
        latencyMs.push(t1 - t0);
        done++;
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, async () => await worker()));
  return { opsPerSec: [(done * 1000) / ROUND_MS], latencyMs };
}

interface Target {
  label: string;
  urls: string[];
  writers: Writer[];
  hot: Space;
  spread: Space[];
}

function add(acc: Map<string, CaseResult>, name: string, r: CaseResult): void {
  const a = acc.get(name) ?? { opsPerSec: [], latencyMs: [], roundP99Ms: [] };
  a.opsPerSec.push(...r.opsPerSec);
  a.latencyMs.push(...r.latencyMs);
  // A round with no request measured (one stalled past its end) counts 0 ops/s and has no p99.
  if (r.latencyMs.length > 0) a.roundP99Ms!.push(p99Of(r.latencyMs));
  acc.set(name, a);
}

export async function runPostgres(): Promise<SuiteReport> {
  const latency = optionValue('--db-latency');
  if (latency !== undefined) return await runScaling(latencyMs(latency));
  const database = benchDatabase();
  const sqliteDir = tempDataDir('svc-bench-appends-');
  const pgDir = tempDataDir('svc-bench-appends-pg-');
  const relays: SpawnedRelay[] = [];
  const ceilings: Ceiling[] = [];
  try {
    const version = await serverVersion(database.url);
    progress('starting the relays');
    const sqliteCeiling = await ceilingSetup();
    ceilings.push(sqliteCeiling);
    const pgCeiling = await ceilingSetup(database.url);
    ceilings.push(pgCeiling);
    const sqliteRelay = await spawnBenchRelay(sqliteDir);
    relays.push(sqliteRelay);
    // The first process migrates and makes the key files; the second starts on what it made.
    const pgA = await spawnBenchRelay(pgDir, {}, ['--database', database.url]);
    relays.push(pgA);
    const pgB = await spawnBenchRelay(pgDir, {}, ['--database', database.url]);
    relays.push(pgB);
    progress('KEYS and SPACES');
    const onPostgres = await setUpWriters(pgA.url, CLIENTS);
    const targets: Target[] = [
      { label: 'sqlite, 1 relay', urls: [sqliteRelay.url], ...(await setUpWriters(sqliteRelay.url, CLIENTS)) },
      { label: 'postgres, 1 relay', urls: [pgA.url], ...onPostgres },
      { label: 'postgres, 2 relays', urls: [pgA.url, pgB.url], ...onPostgres },
    ];

    const ceilingName = `ceiling ${SIZE.label} (no HTTP, sqlite)`;
    const inProcess = [
      { name: `in-process ${SIZE.label} ×1 postgres (no HTTP)`, run: async (e: number) => await runCeiling(pgCeiling, SIZE.bytes, e) },
      { name: `in-process ${SIZE.label} ×${IN_PROCESS_CLIENTS} sqlite (group commit, no HTTP)`, run: async (e: number) => await runGrouped(sqliteCeiling, IN_PROCESS_CLIENTS, e) },
      { name: `in-process ${SIZE.label} ×${IN_PROCESS_CLIENTS} postgres (group commit, no HTTP)`, run: async (e: number) => await runGrouped(pgCeiling, IN_PROCESS_CLIENTS, e) },
    ];
    const key = (layout: Layout, c: number, t: Target) => `http ${SIZE.label} ${layout} ×${c} ${t.label}`;
    const results = new Map<string, CaseResult>();
    // Enough bodies signed ahead for the case's best round so far (or the ceiling's, at first).
    const expectedFor = (name: string) => Math.max(best(results.get(ceilingName)?.opsPerSec ?? [1500]), best(results.get(name)?.opsPerSec ?? [0]));
    const total = 1 + inProcess.length + LAYOUTS.length * CLIENTS.length * targets.length;

    // Interleaved rounds: every case once per round, so machine noise spreads over all of them.
    for (let round = 0; round < ROUNDS; round++) {
      let n = 0;
      const step = (name: string) => progress(`round ${round + 1}/${ROUNDS}, case ${++n}/${total}: ${name}`);
      step(ceilingName);
      add(results, ceilingName, await runCeiling(sqliteCeiling, SIZE.bytes, expectedFor(ceilingName)));
      for (const p of inProcess) {
        step(p.name);
        add(results, p.name, await p.run(expectedFor(p.name)));
      }
      for (const layout of LAYOUTS) {
        for (const c of CLIENTS) {
          for (const t of targets) {
            const name = key(layout, c, t);
            step(name);
            add(results, name, await runHttp(t.urls, t.writers, layout, t.hot, t.spread, SIZE.bytes, c, expectedFor(name)));
          }
        }
      }
    }
    progress('');

    const ceilOps = best(results.get(ceilingName)!.opsPerSec);
    const share = (ops: number) => `${((ops / ceilOps) * 100).toFixed(0)}% of ceiling`;
    const rows: Row[] = [{ name: ceilingName, opsPerSec: ceilOps, latency: latencyOf(results.get(ceilingName)!.latencyMs) }];
    for (const p of inProcess) {
      const r = results.get(p.name)!;
      rows.push({ name: p.name, opsPerSec: best(r.opsPerSec), baseline: ceilingName, latency: latencyOf(r.latencyMs), note: share(best(r.opsPerSec)) });
    }
    for (const layout of LAYOUTS) {
      for (const t of targets) {
        for (const c of CLIENTS) {
          const r = results.get(key(layout, c, t))!;
          const ops = best(r.opsPerSec);
          rows.push({ name: key(layout, c, t), opsPerSec: ops, baseline: ceilingName, latency: latencyOf(r.latencyMs), note: share(ops) });
        }
      }
    }

    const at16 = (t: Target, layout: Layout) => best(results.get(key(layout, 16, t))!.opsPerSec);
    const grouped = best(results.get(inProcess[2]!.name)!.opsPerSec);
    const notes = [
      `PostgreSQL ${version}, ${database.origin}; every relay process, the server and the clients share the machine's cores`,
      `ops/s: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms after ${WARMUP_MS} ms of warm-up; p50/p99/max over every measured request of every round; ` +
        '"vs baseline": time per append ÷ the SQLite ceiling\'s; relay processes with SVC_RELAY_NO_RATE_LIMITS=1; ' +
        'clients: undici, one keep-alive connection each, bodies signed before the case; "2 relays": client i talks to process i mod 2',
      ...LAYOUTS.map(
        (layout) =>
          `${SIZE.label} ${layout}, 16 clients: ${targets.map((t) => `${t.label} ${Math.round(at16(t, layout)).toLocaleString('en-US')}/s (p99 ${formatDuration(p99Of(results.get(key(layout, 16, t))!.latencyMs) * 1e6)})`).join('; ')}`,
      ),
      `the public service of this protocol reports ${PUBLIC_SERVICE_AT_16.toLocaleString('en-US')} appends/s at 16 clients on PostgreSQL in memory, without HTTP or signature checks; ` +
        `here, 16 clients: ${Math.round(at16(targets[1]!, 'one SPACE')).toLocaleString('en-US')}/s over HTTP into one relay process (signatures checked, receipts signed, each COMMIT fsync'd), ` +
        `${Math.round(grouped).toLocaleString('en-US')}/s in process without HTTP`,
      'on PostgreSQL a write locks what it touches (its SPACE, its author, the mailboxes it delivers to; ARCHITECTURE.md "Write locks"), so appends to one SPACE ' +
        'commit one group at a time while appends to other SPACES commit beside them, each process grouping what arrives for one SPACE into one transaction ' +
        '(relay/posts/commit-queue.ts, one lane per SPACE); inside a group each append runs a few statements one after another (the read of the SPACE, role, ' +
        'block, replay and both heads, the insert; SEEK rows and deliveries once per group), each a round trip to the server, on a machine whose two cores ' +
        'the server, the relays and the clients share',
    ];
    return { rows, notes };
  } finally {
    progress('');
    await Promise.all(relays.map(async (r) => await r.kill('SIGTERM')));
    for (const c of ceilings) await c.r.close();
    database.stop();
    rmSync(sqliteDir, { recursive: true, force: true });
    rmSync(pgDir, { recursive: true, force: true });
  }
}

/** `--name value` or `--name=value`, undefined when absent. */
function optionValue(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const at = argv.indexOf(name);
  if (at >= 0) {
    const value = argv[at + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${name}: a value is needed`);
    return value;
  }
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** `1ms`, `0.5ms` or a bare number of milliseconds. */
function latencyMs(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms)?$/.exec(text.trim());
  if (m === null) throw new Error(`--db-latency: a round trip in ms (1ms), not ${text}`);
  return Number(m[1]);
}

/** A comma-separated list of positive integers (`--processes 1,2,4`), or `fallback`. */
function counts(name: string, fallback: readonly number[]): number[] {
  const text = optionValue(name);
  if (text === undefined) return [...fallback];
  const list = text.split(',').map((x) => Number(x));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${name}: positive integers separated by commas, not ${text}`);
  return list;
}

/** The newest posts row id: posts committed so far (ids come from a sequence; a rolled-back append skips one). */
async function highestPost(client: pg.Client | undefined): Promise<number> {
  const r = await client!.query<{ n: string | null }>('SELECT max(id) AS n FROM posts');
  return Number(r.rows[0]?.n ?? 0);
}

/** The machine's CPU time so far from /proc/stat, in clock ticks: busy and all. */
function cpuTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

const SCALING_PROCESSES = [1, 2, 4] as const;
const SCALING_CLIENTS = [16, 64] as const;

/**
 * `--db-latency <ms>`: the relays reach PostgreSQL through a proxy that adds that much to each
 * round trip (bench/latency-proxy.ts), as a database on another machine would; 1, 2 and 4
 * relay processes (`--processes`), one SPACE and 64 SPACES, 16 and 64 clients (`--clients`),
 * `--rounds` interleaved rounds (default 5). Each case says how busy the machine's cores were
 * while it ran (/proc/stat: every process, the server and the clients included) and so the CPU
 * an append cost across the machine.
 */
async function runScaling(roundTripMs: number): Promise<SuiteReport> {
  const processes = counts('--processes', SCALING_PROCESSES);
  const clients = counts('--clients', SCALING_CLIENTS);
  const rounds = counts('--rounds', [ROUNDS])[0]!;
  const cores = availableParallelism();
  const database = benchDatabase();
  const dir = tempDataDir('svc-bench-appends-pg-');
  const relays: SpawnedRelay[] = [];
  let proxy: LatencyProxy | undefined;
  let counter: pg.Client | undefined;
  try {
    const version = await serverVersion(database.url);
    const target = new URL(database.url);
    proxy = await startLatencyProxy(target.hostname, Number(target.port || 5432), roundTripMs);
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    progress('starting the relays');
    // The first process migrates and makes the key files; the others start on what it made.
    for (let i = 0; i < Math.max(...processes); i++) relays.push(await spawnBenchRelay(dir, {}, ['--database', proxied.toString()]));
    progress('KEYS and SPACES');
    const { writers, hot, spread } = await setUpWriters(relays[0]!.url, clients);
    counter = new pg.Client({ connectionString: database.url });
    counter.on('error', () => undefined);
    await counter.connect();
    const label = (layout: Layout, c: number, p: number) => `http ${SIZE.label} ${layout} ×${c}, ${p} relay${p === 1 ? '' : 's'}`;
    const results = new Map<string, CaseResult>();
    const busy = new Map<string, number[]>();
    const total = LAYOUTS.length * clients.length * processes.length;
    for (let round = 0; round < rounds; round++) {
      let n = 0;
      for (const layout of LAYOUTS) {
        for (const c of clients) {
          for (const p of processes) {
            const name = label(layout, c, p);
            progress(`round ${round + 1}/${rounds}, case ${++n}/${total}: ${name}`);
            const expected = Math.max(200, best(results.get(name)?.opsPerSec ?? [0]));
            const before = cpuTicks();
            const postsBefore = await highestPost(counter);
            const t0 = performance.now();
            const r = await runHttp(relays.slice(0, p).map((x) => x.url), writers, layout, hot, spread, SIZE.bytes, c, expected);
            const seconds = (performance.now() - t0) / 1000;
            const committed = (await highestPost(counter)) - postsBefore;
            const after = cpuTicks();
            // Posts committed over the whole case (warm-up included), counted in the database: a
            // case whose requests outlast its round still has a rate.
            add(results, name, { opsPerSec: [committed / seconds], latencyMs: r.latencyMs });
            busy.set(name, [...(busy.get(name) ?? []), ((after.busy - before.busy) / (after.total - before.total)) * cores]);
          }
        }
      }
    }
    progress('');

    const ops = (name: string) => best(results.get(name)!.opsPerSec);
    const busyOf = (name: string) => Math.max(...busy.get(name)!);
    const rows: Row[] = [];
    for (const layout of LAYOUTS) {
      for (const c of clients) {
        for (const p of processes) {
          const name = label(layout, c, p);
          const o = ops(name);
          const b = busyOf(name);
          const samples = results.get(name)!.latencyMs;
          rows.push({
            name,
            opsPerSec: o,
            ...(samples.length > 0 ? { latency: latencyOf(samples) } : {}),
            note: `busy ${b.toFixed(2)} of ${cores} cores, ${((b * 1000) / Math.max(o, 1)).toFixed(2)} ms CPU/append`,
          });
        }
      }
    }
    const ratio = (x: number, y: number) => `${(x / Math.max(y, 1)).toFixed(2)}×`;
    const notes = [
      `PostgreSQL ${version}, ${database.origin}, reached through a proxy adding ${roundTripMs} ms to each round trip (bench/latency-proxy.ts); ` +
        'every relay process, the server, the proxy and the clients share the machine',
      `ops/s: posts committed over a case (${WARMUP_MS} ms of warm-up and ${ROUND_MS} ms), best of ${rounds} interleaved rounds; p50/p99/max over the requests that began and ended in the ${ROUND_MS} ms; ` +
        'busy: the most of the rounds, from /proc/stat (all processes); ' +
        'CPU/append: busy cores ÷ ops/s; relay processes with SVC_RELAY_NO_RATE_LIMITS=1; client i talks to process i mod n',
      ...clients.flatMap((c) =>
        processes.map((p) => `64 SPACES ÷ one SPACE, ${c} clients, ${p} relay${p === 1 ? '' : 's'}: ${ratio(ops(label('64 SPACES', c, p)), ops(label('one SPACE', c, p)))}`),
      ),
      ...clients.flatMap((c) =>
        processes.filter((p) => p > 1 && processes.includes(1)).map((p) => `${p} relays ÷ 1, 64 SPACES, ${c} clients: ${ratio(ops(label('64 SPACES', c, p)), ops(label('64 SPACES', c, 1)))}`),
      ),
    ];
    return { rows, notes };
  } finally {
    progress('');
    await counter?.end();
    await Promise.all(relays.map(async (r) => await r.kill('SIGTERM')));
    await proxy?.close();
    database.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
