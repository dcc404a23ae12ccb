/**
 * The background-job timer (relay/jobs/interval-job.ts) shared by the checkpointer and the SEEK
 * indexer: one pass at a time, a pass that throws is reported, stop ends the passes. Real
 * timers with a short interval; the tests wait on what the passes did, not on how long.
 */
import { describe, expect, it } from 'vitest';
import { createIntervalJob } from '../../relay/jobs/interval-job.js';

const tick = () => new Promise<void>((r) => setTimeout(r, 5));

/** Wait (up to about two seconds) until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await tick();
}

describe('a background job on a timer', () => {
  it('never starts a pass while the one before is still running', async () => {
    let started = 0;
    let active = 0;
    let most = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const job = createIntervalJob({
      intervalMs: 1,
      pass: async () => {
        started++;
        active++;
        most = Math.max(most, active);
        if (started === 1) await gate;
        active--;
      },
      report: (m) => {
        throw new Error(`unexpected report: ${m}`);
      },
    });
    job.start();
    try {
      await until(() => started >= 1);
      for (let i = 0; i < 10; i++) await tick();
      expect(started).toBe(1);
      release();
      await until(() => started >= 3);
    } finally {
      await job.stop();
    }
    expect(started).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
  });

  it('reports a pass that throws and keeps running', async () => {
    const reports: string[] = [];
    let passes = 0;
    const job = createIntervalJob({
      intervalMs: 1,
      pass: async () => {
        passes++;
        throw new Error(`pass ${passes} failed`);
      },
      report: (m) => reports.push(m),
    });
    job.start();
    try {
      await until(() => reports.length >= 2);
    } finally {
      await job.stop();
    }
    expect(reports[0]).toContain('pass 1 failed');
    expect(reports[1]).toContain('pass 2 failed');
  });

  it('runs no pass after stop, and a second start while running adds no second timer', async () => {
    let passes = 0;
    const job = createIntervalJob({ intervalMs: 1, pass: async () => void passes++, report: () => {} });
    job.start();
    job.start();
    await until(() => passes >= 2);
    await job.stop();
    const stoppedAt = passes;
    for (let i = 0; i < 10; i++) await tick();
    expect(passes).toBe(stoppedAt);
  });
});
