/**
 * A request that reaches the store after it closed: the relay is stopping and a request still
 * running (one whose client left, a long poll woken by the stop) or one that slipped in reads a
 * closed database. It is answered BUSY (503, the envelope, Retry-After: resend in a moment), not
 * INTERNAL, and nothing is written to the operator's log: nothing failed but the timing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';

describe('a request that reaches a closed store while the relay stops', () => {
  let relay: RunningRelay;
  let written: string[];
  let restore: () => void;

  beforeEach(async () => {
    relay = await startRelay();
    written = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
      written.push(String(chunk));
      return write(chunk, ...rest);
    }) as typeof process.stderr.write;
    restore = () => void (process.stderr.write = write);
  });
  afterEach(async () => {
    restore();
    await relay.close();
  });

  it('is answered BUSY with Retry-After, reads and writes alike, and logs nothing', async () => {
    const k = await mintToken(relay.url);
    expect((await call(relay, 'POST', '/v1/spaces', { token: k.token, body: { name: 'before-the-stop' } })).status).toBe(201);

    await relay.store.close();
    for (const [method, path, body] of [
      ['GET', '/v1/spaces/before-the-stop/posts', undefined],
      ['POST', '/v1/spaces', { name: 'after-the-stop' }],
    ] as const) {
      const r = await call(relay, method, path, { token: k.token, body });
      expect(r.status, `${method} ${path}`).toBe(503);
      expect(r.body.error).toMatchObject({ code: 'BUSY', detail: 'the relay is stopping; resend in a moment' });
      expect(r.headers.get('retry-after')).toBe('1');
    }
    // (The relay's background passes, still running here since only the store was closed, may
    // say they stopped; a relay that stops ends them before its store.)
    expect(written.join('')).not.toMatch(/INTERNAL|svc-relay: request/);
  });
});
