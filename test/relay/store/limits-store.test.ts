/**
 * The relay's rate-limit primitives and the store's migration runner, on real objects (token
 * buckets with an explicit clock, a real SQLite database).
 */
import { describe, expect, it } from 'vitest';
import { BucketMap, GateMap, createRateLimiter } from '../../../relay/http/rate-limit.js';
import { RelayRefusal } from '../../../relay/http/errors.js';
import { MIGRATIONS } from '../../../relay/store/sqlite/migrations/index.js';
import { migrate, openDatabase } from '../../../relay/store/sqlite/open.js';
import { openStore } from '../../../relay/store/index.js';
import { tempDataDir } from '../../helpers/relay.js';
import { rmSync } from 'node:fs';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

describe('token buckets', () => {
  it('allow the burst at once, then refill at the rate', () => {
    const b = new BucketMap({ limit: 30, windowSeconds: 60, scope: 'key', burst: 60 });
    for (let i = 0; i < 60; i++) expect(b.take('k', 0).wait).toBe(0);
    const denied = b.take('k', 0);
    expect(denied.wait).toBe(2); // one token every two seconds
    expect(b.take('k', 1_999).wait).toBeGreaterThan(0);
    expect(b.take('k', 2_000).wait).toBe(0);
  });

  it('keep callers apart', () => {
    const b = new BucketMap({ limit: 1, windowSeconds: 60, scope: 'address' });
    expect(b.take('a', 0).wait).toBe(0);
    expect(b.take('a', 0).wait).toBe(60);
    expect(b.take('b', 0).wait).toBe(0);
  });

  it('hold at most the bound of entries, evicting the least recently used', () => {
    const b = new BucketMap({ limit: 1, windowSeconds: 3600, scope: 'address' }, 3);
    for (const k of ['a', 'b', 'c']) b.take(k, 0);
    b.take('a', 0); // a is now most recent (and empty)
    b.take('d', 0); // evicts b
    expect(b.size).toBe(3);
    expect(b.take('a', 0).wait).toBeGreaterThan(0);
    expect(b.take('b', 0).wait).toBe(0); // b was forgotten, so starts full
  });

  it('an own bucket refuses with RateLimit numbers; a shared one with a flat 60 s and none', async () => {
    let now = 0;
    const limiter = createRateLimiter(() => now);
    for (let i = 0; i < 20; i++) await limiter.take('tokensPerKey', 'k');
    try {
      await limiter.take('tokensPerKey', 'k');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(RelayRefusal);
      const r = e as RelayRefusal;
      expect(r.code).toBe('RATE_LIMITED');
      expect(r.headers['ratelimit-limit']).toBe('20');
      expect(r.headers['ratelimit-remaining']).toBe('0');
      expect(Number(r.retryAfter)).toBe(180); // 20 an hour: one every three minutes
    }
    for (let i = 0; i < 20; i++) await limiter.take('unknownTokens', 'addr');
    try {
      await limiter.take('unknownTokens', 'addr', { shared: true });
      expect.unreachable();
    } catch (e) {
      const r = e as RelayRefusal;
      expect(r.retryAfter).toBe(60);
      expect(r.headers).toEqual({});
    }
    now += 3_600_000;
    await limiter.take('tokensPerKey', 'k');
  });
});

describe('concurrency gates', () => {
  it('admit up to the limit per key and one more after a release', () => {
    const g = new GateMap(2);
    const r1 = g.enter('k');
    const r2 = g.enter('k');
    expect(r1 && r2).toBeTruthy();
    expect(g.enter('k')).toBeUndefined();
    expect(g.enter('other')).toBeDefined();
    r1!();
    r1!(); // releasing twice frees one place only
    expect(g.enter('k')).toBeDefined();
    expect(g.enter('k')).toBeUndefined();
  });
});

// SQLite's migration runner and pragmas (PostgreSQL's: test/postgres/schema.test.ts): not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`migrations${ON_POSTGRES_SKIP}`, () => {
  it('are applied once, in order, and recorded', async () => {
    const dir = tempDataDir();
    try {
      const db = openDatabase(dir);
      const rows = await db.prepare('SELECT id, name FROM schema_migrations ORDER BY id').all() as { id: number; name: string }[];
      expect(rows.map((r) => r.id)).toEqual(MIGRATIONS.map((m) => m.id));
      expect(migrate(db.raw, MIGRATIONS)).toEqual([]);
      expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.raw.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.raw.pragma('synchronous', { simple: true })).toBe(2); // FULL
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a failing migration leaves nothing of itself behind', async () => {
    const db = openDatabase(':memory:');
    const bad = { id: 999, name: 'bad', sql: 'CREATE TABLE half (x INTEGER); CREATE TABLE broken (' };
    expect(() => migrate(db.raw, [...MIGRATIONS, bad])).toThrow();
    expect(await db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    expect(await db.prepare('SELECT id FROM schema_migrations WHERE id = 999').get()).toBeUndefined();
    await db.close();
  });

  it('refuses a registry out of id order', async () => {
    const db = openDatabase(':memory:');
    expect(() => migrate(db.raw, [...MIGRATIONS, { id: 0, name: 'early', sql: '' }])).toThrow(/order/);
    await db.close();
  });
});

describe('spent challenges', () => {
  it('a nonce is spent once, and expired ones are forgotten when the next token is minted', async () => {
    const store = await openStore(':memory:');
    const base = {
      peerId: 'a'.repeat(64),
      keyType: 'ed25519' as const,
      publicKey: 'b'.repeat(64),
      label: null,
    };
    const mint = async (nonce: number, now: number, exp: number, id: string) =>
      await store.keys.mint({
        ...base,
        nonce: new Uint8Array(16).fill(nonce),
        nonceExpiresAt: exp,
        tokenId: id,
        tokenHash: new Uint8Array(32).fill(nonce + 100),
        now,
        expiresAt: now + 3_600_000,
      });
    expect(await mint(1, 0, 300_000, 't1')).toMatchObject({ ok: true, registered: true });
    expect(await mint(1, 1, 300_000, 't2')).toEqual({ ok: false, reason: 'nonce_spent' });
    expect(await mint(2, 400_000, 700_000, 't3')).toMatchObject({ ok: true, registered: false });
    const left = await store.db.prepare('SELECT count(*) AS n FROM spent_challenges').get() as { n: number };
    expect(left.n).toBe(1);
    await store.close();
  });
});
