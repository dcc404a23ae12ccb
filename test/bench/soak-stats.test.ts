/** The soak's judgement of growth (bench/soak-stats.ts), on fixed series. */
import { describe, expect, it } from 'vitest';
import { growthVerdict, slope, type Sample } from '../../bench/soak-stats.js';

function series(rss: (m: number) => number, heap: (m: number) => number, minutes = 30): Sample[] {
  return Array.from({ length: minutes }, (_, i) => ({ minute: i + 1, requests: 100, errors: 0, p50: 1, p99: 5, rssMiB: rss(i + 1), heapMiB: heap(i + 1), fds: 40 }));
}

describe('the soak judges memory growth by a least-squares slope after the warm-up', () => {
  it('the slope of a straight line is its gradient, and of a flat or single point is zero', () => {
    expect(slope([1, 2, 3, 4], [10, 12, 14, 16])).toBeCloseTo(2);
    expect(slope([1, 2, 3], [5, 5, 5])).toBe(0);
    expect(slope([1], [7])).toBe(0);
  });

  it('memory that climbs in the first five minutes and then stays level passes', () => {
    const v = growthVerdict(series((m) => (m < 5 ? 100 + 20 * m : 200 + (m % 2)), (m) => (m < 5 ? 30 + 5 * m : 55)));
    expect(v.failures).toEqual([]);
    expect(Math.abs(v.rssSlope)).toBeLessThan(0.1);
  });

  it('resident memory that keeps rising 2 MiB a minute fails, naming the rate', () => {
    const v = growthVerdict(series((m) => 200 + 2 * m, () => 50));
    expect(v.failures.join(' ')).toMatch(/resident memory grows 2\.00 MiB\/min/);
  });

  it('a heap that keeps rising fails even when resident memory looks level', () => {
    const v = growthVerdict(series(() => 200, (m) => 40 + m));
    expect(v.failures.join(' ')).toMatch(/heap grows 1\.00 MiB\/min/);
  });

  it('a run too short to have three samples after the warm-up cannot pass', () => {
    expect(growthVerdict(series(() => 200, () => 50, 6)).failures.join(' ')).toMatch(/run longer/);
  });
});
