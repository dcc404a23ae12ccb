/**
 * Several relay processes on one PostgreSQL database (spec/1-concepts.md "Chains, checkpoints
 * and proofs", "Long polling"; relay/store/database.ts "Write serialisation").
 *
 * Two, then four, real svc-relay processes (`--database postgres://…`, loopback ports, one
 * data directory for the service key files) take signed appends from 32 writers spread over
 * them, most into one SPACE and some into several. Whatever process answered, a post's `seq`
 * comes from the one head in the database under the relay's write lock, so afterwards every
 * SPACE's positions run 1..head without a gap, its chain verifies from genesis, and every
 * 201 any process sent is in place at its seq with its post id and a receipt verifying under
 * the one service key. A long poll held by one process wakes for a post written through
 * another (the wake-up crosses processes through the database, LISTEN/NOTIFY), long before
 * its wait ends. kill -9 of one process while all are appending loses nothing it
 * acknowledged: a 201 is sent only after its COMMIT, and the advisory write lock a killed
 * transaction held is released with its connection, so the others go on.
 *
 * Everything is written and read back over HTTP, and checked with the shared/ verifiers; the
 * stored chains are also checked in the database itself (test/helpers/chain.ts) through the
 * PostgreSQL store opened in this process. The cluster is a real server (test/helpers/
 * postgres.ts); without PostgreSQL installed the file is skipped, said loudly, except under
 * CI, where it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { openPostgresStore, type Store } from '../../relay/store/index.js';
import { expectChainVerifies } from '../helpers/chain.js';
import { freshDatabase, testPostgres, type FreshDatabase } from '../helpers/postgres.js';
import { mintToken, tempDataDir, type MintedToken, type SpawnedRelay } from '../helpers/relay.js';
import {
  appendOne,
  expectEveryAcknowledgedPost,
  readAll,
  killAll,
  send,
  setUpSpace,
  signerKeyOf,
  sleep,
  spawnOnDatabase,
  spawnProcesses,
  writer,
  type Sent,
  type Space,
} from '../helpers/relay-processes.js';

const WRITERS = 32;
/** Writers from this index on write into several SPACES in turn; the others into the one shared SPACE. */
const SPREAD_FROM = 24;
const POSTS_PER_WRITER = 8;
/** A long poll's wait, in seconds (the most a read may ask). */
const WAIT_SECONDS = 25;

const cluster = testPostgres();
if (cluster.skipReason !== undefined) process.stderr.write(`\n*** relay-multiprocess.test.ts skipped: ${cluster.skipReason} ***\n\n`);

afterAll(() => cluster.stop());

/** One database, `count` processes on it, and the KEYS and SPACES the tests write with. */
interface Fleet {
  database: FreshDatabase;
  dataDir: string;
  relays: SpawnedRelay[];
  urls: () => string[];
  owner: MintedToken;
  writers: MintedToken[];
  /** The PostgreSQL store on the same database, in this process, for the stored-chain check. */
  store: Store;
}

async function startFleet(count: number): Promise<Fleet> {
  const database = await freshDatabase();
  const dataDir = tempDataDir('svc-multiprocess-');
  const relays = await spawnProcesses(database.url, dataDir, count);
  const urls = () => relays.map((r) => r.url);
  // KEYS signed in through every process in turn: a token is a row of the shared database.
  const owner = await mintToken(relays[0]!.url);
  const writers = await Promise.all(Array.from({ length: WRITERS }, async (_, i) => await mintToken(relays[i % count]!.url)));
  const store = await openPostgresStore(database.url);
  return { database, dataDir, relays, urls, owner, writers, store };
}

async function stopFleet(f: Fleet | undefined): Promise<void> {
  if (f === undefined) return;
  await killAll(f.relays);
  await f.store.close();
  await f.database.drop();
  rmSync(f.dataDir, { recursive: true, force: true });
}

/** A hot SPACE every writer writes into, and three more the spread writers share with it. */
async function setUpSpaces(f: Fleet, label: string): Promise<{ hot: Space; all: Space[]; spacesOf: (i: number) => Space[] }> {
  const tag = randomUUID().slice(0, 8);
  const hot = await setUpSpace(f.urls(), f.owner, f.writers, `${label}-hot-${tag}`);
  const spread = f.writers.slice(SPREAD_FROM);
  const others: Space[] = [];
  for (let s = 0; s < 3; s++) others.push(await setUpSpace(f.urls(), f.owner, spread, `${label}-s${s}-${tag}`));
  return { hot, all: [hot, ...others], spacesOf: (i) => (i < SPREAD_FROM ? [hot] : [hot, ...others]) };
}

/** The stored chain of each SPACE in the database, positions 1..head. */
async function expectStoredChains(f: Fleet, spaces: readonly Space[], sent: readonly Sent[]): Promise<void> {
  for (const space of spaces) {
    const row = await f.store.spaces.byName(space.name);
    expect(row, `${space.name} in the database`).toBeDefined();
    const { head } = await readHead(f.urls()[0]!, f.owner.token, space);
    expect(head).toBeGreaterThanOrEqual(sent.filter((s) => s.space === space && s.answer !== undefined).length);
    await expectChainVerifies({ store: f.store }, row!, head);
  }
}

async function readHead(url: string, token: string, space: Space): Promise<{ head: number }> {
  const r = await send(`${url}/v1/spaces/${space.name}/posts?after=0&limit=1`, 'GET', token);
  if (r.status !== 200) throw new Error(`posts.read: ${r.status} ${JSON.stringify(r.body)}`);
  return { head: Number(r.body.head_seq) };
}

/** 32 writers, writer i through process i mod n, POSTS_PER_WRITER each; then the checks through every process. */
async function appendsThroughEveryProcess(f: Fleet, label: string): Promise<void> {
  const { all, spacesOf } = await setUpSpaces(f, label);
  const urls = f.urls();
  // One service key for all: each process signs receipts with the key files they share.
  const keys = new Set(await Promise.all(urls.map(async (u) => await signerKeyOf(u, f.owner.token))));
  expect(keys.size).toBe(1);

  const sent: Sent[] = [];
  await Promise.all(
    f.writers.map(async (w, i) => await writer(urls[i % urls.length]!, i % urls.length, w, i, spacesOf(i), sent, { count: POSTS_PER_WRITER })),
  );
  expect(sent.length).toBe(WRITERS * POSTS_PER_WRITER);
  expect(sent.every((s) => s.answer !== undefined)).toBe(true);
  // Checked whole through one process; every other serves the same positions with the same posts
  // (nothing waits in one process's memory).
  expect(await expectEveryAcknowledgedPost(urls[0]!, f.owner.token, all, sent)).toBe(sent.length);
  for (const space of all) {
    const served = await Promise.all(urls.map(async (u) => (await readAll(u, f.owner.token, space)).items.map((p) => `${p.seq} ${p.post_id}`)));
    for (const s of served.slice(1)) expect(s).toEqual(served[0]);
  }
  await expectStoredChains(f, all, sent);
}

/** A GET started now: its answer, and when it came (undefined until then). */
function holdRead(url: string, token: string): { answer: Promise<{ status: number; body: any }>; answeredAt: () => number | undefined } {
  let at: number | undefined;
  const answer = send(url, 'GET', token);
  void answer.then(() => (at = Date.now()), () => undefined);
  return { answer, answeredAt: () => at };
}

/**
 * A read on process `reader` waiting past the head of `space`, then a post through process
 * `writerAt`: the read answers with that post long before its wait would have ended.
 */
async function longPollWakesAcross(f: Fleet, reader: number, writerAt: number): Promise<void> {
  const urls = f.urls();
  const space = await setUpSpace(urls, f.owner, f.writers.slice(0, 1), `poll-${randomUUID().slice(0, 8)}`);
  const sent: Sent[] = [];
  expect(await appendOne(urls[writerAt]!, writerAt, f.writers[0]!, space, 'before the poll', sent)).toBeDefined();
  const { head } = await readHead(urls[reader]!, f.owner.token, space);
  expect(head).toBe(1);

  // Not awaited here: the read is held while the post is written.
  const poll = holdRead(`${urls[reader]}/v1/spaces/${space.name}/posts?after=${head}&wait=${WAIT_SECONDS}`, f.owner.token);
  // The read is held: nothing past the head yet.
  await sleep(750);
  expect(poll.answeredAt()).toBeUndefined();

  const appendedAt = Date.now();
  const written = await appendOne(urls[writerAt]!, writerAt, f.writers[0]!, space, 'wakes the poll', sent);
  expect(written?.answer).toBeDefined();
  const r = await poll.answer;
  expect(r.status).toBe(200);
  expect(r.body.items.map((p: any) => p.post_id)).toEqual([written!.answer!.post_id]);
  // Woken by the post, not by the end of its wait (25 s); a generous bound for a busy machine.
  expect(poll.answeredAt()! - appendedAt).toBeLessThan((WAIT_SECONDS * 1000) / 3);
}

describe.skipIf(cluster.url === undefined)(
  `two relay processes on one PostgreSQL database${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`,
  () => {
    let f: Fleet | undefined;
    beforeAll(async () => {
      f = await startFleet(2);
    });
    afterAll(async () => await stopFleet(f));

    it('32 writers spread over them append into one SPACE and several: every 201 is in place at its seq with its post id, no seq gap, chains and receipts verify', async () => {
      await appendsThroughEveryProcess(f!, 'two');
    }, 60_000);

    it('a long poll held by one process wakes for a post written through the other', async () => {
      await longPollWakesAcross(f!, 0, 1);
    });
  },
);

describe.skipIf(cluster.url === undefined)(
  `four relay processes on one PostgreSQL database${cluster.skipReason ? ` (SKIPPED: ${cluster.skipReason})` : ''}`,
  () => {
    let f: Fleet | undefined;
    beforeAll(async () => {
      f = await startFleet(4);
    });
    afterAll(async () => await stopFleet(f));

    it('32 writers spread over them append into one SPACE and several: every 201 is in place at its seq with its post id, no seq gap, chains and receipts verify', async () => {
      await appendsThroughEveryProcess(f!, 'four');
    }, 60_000);

    it('a long poll held by one process wakes for a post written through another', async () => {
      await longPollWakesAcross(f!, 3, 0);
    });

    it('kill -9 of one process during appends loses nothing acknowledged: the others go on, and restarted it serves every 201 in place', async () => {
      const fleet = f!;
      const { all, spacesOf } = await setUpSpaces(fleet, 'kill');
      const victim = fleet.relays.length - 1;
      const urls = fleet.urls();
      const sent: Sent[] = [];
      const acked = (via?: number) => sent.filter((s) => s.answer !== undefined && (via === undefined || s.via === via)).length;
      let stop = false;
      const writers = fleet.writers.map(async (w, i) => await writer(urls[i % urls.length]!, i % urls.length, w, i, spacesOf(i), sent, { stop: () => stop }));

      // Kill once the victim has acknowledged a good number, with its writers' requests in flight.
      const started = Date.now();
      while ((acked(victim) < 25 || acked() < 120) && Date.now() - started < 15_000) await sleep(5);
      expect(await fleet.relays[victim]!.kill('SIGKILL')).toBe('SIGKILL');
      expect(acked(victim)).toBeGreaterThan(0);
      // The survivors keep answering: the lock the killed process held went with its connection.
      const survivorsAtKill = acked() - acked(victim);
      const after = Date.now();
      while (acked() - acked(victim) < survivorsAtKill + 100 && Date.now() - after < 15_000) await sleep(5);
      stop = true;
      await Promise.all(writers);
      expect(acked() - acked(victim)).toBeGreaterThanOrEqual(survivorsAtKill + 100);
      // Writers on the victim ended at the kill, each with its last request's outcome unknown.
      expect(sent.filter((s) => s.via === victim && s.answer === undefined).length).toBeGreaterThan(0);

      // Restarted on the same database and key files, the process serves every acknowledged post.
      const restarted = await spawnOnDatabase(fleet.database.url, fleet.dataDir);
      fleet.relays[victim] = restarted;
      const present = await expectEveryAcknowledgedPost(restarted.url, fleet.owner.token, all, sent);
      expect(present).toBeGreaterThanOrEqual(acked());
      expect(present).toBeLessThanOrEqual(sent.length);
      // And takes the next post at the next position.
      const hot = all[0]!;
      const { head } = await readHead(restarted.url, fleet.owner.token, hot);
      const next = await appendOne(restarted.url, victim, fleet.writers[0]!, hot, 'after the restart', sent);
      expect(next?.answer?.seq).toBe(String(head + 1));
      await expectStoredChains(fleet, all, sent);
    }, 60_000);
  },
);
