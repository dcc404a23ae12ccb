/**
 * The bridge's subscription feed (tools/resources/subscriptions.ts) stops with its server instance: a
 * server served statelessly over HTTP (one instance per request, closed once it has answered)
 * must not keep reading the relay for a subscription it can no longer deliver.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ApiRequest, RelayApi } from '../../tools/api.js';
import { createServer } from '../../bridge/server.js';
import { bridgeDeps } from '../helpers/http-mcp.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
});

it('a subscription whose server instance closes while the first read is on its way reads the relay no more', async () => {
  const opened = bridgeDeps(relay.url);
  const inner = opened.deps.api;
  const reads: { path: string; wait: unknown; closed: boolean }[] = [];
  let closed = false;
  // The first read of the mailbox (where the stream stands) takes a while, as over a slow link.
  const api: RelayApi = {
    base: inner.base,
    async request(req: ApiRequest) {
      reads.push({ path: req.path, wait: req.query?.wait, closed });
      if (req.path === '/v1/mailbox' && reads.filter((r) => r.path === '/v1/mailbox').length === 1) await new Promise((r) => setTimeout(r, 300));
      return inner.request(req);
    },
  };
  const server = createServer({ ...opened.deps, api });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'svc-test', version: '0.0.0' });
  await client.connect(clientSide);
  try {
    await client.subscribeResource({ uri: 'svc://mailbox' });
    await client.close();
    closed = true;
    await new Promise((r) => setTimeout(r, 800));
    expect(reads.filter((r) => r.path === '/v1/mailbox' && r.closed)).toEqual([]);
    expect(reads.filter((r) => r.path === '/v1/mailbox' && r.wait !== undefined)).toEqual([]);
  } finally {
    opened.close();
  }
});
