/**
 * /metrics (relay/metrics/): Prometheus text from the real relay, read as a scraper reads it.
 * Served on the public port only to the bearer of the operator's secret, or on a listener of
 * its own (a real relay process with --metrics-port); the counts follow what the relay did.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_MAX_AGE_SECONDS } from '../../shared/limits.js';
import { admit, get, newSpace, post, putSeekIndexBehind } from '../helpers/posts.js';
import { call, mintToken, spawnRelay, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';

const SECRET = 'metrics-secret-0123456789abcdef0123456789abcdef';

/** The value of one series: `name` with exactly these labels (in any order); undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.keys(found).length !== Object.keys(labels).length) continue;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function scrape(relay: RunningRelay): Promise<string> {
  const r = await call(relay, 'GET', '/metrics', { headers: { authorization: `Bearer ${SECRET}` } });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return r.text;
}

let relay: RunningRelay;
let owner: MintedToken;
let member: MintedToken;

beforeAll(async () => {
  relay = await startRelay({ config: { metrics: { token: SECRET } } });
  owner = await mintToken(relay.url);
  member = await mintToken(relay.url);
});
afterAll(() => relay.close());

describe('/metrics on the public port', () => {
  it('answers only the bearer of the metrics secret: TOKEN_MISSING without it, TOKEN_INVALID with another', async () => {
    const none = await call(relay, 'GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('TOKEN_MISSING');
    const wrong = await call(relay, 'GET', '/metrics', { headers: { authorization: `Bearer ${SECRET}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('TOKEN_INVALID');
    // A relay token is not the metrics secret either.
    const relayToken = await call(relay, 'GET', '/metrics', { token: owner.token });
    expect(relayToken.body.error.code).toBe('TOKEN_INVALID');
    expect(await scrape(relay)).toContain('# TYPE svc_relay_http_requests_total counter');
  });

  it('is not served on a relay whose settings ask for no metrics', async () => {
    const plain = await startRelay();
    try {
      const r = await call(plain, 'GET', '/metrics', { headers: { authorization: `Bearer ${SECRET}` } });
      expect(r.status).toBe(404);
      expect(plain.app.metrics).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('what the metrics count', () => {
  it('requests by route pattern, method and status, never by the address asked for', async () => {
    const space = await newSpace(relay, owner);
    const before = await scrape(relay);
    const route = { route: '/v1/spaces/:name/posts', method: 'GET' };
    const ok = sample(before, 'svc_relay_http_requests_total', { ...route, status: '200' }) ?? 0;
    expect((await get(relay, `/v1/spaces/${space.name}/posts`, owner)).status).toBe(200);
    expect((await get(relay, `/v1/spaces/${space.name}/posts?after=x`, owner)).status).toBe(400);
    const after = await scrape(relay);
    expect(sample(after, 'svc_relay_http_requests_total', { ...route, status: '200' })).toBe(ok + 1);
    expect(sample(after, 'svc_relay_http_requests_total', { ...route, status: '400' })).toBeGreaterThanOrEqual(1);
    const count = sample(after, 'svc_relay_http_request_duration_seconds_count', route)!;
    expect(count).toBeGreaterThanOrEqual(ok + 2);
    // Buckets count every answer at or below their bound: they only rise, up to the count at +Inf.
    const buckets = ['0.0005', '0.001', '0.01', '0.1', '1', '30', '+Inf'].map((le) => sample(after, 'svc_relay_http_request_duration_seconds_bucket', { ...route, le })!);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(buckets.at(-1)).toBe(count);
    expect(after).not.toContain(space.name);
    expect(after).not.toContain('after=x');
  });

  it('appends, the works of each group commit and its time, and the positions no checkpoint covers yet', async () => {
    const space = await newSpace(relay, owner);
    const before = await scrape(relay);
    const accepted = sample(before, 'svc_relay_appends_total', { outcome: 'accepted' }) ?? 0;
    const stored = sample(before, 'svc_relay_posts_stored') ?? 0;
    const works = sample(before, 'svc_relay_commit_batch_works_sum') ?? 0;
    const lag = sample(before, 'svc_relay_checkpoint_lag_positions', { stream: 'posts' }) ?? 0;
    for (let i = 0; i < 3; i++) await post(relay, owner, space, { kind: 'obs', body: `note ${i}` });
    const after = await scrape(relay);
    expect(sample(after, 'svc_relay_appends_total', { outcome: 'accepted' })).toBe(accepted + 3);
    expect(sample(after, 'svc_relay_posts_stored')).toBe(stored + 3);
    expect(sample(after, 'svc_relay_commit_batch_works_sum')).toBeGreaterThanOrEqual(works + 3);
    expect(sample(after, 'svc_relay_commit_fsync_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'svc_relay_commit_transaction_seconds_sum')).toBeGreaterThan(0);
    expect(sample(after, 'svc_relay_checkpoint_lag_positions', { stream: 'posts' })).toBe(lag + 3);
    expect(sample(after, 'svc_relay_checkpoint_lag_oldest_seconds', { stream: 'posts' })).toBeGreaterThanOrEqual(0);

    // Once the checkpointer has signed every stream that is due, nothing waits.
    await relay.app.checkpointer.runOnce(relay.clock.now() + (CHECKPOINT_MAX_AGE_SECONDS + 60) * 1000);
    const signed = await scrape(relay);
    expect(sample(signed, 'svc_relay_checkpoint_lag_positions', { stream: 'posts' })).toBe(0);
    expect(sample(signed, 'svc_relay_checkpoint_lag_oldest_seconds', { stream: 'posts' })).toBe(0);
  });

  it('the SEEK backlog: posts stored above the index watermark', async () => {
    const space = await newSpace(relay, owner);
    await post(relay, owner, space, { kind: 'obs', body: 'indexed at once' });
    // The follow-up indexer would catch up on its timer between the two readings.
    await relay.app.seekIndexer.stop();
    try {
      const watermark = await putSeekIndexBehind(relay.store);
      const backlog = sample(await scrape(relay), 'svc_relay_seek_backlog_posts');
      expect(backlog).toBe((await relay.store.db.prepare('SELECT COUNT(*) AS n FROM posts WHERE id > ?').get(watermark) as { n: number }).n);
      expect(backlog).toBeGreaterThanOrEqual(1);
    } finally {
      relay.app.seekIndexer.start();
    }
  });

  it('long polls waiting, while one is held', async () => {
    const space = await newSpace(relay, owner);
    await admit(relay, space, member, 'writer');
    const waiting = get(relay, `/v1/spaces/${space.name}/posts?wait=20`, member);
    let held: number | undefined;
    for (let i = 0; i < 50 && held !== 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
      held = sample(await scrape(relay), 'svc_relay_long_polls_waiting');
    }
    expect(held).toBe(1);
    await post(relay, owner, space, { kind: 'obs', body: 'wake up' });
    expect((await waiting).body.items).toHaveLength(1);
    expect(sample(await scrape(relay), 'svc_relay_long_polls_waiting')).toBe(0);
  });

  it('rate-limit refusals by class', async () => {
    const before = sample(await scrape(relay), 'svc_relay_rate_limit_refusals_total', { class: 'unknownTokens' }) ?? 0;
    // An address presenting unknown tokens: 20 at once are allowed, then RATE_LIMITED.
    let refused = 0;
    for (let i = 0; i < 25; i++) {
      const r = await call(relay, 'GET', '/v1/me', { token: `svc_not_a_token_${i}` });
      if (r.body?.error?.code === 'RATE_LIMITED') refused++;
    }
    expect(refused).toBeGreaterThan(0);
    const after = sample(await scrape(relay), 'svc_relay_rate_limit_refusals_total', { class: 'unknownTokens' });
    expect(after).toBe(before + refused);
  });

  it('the database and its write-ahead log by size, the free disk /healthz watches, and the process', async () => {
    const text = await scrape(relay);
    expect(sample(text, 'svc_relay_database_bytes', { file: 'database' })).toBeGreaterThan(0);
    expect(sample(text, 'svc_relay_database_bytes', { file: 'wal' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'svc_relay_disk_free_bytes', { volume: 'database' })).toBeGreaterThan(0);
    expect(sample(text, 'svc_relay_disk_min_free_bytes', { volume: 'database' })).toBeGreaterThan(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
  });
});

describe('their own listener (a relay process with --metrics-port)', () => {
  it('serves GET /metrics on loopback at the address the listening line gives, and not on the public port', async () => {
    const dataDir = tempDataDir();
    const spawned = await spawnRelay(dataDir, { args: ['--metrics-port', '0'] });
    try {
      const m = /metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(spawned.stdout());
      expect(m, spawned.stdout()).not.toBeNull();
      await fetch(`${spawned.url}/healthz`);
      const res = await fetch(m![1]!);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(sample(text, 'svc_relay_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
      expect((await fetch(`${spawned.url}/metrics`)).status).toBe(404);
      expect((await fetch(m![1]!.replace('/metrics', '/other'))).status).toBe(404);
    } finally {
      await spawned.kill();
    }
  });

  it('a token file holding a short secret stops the relay at start with one line naming the flag (exit 2)', async () => {
    const dataDir = tempDataDir();
    const file = join(dataDir, 'metrics-token');
    writeFileSync(file, 'short\n');
    await expect(spawnRelay(dataDir, { args: ['--metrics-token-file', file] })).rejects.toThrow(/exited \(2\).*--metrics-token-file: .* at least 32/s);
  });
});
