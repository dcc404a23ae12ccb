/**
 * The connector around its calls: an anonymous caller listing resources at `/mcp` is normal
 * and leaves the relay's log quiet, and a relay stops at once while an SDK client still holds
 * its keep-alive connection, or a connection is open with no request on it yet
 * (relay/http/connections.ts), instead of waiting for Node's header timeout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connectConnector, callConnector } from '../../helpers/connector.js';
import { mintToken, spawnRelay, startRelay, type SpawnedRelay } from '../../helpers/relay.js';

describe('an anonymous caller at /mcp', () => {
  let relay: SpawnedRelay | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-connector-quiet-'));
  afterAll(async () => {
    await relay?.kill('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists resources without a line on the relay\'s stderr', async () => {
    relay = await spawnRelay(dataDir);
    const c = await connectConnector(relay.url);
    try {
      for (let i = 0; i < 3; i++) {
        const list = await c.client.listResources();
        expect(list.resources.map((r) => r.uri)).toContain('svc://guide');
      }
    } finally {
      await c.close();
    }
    expect(relay.stderr()).not.toMatch(/memberships/);
  });
});

describe('stopping the relay', () => {
  it('returns promptly while an SDK client still holds a connection open', async () => {
    const relay = await startRelay();
    const c = await connectConnector(relay.url);
    const r = await callConnector(c, 'svc_guide', { part: 'primer' });
    expect(r.isError).not.toBe(true);
    // The client is not closed: its keep-alive connection to the relay stays open.
    const outcome = await Promise.race([
      relay.close().then(() => 'closed' as const),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref()),
    ]);
    expect(outcome).toBe('closed');
    await c.close().catch(() => {});
  });

  it('returns promptly while a connection is open with no request on it, and the connection is ended', async () => {
    const relay = await startRelay();
    const u = new URL(relay.url);
    const socket = connect(Number(u.port), u.hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    const outcome = await Promise.race([
      relay.close().then(() => 'closed' as const),
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 5_000).unref()),
    ]);
    socket.destroy();
    expect(outcome).toBe('closed');
    await ended;
  });

  it('still answers a request in flight when the relay stops during it: a held long poll gets its page at once, 200', async () => {
    const relay = await startRelay();
    const { token } = await mintToken(relay.url);
    const started = performance.now();
    const answered = fetch(`${relay.url}/v1/mailbox?wait=10`, { headers: { authorization: `Bearer ${token}` } }).then(async (r) => ({ status: r.status, body: await r.text() }));
    // The long poll is held by the relay by now; stopping wakes it, and it is answered, not cut.
    await new Promise((r) => setTimeout(r, 300));
    await relay.close();
    const r = await answered;
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toHaveProperty('items');
    // Answered when the relay stopped, well before the poll's ten seconds were up.
    expect(performance.now() - started).toBeLessThan(8_000);
  });
});
