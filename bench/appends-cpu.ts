/**
 * The relay's CPU per append (`npm run bench -- appends --cpu`, and first in `appends`): signed
 * 1 KiB appends over HTTP into one SPACE at 1, 16 and 64 clients, the relay process's CPU time
 * read from /proc over each round's measured window and divided by the appends answered in it,
 * beside the in-process append's CPU time (bench/appends-inprocess.ts, a process of its own
 * started as the relay is). CPU time, unlike a rate, does not depend on how many cores the
 * clients (this process) take from the relay, so the ratio holds on a shared machine.
 *
 * The in-process process stays up for the whole bench and runs each of its rounds just before
 * the relay's round of the same number: the host of a shared machine speeds up and slows down
 * over the minute of the bench (the in-process figure alone moved by a fifth between runs taken
 * one after the other), and a ratio of two rounds taken a minute apart measured that drift too.
 *
 * Printed: µs of relay CPU per append over HTTP, µs per in-process append, and their ratio
 * (target at most 1.3; the median over the rounds of each round's ratio to the in-process round
 * just before it, the ratio of the lowest rounds printed beside it) where both go through the
 * same commit path: 16 clients beside 16 in-process callers through the same commit queue, 1
 * client beside `appendPost` one call after another (16 clients beside `appendPost` alone is
 * printed too, but flatters HTTP: there appends share a COMMIT that in process each pays
 * alone). The 16 in-process callers share more: each calls again the moment its append is
 * answered, so every COMMIT holds all 16, while 16 clients over HTTP send their next append
 * only once the answer has reached them and commit about 8 at a time (measured with the relay's
 * `svc_relay_commit_batch_works`); a COMMIT's share of an append is the smaller part of it.
 * p99 ÷ p50 at 16 clients (target at most 2.5) and the rate at 64 clients ÷ the rate at 16
 * (target at least 0.9), with the load average the rates ran at.
 *
 * Beside them, the floor: the same append served by node:http alone in the in-process process
 * (bench/appends-inprocess.ts), its CPU per append over HTTP ÷ the in-process round before it,
 * at 1 and 16 clients. What it costs above 1× is Node's HTTP serving on this machine (sockets,
 * parser, the event loop's turns, a process woken per request), which any relay in Node pays;
 * what the relay costs above the floor is its own HTTP path (Fastify, authentication,
 * validation, the request log), printed as the median of the rounds' differences.
 *
 * `--against <revision>` runs that revision's relay beside this one's, round by
 * round, as appends --against does. SVC_RELAY_VERIFY_OFF_THREAD=1 in this process's
 * environment is passed on to the relays.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { loadavg } from 'node:os';
import { REPO_ROOT } from '../test/helpers/relay.js';
import { signerFromSeed } from '../shared/identity.js';
import { best, latencyOf, ROUNDS, runHttp, setUpWriters, type CaseResult, type Space, type Writer } from './appends-cases.js';
import { median, percentile, progress, type Row, type SuiteReport } from './harness.js';
import { spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { checkOut } from './appends-against.js';
import { processCpuReader, warmUp, WARM_MS } from './process-cpu.js';
import type { SpawnedRelay } from '../test/helpers/relay.js';

const CLIENTS = [1, 16, 64] as const;
/** The cases the floor runs: those held to the target. */
const FLOOR_CLIENTS = [1, 16] as const;
const BYTES = 1024;
const TARGET_CPU_RATIO = 1.3;
const TARGET_TAIL = 2.5;
const TARGET_64_OF_16 = 0.9;

/** One round of bench/appends-inprocess.ts: µs of CPU per append of each kind, and the rates. */
interface InProcessRound {
  alone: number;
  grouped: number;
  /** appendPost with the process idle between appends (bench/appends-inprocess.ts). */
  paused: number;
  appendsPerSec: { alone: number; grouped: number };
}

/** The floor of bench/appends-inprocess.ts: its append behind node:http alone, and how to sign for it. */
interface Floor {
  url: string;
  /** Clients for runHttp: each signs with the process's KEY (the floor reads no bearer). */
  writers: Writer[];
  space: Space;
  /** The process's CPU time so far (ns), as the relay's is read. */
  cpu: () => number;
}

/**
 * bench/appends-inprocess.ts as its own process, as the relay is started, once it is warmed up;
 * `round` takes one round of it, so that each can be taken just before the relay's round.
 */
async function startInProcess(): Promise<{ round(): Promise<InProcessRound>; floor: Floor; close(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/appends-inprocess.ts'], {
    cwd: REPO_ROOT,
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<unknown> => {
    const line = await lines.next();
    if (line.done === true) throw new Error(`in-process append bench exited ${await exited}: ${err}`);
    return JSON.parse(line.value) as unknown;
  };
  // Warmed up; where the floor listens, and the seed of the KEY it appends as.
  const ready = (await next()) as { floor: { url: string; seed: string; author: string; space: Space } };
  const signer = signerFromSeed(new Uint8Array(Buffer.from(ready.floor.seed, 'hex')));
  const writer: Writer = { token: { token: `svc_${'0'.repeat(64)}`, signer }, author: ready.floor.author };
  const floor: Floor = {
    url: ready.floor.url,
    writers: Array.from({ length: Math.max(...FLOOR_CLIENTS) }, () => writer),
    space: ready.floor.space,
    cpu: processCpuReader(child.pid!),
  };
  return {
    floor,
    round: async () => {
      child.stdin.write('round\n');
      return (await next()) as InProcessRound;
    },
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

/** Add round `r` of the case of `clients` clients to what `cases` holds of it. */
function addRound(cases: Map<number, CaseResult>, clients: number, r: CaseResult): void {
  const acc = cases.get(clients) ?? { opsPerSec: [], latencyMs: [], cpuPerAppendUs: [] };
  acc.opsPerSec.push(...r.opsPerSec);
  acc.latencyMs.push(...r.latencyMs);
  acc.cpuPerAppendUs!.push(...(r.cpuPerAppendUs ?? []));
  cases.set(clients, acc);
}

/** The lowest of per-round CPU figures: the round least disturbed by other work. */
const lowest = (xs: readonly number[]): number => Math.min(...xs);

interface Side {
  label: string;
  relay: SpawnedRelay;
  cpu: () => number;
  setup: Awaited<ReturnType<typeof setUpWriters>>;
  cases: Map<number, CaseResult>;
}

/**
 * `against`: also run another revision's relay (its sources from git, as appends --against
 * does), each round running every case on both relays back to back, the order alternating.
 */
export async function runCpu(against?: string): Promise<SuiteReport> {
  const loadAtStart = loadavg()[0]!;
  progress('appends --cpu: warming up the in-process append');
  const other = against === undefined ? undefined : checkOut(against);
  let inProcess: Awaited<ReturnType<typeof startInProcess>> | undefined;
  const rounds: InProcessRound[] = [];
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    inProcess = await startInProcess();
    // A first round, not counted, says how many appends a round over HTTP may take (bodies are signed beforehand).
    const calibration = await inProcess.round();
    const start = async (label: string, root?: string): Promise<void> => {
      const dir = tempDataDir('svc-bench-append-cpu-');
      dirs.push(dir);
      // At the relay's default log level (info: a line per request on stdout), as an operator runs it.
      const relay = await spawnBenchRelay(dir, { SVC_LOG_LEVEL: 'info', ...relayEnv() }, [], root);
      sides.push({ label, relay, cpu: processCpuReader(relay.process.pid!), setup: await setUpWriters(relay.url, CLIENTS), cases: new Map() });
    };
    const expected = calibration.appendsPerSec.grouped;
    if (other !== undefined) await start(`before (${other.commit.slice(0, 10)})`, other.root);
    await start(other === undefined ? '' : 'after (this checkout)');
    // Each relay warmed up to every case before the rounds, so V8 has optimised what an append
    // over HTTP runs (bench/process-cpu.ts), as the in-process side is before its own.
    const floor = inProcess.floor;
    const floorCase = async (c: number, cpu?: () => number): Promise<CaseResult> =>
      await runHttp([floor.url], floor.writers, 'one SPACE', floor.space, [], BYTES, c, expected, cpu);
    await warmUp(FLOOR_CLIENTS.length, async (i) => void (await floorCase(FLOOR_CLIENTS[i]!)), (_, ms) =>
      progress(`appends --cpu: warming up the floor, ${(ms / 1000).toFixed(0)} of ${WARM_MS / 1000} s`),
    );
    const floorCases = new Map<number, CaseResult>();
    for (const side of sides) {
      const { writers, hot, spread } = side.setup;
      await warmUp(CLIENTS.length, async (i) => {
        await runHttp([side.relay.url], writers, 'one SPACE', hot, spread, BYTES, CLIENTS[i]!, expected);
      }, (_, ms) => progress(`appends --cpu: warming up ${side.label || 'the relay'}, ${(ms / 1000).toFixed(0)} of ${WARM_MS / 1000} s`));
    }
    for (let round = 0; round < ROUNDS; round++) {
      // The in-process round just before the relay's: a ratio's two sides see the machine alike.
      rounds.push(await inProcess.round());
      for (const c of CLIENTS) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          const { writers, hot, spread } = side.setup;
          addRound(side.cases, c, await runHttp([side.relay.url], writers, 'one SPACE', hot, spread, BYTES, c, expected, side.cpu));
        }
      }
      for (const c of FLOOR_CLIENTS) addRound(floorCases, c, await floorCase(c, floor.cpu));
    }
    const loadAtEnd = loadavg()[0]!;

    const own = {
      alone: rounds.map((r) => r.alone),
      grouped: rounds.map((r) => r.grouped),
      paused: rounds.map((r) => r.paused),
      appendsPerSec: { alone: rounds.map((r) => r.appendsPerSec.alone), grouped: rounds.map((r) => r.appendsPerSec.grouped) },
    };
    const alone = lowest(own.alone);
    const grouped = lowest(own.grouped);
    const paused = lowest(own.paused);
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
    for (const c of FLOOR_CLIENTS) {
      const r = floorCases.get(c)!;
      const us = r.cpuPerAppendUs!;
      rows.push({ name: `floor: node:http alone ×${c}`, opsPerSec: best(r.opsPerSec), baseline: 'in-process appendPost ×1', note: `CPU ${lowest(us).toFixed(0)} µs/append (rounds ${us.map((x) => x.toFixed(0)).join(', ')})` });
    }
    const verdict = (ok: boolean) => (ok ? 'met' : 'missed');
    const list = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(', ');
    // Each round's figure ÷ the in-process figure of the round taken just before it.
    const pair = (us: readonly number[], inProcessRounds: readonly number[]): number[] => us.map((x, i) => x / inProcessRounds[i]!);
    const floor16 = pair(floorCases.get(16)!.cpuPerAppendUs!, own.grouped);
    const floor1 = pair(floorCases.get(1)!.cpuPerAppendUs!, own.alone);
    const notes: string[] = [];
    for (const side of sides) {
      const http = new Map<number, number>();
      for (const c of CLIENTS) {
        const r = side.cases.get(c)!;
        const us = lowest(r.cpuPerAppendUs!);
        http.set(c, us);
        rows.push({
          name: `http 1 KiB one SPACE ×${c}${side.label === '' ? '' : ` ${side.label}`}`,
          opsPerSec: best(r.opsPerSec),
          baseline: 'in-process appendPost ×1',
          latency: latencyOf(r.latencyMs),
          note: `relay CPU ${us.toFixed(0)} µs/append (rounds ${r.cpuPerAppendUs!.map((x) => x.toFixed(0)).join(', ')})`,
        });
      }
      const sorted16 = [...side.cases.get(16)!.latencyMs].sort((a, b) => a - b);
      const tail = percentile(sorted16, 99) / percentile(sorted16, 50);
      const rate64 = best(side.cases.get(64)!.opsPerSec) / best(side.cases.get(16)!.opsPerSec);
      const medianRate64 = median(side.cases.get(64)!.opsPerSec) / median(side.cases.get(16)!.opsPerSec);
      const rounds16 = pair(side.cases.get(16)!.cpuPerAppendUs!, own.grouped);
      const rounds1 = pair(side.cases.get(1)!.cpuPerAppendUs!, own.alone);
      const ratio16 = median(rounds16);
      const ratio1 = median(rounds1);
      notes.push(
        ...(side.label === '' ? [] : [`${side.label}:`]),
        `relay CPU per append over HTTP ÷ in-process through the same commit queue, each round ÷ the in-process round just before it, median of ${ROUNDS}: ` +
          `16 clients ÷ grouped ×16 ${ratio16.toFixed(2)}× (${list(rounds16)}); 1 client ÷ appendPost ${ratio1.toFixed(2)}× (${list(rounds1)}); ` +
          `target ≤ ${TARGET_CPU_RATIO}: ${verdict(Math.max(ratio16, ratio1) <= TARGET_CPU_RATIO)}`,
        `  (lowest round ÷ lowest round: 16 clients ${http.get(16)!.toFixed(0)} µs ÷ ${grouped.toFixed(0)} µs = ${(http.get(16)! / grouped).toFixed(2)}×; ` +
          `1 client ${http.get(1)!.toFixed(0)} µs ÷ ${alone.toFixed(0)} µs = ${(http.get(1)! / alone).toFixed(2)}×)`,
        `  (16 clients ÷ appendPost alone, whose every append pays its own COMMIT: ${(http.get(16)! / alone).toFixed(2)}×; 64 clients: ${http.get(64)!.toFixed(0)} µs)`,
        `  (1 client ÷ appendPost idle 1 ms between appends and woken by a timer, ${paused.toFixed(0)} µs, as a relay serving one client idles between requests and is woken by each: ${(http.get(1)! / paused).toFixed(2)}×)`,
        `  (the relay's own HTTP path, above the floor below, as the median of the rounds' differences: 16 clients ` +
          `${median(rounds16.map((x, i) => x - floor16[i]!)).toFixed(2)}, 1 client ${median(rounds1.map((x, i) => x - floor1[i]!)).toFixed(2)})`,
        `p99 ÷ p50 at 16 clients: ${tail.toFixed(2)}, target ≤ ${TARGET_TAIL}: ${verdict(tail <= TARGET_TAIL)}`,
        `rate at 64 clients ÷ rate at 16: ${rate64.toFixed(2)} best rounds (${medianRate64.toFixed(2)} median rounds), target ≥ ${TARGET_64_OF_16}: ${verdict(rate64 >= TARGET_64_OF_16)}`,
      );
    }
    notes.push(
      `floor: the same append behind node:http alone, in the in-process append's own process (no Fastify, authentication, validation, log or limits; ` +
        `bench/appends-inprocess.ts), CPU per append over HTTP ÷ the in-process round just before it, median of ${ROUNDS}: ` +
        `16 clients ${median(floor16).toFixed(2)}× (${list(floor16)}); 1 client ${median(floor1).toFixed(2)}× (${list(floor1)}): ` +
        'what serving an append over HTTP costs in Node on this machine before any of the relay\'s own work',
      `warm-up: ${WARM_MS / 1000} s of the cases in turn before the rounds, in process and over HTTP, so V8 has optimised what they run (bench/process-cpu.ts; SVC_BENCH_WARM_S sets it)`,
      `CPU: relay threads' run time (/proc/<pid>/task/*/schedstat) over each round's window ÷ appends answered in it, the lowest of ${ROUNDS} rounds in the table; ` +
        'in-process: process.cpuUsage() of bench/appends-inprocess.ts (this checkout), its own process started as the relay is, each of its rounds taken just before the relay\'s round of the same number',
      `relay at its default log level (info, a JSON line per request on stdout, read by this process)${relayEnvNote()}; rates: best of ${ROUNDS} rounds; ` +
        `load average ${loadAtStart.toFixed(2)} at start, ${loadAtEnd.toFixed(2)} at end (clients in this process, the relay in its own)`,
    );
    return { title: 'Relay CPU per signed 1 KiB append over HTTP vs the in-process append (SQLite)', rows, notes };
  } finally {
    await inProcess?.close();
    await Promise.all(sides.map(async (s) => await s.relay.kill('SIGTERM')));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    if (other !== undefined) rmSync(other.root, { recursive: true, force: true });
  }
}

/** SVC_RELAY_* settings of this process passed on to the relays (SVC_RELAY_VERIFY_OFF_THREAD=1, say). */
function relayEnv(): Record<string, string> {
  const off = process.env.SVC_RELAY_VERIFY_OFF_THREAD;
  return off === undefined ? {} : { SVC_RELAY_VERIFY_OFF_THREAD: off };
}

function relayEnvNote(): string {
  const env = Object.entries(relayEnv());
  return env.length === 0 ? '' : `, ${env.map(([k, v]) => `${k}=${v}`).join(' ')}`;
}
