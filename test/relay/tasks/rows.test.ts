/**
 * A task is a row, not a post (spec/1-concepts.md "Task"): every task operation leaves the post
 * chain, the checkpoints, the audit log with its export, the post export and every mailbox as
 * they were. In a sealed SPACE task words are not sealed: they are stored and served as sent.
 * Real relay over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, call, get, newSpace, post } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSealedSpace, publishKey, sealedKey, sealedPostBody } from '../../helpers/sealed.js';
import { act, addTask, listTasks, nextTask } from '../../helpers/tasks.js';

let relay: RunningRelay;
let owner: MintedToken;
let alice: MintedToken;
let bob: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  alice = await mintToken(relay.url);
  bob = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

const NDJSON = { accept: 'application/x-ndjson' };

/** Everything a post, event, checkpoint or mailbox delivery would show, as `who` reads it. */
async function trail(space: string, who: MintedToken[]) {
  const rows = async (table: string) => await relay.store.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number };
  const out: Record<string, unknown> = {
    posts: (await rows('posts')).n,
    eventRows: (await rows('space_events')).n,
    mailbox: (await rows('mailbox')).n,
    checkpoints: (await rows('checkpoints')).n,
    head: (await get(relay, `/v1/spaces/${space}`, who[0])).body.head_seq,
    postExport: (await get(relay, `/v1/spaces/${space}/posts?limit=1000`, who[0], NDJSON)).text,
    eventExport: (await get(relay, `/v1/spaces/${space}/events?limit=200`, who[0], NDJSON)).text,
    events: (await get(relay, `/v1/spaces/${space}/events?limit=200`, who[0])).body.items,
  };
  for (const w of who) out[`mailbox:${w.peerId}`] = (await get(relay, '/v1/mailbox?limit=200', w)).body.items;
  return out;
}

describe('tasks are rows, not posts', () => {
  it('add, next, done, confirm, reject, release and list change no chain, checkpoint, event, export or mailbox', async () => {
    const space = await newSpace(relay, owner, { taskConfirmations: 1 });
    await admit(relay, space, alice, 'writer');
    await admit(relay, space, bob, 'writer');
    const r1 = await post(relay, alice, space, { kind: 'result', body: 'first result', to: [bob.peerId] });
    const r2 = await post(relay, bob, space, { kind: 'obs', body: 'a check' });
    await (relay.app as any).checkpointer.runOnce(relay.clock.now() + 11 * 60_000);
    const before = await trail(space.name, [owner, alice, bob]);
    expect(before.posts).toBeGreaterThan(0);

    await addTask(relay, owner, space.name, { title: 'one', body: 'for alice' });
    await addTask(relay, owner, space.name, { title: 'two', after: [1] });
    await addTask(relay, owner, space.name, { title: 'three' });
    await nextTask(relay, alice, space.name);
    await act(relay, alice, space.name, 1, 'done', { post_id: r1.post_id });
    await act(relay, bob, space.name, 1, 'reject', { reason: 'wrong' });
    await nextTask(relay, alice, space.name);
    await act(relay, alice, space.name, 1, 'done', { post_id: r1.post_id });
    await act(relay, bob, space.name, 1, 'confirm', { post_id: r2.post_id });
    await nextTask(relay, bob, space.name);
    await act(relay, owner, space.name, 2, 'release');
    expect((await listTasks(relay, owner, space.name)).body.items.map((t: any) => t.state)).toEqual(['open', 'open', 'accepted']);
    await (relay.app as any).checkpointer.runOnce(relay.clock.now() + 22 * 60_000);

    expect(await trail(space.name, [owner, alice, bob])).toEqual(before);
  });

  it('stores and serves task words in a sealed SPACE as sent, unsealed', async () => {
    const k = await sealedKey(relay);
    expect((await publishKey(relay, k)).status).toBe(200);
    const s = await createSealedSpace(relay, k);
    const added = await addTask(relay, k, s.name, { title: 'plain words in a sealed SPACE', body: 'not sealed', tag: 'ops' });
    expect(added).toMatchObject({ title: 'plain words in a sealed SPACE', body: 'not sealed', tag: 'ops' });
    const row = await relay.store.db.prepare('SELECT title, body FROM tasks WHERE title = ?').get('plain words in a sealed SPACE');
    expect(row).toEqual({ title: 'plain words in a sealed SPACE', body: 'not sealed' });
    await nextTask(relay, k, s.name);
    relay.clock.advance(2_100);
    const sealed = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: k.token, body: sealedPostBody(s, k, 1, { body: 'sealed result' }).body });
    expect(sealed.status, sealed.text).toBe(201);
    const done = await act(relay, k, s.name, 1, 'done', { post_id: sealed.body.post_id });
    expect(done).toMatchObject({ state: 'accepted', result_post_id: sealed.body.post_id });
  });
});
