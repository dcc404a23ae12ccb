/**
 * The soak's arithmetic, pure: the least-squares slope of a series (memory per minute), the
 * verdict on growth, and the table text. "Memory keeps growing" is defined honestly: over the
 * samples from the warm-up's end (minute 5) to the last one, the least-squares slope of the
 * relay's resident memory, and of its V8 heap measured after a full collection, must each stay
 * under a threshold in MiB per minute; a relay that settles shows a slope near zero, one that
 * leaks a few hundred bytes per request shows megabytes per minute. Resident memory also holds
 * SQLite's page cache, which fills for about ten minutes at 200 requests a second before it is
 * level (304 MiB here), so a run much shorter than the default 30 minutes can fail on it while
 * the heap is flat: read the heap slope beside it.
 */

export interface Sample {
  /** Minutes since the traffic started. */
  minute: number;
  requests: number;
  /** Answers that were not the one expected (a 5xx, a refusal the traffic should not meet, a network failure). */
  errors: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  rssMiB: number;
  heapMiB: number;
  fds: number;
}

/** Least-squares slope of y over x; 0 for fewer than two points. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  if (xs.length !== ys.length) throw new RangeError('x and y differ in length');
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export interface GrowthVerdict {
  /** MiB per minute over the settled samples. */
  rssSlope: number;
  heapSlope: number;
  fdSlope: number;
  /** How many samples the slopes were taken over. */
  settled: number;
  /** Why the run fails; empty when it passes. */
  failures: string[];
}

export interface GrowthLimits {
  warmupMinutes: number;
  rssMiBPerMinute: number;
  heapMiBPerMinute: number;
  fdsPerMinute: number;
}

export const DEFAULT_LIMITS: GrowthLimits = { warmupMinutes: 5, rssMiBPerMinute: 1, heapMiBPerMinute: 0.5, fdsPerMinute: 0.5 };

export function growthVerdict(samples: readonly Sample[], limits: GrowthLimits = DEFAULT_LIMITS): GrowthVerdict {
  const settled = samples.filter((s) => s.minute >= limits.warmupMinutes);
  const xs = settled.map((s) => s.minute);
  const rssSlope = slope(xs, settled.map((s) => s.rssMiB));
  const heapSlope = slope(xs, settled.map((s) => s.heapMiB));
  const fdSlope = slope(xs, settled.map((s) => s.fds));
  const failures: string[] = [];
  if (settled.length < 3) failures.push(`only ${settled.length} samples after minute ${limits.warmupMinutes}: run longer to judge growth`);
  if (rssSlope > limits.rssMiBPerMinute) failures.push(`resident memory grows ${rssSlope.toFixed(2)} MiB/min after minute ${limits.warmupMinutes} (limit ${limits.rssMiBPerMinute})`);
  if (heapSlope > limits.heapMiBPerMinute) failures.push(`the heap grows ${heapSlope.toFixed(2)} MiB/min after minute ${limits.warmupMinutes} (limit ${limits.heapMiBPerMinute})`);
  if (fdSlope > limits.fdsPerMinute) failures.push(`open files grow ${fdSlope.toFixed(2)}/min after minute ${limits.warmupMinutes} (limit ${limits.fdsPerMinute})`);
  return { rssSlope, heapSlope, fdSlope, settled: settled.length, failures };
}

/** The table of samples, numbers right-aligned. */
export function formatSamples(samples: readonly Sample[]): string {
  const header = ['minute', 'requests', 'errors', 'p50 ms', 'p99 ms', 'RSS MiB', 'heap MiB', 'fds'];
  const rows = samples.map((s) => [String(s.minute), String(s.requests), String(s.errors), s.p50.toFixed(1), s.p99.toFixed(1), s.rssMiB.toFixed(1), s.heapMiB.toFixed(1), String(s.fds)]);
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  return all.map((r) => r.map((c, i) => c.padStart(widths[i]!)).join('  ')).join('\n');
}
