/**
 * The connector's transport takes whatever JSON a client sends as its body: a value that is no
 * JSON-RPC message at all (null, a number, a string, true) is the SDK's JSON-RPC "invalid
 * request", never the relay's INTERNAL (the live-update check once read `method` of null).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let token: string;

beforeAll(async () => {
  relay = await startRelay();
  token = (await mintToken(relay.url)).token;
});
afterAll(async () => {
  await relay.close();
});

describe('a body that is JSON but no message, at /mcp', () => {
  for (const body of ['null', '1', '"x"', 'true']) {
    it(`${body} is answered with a JSON-RPC error, not a fault`, async () => {
      const res = await fetch(`${relay.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' },
        body,
      });
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { jsonrpc?: string; error?: { code?: number } };
      expect(answer.jsonrpc).toBe('2.0');
      expect(typeof answer.error?.code).toBe('number');
    });
  }
});
