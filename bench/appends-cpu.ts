/**
 * The relay's CPU per append (`npm run bench -- appends --cpu`, and first in `appends`): signed
 * 1 KiB appends over HTTP into one SPACE at 1, 16 and 64 clients, the relay process's CPU time
 * read from /proc over each round's measured window and divided by the appends answered in it,
 * beside the in-process append's CPU time (bench/appends-inprocess.ts, a process of its own
 * started as the relay is). CPU time, unlike a rate, does not depend on how many cores the
 * clients (this process) take from the relay, so the ratio holds on a shared machine.
 *
 * Printed: µs of relay CPU per append over HTTP, µs per in-process append, their ratio (target
 * at most 1.3 at 16 clients; at 1 client, where each append has its COMMIT to itself as in
 * process, beside `appendPost`), p99 ÷ p50 at 16 clients (target at most 2.5) and the rate at
 * 64 clients ÷ the rate at 16 (target at least 0.9), with the load average the rates ran at.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { REPO_ROOT } from '../test/helpers/relay.js';
import { best, latencyOf, ROUNDS, runHttp, setUpWriters, type CaseResult } from './appends-cases.js';
import { median, percentile, type Row, type SuiteReport } from './harness.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const CLIENTS = [1, 16, 64] as const;
const BYTES = 1024;
const TARGET_CPU_RATIO = 1.3;
const TARGET_TAIL = 2.5;
const TARGET_64_OF_16 = 0.9;

/**
 * A process's CPU time so far in ns: the sum over its threads of the time each has run
 * (/proc/<pid>/task/<tid>/schedstat, nanoseconds, where /proc/<pid>/stat counts clock ticks of
 * 10 ms). Node's threads (the event loop, libuv's pool, V8's helpers, SQLite's checkpointer)
 * live as long as the process, so none leaves with its time during a round.
 */
export function processCpuReader(pid: number): () => number {
  const dir = `/proc/${pid}/task`;
  return () => {
    let ns = 0;
    for (const tid of readdirSync(dir)) {
      try {
        ns += Number(readFileSync(`${dir}/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return ns;
  };
}

interface InProcess {
  alone: number[];
  grouped: number[];
  appendsPerSec: { alone: number[]; grouped: number[] };
}

/** bench/appends-inprocess.ts as its own process, as the relay is started; its JSON line. */
async function inProcess(): Promise<InProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/appends-inprocess.ts'], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_BENCH_ROUNDS: String(ROUNDS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`in-process append bench exited ${code}: ${err}`);
  return JSON.parse(out.trim().split('\n').pop()!) as InProcess;
}

/** The lowest of per-round CPU figures: the round least disturbed by other work. */
const lowest = (xs: readonly number[]): number => Math.min(...xs);

export async function runCpu(): Promise<SuiteReport> {
  const loadAtStart = loadavg()[0]!;
  const own = await inProcess();
  const dataDir = tempDataDir('svc-bench-append-cpu-');
  // At the relay's default log level (info: a line per request on stdout), as an operator runs it.
  const relay = await spawnBenchRelay(dataDir, { SVC_LOG_LEVEL: 'info' });
  try {
    const cpu = processCpuReader(relay.process.pid!);
    const { writers, hot, spread } = await setUpWriters(relay.url, CLIENTS);
    const expected = Math.max(...own.appendsPerSec.grouped);
    const cases = new Map<number, CaseResult>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CLIENTS) {
        const r = await runHttp([relay.url], writers, 'one SPACE', hot, spread, BYTES, c, expected, cpu);
        const acc = cases.get(c) ?? { opsPerSec: [], latencyMs: [], cpuPerAppendUs: [] };
        acc.opsPerSec.push(...r.opsPerSec);
        acc.latencyMs.push(...r.latencyMs);
        acc.cpuPerAppendUs!.push(...(r.cpuPerAppendUs ?? []));
        cases.set(c, acc);
      }
    }
    const loadAtEnd = loadavg()[0]!;

    const alone = lowest(own.alone);
    const grouped = lowest(own.grouped);
    const rows: Row[] = [
      {
        name: 'in-process appendPost ×1',
        opsPerSec: best(own.appendsPerSec.alone),
        note: `CPU ${alone.toFixed(0)} µs/append (rounds ${own.alone.map((x) => x.toFixed(0)).join(', ')})`,
      },
      {
        name: 'in-process grouped ×16',
        opsPerSec: best(own.appendsPerSec.grouped),
        baseline: 'in-process appendPost ×1',
        note: `CPU ${grouped.toFixed(0)} µs/append (rounds ${own.grouped.map((x) => x.toFixed(0)).join(', ')})`,
      },
    ];
    const http = new Map<number, number>();
    for (const c of CLIENTS) {
      const r = cases.get(c)!;
      const us = lowest(r.cpuPerAppendUs!);
      http.set(c, us);
      rows.push({
        name: `http 1 KiB one SPACE ×${c}`,
        opsPerSec: best(r.opsPerSec),
        baseline: 'in-process appendPost ×1',
        latency: latencyOf(r.latencyMs),
        note: `relay CPU ${us.toFixed(0)} µs/append = ${(us / alone).toFixed(2)}× in-process (rounds ${r.cpuPerAppendUs!.map((x) => x.toFixed(0)).join(', ')})`,
      });
    }
    const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
    const ratio16 = http.get(16)! / alone;
    const sorted16 = [...cases.get(16)!.latencyMs].sort((a, b) => a - b);
    const tail = percentile(sorted16, 99) / percentile(sorted16, 50);
    const rate64 = best(cases.get(64)!.opsPerSec) / best(cases.get(16)!.opsPerSec);
    const medianRate64 = median(cases.get(64)!.opsPerSec) / median(cases.get(16)!.opsPerSec);
    const notes = [
      `relay CPU per append at 16 clients ÷ in-process appendPost: ${http.get(16)!.toFixed(0)} µs ÷ ${alone.toFixed(0)} µs = ${ratio16.toFixed(2)}×, target ≤ ${TARGET_CPU_RATIO}: ${verdict(ratio16 <= TARGET_CPU_RATIO)}`,
      `  at 1 client (each append its own COMMIT, as appendPost): ${http.get(1)!.toFixed(0)} µs = ${(http.get(1)! / alone).toFixed(2)}×; ` +
        `at 16 clients ÷ in-process grouped ×16 (the same shared COMMITs): ${(http.get(16)! / grouped).toFixed(2)}×`,
      `p99 ÷ p50 at 16 clients: ${tail.toFixed(2)}, target ≤ ${TARGET_TAIL}: ${verdict(tail <= TARGET_TAIL)}`,
      `rate at 64 clients ÷ rate at 16: ${rate64.toFixed(2)} best rounds (${medianRate64.toFixed(2)} median rounds), target ≥ ${TARGET_64_OF_16}: ${verdict(rate64 >= TARGET_64_OF_16)}`,
      `CPU: lowest of ${ROUNDS} rounds, relay threads' run time (/proc/<pid>/task/*/schedstat) over each round's window ÷ appends answered in it; ` +
        'in-process: process.cpuUsage() of bench/appends-inprocess.ts, its own process started as the relay is',
      `relay at its default log level (info, a JSON line per request on stdout, read by this process); rates: best of ${ROUNDS} rounds; load average ${loadAtStart.toFixed(2)} at start, ${loadAtEnd.toFixed(2)} at end (clients in this process, the relay in its own)`,
    ];
    return { title: 'Relay CPU per signed 1 KiB append over HTTP vs the in-process append (SQLite)', rows, notes };
  } finally {
    await relay.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
}
