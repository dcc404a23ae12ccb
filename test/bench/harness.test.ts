import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  costRatio,
  formatDuration,
  formatOps,
  formatRatio,
  formatTable,
  measureLatency,
  measureThroughput,
  median,
  opsPerSecond,
  pacedStartMs,
  percentile,
  summarizeLatency,
  type Row,
} from '../../bench/harness.js';
import { figuresTable } from '../../bench/tools.js';

describe('percentile (nearest rank)', () => {
  const ten = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

  it('gives the smallest sample with at least p% of the samples at or below it', () => {
    expect(percentile(ten, 50)).toBe(5);
    expect(percentile(ten, 51)).toBe(6);
    expect(percentile(ten, 90)).toBe(9);
    expect(percentile(ten, 99)).toBe(10);
    expect(percentile(ten, 10)).toBe(1);
    expect(percentile(ten, 11)).toBe(2);
  });

  it('gives the minimum at p = 0 and the maximum at p = 100', () => {
    expect(percentile(ten, 0)).toBe(1);
    expect(percentile(ten, 100)).toBe(10);
  });

  it('picks the 99th of 100 samples for p99 and the single sample of a one-sample list', () => {
    const hundred = Array.from({ length: 100 }, (_, i) => (i + 1) * 10);
    expect(percentile(hundred, 99)).toBe(990);
    expect(percentile([42], 50)).toBe(42);
    expect(percentile([42], 99)).toBe(42);
  });

  it('refuses an empty list and p outside 0..100', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile(ten, -1)).toThrow(RangeError);
    expect(() => percentile(ten, 101)).toThrow(RangeError);
    expect(() => percentile(ten, Number.NaN)).toThrow(RangeError);
  });

  it('always returns one of the samples, and grows with p', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 100 }),
        (xs, p, q) => {
          const s = [...xs].sort((a, b) => a - b);
          expect(s).toContain(percentile(s, p));
          const [lo, hi] = p <= q ? [p, q] : [q, p];
          expect(percentile(s, lo)).toBeLessThanOrEqual(percentile(s, hi));
        },
      ),
    );
  });
});

describe('median', () => {
  it('takes the middle value of an odd count whatever the input order', () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([3])).toBe(3);
  });

  it('takes the mean of the two middle values of an even count', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('leaves its input unsorted', () => {
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });

  it('refuses an empty list', () => {
    expect(() => median([])).toThrow(RangeError);
  });
});

describe('ops/s and ratios', () => {
  it('turns operations and nanoseconds into operations per second', () => {
    expect(opsPerSecond(1000, 1e9)).toBe(1000);
    expect(opsPerSecond(12_000, 1.5e9)).toBe(8000);
    expect(opsPerSecond(1, 80_000)).toBe(12_500);
  });

  it('refuses a zero or negative elapsed time', () => {
    expect(() => opsPerSecond(10, 0)).toThrow(RangeError);
    expect(() => opsPerSecond(10, -5)).toThrow(RangeError);
  });

  it('gives the cost ratio as time per op over the baseline time per op', () => {
    // 10,000 ops/s is 100 µs an op; against 13,000 ops/s (76.9 µs) that is 1.3 times the time.
    expect(costRatio(10_000, 13_000)).toBeCloseTo(1.3, 12);
    expect(costRatio(13_000, 13_000)).toBe(1);
    expect(costRatio(20_000, 10_000)).toBe(0.5);
  });

  it('places the 1.3× target where ops/s equals the baseline ops/s ÷ 1.3', () => {
    const baseline = 12_000;
    expect(costRatio(baseline / 1.3, baseline)).toBeCloseTo(1.3, 12);
    expect(costRatio(baseline / 1.29, baseline)).toBeLessThan(1.3);
    expect(costRatio(baseline / 1.31, baseline)).toBeGreaterThan(1.3);
  });

  it('refuses ops/s that are not positive', () => {
    expect(() => costRatio(0, 10)).toThrow(RangeError);
    expect(() => costRatio(10, 0)).toThrow(RangeError);
  });
});

describe('paced starts', () => {
  it('spaces the starts of all callers evenly at the rate, the callers taking turns', () => {
    // 2,000 calls a second from 4 callers: one start every 0.5 ms, each caller every 2 ms.
    const starts = [0, 1, 2].flatMap((k) => [0, 1, 2, 3].map((i) => pacedStartMs(k, i, 4, 2000)));
    expect(starts).toEqual([0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5]);
  });

  it('starts rate calls within the first second, whatever the number of callers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 20_000 }), (callers, rate) => {
        let within = 0;
        for (let i = 0; i < callers; i++) for (let k = 0; pacedStartMs(k, i, callers, rate) < 1000; k++) within++;
        expect(within).toBe(rate);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a rate that is not positive and a caller outside the callers', () => {
    expect(() => pacedStartMs(0, 0, 8, 0)).toThrow(RangeError);
    expect(() => pacedStartMs(0, 0, 8, Number.NaN)).toThrow(RangeError);
    expect(() => pacedStartMs(0, 8, 8, 100)).toThrow(RangeError);
    expect(() => pacedStartMs(-1, 0, 8, 100)).toThrow(RangeError);
  });
});

describe('latency summary', () => {
  it('gives count, p50, p99 and max of unsorted samples', () => {
    const samples = Array.from({ length: 200 }, (_, i) => ((i * 37) % 200) + 1); // 1..200, shuffled
    expect(summarizeLatency(samples)).toEqual({ count: 200, p50: 100, p99: 198, max: 200 });
  });

  it('keeps a single outlier in max but not in p50', () => {
    const samples = [...Array.from({ length: 99 }, () => 80_000), 5_000_000];
    const s = summarizeLatency(samples);
    expect(s.p50).toBe(80_000);
    expect(s.p99).toBe(80_000);
    expect(s.max).toBe(5_000_000);
  });
});

describe('formatting', () => {
  it('writes ops/s with thousands separators, and three significant digits below 100', () => {
    expect(formatOps(843_490.4)).toBe('843,490');
    expect(formatOps(100)).toBe('100');
    expect(formatOps(12.345)).toBe('12.3');
  });

  it('writes durations in the unit that keeps three significant digits readable', () => {
    expect(formatDuration(512)).toBe('512 ns');
    expect(formatDuration(84_210)).toBe('84.2 µs');
    expect(formatDuration(1_190_000)).toBe('1.19 ms');
    expect(formatDuration(2.5e9)).toBe('2.50 s');
  });

  it('writes ratios with two decimals and a times sign', () => {
    expect(formatRatio(1.3)).toBe('1.30×');
    expect(formatRatio(1.1449)).toBe('1.14×');
    expect(formatRatio(1.2986, 3)).toBe('1.299×');
  });
});

describe('table', () => {
  const rows: Row[] = [
    { name: 'verify', opsPerSec: 12_000 },
    { name: 'check', opsPerSec: 10_000, baseline: 'verify', note: 'target met' },
  ];

  it('prints each figure as ops/s, time per op and ratio to its baseline', () => {
    const lines = formatTable(rows).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^case\s+ops\/s\s+time\/op\s+vs baseline\s+note$/);
    expect(lines[1]).toMatch(/^-+( +-+)+$/);
    expect(lines[2]).toMatch(/^verify\s+12,000\s+83\.3 µs\s+baseline$/);
    expect(lines[3]).toMatch(/^check\s+10,000\s+100 µs\s+1\.20× verify\s+target met$/);
  });

  it('aligns every column: all lines but the trimmed ends share the column starts', () => {
    const lines = formatTable(rows).split('\n');
    const start = lines[0]!.indexOf('vs baseline');
    expect(lines[2]!.indexOf('baseline')).toBe(start);
    expect(lines[3]!.indexOf('1.20×')).toBe(start);
  });

  it('adds p50, p99 and max columns when a row has latency, with "-" for rows that have none', () => {
    const text = formatTable([
      rows[0]!,
      { ...rows[1]!, latency: { count: 100, p50: 99_100, p99: 230_000, max: 5_240_000 } },
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/vs baseline\s+p50\s+p99\s+max\s+note$/);
    expect(lines[2]).toMatch(/baseline\s+-\s+-\s+-$/);
    expect(lines[3]).toMatch(/99\.1 µs\s+230 µs\s+5\.24 ms\s+target met$/);
  });

  it('has no latency columns when no row has latency', () => {
    expect(formatTable(rows)).not.toMatch(/p50|p99/);
  });

  it('refuses a row whose baseline is not in the table', () => {
    expect(() => formatTable([{ name: 'check', opsPerSec: 1, baseline: 'verify' }])).toThrow(/no baseline row named verify/);
  });
});

describe('measuring (structure only, never speed)', () => {
  it('gives each case one figure per round, its best round and median, and counts the calls it made', () => {
    let calls = 0;
    const [r] = measureThroughput([{ name: 'count', fn: () => ++calls }], { warmupMs: 1, roundMs: 2, rounds: 3 });
    expect(r!.name).toBe('count');
    expect(r!.roundsOpsPerSec).toHaveLength(3);
    expect(r!.opsPerSec).toBe(Math.max(...r!.roundsOpsPerSec));
    expect(r!.medianOpsPerSec).toBe(median(r!.roundsOpsPerSec));
    expect(r!.operations).toBeGreaterThan(0);
    expect(calls).toBeGreaterThanOrEqual(r!.operations);
  });

  it('refuses a measured function that returns nothing', () => {
    expect(() => measureThroughput([{ name: 'void', fn: () => undefined }], { warmupMs: 1, roundMs: 1, rounds: 1 })).toThrow(
      /must return its result/,
    );
    expect(() => measureLatency(() => undefined, { warmupMs: 1, count: 3 })).toThrow(/must return its result/);
  });

  it('times exactly the asked number of calls for latency', () => {
    const { latency, opsPerSec } = measureLatency(() => 1, { warmupMs: 1, count: 25 });
    expect(latency.count).toBe(25);
    expect(latency.p50).toBeLessThanOrEqual(latency.p99);
    expect(latency.p99).toBeLessThanOrEqual(latency.max);
    expect(opsPerSec).toBeGreaterThan(0);
  });
});

describe('the tools suite table (bench/tools.ts)', () => {
  it('puts each figure beside the other revision\'s with the change, and a flow one side lacks as -', () => {
    const before = { label: 'HEAD~1', tools: new Map([['svc_a', 200], ['svc_b', 100]]), total: 320, sets: new Map([['memory', 220]]), flows: new Map([['join by link', 6]]) };
    const after = { label: 'this checkout', tools: new Map([['svc_a', 100], ['svc_b', 100]]), total: 220, sets: new Map([['memory', 120]]), flows: new Map([['join by link', 4], ['oracle space', 3]]) };
    const lines = figuresTable(before, after).split('\n');
    expect(lines[0]).toMatch(/^figure +HEAD~1 +this checkout +change$/);
    expect(lines).toContainEqual(expect.stringMatching(/^tools\/list characters +320 +220 +-100 \(69%\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}svc_b +100 +100 +\+0 \(100%\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}toolset memory +220 +120 +-100 \(55%\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}join by link +6 +4 +-2 \(67%\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}oracle space +- +3$/));
  });
});
