/**
 * The append suite: signed posts.append over HTTP against the real relay process, beside the
 * in-process ceiling measured in the same run.
 *
 *   http <size> <layout> ×<c>   c concurrent clients (1, 2, 4, 16, 64), one KEY each, each
 *                               sending its next signed append as soon as the last is answered
 *                               (undici Pool, a keep-alive connection each); bodies of 1 KiB or 8 KiB; layout
 *                               "one SPACE" (all into one) or "64 SPACES" (client i's k-th post
 *                               into SPACE (i + k·c) mod 64). Posts are signed before a case
 *                               starts, so the figure is the relay's, not the signing client's.
 *   ceiling <size>              the same append pipeline with no HTTP (relay/posts/append.ts
 *                               `appendPost` on a parsed body: submission check with the Ed25519
 *                               verify, receipt signature, one SQLite commit per post with
 *                               synchronous=FULL in WAL, as the relay's store opens it), one
 *                               call after another in this process on its own data directory.
 *                               Over HTTP the relay groups concurrent appends into one commit
 *                               (relay/posts/commit-queue.ts), so several clients can pass it.
 *
 * The relay runs with SVC_RELAY_NO_RATE_LIMITS=1 (otherwise 30 writes a minute per KEY). The
 * relay process and this one (the clients) share the machine's cores.
 *
 * The cases themselves (ceiling, HTTP clients, rounds) are bench/appends-cases.ts, shared with
 * the options: `--store postgres` measures the PostgreSQL store beside SQLite
 * (bench/appends-postgres.ts); `--against <revision>` measures these SQLite figures beside
 * another revision's relay in the same run (bench/appends-against.ts).
 *
 * `--cpu` measures only the relay's CPU time per append against the in-process append's
 * (bench/appends-cpu.ts), which the whole suite also prints after the rates; with
 * `--against <revision>`, beside that revision's relay.
 *
 * Targets: at 16 clients into one SPACE at least 50% of the ceiling; throughput at 64
 * clients at least 90% of the best of its series (no collapse as writers are added); p99 under
 * 20 ms at 16 clients.
 */
import { rmSync } from 'node:fs';
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
  WARMUP_MS,
  type CaseResult,
  type Layout,
} from './appends-cases.js';
import { runCpu } from './appends-cpu.js';
import { formatDuration, type Row, type Suite, type SuiteReport } from './harness.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const SIZES = [
  { label: '1 KiB', bytes: 1024 },
  { label: '8 KiB', bytes: 8192 },
] as const;
const CLIENTS = [1, 2, 4, 16, 64] as const;
const TARGET_SHARE_OF_CEILING = 0.5;
const TARGET_SHARE_OF_PEAK = 0.9;
const TARGET_P99_MS = 20;

/** "a–b ms": the lowest and the highest of per-round figures in ms. */
function rangeOf(values: readonly number[] | undefined): string {
  if (values === undefined || values.length === 0) return '-';
  return `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)} ms`;
}

async function run(): Promise<SuiteReport> {
  const against = valueOf('--against');
  if (process.argv.includes('--cpu')) return await runCpu(against);
  if (against !== undefined) return await (await import('./appends-against.js')).runAgainst(against);
  const store = storeOption();
  if (store === 'postgres') return await (await import('./appends-postgres.js')).runPostgres();
  const rates = await runRates();
  const cpu = await runCpu();
  return { rows: [...rates.rows, ...cpu.rows], notes: [...rates.notes, `${cpu.title}:`, ...cpu.notes] };
}

/** The rates of every size, layout and number of clients beside the ceiling. */
async function runRates(): Promise<SuiteReport> {
  const ceiling = await ceilingSetup();
  const dataDir = tempDataDir('svc-bench-appends-');
  const relay = await spawnBenchRelay(dataDir);
  try {
    const { writers, hot, spread } = await setUpWriters(relay.url, CLIENTS);

    const ceilings = new Map<number, CaseResult>(SIZES.map((s) => [s.bytes, { opsPerSec: [], latencyMs: [] }]));
    const cases = new Map<string, CaseResult>();
    const key = (size: string, layout: Layout, c: number) => `http ${size} ${layout} ×${c}`;
    // Interleaved rounds: every case once per round, so machine noise spreads over all of them.
    for (let round = 0; round < ROUNDS; round++) {
      for (const size of SIZES) {
        const prior = ceilings.get(size.bytes)!;
        const r = await runCeiling(ceiling, size.bytes, prior.opsPerSec.length > 0 ? best(prior.opsPerSec) : 1500);
        prior.opsPerSec.push(...r.opsPerSec);
        prior.latencyMs.push(...r.latencyMs);
        for (const layout of LAYOUTS) {
          for (const c of CLIENTS) {
            const k = key(size.label, layout, c);
            const acc = cases.get(k) ?? { opsPerSec: [], latencyMs: [] };
            const expected = best(ceilings.get(size.bytes)!.opsPerSec);
            const res = await runHttp([relay.url], writers, layout, hot, spread, size.bytes, c, expected);
            acc.opsPerSec.push(...res.opsPerSec);
            acc.latencyMs.push(...res.latencyMs);
            // A round can end with no request measured (one stalled longer than the round, on a
            // busy machine); its throughput of 0 says so, and it has no p99 of its own.
            if (res.latencyMs.length > 0) (acc.roundP99Ms ??= []).push(p99Of(res.latencyMs));
            cases.set(k, acc);
          }
        }
      }
    }

    const rows: Row[] = [];
    const notes: string[] = [];
    for (const size of SIZES) {
      const ceil = ceilings.get(size.bytes)!;
      const ceilOps = best(ceil.opsPerSec);
      const ceilName = `ceiling ${size.label} (no HTTP)`;
      rows.push({ name: ceilName, opsPerSec: ceilOps, latency: latencyOf(ceil.latencyMs) });
      for (const layout of LAYOUTS) {
        const series = CLIENTS.map((c) => ({ c, r: cases.get(key(size.label, layout, c))! }));
        const ops = series.map((s) => best(s.r.opsPerSec));
        const peak = Math.max(...ops);
        series.forEach((s, i) => {
          rows.push({
            name: key(size.label, layout, s.c),
            opsPerSec: ops[i]!,
            baseline: ceilName,
            latency: latencyOf(s.r.latencyMs),
            note: `${((ops[i]! / ceilOps) * 100).toFixed(0)}% of ceiling`,
          });
        });
        const at16 = series.findIndex((s) => s.c === 16);
        const at64 = series.findIndex((s) => s.c === 64);
        const share16 = ops[at16]! / ceilOps;
        const p99at16 = p99Of(series[at16]!.r.latencyMs);
        const share64 = ops[at64]! / peak;
        const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
        if (layout === 'one SPACE') {
          notes.push(
            `${size.label} one SPACE, 16 clients: ${(share16 * 100).toFixed(0)}% of the ceiling, target ≥ ${TARGET_SHARE_OF_CEILING * 100}%: ${verdict(share16 >= TARGET_SHARE_OF_CEILING)}`,
          );
        }
        notes.push(
          `${size.label} ${layout}, 64 clients: ${(share64 * 100).toFixed(0)}% of the series peak, target ≥ ${TARGET_SHARE_OF_PEAK * 100}%: ${verdict(share64 >= TARGET_SHARE_OF_PEAK)}`,
          `${size.label} ${layout}, 16 clients: p99 ${formatDuration(p99at16 * 1e6)} (rounds alone ${rangeOf(series[at16]!.r.roundP99Ms)}), target < ${TARGET_P99_MS} ms: ${verdict(p99at16 < TARGET_P99_MS)}`,
        );
      }
    }
    notes.push(
      `ops/s: best of ${ROUNDS} interleaved rounds of ${ROUND_MS} ms after ${WARMUP_MS} ms of warm-up (a commit waits for fsync, so other ` +
        'work on the disk slows whole rounds); p50/p99/max over every measured request of every round; ' +
        '"vs baseline": time per append ÷ the ceiling\'s; relay process with SVC_RELAY_NO_RATE_LIMITS=1, synchronous=FULL; ' +
        'clients: undici, one keep-alive connection each, bodies signed before the case, garbage collected before its clock starts',
      'the ceiling commits each post on its own; over HTTP the relay puts the appends that arrive together into one commit ' +
        '(relay/posts/commit-queue.ts), so with several clients it can pass the ceiling',
    );
    return { rows, notes };
  } finally {
    await relay.kill('SIGTERM');
    ceiling.r.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The value of `--name value` or `--name=value` on the command line, if given. */
function valueOf(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const at = argv.indexOf(name);
  if (at >= 0) {
    const value = argv[at + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${name}: give a value`);
    return value;
  }
  return argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** `--store sqlite` (the default) or `--store postgres` (also `--store=postgres`). */
function storeOption(): 'sqlite' | 'postgres' {
  const value = valueOf('--store');
  if (value === undefined || value === 'sqlite') return 'sqlite';
  if (value === 'postgres') return 'postgres';
  throw new Error(`--store: sqlite or postgres, not ${value}`);
}

export const appendsSuite: Suite = {
  name: 'appends',
  title: 'Signed appends over HTTP vs the in-process ceiling',
  run,
};
