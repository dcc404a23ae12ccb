/**
 * The SEEK follow-up indexer's timer pass (relay/seek/indexer.ts) tokenises in slices of at
 * most `sliceMs`, giving the event loop a turn between slices, so appends are answered while a
 * backlog is indexed. Appends index their own posts, so each test first puts the index one post
 * behind (as a database written before that would be), after which appends leave their rows
 * to the indexer on SQLite; on PostgreSQL the posts' SEEK rows are removed as well. The tests
 * count turns of the event loop, not time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeekIndexer } from '../../../relay/seek/indexer.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace, post, putSeekIndexBehind } from '../../helpers/posts.js';

let relay: RunningRelay;
let owner: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  await relay.app.seekIndexer.stop();
});
afterAll(async () => {
  await relay.close();
});

/** Run `pass` while counting the turns of the event loop (setImmediate callbacks) it lets through. */
async function turnsDuring(pass: () => Promise<number>): Promise<{ indexed: number; turns: number }> {
  let turns = 0;
  let running = true;
  const spin = (): void => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const indexed = await pass();
  running = false;
  return { indexed, turns };
}

async function backlog(n: number): Promise<number> {
  const space = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request', categories: ['general'] });
  await post(relay, owner, space, { kind: 'obs', body: 'indexed by its own append' });
  const behind = await putSeekIndexBehind(relay.store);
  let last = 0;
  for (let i = 0; i < n; i++) {
    const p = await post(relay, owner, space, { kind: 'obs', body: `backlog post ${i} about slices and turns` });
    last = (await relay.store.posts.byPostId(p.post_id))!.rowId;
  }
  if (relay.store.db.dialect === 'postgres') {
    // There appends index their own posts whatever the watermark (relay/store/postgres/seek.ts):
    // the backlog is posts without their SEEK rows, as a migration writes them.
    for (const table of ['seek_fingerprints', 'seek_text', 'seek_docs']) {
      await relay.store.db.prepare(`DELETE FROM ${table} WHERE post_row > ?`).run(behind);
    }
  }
  expect(await relay.store.seek.watermark()).toBeLessThan(last);
  return last;
}

describe('the indexer pass', () => {
  it('with no time per slice, gives the event loop a turn after every post and still indexes them all', async () => {
    const last = await backlog(12);
    const pending = (await relay.store.seek.pending(await relay.store.seek.watermark(), 1000)).length;
    const indexer = createSeekIndexer(relay.store.seek, { sliceMs: 0 });
    const { indexed, turns } = await turnsDuring(() => indexer.pass());
    expect(indexed).toBe(pending);
    expect(turns).toBeGreaterThanOrEqual(pending);
    expect(await relay.store.seek.watermark()).toBe(last);
  });

  it('with a generous slice, indexes a small backlog without giving up the event loop', async () => {
    const last = await backlog(5);
    const indexer = createSeekIndexer(relay.store.seek, { sliceMs: 60_000 });
    const { indexed, turns } = await turnsDuring(() => indexer.pass());
    expect(indexed).toBeGreaterThanOrEqual(5);
    // On SQLite the pass never waits on anything but its own work. On PostgreSQL every
    // statement is a round trip the event loop goes on turning through, so only the slicing
    // above (turns between posts even with nothing to wait for) is the indexer's to show.
    if (relay.store.db.dialect === 'sqlite') expect(turns).toBe(0);
    expect(await relay.store.seek.watermark()).toBe(last);
  });

  it('a second pass with nothing new indexes nothing', async () => {
    await backlog(2);
    const indexer = createSeekIndexer(relay.store.seek, { sliceMs: 0 });
    await indexer.pass();
    expect(await indexer.pass()).toBe(0);
  });
});
