/**
 * The token store remembers the records it found (relay/store/tokens.ts), so authentication
 * need not query on every request. A remembered record must never outlive a change: each test
 * first USES the token (so its record is remembered), then changes it, then uses it again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../relay/store/index.js';
import { getJson, mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const me = (token: string) => getJson(`${relay.url}/v1/me`, bearer(token));
const del = (path: string, token: string) => fetch(`${relay.url}${path}`, { method: 'DELETE', ...bearer(token) });

describe('a remembered token record never outlives a change', () => {
  it('a token revoked by id from another token of its KEY is TOKEN_REVOKED at its next use', async () => {
    const a = await mintToken(relay.url);
    expect((await me(a.token)).status).toBe(200);
    const list = await getJson(`${relay.url}/v1/tokens`, bearer(a.token));
    const current = (list.body.items as { id: string; current: boolean }[]).find((t) => t.current)!;
    const b = await mintToken(relay.url, a.seed);
    expect((await del(`/v1/tokens/${current.id}`, b.token)).status).toBe(200);
    const r = await me(a.token);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('TOKEN_REVOKED');
    expect((await me(b.token)).status).toBe(200);
  });

  it('revoke-all refuses every token of the KEY that was in use', async () => {
    const a = await mintToken(relay.url);
    const b = await mintToken(relay.url, a.seed);
    expect((await me(a.token)).status).toBe(200);
    expect((await me(b.token)).status).toBe(200);
    expect((await del('/v1/tokens', b.token)).status).toBe(200);
    for (const t of [a, b]) expect((await me(t.token)).body.error.code).toBe('TOKEN_REVOKED');
  });

  it('a KEY blocked after its token was used is KEY_BLOCKED, and works again once unblocked', async () => {
    const t = await mintToken(relay.url);
    expect((await me(t.token)).status).toBe(200);
    await relay.store.keys.setBlocked(t.peerId, relay.clock.now());
    const r = await me(t.token);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('KEY_BLOCKED');
    await relay.store.keys.setBlocked(t.peerId, null);
    expect((await me(t.token)).status).toBe(200);
  });

  it('a token used before its expiry is TOKEN_EXPIRED after it', async () => {
    const t = await mintToken(relay.url, undefined, { ttl_seconds: 3600 });
    expect((await me(t.token)).status).toBe(200);
    relay.clock.advance(3_600_000 + 1_000);
    try {
      expect((await me(t.token)).body.error.code).toBe('TOKEN_EXPIRED');
    } finally {
      relay.clock.advance(-(3_600_000 + 1_000));
    }
  });

  it('a revocation committed by another connection to the same database is seen at the next use', async () => {
    const t = await mintToken(relay.url);
    expect((await me(t.token)).status).toBe(200);
    const other = await openStore(relay.database);
    try {
      expect(await other.tokens.revokeAll(t.peerId, relay.clock.now())).toBe(1);
    } finally {
      await other.close();
    }
    expect((await me(t.token)).body.error.code).toBe('TOKEN_REVOKED');
  });
});
