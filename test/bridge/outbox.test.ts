/**
 * Offline writes through the real bridge (stdio, MCP SDK client) and the real relay on loopback,
 * really stopped (its server and database closed) and started again on the same port and data
 * directory: posts and a message written while it is away are queued, kept across a bridge
 * restart, and sent once each, in order, when it answers; receipts are checked and the posts
 * read back from the relay; a queued write the relay refuses for a reason of its own is told at
 * the next tool call, once, and leaves the outbox; svc_whoami shows the queue.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex } from '../../shared/encoding.js';
import { verifyObjectSignature } from '../../shared/objects.js';
import { callTool, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { admit, get } from '../helpers/posts.js';
import { mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { createSpace, freshName } from '../helpers/spaces.js';
import { stablePort } from '../helpers/ports.js';

const dataDir = tempDataDir('svc-outbox-relay-');
const home = tempHome('svc-outbox-bridge-');
const ENV = { SVC_KEEPER_INTERVAL: '0' };
let relay: RunningRelay | undefined;
let port = 0;
let a: RunningBridge;
let p: MintedToken;
let peerA: string;

async function startTheRelay(): Promise<RunningRelay> {
  // A port no other relay of the run takes while this one is stopped (test/helpers/ports.ts).
  if (port === 0) port = await stablePort();
  relay = await startRelay({ dataDir, port, rateLimits: false, publicSpaceKeyAgeSeconds: 0 });
  return relay;
}

/** Stop the relay for real: its server closed, its database closed. */
async function stopTheRelay(): Promise<void> {
  await relay!.close();
  relay = undefined;
}

function up(): RunningRelay {
  if (relay === undefined) throw new Error('the relay is stopped');
  return relay;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 45_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The posts of a SPACE as member P reads them from the relay: body and post id, in order. */
async function postsOf(space: string): Promise<{ body: string; post_id: string }[]> {
  const r = await get(up(), `/v1/spaces/${space}/posts?after=0&limit=200&detail=full`, p);
  expect(r.status).toBe(200);
  return r.body.items.map((i: { body: string; post_id: string }) => ({ body: i.body, post_id: i.post_id }));
}

beforeAll(async () => {
  await startTheRelay();
  a = await startBridge({ relayUrl: up().url, home, env: ENV });
  peerA = toolOk(await callTool(a, 'svc_whoami', {})).peer_id;
  p = await mintToken(up().url);
}, 60_000);

afterAll(async () => {
  await a?.close();
  if (relay !== undefined) await relay.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(dirname(home), { recursive: true, force: true });
});

/** A private SPACE made by A through the tool, with P admitted as writer, and one post by A while the relay answers. */
async function spaceWithPost(prefix: string): Promise<string> {
  const space = freshName(prefix);
  toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: space }));
  await admit(up(), (await up().store.spaces.byName(space))!, p, 'writer');
  expect(toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'online' })).replayed).toBe(false);
  return space;
}

describe('offline writes', () => {
  it('queues posts and a message while the relay is stopped, keeps them across a bridge restart, and delivers each once, in order, with receipts checked', async () => {
    const space = await spaceWithPost('ob');
    const started = toolOk(await callTool(a, 'svc_message', { action: 'start', to: [p.peerId], body: 'hello online' }));
    const conversation: string = started.conversation.conversation_id;

    await stopTheRelay();
    const keys: string[] = [];
    for (const body of ['one', 'two', 'three']) {
      const r = await callTool(a, 'svc_post', { space, kind: 'obs', body });
      expect(r.isError).toBeFalsy();
      // The first finds the relay away; the next go behind it, in order.
      expect(textOf(r)).toMatch(keys.length === 0 ? /^Queued, not sent yet: the relay at .* could not take it now/ : /^Queued, not sent yet: earlier writes to the same place still wait/);
      const s = toolOk(r);
      expect(s).toMatchObject({ queued: true, space, bridge: { signed: true } });
      keys.push(s.idempotency_key);
    }
    // The same post again with its idempotency key is kept once.
    const again = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'two', idempotency_key: keys[1] });
    expect(textOf(again)).toMatch(/^Already queued, not sent yet: this idempotency key waits in the outbox/);
    expect(toolOk(again).outbox).toMatchObject({ already_queued: true, waiting: 3 });
    const m = await callTool(a, 'svc_message', { action: 'send', conversation_id: conversation, body: 'written offline' });
    expect(toolOk(m)).toMatchObject({ queued: true, conversation_id: conversation });
    expect(textOf(m)).toContain('will be sent by itself');

    // svc_whoami answers from what the bridge holds: the identity it kept, and the queue.
    const w = await callTool(a, 'svc_whoami', {});
    expect(w.isError).toBeFalsy();
    expect(textOf(w)).toMatch(/^From the cache, .*; the relay at .* is unreachable/);
    expect(textOf(w)).toContain('outbox: 4 write(s) wait for the relay');
    expect(textOf(w)).toContain(`- 3 post(s) to ${space}`);
    expect(textOf(w)).toContain(`- 1 message(s) to conversation ${conversation}`);
    expect(textOf(w)).toMatch(/outbox last error: the relay at .* is unreachable/);
    expect(toolOk(w).bridge.outbox).toMatchObject({ queued: 4, targets: [{ kind: 'post', to: space, queued: 3 }, { kind: 'message', to: `conversation ${conversation}`, queued: 1 }] });

    // The bridge restarts while the relay is still away: the outbox is on disk.
    await a.close();
    a = await startBridge({ relayUrl: `http://127.0.0.1:${port}`, home, env: ENV });
    expect(toolOk(await callTool(a, 'svc_whoami', {})).bridge.outbox.queued).toBe(4);

    await startTheRelay();
    // The background retry sends them with no tool call.
    const landed = await waitFor('the queued posts', async () => {
      const posts = await postsOf(space);
      return posts.length >= 4 ? posts : undefined;
    });
    expect(landed.map((x) => x.body)).toEqual(['online', 'one', 'two', 'three']);
    await waitFor('the queued message', async () => {
      const r = await get(up(), `/v1/conversations/${conversation}/messages?after=0`, p);
      return r.body.items.length >= 2 ? true : undefined;
    });

    // The next tool call tells what was delivered, receipts checked.
    const told = await callTool(a, 'svc_whoami', {});
    const notices: string[] = toolOk(told).outbox_notices;
    expect(notices).toHaveLength(4);
    const postNotices = notices.filter((n) => n.startsWith('Queued post delivered'));
    expect(postNotices).toHaveLength(3);
    postNotices.forEach((n, i) => {
      expect(n).toContain(`post_id ${landed[i + 1]!.post_id}`);
      expect(n).toContain(`idempotency_key ${keys[i]}`);
      expect(n).toContain('receipt verified');
    });
    expect(notices.filter((n) => n.startsWith('Queued message delivered'))).toHaveLength(1);
    expect(textOf(told)).toMatch(/^Outbox \(writes queued while the relay could not be reached\):/);
    expect(toolOk(told).bridge.outbox.queued).toBe(0);
    // Told once.
    expect(toolOk(await callTool(a, 'svc_whoami', {})).outbox_notices).toBeUndefined();

    // Read back from the relay: each post once, signed by A's KEY with the key it was queued with.
    for (const [i, x] of landed.slice(1).entries()) {
      const stored = (await get(up(), `/v1/posts/${x.post_id}`, p)).body;
      expect(stored).toMatchObject({ author: peerA, signed: true, body: ['one', 'two', 'three'][i] });
      expect(JSON.parse(Buffer.from(fromBase64url(stored.proof.canonical)).toString('utf8')).idempotency_key).toBe(keys[i]);
      const sig = stored.proof.signature;
      expect(verifyObjectSignature(fromHex(sig.public_key, 32), fromHex(stored.object_id, 32), fromHex(sig.value, 64))).toBe(true);
    }
    const messages = (await get(up(), `/v1/conversations/${conversation}/messages?after=0`, p)).body.items;
    expect(messages.map((x: { body: string }) => x.body)).toEqual(['hello online', 'written offline']);
  }, 120_000);

  it('answers own identity, a SPACE page and the own dossier read before from the cache, marked with their age, while the relay is stopped; other reads say it is unreachable and that writes are queued', async () => {
    const space = await spaceWithPost('obk');
    toolOk(await callTool(a, 'svc_post', { space, kind: 'dossier', title: 'where I stopped', body: 'cursor at 2' }));
    const page = toolOk(await callTool(a, 'svc_read_space', { space }));
    expect(page.items).toHaveLength(2);
    const dossierRead = { space, standing: true, kind: ['dossier'], author: peerA, limit: 1, detail: 'full' };
    expect(toolOk(await callTool(a, 'svc_read_space', dossierRead)).items[0].body).toBe('cursor at 2');
    const never = freshName('obu');
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: never }));
    toolOk(await callTool(a, 'svc_whoami', {}));

    await stopTheRelay();
    const marker = new RegExp(`^From the cache, \\d+ s old \\(read at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); the relay at http://127\\.0\\.0\\.1:${port} is unreachable \\(`);
    const me = await callTool(a, 'svc_whoami', {});
    expect(me.isError).toBeFalsy();
    expect(textOf(me)).toMatch(marker);
    expect(textOf(me)).toContain(`peer_id:`);
    expect(textOf(me)).toContain(`- ${space}: owner`);
    expect(textOf(me)).toContain("Writes are queued meanwhile: svc_post and svc_message keep what you write in this bridge's outbox");
    expect(toolOk(me)).toMatchObject({ peer_id: peerA, cached: { age_seconds: expect.any(Number), relay_unreachable: expect.stringContaining('is unreachable') } });

    const again = await callTool(a, 'svc_read_space', { space });
    expect(again.isError).toBeFalsy();
    expect(textOf(again)).toMatch(marker);
    expect(textOf(again)).toContain('the last page of it read');
    expect(textOf(again)).toContain(`cursor: not moved (your saved cursor is ${page.next_after})`);
    const kept = toolOk(again);
    expect(kept.items.map((x: { post_id: string }) => x.post_id)).toEqual(page.items.map((x: { post_id: string }) => x.post_id));
    expect(kept.cached.age_seconds).toEqual(expect.any(Number));
    expect(kept.bridge).toMatchObject({ saved_cursor: page.next_after, cursor_moved: false });

    const dossier = await callTool(a, 'svc_read_space', dossierRead);
    expect(textOf(dossier)).toMatch(marker);
    expect(toolOk(dossier).items[0]).toMatchObject({ kind: 'dossier', body: 'cursor at 2', author: peerA });

    // A SPACE never read, and a standing read never made, have nothing kept: the relay is unreachable, writes are queued.
    for (const args of [{ space: never }, { space, standing: true }]) {
      const r = await callTool(a, 'svc_read_space', args);
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ error: { code: 'TRANSPORT', source: 'bridge' } });
      expect(textOf(r)).toMatch(new RegExp(`^TRANSPORT\\. the relay at http://127\\.0\\.0\\.1:${port} is unreachable \\(`));
      expect(textOf(r)).toContain("Writes are queued meanwhile: svc_post and svc_message keep what you write in this bridge's outbox and send it by themselves");
    }
    const queued = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'while away' });
    expect(textOf(queued)).toMatch(/^Queued, not sent yet: the relay at .* could not take it now: the relay at .* is unreachable/);

    await startTheRelay();
    const fresh = toolOk(await callTool(a, 'svc_read_space', { space }));
    expect(fresh.cached).toBeUndefined();
    expect(fresh.outbox_notices[0]).toMatch(/^Queued post delivered/);
    expect(fresh.items.map((x: { body?: string; snippet?: string; kind: string }) => x.kind)).toEqual(['obs']);
  }, 60_000);

  it('tells at the next tool call, once, of a queued post the relay refused, which leaves the outbox, and sends the posts behind it', async () => {
    const space = await spaceWithPost('obr');
    await stopTheRelay();
    const bad = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'answers nothing', reply_to: randomUUID() }));
    expect(bad.queued).toBe(true);
    expect(toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'after the refused one' })).queued).toBe(true);
    await startTheRelay();

    const next = await callTool(a, 'svc_whoami', {});
    const notices: string[] = toolOk(next).outbox_notices;
    const refused = notices.filter((n) => n.startsWith('NOT SENT'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toContain(`idempotency_key ${bad.idempotency_key}`);
    expect(refused[0]).toContain('REPLY_TARGET_NOT_FOUND');
    expect(refused[0]).toContain('it left the outbox');
    expect(notices.filter((n) => n.startsWith('Queued post delivered'))).toHaveLength(1);
    expect(toolOk(next).bridge.outbox.queued).toBe(0);
    expect(toolOk(await callTool(a, 'svc_whoami', {})).outbox_notices).toBeUndefined();
    expect((await postsOf(space)).map((x) => x.body)).toEqual(['online', 'after the refused one']);
  }, 60_000);

  it('queues a conversation started while the relay is away and starts it once when the relay answers', async () => {
    await spaceWithPost('obm');
    await stopTheRelay();
    const q = await callTool(a, 'svc_message', { action: 'start', to: [p.peerId], body: 'started offline' });
    expect(toolOk(q)).toMatchObject({ queued: true, action: 'start', to: [p.peerId] });
    await startTheRelay();
    const notices: string[] = toolOk(await callTool(a, 'svc_whoami', {})).outbox_notices;
    expect(notices).toHaveLength(1);
    const id = /conversation ([0-9a-f-]{36})/.exec(notices[0]!)?.[1];
    expect(notices[0]).toContain(`Queued message delivered (a new conversation with ${p.peerId})`);
    const messages = (await get(up(), `/v1/conversations/${id}/messages?after=0`, p)).body.items;
    // A pair has one conversation: the start lands in it, once.
    expect(messages.map((x: { body: string }) => x.body).filter((b: string) => b === 'started offline')).toHaveLength(1);
    expect(messages.at(-1).body).toBe('started offline');
  }, 60_000);

  it('puts a post behind the posts of its SPACE still waiting, even once the relay answers', async () => {
    const space = await spaceWithPost('obo');
    await stopTheRelay();
    expect(toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'first' })).queued).toBe(true);
    await startTheRelay();
    // This call sends the outbox first; the post follows what waited.
    const r = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'second' }));
    expect(r.queued).toBeUndefined();
    expect(r.outbox_notices[0]).toMatch(/^Queued post delivered/);
    expect((await postsOf(space)).map((x) => x.body)).toEqual(['online', 'first', 'second']);
  }, 60_000);

  it('answers OUTBOX_FULL past the cap the KEY set, saying what to do, and queues nothing more', async () => {
    const space = await spaceWithPost('obc');
    const capped = await startBridge({ relayUrl: up().url, home, env: { ...ENV, SVC_OUTBOX_MAX_ITEMS: '1' } });
    try {
      await stopTheRelay();
      expect(toolOk(await callTool(capped, 'svc_post', { space, kind: 'obs', body: 'fits' })).queued).toBe(true);
      const full = await callTool(capped, 'svc_post', { space, kind: 'obs', body: 'does not fit' });
      expect(full.isError).toBe(true);
      expect(full.structuredContent).toMatchObject({ error: { code: 'OUTBOX_FULL', source: 'bridge' } });
      expect(textOf(full)).toContain('nothing was queued or sent');
      expect(textOf(full)).toContain('Wait until the relay answers again');
      expect(toolOk(await callTool(capped, 'svc_whoami', {})).bridge.outbox).toMatchObject({ queued: 1, caps: { items: 1, mib: 16 } });
      await startTheRelay();
      await waitFor('the queued post', async () => ((await postsOf(space)).length >= 2 ? true : undefined));
      expect((await postsOf(space)).map((x) => x.body)).toEqual(['online', 'fits']);
      // Whichever bridge of the KEY calls next is told.
      await callTool(capped, 'svc_whoami', {});
    } finally {
      await capped.close();
    }
  }, 60_000);

  it('does not queue a post to a SPACE it neither posted to nor created, since it cannot sign for it, and says so', async () => {
    const space = freshName('obn');
    await createSpace(up(), p.token, { name: space });
    await admit(up(), (await up().store.spaces.byName(space))!, { peerId: peerA } as MintedToken, 'writer');
    await stopTheRelay();
    const r = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'nowhere' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`this bridge has neither posted to ${space} nor created it`);
    expect(textOf(r)).toContain('nothing was queued');
    expect(toolOk(await callTool(a, 'svc_whoami', {})).bridge.outbox.queued).toBe(0);
    await startTheRelay();
  }, 60_000);

  it('queues a post to a SPACE it created or posted to only through svc_oracle in an earlier run, and delivers it', async () => {
    // Created through the tool, never posted to.
    const created = freshName('obk');
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: created }));
    await admit(up(), (await up().store.spaces.byName(created))!, p, 'reader');
    // Another KEY's oracle space where A posted only versions, through svc_oracle.
    const oracle = freshName('obo');
    await createSpace(up(), p.token, { name: oracle, title: 'doc', visibility: 'public', oracle: true, categories: ['general'] });
    await admit(up(), (await up().store.spaces.byName(oracle))!, { peerId: peerA } as MintedToken, 'admin');
    for (const text of ['# Doc\n\nOne.\n', '# Doc\n\nTwo.\n']) {
      expect(toolOk(await callTool(a, 'svc_oracle', { action: 'propose', space: oracle, text, summary: 'a version' })).oracle.state).toBe('current');
    }
    // The next run of the KEY (a new bridge process, nothing in its memory) starts with the relay away.
    const next = await startBridge({ relayUrl: up().url, home, env: ENV });
    try {
      await stopTheRelay();
      for (const space of [created, oracle]) {
        const r = await callTool(next, 'svc_post', { space, kind: 'obs', body: `offline to ${space}` });
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(textOf(r)).not.toContain('posted to');
        expect(toolOk(r)).toMatchObject({ queued: true, space, bridge: { signed: true } });
      }
    } finally {
      await next.close();
    }
    await startTheRelay();
    // The KEY's other bridge sends what the closed one queued, at the start of its next tool call.
    await callTool(a, 'svc_whoami', {});
    await waitFor('both queued posts', async () => ((await postsOf(created)).length === 1 && (await postsOf(oracle)).length === 3 ? true : undefined));
    expect((await postsOf(oracle)).at(-1)!.body).toBe(`offline to ${oracle}`);
  }, 60_000);
});
