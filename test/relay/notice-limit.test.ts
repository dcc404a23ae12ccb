/**
 * The KEY-to-KEY delivery limit (spec/1-concepts.md "Mailbox": 200 deliveries an hour between
 * two KEYS; past it the write stands and the notice is left out), and the benchmark setting that
 * turns every rate limit off (SVC_RELAY_NO_RATE_LIMITS=1), which must turn this one off too, or a
 * benchmark of group sends would stop measuring the fan-out after 200 messages.
 */
import { describe, expect, it } from 'vitest';
import type { RelayContext } from '../../relay/context.js';
import { createRateLimiter } from '../../relay/http/rate-limit.js';
import { mayNotify } from '../../relay/joining.js';

function context(enabled: boolean): RelayContext {
  const clock = () => 1_800_000_000_000;
  return { clock, limiter: createRateLimiter(clock, { enabled }) } as unknown as RelayContext;
}

async function notices(ctx: RelayContext, n: number): Promise<number> {
  let told = 0;
  for (let i = 0; i < n; i++) if (await mayNotify(ctx, 'a', 'b')) told++;
  return told;
}

describe('notices between two KEYS', () => {
  it('stop after 200 within the hour while rate limits are on', async () => {
    expect(await notices(context(true), 300)).toBe(200);
  });

  it('all go through with every rate limit off (benchmarks only)', async () => {
    expect(await notices(context(false), 300)).toBe(300);
  });
});
