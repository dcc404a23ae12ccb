/**
 * Benchmark harness: warm-up, timed rounds, ops/s, latency percentiles and the printed table.
 *
 * Throughput is measured in interleaved rounds: every case of a group runs one round in turn,
 * then the next round starts, so a noisy neighbour on a shared machine slows every case of
 * the group rather than one of them. Each round lasts long enough (100 ms and up) to include
 * the garbage collections the case causes. A case's figure is its best round: other work on
 * the machine only ever slows a round down, so the fastest round is the closest to the case's
 * own cost, and on a shared machine the median can be mostly contention. The median is kept
 * beside it. Each figure is printed beside its ratio to a baseline measured in the same run.
 *
 * The maths (percentile, median, ops/s, ratio, table text) are pure functions, tested on fixed
 * inputs in test/bench/harness.test.ts; only `measureThroughput` and `measureLatency` read the
 * clock.
 */

// ---------------------------------------------------------------------------------------------
// Pure maths

/**
 * Nearest-rank percentile (the smallest sample with at least p% of the samples at or below it)
 * of samples sorted in ascending order. p = 0 gives the minimum, p = 100 the maximum.
 */
export function percentile(sortedAsc: readonly number[], p: number): number {
  if (sortedAsc.length === 0) throw new RangeError('percentile of no samples');
  if (!(p >= 0 && p <= 100)) throw new RangeError('p must be between 0 and 100');
  const rank = Math.max(1, Math.ceil((p / 100) * sortedAsc.length));
  return sortedAsc[rank - 1]!;
}

/** Middle value; the mean of the two middle values for an even count. Input order is free. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Operations per second from a count of operations and the nanoseconds they took. */
export function opsPerSecond(operations: number, elapsedNs: number): number {
  if (!(elapsedNs > 0)) throw new RangeError('elapsed time must be positive');
  return (operations * 1e9) / elapsedNs;
}

/**
 * When call `k` (from 0) of caller `i` of `callers` may start, in ms after the loop began, for the
 * callers together to start `rate` calls a second, evenly spaced: the callers take turns, one
 * start every 1000 / rate ms. Used to serve a baseline at the rate its case was just served at.
 */
export function pacedStartMs(k: number, i: number, callers: number, rate: number): number {
  if (!(rate > 0) || !Number.isFinite(rate)) throw new RangeError('rate must be a positive number of calls a second');
  if (!Number.isInteger(callers) || callers < 1 || !Number.isInteger(i) || i < 0 || i >= callers || !Number.isInteger(k) || k < 0) {
    throw new RangeError('k, i and callers: whole numbers, 0 <= i < callers');
  }
  return ((k * callers + i) * 1000) / rate;
}

/**
 * Cost of a case relative to its baseline: how many times the baseline's time per operation
 * one operation of the case takes (baseline ops/s ÷ case ops/s). 1.30 means 30% slower.
 */
export function costRatio(opsPerSec: number, baselineOpsPerSec: number): number {
  if (!(opsPerSec > 0) || !(baselineOpsPerSec > 0)) throw new RangeError('ops/s must be positive');
  return baselineOpsPerSec / opsPerSec;
}

export interface LatencySummary {
  count: number;
  /** Nanoseconds. */
  p50: number;
  p99: number;
  max: number;
}

/** p50, p99 and max of latency samples in nanoseconds (any order). */
export function summarizeLatency(samplesNs: readonly number[]): LatencySummary {
  const s = [...samplesNs].sort((a, b) => a - b);
  return { count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1]! };
}

// ---------------------------------------------------------------------------------------------
// Formatting

/** Whole ops/s with thousands separators, or three significant digits below 100. */
export function formatOps(opsPerSec: number): string {
  if (opsPerSec >= 100) return Math.round(opsPerSec).toLocaleString('en-US');
  return opsPerSec.toPrecision(3);
}

/** A duration in ns as ns, µs, ms or s with three significant digits. */
export function formatDuration(ns: number): string {
  if (ns < 1e3) return `${ns.toPrecision(3)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toPrecision(3)} s`;
}

export function formatRatio(ratio: number, decimals = 2): string {
  return `${ratio.toFixed(decimals)}×`;
}

/** One line of a suite's table. */
export interface Row {
  name: string;
  opsPerSec: number;
  /** Name of the row this one is compared with; absent for a baseline itself. */
  baseline?: string;
  latency?: LatencySummary;
  note?: string;
}

/**
 * The table text: name, ops/s, time per op, ratio against the baseline ("1.00× (baseline)"
 * for rows that have none), p50/p99/max when any row has latency samples, and a note.
 * Throws when a row names a baseline the table does not have.
 */
export function formatTable(rows: readonly Row[]): string {
  const byName = new Map(rows.map((r) => [r.name, r]));
  const withLatency = rows.some((r) => r.latency !== undefined);
  const header = ['case', 'ops/s', 'time/op', 'vs baseline'];
  if (withLatency) header.push('p50', 'p99', 'max');
  header.push('note');
  const lines: string[][] = [header];
  for (const r of rows) {
    let vs = 'baseline';
    if (r.baseline !== undefined) {
      const b = byName.get(r.baseline);
      if (b === undefined) throw new Error(`row ${r.name}: no baseline row named ${r.baseline}`);
      vs = `${formatRatio(costRatio(r.opsPerSec, b.opsPerSec))} ${r.baseline}`;
    }
    const line = [r.name, formatOps(r.opsPerSec), formatDuration(1e9 / r.opsPerSec), vs];
    if (withLatency) {
      const l = r.latency;
      line.push(...(l === undefined ? ['-', '-', '-'] : [formatDuration(l.p50), formatDuration(l.p99), formatDuration(l.max)]));
    }
    line.push(r.note ?? '');
    lines.push(line);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  // Numbers are right-aligned, words left-aligned.
  const numeric = header.map((h) => h !== 'case' && h !== 'vs baseline' && h !== 'note');
  const render = (l: string[]): string =>
    l.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [render(lines[0]!), rule, ...lines.slice(1).map(render)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Measuring (reads the clock)

export interface ThroughputOptions {
  /** Time each case runs before measuring, so the JIT has compiled it. */
  warmupMs: number;
  /** Length of one measured round of one case. */
  roundMs: number;
  /** Rounds per case; the figure is the best round. */
  rounds: number;
}

export interface ThroughputCase {
  name: string;
  fn: () => unknown;
}

export interface ThroughputResult {
  name: string;
  /** Best (fastest) round. */
  opsPerSec: number;
  medianOpsPerSec: number;
  roundsOpsPerSec: number[];
  operations: number;
}

function nowNs(): number {
  return Number(process.hrtime.bigint());
}

/**
 * Run `fn` for at least `ms` in batches of `batch` calls. Returns calls made and nanoseconds.
 * A call that returns undefined is taken for a mistake: every measured function returns its
 * result, which keeps the work observable.
 */
function timedLoop(fn: () => unknown, batch: number, ms: number): { operations: number; elapsedNs: number } {
  const start = nowNs();
  const end = start + ms * 1e6;
  let operations = 0;
  let now = start;
  let last: unknown;
  do {
    for (let i = 0; i < batch; i++) last = fn();
    operations += batch;
    now = nowNs();
  } while (now < end);
  if (last === undefined) throw new Error('a measured function must return its result');
  return { operations, elapsedNs: now - start };
}

/** Calls per batch so that one batch takes about a millisecond (the clock is read per batch). */
function calibrate(fn: () => unknown, warmupMs: number): number {
  const { operations, elapsedNs } = timedLoop(fn, 1, warmupMs);
  return Math.max(1, Math.round(operations / (elapsedNs / 1e6)));
}

/** Interleaved rounds over the cases (see the module comment); figures are best rounds. */
export function measureThroughput(cases: readonly ThroughputCase[], options: ThroughputOptions): ThroughputResult[] {
  const batches = cases.map((c) => calibrate(c.fn, options.warmupMs));
  const rounds = cases.map(() => [] as number[]);
  const totals = cases.map(() => 0);
  for (let r = 0; r < options.rounds; r++) {
    cases.forEach((c, i) => {
      const { operations, elapsedNs } = timedLoop(c.fn, batches[i]!, options.roundMs);
      rounds[i]!.push(opsPerSecond(operations, elapsedNs));
      totals[i]! += operations;
    });
  }
  return cases.map((c, i) => ({
    name: c.name,
    opsPerSec: Math.max(...rounds[i]!),
    medianOpsPerSec: median(rounds[i]!),
    roundsOpsPerSec: rounds[i]!,
    operations: totals[i]!,
  }));
}

export interface LatencyOptions {
  warmupMs: number;
  /** Measured calls; each is timed on its own. */
  count: number;
}

/**
 * Time `count` calls one by one (after a warm-up) for p50/p99/max, and give ops/s over their
 * sum. Suited to operations of a few microseconds and up: the clock read costs tens of ns.
 */
export function measureLatency(fn: () => unknown, options: LatencyOptions): { opsPerSec: number; latency: LatencySummary } {
  timedLoop(fn, 1, options.warmupMs);
  const samples = new Array<number>(options.count);
  let total = 0;
  let last: unknown;
  for (let i = 0; i < options.count; i++) {
    const t0 = nowNs();
    last = fn();
    const dt = nowNs() - t0;
    samples[i] = dt;
    total += dt;
  }
  if (last === undefined) throw new Error('a measured function must return its result');
  return { opsPerSec: opsPerSecond(options.count, total), latency: summarizeLatency(samples) };
}

// ---------------------------------------------------------------------------------------------
// Suites

/** What a suite hands back: its table rows and lines printed under the table. */
/**
 * A full garbage collection now, when `npm run bench` gave node --expose-gc: a case that measures
 * latency calls it before its clock starts, so the benchmark process's own collections (of the
 * bodies it signed ahead, say) do not land inside the measured requests. A no-op without the flag.
 */
/** A line on a terminal, rewritten in place (what runs, how far); nothing when stderr is not one, so piped output stays the table. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}`);
}

export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

export interface SuiteReport {
  rows: Row[];
  notes: string[];
  /** A title of this run's own, when an option made the suite measure something else (appends --against). */
  title?: string;
  /** A table of the suite's own columns, printed instead of `rows` (tools: counts, not rates). */
  table?: string;
}

export interface Suite {
  /** Short name used on the command line (`npm run bench -- core`). */
  name: string;
  /** One line printed above the table. */
  title: string;
  run(): SuiteReport | Promise<SuiteReport>;
}
