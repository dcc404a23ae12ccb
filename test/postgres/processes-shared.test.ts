/**
 * Several relay processes on one PostgreSQL database behave as one relay
 * (relay/store/cluster.ts): a long poll held by one process wakes for a post or a mailbox
 * delivery written through another (spec/1-concepts.md "Long polling"), long before its wait
 * ends, and so does a connector live update; a token revoked, a KEY removed from a private
 * SPACE, or a private SPACE handed over, through one process ends the live streams the other
 * holds for the KEY that lost access; a KEY's rate limit is the same however many processes its requests reach (Limits:
 * "20 tokens an hour per KEY from one address"); and each range of a stream is signed once,
 * by one process, however many run the checkpointer at once.
 *
 * The first part runs two real svc-relay processes (`--database`, loopback ports, one data
 * directory, so one set of service key files); the checkpointer part builds two relays in
 * this process on two stores, each with its own pool and sessions as two processes have, so
 * the test can run both checkpointers at the same moment on a moved clock. The cluster is a
 * real server (test/helpers/postgres.ts); without PostgreSQL installed the file is skipped,
 * said loudly, except under CI, where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../relay/app.js';
import { openCheckpointLog, type CheckpointLog } from '../../relay/checkpoint-log.js';
import type { RelayConfig } from '../../relay/config.js';
import { loadServiceKeys } from '../../relay/service-keys.js';
import { openPostgresStore, type Store } from '../../relay/store/index.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';
import { mintToken, spawnRelay, tempDataDir, type MintedToken, type SpawnedRelay } from '../helpers/relay.js';
import { killAll, send } from '../helpers/relay-processes.js';
import { connectConnector, type ConnectorClient } from '../helpers/connector.js';

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** relay-processes-shared.test.ts skipped: ${cluster.skipReason} ***\n\n`);
afterAll(() => cluster.stop());

const WAIT_SECONDS = 25;
/** A wake-up that crossed processes answers well inside this; an unwoken wait takes 25 s. */
const WOKEN_WITHIN_MS = 8000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newSpace(url: string, owner: MintedToken, name: string): Promise<void> {
  const r = await send(`${url}/v1/spaces`, 'POST', owner.token, { name, title: 'Two processes' });
  if (r.status !== 201) throw new Error(`spaces.create: ${r.status} ${JSON.stringify(r.body)}`);
}

describe.skipIf(cluster.url === undefined)(`two svc-relay processes on one database${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  let database: FreshDatabase;
  let dataDir: string;
  let a: SpawnedRelay;
  let b: SpawnedRelay;
  let owner: MintedToken;

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir = tempDataDir();
    // The first creates the service key files; the second only reads them.
    a = await spawnRelay(dataDir, { args: ['--database', database.url] });
    b = await spawnRelay(dataDir, { args: ['--database', database.url] });
    owner = await mintToken(a.url);
  }, 60_000);
  afterAll(async () => {
    await killAll([a, b].filter((r) => r !== undefined));
    await database?.drop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('a long poll on one process wakes for a post written through the other, long before its wait ends', async () => {
    const name = `wake-${randomBytes(4).toString('hex')}`;
    await newSpace(a.url, owner, name);
    const started = Date.now();
    const held = send(`${a.url}/v1/spaces/${name}/posts?after=0&wait=${WAIT_SECONDS}`, 'GET', owner.token);
    await sleep(1000);
    const written = await send(`${b.url}/v1/spaces/${name}/posts`, 'POST', owner.token, { kind: 'obs', body: 'written through the other process' });
    expect(written.status).toBe(201);
    const read = await held;
    expect(read.status).toBe(200);
    expect(read.body.items.map((p: { post_id: string }) => p.post_id)).toEqual([written.body.post_id]);
    expect(Date.now() - started).toBeLessThan(WOKEN_WITHIN_MS);
  }, 40_000);

  it('a mailbox long poll on one process wakes for a delivery made through the other', async () => {
    const name = `mail-${randomBytes(4).toString('hex')}`;
    await newSpace(a.url, owner, name);
    const me = await mintToken(b.url);
    const admitted = await send(`${b.url}/v1/spaces/${name}/members/${me.peerId}`, 'PUT', owner.token, { role: 'writer' });
    expect(admitted.status).toBe(201);
    const started = Date.now();
    const held = send(`${a.url}/v1/mailbox?wait=${WAIT_SECONDS}`, 'GET', me.token);
    await sleep(1000);
    const written = await send(`${b.url}/v1/spaces/${name}/posts`, 'POST', owner.token, { kind: 'obs', body: 'for you', to: [me.peerId] });
    expect(written.status).toBe(201);
    const read = await held;
    expect(read.status).toBe(200);
    expect(read.body.items).toHaveLength(1);
    expect(read.body.items[0]).toMatchObject({ mailbox_seq: '1', reason: 'to', post: { post_id: written.body.post_id } });
    expect(Date.now() - started).toBeLessThan(WOKEN_WITHIN_MS);
  }, 40_000);

  it('a live update stream on one process is told of a post through the other, and ends when its token is revoked through the other', async () => {
    const name = `live-${randomBytes(4).toString('hex')}`;
    await newSpace(a.url, owner, name);
    const seed = new Uint8Array(randomBytes(32));
    const me = await mintToken(a.url, seed);
    await send(`${a.url}/v1/spaces/${name}/members/${me.peerId}`, 'PUT', owner.token, { role: 'writer' });
    const c = await connectConnector(a.url, { token: me.token, revision: '2026-07-28' });
    const updates: string[] = [];
    c.client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push((n.params as { uri: string }).uri));
    try {
      const stream = await c.client.listen({ resourceSubscriptions: [`svc://spaces/${name}`] });
      await sleep(500);
      expect((await send(`${b.url}/v1/spaces/${name}/posts`, 'POST', owner.token, { kind: 'obs', body: 'seen live elsewhere' })).status).toBe(201);
      for (let i = 0; i < 100 && !updates.includes(`svc://spaces/${name}`); i++) await sleep(50);
      expect(updates).toContain(`svc://spaces/${name}`);
      expect((await send(`${b.url}/v1/tokens/current`, 'DELETE', me.token)).status).toBe(200);
      expect(await Promise.race([stream.closed, sleep(WOKEN_WITHIN_MS).then(() => 'still open')])).toBe('graceful');
    } finally {
      await c.close();
    }
  }, 40_000);

  it('leaving a private SPACE through one process ends the live streams that follow it on the other', async () => {
    const name = `left-${randomBytes(4).toString('hex')}`;
    await newSpace(a.url, owner, name);
    const me = await mintToken(a.url);
    await send(`${a.url}/v1/spaces/${name}/members/${me.peerId}`, 'PUT', owner.token, { role: 'writer' });
    const c = await connectConnector(a.url, { token: me.token, revision: '2026-07-28' });
    try {
      const following = await c.client.listen({ resourceSubscriptions: [`svc://spaces/${name}`, 'svc://mailbox'] });
      const mailboxOnly = await c.client.listen({ resourceSubscriptions: ['svc://mailbox'] });
      expect((await send(`${b.url}/v1/spaces/${name}/members/${me.peerId}`, 'DELETE', me.token)).status).toBe(200);
      expect(await Promise.race([following.closed, sleep(WOKEN_WITHIN_MS).then(() => 'still open')])).toBe('graceful');
      expect(await Promise.race([mailboxOnly.closed, sleep(300).then(() => 'open')])).toBe('open');
      await mailboxOnly.close();
    } finally {
      await c.close();
    }
  }, 40_000);

  it('handing a private SPACE over through one process ends the former owner’s live stream on the other, which tells it nothing after', async () => {
    const name = `handed-${randomBytes(4).toString('hex')}`;
    const giver = await mintToken(a.url);
    await newSpace(a.url, giver, name);
    const successor = await mintToken(a.url);
    expect([200, 201]).toContain((await send(`${a.url}/v1/spaces/${name}/members/${successor.peerId}`, 'PUT', giver.token, { role: 'writer' })).status);
    const uri = `svc://spaces/${name}`;
    const clients: ConnectorClient[] = [];
    try {
      const updatesOf = async (token: string) => {
        const c = await connectConnector(a.url, { token, revision: '2026-07-28' });
        clients.push(c);
        const updates: string[] = [];
        c.client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push((n.params as { uri: string }).uri));
        return { stream: await c.client.listen({ resourceSubscriptions: [uri] }), updates };
      };
      const former = await updatesOf(giver.token);
      const next = await updatesOf(successor.token);
      const offer = await send(`${b.url}/v1/spaces/${name}/hand-over`, 'POST', giver.token, { to: successor.peerId });
      expect(offer.status).toBe(201);
      expect((await send(`${b.url}/v1/hand-overs/${offer.body.offer_id}/accept`, 'POST', successor.token, {})).status).toBe(200);
      expect((await send(`${b.url}/v1/spaces/${name}/posts`, 'POST', successor.token, { kind: 'obs', body: 'after the hand-over' })).status).toBe(201);
      for (let i = 0; i < 100 && !next.updates.includes(uri); i++) await sleep(50);
      expect(next.updates).toContain(uri);
      expect(await Promise.race([former.stream.closed, sleep(WOKEN_WITHIN_MS).then(() => 'still open')])).toBe('graceful');
      expect(former.updates).toEqual([]);
      expect(await Promise.race([next.stream.closed, sleep(300).then(() => 'open')])).toBe('open');
      await next.stream.close();
    } finally {
      for (const c of clients) await c.close();
    }
  }, 40_000);

  it('a KEY’s token limit holds across both processes: 20 an hour from one address, wherever they are minted', async () => {
    const seed = new Uint8Array(randomBytes(32));
    for (let i = 0; i < 20; i++) await mintToken(i % 2 === 0 ? a.url : b.url, seed);
    // Each process has minted only ten: a limit kept per process would let both go on.
    await expect(mintToken(a.url, seed)).rejects.toThrow(/RATE_LIMITED/);
    await expect(mintToken(b.url, seed)).rejects.toThrow(/RATE_LIMITED/);
  }, 40_000);
});

describe.skipIf(cluster.url === undefined)(`two relays’ checkpointers on one database${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`, () => {
  let database: FreshDatabase;
  let dataDir: string;
  const stores: Store[] = [];
  const apps: FastifyInstance[] = [];
  const logs: CheckpointLog[] = [];
  let offset = 0;
  const clock = () => Date.now() + offset;

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir = tempDataDir();
    for (let i = 0; i < 2; i++) {
      const store = await openPostgresStore(database.url, { applicationName: `svc-test-${i}` });
      stores.push(store);
      const config: RelayConfig = { host: '127.0.0.1', port: 0, dataDir, dev: true, publicUrl: undefined };
      const random = (n: number) => new Uint8Array(randomBytes(n));
      const serviceKeys = loadServiceKeys({ dataDir, dev: true, now: clock(), random });
      // One log file, as two processes sharing one data directory append to it.
      const log = openCheckpointLog(join(dataDir, 'checkpoints.log'));
      logs.push(log);
      const app = buildApp({ config, store, clock, random, serviceKeys, checkpointLog: log });
      await app.listen({ port: 0, host: '127.0.0.1' });
      apps.push(app);
    }
  }, 60_000);
  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const store of stores) await store.close();
    for (const log of logs) log.close();
    await database?.drop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  it('run at the same moment, one signs every due range and the other signs none; no range is signed or logged twice', async () => {
    const urls = apps.map(urlOf);
    const owner = await mintToken(urls[0]!);
    for (let s = 0; s < 12; s++) {
      const name = `ckpt-${s}-${randomBytes(3).toString('hex')}`;
      await newSpace(urls[s % 2]!, owner, name);
      for (let k = 0; k < 2; k++) {
        offset += 2_100;
        const r = await send(`${urls[(s + k) % 2]!}/v1/spaces/${name}/posts`, 'POST', owner.token, { kind: 'obs', body: `post ${k}` });
        expect(r.status).toBe(201);
      }
    }
    // Eleven minutes on: every stream's oldest uncovered position is due.
    offset += 11 * 60_000;
    const now = clock();
    const runs = await Promise.all(apps.map(async (app) => await app.checkpointer.runOnce(now)));
    const signed = runs.map((r) => r.signed).sort((x, y) => x - y);
    expect(signed[0]).toBe(0);
    // Twelve SPACES, each with a posts and an events stream.
    expect(signed[1]).toBe(24);
    const rows = (await stores[0]!.db
      .prepare('SELECT space_row_id, stream, first, last FROM checkpoints ORDER BY space_row_id, stream, first')
      .all()) as { space_row_id: number; stream: string; first: number; last: number }[];
    expect(rows).toHaveLength(24);
    const lines = readFileSync(join(dataDir, 'checkpoints.log'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(24);
    // Another pass by either signs nothing more.
    for (const app of apps) expect((await app.checkpointer.runOnce(now)).signed).toBe(0);
  }, 60_000);
});
