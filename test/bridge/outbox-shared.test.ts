/**
 * The outbox shared by two real bridge processes of one KEY (one key directory), reaching the
 * real relay through a small real HTTP proxy (test/helpers/proxy.ts) that counts what reaches
 * the relay. The relay is really stopped and started again on its data directory; the proxy
 * answers 502 meanwhile, as a gateway in front of a stopped relay does.
 */
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { admit, get } from '../helpers/posts.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

const dataDir = tempDataDir('svc-outbox-shared-');
const home = tempHome('svc-outbox-shared-');
const ENV = { SVC_KEEPER_INTERVAL: '0' };
let proxy: RunningProxy;
let relay: RunningRelay | undefined;
let one: RunningBridge;
let two: RunningBridge;
let p: MintedToken;

async function startTheRelay(): Promise<RunningRelay> {
  relay = await startRelay({ dataDir, publicUrl: proxy.url, rateLimits: false });
  proxy.target = relay.url;
  return relay;
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

async function bodiesOf(space: string): Promise<string[]> {
  const r = await get(up(), `/v1/spaces/${space}/posts?after=0&limit=200&detail=full`, p);
  return r.body.items.map((i: { body: string }) => i.body);
}

/** The bodies waiting in the outbox, read from the KEY's cache file as they rest on disk. */
function outboxBodies(): string[] {
  const file = readdirSync(join(home, 'cache')).find((f) => /^[^.]+\.sqlite$/.test(f))!;
  const db = new DatabaseSync(join(home, 'cache', file), { readOnly: true });
  try {
    return (db.prepare('SELECT body FROM outbox ORDER BY id').all() as { body: string }[]).map((r) => r.body);
  } finally {
    db.close();
  }
}

const POSTS_PATH = /^\/v1\/spaces\/[^/?]+\/posts(\?|$)/;

beforeAll(async () => {
  proxy = await startProxy();
  await startTheRelay();
  one = await startBridge({ relayUrl: proxy.url, home, env: ENV });
  two = await startBridge({ relayUrl: proxy.url, home, env: ENV });
  toolOk(await callTool(one, 'svc_whoami', {}));
  toolOk(await callTool(two, 'svc_whoami', {}));
  p = await mintToken(up().url);
}, 60_000);

afterAll(async () => {
  await one?.close();
  await two?.close();
  await proxy?.close();
  if (relay !== undefined) await relay.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(dirname(home), { recursive: true, force: true });
});

describe('one outbox, two bridges of the KEY', () => {
  it('sends each queued post once, in order, when both bridges try at once', async () => {
    const space = freshName('obs');
    toolOk(await callTool(one, 'svc_space_control', { action: 'create', name: space }));
    await admit(up(), (await up().store.spaces.byName(space))!, p, 'writer');
    toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'online' }));

    await up().close();
    relay = undefined;
    const queued = [];
    for (const body of ['one-1', 'one-2', 'one-3']) queued.push(toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body })));
    // The second bridge never posted there: it signs with the SPACE id the first one kept in the KEY's cache.
    for (const body of ['two-1', 'two-2']) queued.push(toolOk(await callTool(two, 'svc_post', { space, kind: 'obs', body })));
    expect(queued.every((q) => q.queued === true)).toBe(true);
    expect(toolOk(await callTool(two, 'svc_whoami', {})).bridge.outbox.queued).toBe(5);

    // From here on, count what reaches the relay and what it answers.
    const answered: { replayed: boolean }[] = [];
    proxy.rewrite = (a) => {
      if (a.method === 'POST' && POSTS_PATH.test(a.url) && a.status < 300) answered.push(JSON.parse(a.body));
      return undefined;
    };
    proxy.seen.splice(0);
    await startTheRelay();
    // Both bridges send at the start of their tool calls, at the same time, beside their timers.
    const calls = await Promise.all([one, two, one, two].map((b) => callTool(b, 'svc_whoami', {})));
    await waitFor('the queued posts', async () => ((await bodiesOf(space)).length >= 6 ? true : undefined));
    expect(await bodiesOf(space)).toEqual(['online', 'one-1', 'one-2', 'one-3', 'two-1', 'two-2']);
    const sends = proxy.seen.filter((s) => s.startsWith('POST ') && POSTS_PATH.test(s.slice(5)));
    expect(sends).toHaveLength(5);
    expect(answered).toHaveLength(5);
    expect(answered.every((x) => x.replayed === false)).toBe(true);
    // The relay holds all six once the last answer left it; the bridge that sent it notes the
    // delivery when the answer arrives, which the next calls must come after.
    await waitFor('the last delivery noted', async () => (outboxBodies().length === 0 ? true : undefined));
    // Each delivery is told once, to whichever bridge called first.
    const later = await Promise.all([one, two].map((b) => callTool(b, 'svc_whoami', {})));
    const notices = [...calls, ...later].flatMap((c) => (toolOk(c).outbox_notices ?? []) as string[]);
    expect(notices.filter((n) => n.startsWith('Queued post delivered'))).toHaveLength(5);
    proxy.rewrite = undefined;
  }, 120_000);

  it('says loudly at the next tool call when the receipt of a delivered queued post does not verify', async () => {
    const space = freshName('obt');
    toolOk(await callTool(one, 'svc_space_control', { action: 'create', name: space }));
    toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'online' }));
    await up().close();
    relay = undefined;
    const q = toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'receipt bent' }));
    // One byte of the receipt's signature changed on its way back.
    proxy.rewrite = (a) => {
      if (a.method !== 'POST' || !POSTS_PATH.test(a.url) || a.status >= 300) return undefined;
      const body = JSON.parse(a.body);
      const sig: string = body.receipt.signature;
      body.receipt.signature = `${sig[0] === '0' ? '1' : '0'}${sig.slice(1)}`;
      return JSON.stringify(body);
    };
    try {
      await startTheRelay();
      const notices: string[] = toolOk(await callTool(one, 'svc_whoami', {})).outbox_notices;
      expect(notices).toHaveLength(1);
      expect(notices[0]).toContain(`idempotency_key ${q.idempotency_key}`);
      expect(notices[0]).toContain('!!! the receipt DOES NOT VERIFY');
      expect(notices[0]).not.toContain('receipt verified');
    } finally {
      proxy.rewrite = undefined;
    }
  }, 60_000);

  it('seals a post to a sealed SPACE before queueing it (the outbox holds no words of it), and counts the replay of a resend as delivered', async () => {
    const space = freshName('obz');
    toolOk(await callTool(one, 'svc_space_control', { action: 'create', name: space, visibility: 'sealed' }));
    toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'sealed online' }));
    // The relay takes the post but its answer is lost in a BUSY from in front of it.
    proxy.rewrite = (a) =>
      a.method === 'POST' && POSTS_PATH.test(a.url)
        ? { status: 503, body: JSON.stringify({ error: { code: 'BUSY', message: 'The service cannot take this request right now.', fix: 'wait', request_id: 'r-1', retry_after: 1 } }) }
        : undefined;
    const words = 'plaintext-words-never-at-rest';
    const q = await callTool(one, 'svc_post', { space, kind: 'obs', title: 'sealed title', body: words });
    expect(toolOk(q)).toMatchObject({ queued: true, bridge: { sealed: { generation: 1 } } });
    expect(textOf(q)).toMatch(/sealed:\s+yes, on this machine under generation 1; the outbox holds the ciphertext only/);
    expect(textOf(q)).toContain('BUSY, Retry-After 1 s');

    const rows = outboxBodies();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('"sealed"');
    expect(rows[0]).not.toContain(words);
    expect(rows[0]).not.toContain('sealed title');

    proxy.rewrite = undefined;
    // Sent again by the background retry once the relay's Retry-After (1 s) has passed.
    await waitFor('the resend', async () => (outboxBodies().length === 0 ? true : undefined));
    const told = toolOk(await callTool(one, 'svc_whoami', {}));
    const delivered = (told.outbox_notices as string[]).filter((n) => n.startsWith('Queued post delivered'));
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toContain('the relay had it already: answered as a replay');
    expect(delivered[0]).toContain('receipt verified');
    const read = textOf(await callTool(one, 'svc_read_space', { space, after: '0', detail: 'full' }));
    expect(read.split(words)).toHaveLength(2);
  }, 60_000);

  it('seals a post to a sealed SPACE with the key it holds while the relay is stopped, queues only the ciphertext, and the post opens once delivered', async () => {
    const space = freshName('obk');
    toolOk(await callTool(one, 'svc_space_control', { action: 'create', name: space, visibility: 'sealed' }));
    toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'sealed online' }));
    await up().close();
    relay = undefined;
    const words = 'offline-sealed-words';
    const q = await callTool(one, 'svc_post', { space, kind: 'obs', body: words });
    expect(toolOk(q)).toMatchObject({ queued: true, bridge: { sealed: { generation: 1 }, signed: true } });
    expect(outboxBodies().some((b) => b.includes(words))).toBe(false);
    expect(outboxBodies()).toHaveLength(1);

    await startTheRelay();
    // Sent by whichever bridge of the KEY comes first: this one at the start of a tool call, or
    // the other, whose retry timer may still run from the tests before and be due at this moment
    // (a tool call then finds the post leased to the other and does not wait for it). The
    // delivery is told once, at the next tool call after it landed.
    await waitFor('the delivery', async () => (outboxBodies().length === 0 ? true : undefined));
    const delivered = (toolOk(await callTool(one, 'svc_whoami', {})).outbox_notices as string[]).filter((n) => n.startsWith('Queued post delivered'));
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toContain('receipt verified');
    const read = textOf(await callTool(one, 'svc_read_space', { space, after: '0', detail: 'full' }));
    expect(read.split(words)).toHaveLength(2);
  }, 60_000);

  it("keeps a post the relay answered BUSY with a long Retry-After, and does not send it again before then, not even at a tool call", async () => {
    const space = freshName('obw');
    toolOk(await callTool(one, 'svc_space_control', { action: 'create', name: space }));
    toolOk(await callTool(one, 'svc_post', { space, kind: 'obs', body: 'online' }));
    proxy.rewrite = (a) =>
      a.method === 'POST' && POSTS_PATH.test(a.url)
        ? { status: 503, body: JSON.stringify({ error: { code: 'BUSY', message: 'The service cannot take this request right now.', fix: 'wait', request_id: 'r-2', retry_after: 120 } }) }
        : undefined;
    try {
      const q = await callTool(one, 'svc_post', { space, kind: 'obs', body: 'later' });
      expect(toolOk(q).queued).toBe(true);
      expect(textOf(q)).toContain('BUSY, Retry-After 120 s');
    } finally {
      proxy.rewrite = undefined;
    }
    proxy.seen.splice(0);
    const w = await callTool(one, 'svc_whoami', {});
    expect(toolOk(w).bridge.outbox).toMatchObject({ queued: 1, last_error: { error: 'BUSY, Retry-After 120 s' } });
    expect(toolOk(w).bridge.outbox.retry_not_before).not.toBeNull();
    expect(textOf(w)).toMatch(/outbox: the relay asked to wait until \d{4}-/);
    expect(proxy.seen.filter((x) => x.startsWith('POST '))).toEqual([]);
  }, 60_000);
});
