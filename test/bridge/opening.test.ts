/**
 * bridge/opening.ts: a serving bridge begins its duties (keeper, outbox, the log line naming its
 * KEY) once its client's opening requests are answered: in the turn after the answer to the first
 * request other than initialize, or after a wait when the client asks nothing more. Run on the
 * SDK's own stdio transport over in-memory streams, answered by a server that answers every
 * request with an empty result.
 */
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { describe, expect, it } from 'vitest';
import { afterOpening, OPENING_WAIT_MS } from '../../bridge/opening.js';

async function serving(waitMs = OPENING_WAIT_MS) {
  const input = new PassThrough();
  const output = new PassThrough();
  const answered: unknown[] = [];
  output.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n').filter(Boolean)) answered.push((JSON.parse(line) as { id?: unknown }).id);
  });
  let begun = 0;
  const transport = afterOpening(new StdioServerTransport(input, output), () => begun++, waitMs);
  transport.onmessage = (m) => {
    if ('method' in m && 'id' in m) void transport.send({ jsonrpc: '2.0', id: m.id, result: {} });
  };
  await transport.start();
  /** Send a request (or, without an id, a notification) and let its answer go out. */
  const send = async (method: string, id?: string | number) => {
    input.write(`${JSON.stringify({ jsonrpc: '2.0', method, ...(id === undefined ? {} : { id }), params: {} })}\n`);
    await sleep(20);
  };
  return { send, begun: () => begun, answered, close: () => transport.close() };
}

describe('a serving bridge begins its duties', () => {
  it('after the answer to the first request that follows initialize, once', async () => {
    const s = await serving();
    try {
      await s.send('initialize', 1);
      await s.send('notifications/initialized');
      expect(s.answered).toEqual([1]);
      expect(s.begun()).toBe(0);
      await s.send('tools/list', 2);
      expect(s.answered).toEqual([1, 2]);
      expect(s.begun()).toBe(1);
      await s.send('tools/call', 3);
      expect(s.begun()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('at revision 2026-07-28, after the answer to the first request, which is no initialize', async () => {
    const s = await serving();
    try {
      await s.send('server/discover', 'a');
      expect(s.answered).toEqual(['a']);
      expect(s.begun()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it('after the wait when the client asks nothing after initialize', async () => {
    const s = await serving(150);
    try {
      await s.send('initialize', 1);
      expect(s.begun()).toBe(0);
      await sleep(300);
      expect(s.begun()).toBe(1);
      await s.send('tools/list', 2);
      expect(s.begun()).toBe(1);
    } finally {
      await s.close();
    }
  });
});
