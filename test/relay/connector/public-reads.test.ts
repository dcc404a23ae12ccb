/**
 * The connector's shared public reads (relay/connector/public-reads.ts): the capabilities
 * document the tool layer reads on every call is read from the relay's route once for all
 * callers for a moment, read again after that moment or when the service epoch changes, and
 * nothing else is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../../../tools/api.js';
import { contextOf } from '../../../relay/app.js';
import { connectorApi } from '../../../relay/connector/api.js';
import type { Caller } from '../../../relay/connector/caller.js';
import { createPublicReads, PUBLIC_READ_MS } from '../../../relay/connector/public-reads.js';
import { EPOCH_KEY } from '../../../relay/service-mode.js';
import { openStore } from '../../../relay/store/index.js';
import { mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
});

function caller(authorization?: string): Caller {
  return { authorization, identity: undefined, remoteAddress: '127.0.0.1', connect: false, scopeDenied: false };
}

describe('public reads at the connector', () => {
  it('serves capabilities from one read to every caller for a moment, then reads again', async () => {
    const ctx = contextOf(relay.app);
    const reads = createPublicReads(ctx);
    const { token } = await mintToken(relay.url);
    let routeReads = 0;
    const real = (c: Caller) => connectorApi(relay.app, ctx, c);
    const through = (c: Caller) => reads.through({ path: '/v1/capabilities', auth: 'none' }, () => (routeReads++, real(c).request({ path: '/v1/capabilities', auth: 'none' })));

    const first: ApiResponse = await through(caller());
    const second = await through(caller(`Bearer ${token}`));
    expect(routeReads).toBe(1);
    expect(second.body).toEqual(first.body);
    expect((first.body as Record<string, unknown>).service_epoch).toBe(await ctx.serviceMode.epoch());

    relay.clock.advance(PUBLIC_READ_MS);
    await through(caller());
    expect(routeReads).toBe(2);
  });

  it('reads again at once when the service epoch changes', async () => {
    const ctx = contextOf(relay.app);
    const reads = createPublicReads(ctx);
    let routeReads = 0;
    const through = () => reads.through({ path: '/v1/capabilities', auth: 'none' }, () => (routeReads++, connectorApi(relay.app, ctx, caller()).request({ path: '/v1/capabilities', auth: 'none' })));
    await through();
    // As a restore does: another connection to the relay's database writes the new epoch.
    const other = await openStore(relay.database);
    await other.db.prepare('UPDATE service_state SET value = ? WHERE key = ?').run('00000000-0000-4000-8000-000000000001', EPOCH_KEY);
    await other.close();
    // SQLite tells the relay's connection at once (data_version); on PostgreSQL the relay reads
    // such values again once a second (relay/store/service-state.ts).
    if (relay.store.db.dialect === 'postgres') await new Promise((r) => setTimeout(r, 1_100));
    const after = await through();
    expect(routeReads).toBe(2);
    expect((after.body as Record<string, unknown>).service_epoch).toBe('00000000-0000-4000-8000-000000000001');
  });

  it('keeps nothing else: a read with a token, another path or a query goes to the route each time', async () => {
    const ctx = contextOf(relay.app);
    const reads = createPublicReads(ctx);
    let routeReads = 0;
    const read = () => (routeReads++, Promise.resolve({ status: 200, headers: new Headers(), body: {}, text: '{}' }));
    for (const req of [{ path: '/v1/capabilities', auth: 'opt' as const }, { path: '/v1/me' }, { path: '/v1/capabilities', auth: 'none' as const, query: { x: '1' } }]) {
      await reads.through(req, read);
      await reads.through(req, read);
    }
    expect(routeReads).toBe(6);
  });
});
