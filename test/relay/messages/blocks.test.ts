/**
 * KEY-level blocks over the real HTTP relay (spec/2-endpoints.md blocks.list, blocks.set,
 * blocks.remove): every refusal with its envelope and nothing changed, paging by peer id, the
 * markdown rendering, and the waiting requests a block declines (and an unblock leaves declined).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { call, mintToken, type Answer, type MintedToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import { stateProbe } from '../../helpers/state.js';
import { BLOCKS_PER_KEY } from '../../../shared/limits.js';
import { CATALOGUE, type ErrorCode } from '../../../shared/errors.js';

let relay: RunningRelay;
let digest: () => Promise<string>;

beforeAll(async () => {
  relay = await startRelay();
  digest = await stateProbe(relay);
});
afterAll(async () => {
  await relay.close();
});
// Writes are 30 a minute per KEY (burst 60): let the buckets refill between tests.
beforeEach(() => relay.clock.advance(5 * 60_000));

const mint = () => mintToken(relay.url);
const block = (who: MintedToken, peer: string) => call(relay, 'PUT', `/v1/blocks/${peer}`, { token: who.token });
const unblock = (who: MintedToken, peer: string) => call(relay, 'DELETE', `/v1/blocks/${peer}`, { token: who.token });
const list = (who: MintedToken, query = '', headers: Record<string, string> = {}) =>
  call(relay, 'GET', `/v1/blocks${query}`, { token: who.token, headers });

/** The refusal's whole envelope, and the written tables as they were. */
async function expectRefused(r: Answer, code: ErrorCode, before: string): Promise<void> {
  const entry = CATALOGUE[code];
  expect(r.status, r.text).toBe(entry.status);
  expect(r.body.error).toMatchObject({ code, message: `${code}. ${entry.message}`, fix: entry.fix });
  expect(typeof r.body.error.request_id).toBe('string');
  expect(r.headers.get('x-request-id')).toBe(r.body.error.request_id);
  expect(await digest()).toBe(before);
}

/** A peer id nobody registered. */
const unregistered = () => randomBytes(32).toString('hex');

describe('blocks.set and blocks.remove', () => {
  it('blocks a registered KEY once, then answers changed false, and unblocking twice likewise', async () => {
    const [a, b] = await Promise.all([mint(), mint()]);
    const sent = relay.clock.now();
    const first = await block(a, b.peerId);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({ peer_id: b.peerId, blocked_at: expect.any(String), changed: true });
    const at = Date.parse(first.body.blocked_at);
    expect(at).toBeGreaterThanOrEqual(sent);
    expect(at).toBeLessThanOrEqual(relay.clock.now());
    relay.clock.advance(1000);
    const again = await block(a, b.peerId);
    expect(again.body).toEqual({ ...first.body, changed: false });
    expect(await relay.store.messageBlocks.blocks(a.peerId, b.peerId)).toBe(true);
    expect(await relay.store.messageBlocks.blocks(b.peerId, a.peerId)).toBe(false);

    const off = await unblock(a, b.peerId);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ peer_id: b.peerId, changed: true });
    expect((await unblock(a, b.peerId)).body).toEqual({ peer_id: b.peerId, changed: false });
    expect(await relay.store.messageBlocks.blocks(a.peerId, b.peerId)).toBe(false);
  });

  it('refuses an unregistered, a malformed, an uppercase and a prefix peer id with PEER_NOT_FOUND, changing nothing', async () => {
    const [a, b] = await Promise.all([mint(), mint()]);
    await block(a, b.peerId);
    const before = await digest();
    for (const peer of [unregistered(), 'not-a-peer', b.peerId.toUpperCase(), b.peerId.slice(0, 63), `${b.peerId}0`]) {
      await expectRefused(await block(a, peer), 'PEER_NOT_FOUND', before);
      await expectRefused(await unblock(a, peer), 'PEER_NOT_FOUND', before);
    }
  });

  it('refuses blocking oneself with INVALID_REQUEST naming the peer, changing nothing', async () => {
    const [a] = await Promise.all([mint()]);
    const before = await digest();
    const r = await block(a, a.peerId);
    await expectRefused(r, 'INVALID_REQUEST', before);
    expect(r.body.error.detail).toMatch(/^peer:/);
  });

  it('refuses a body on either write with INVALID_REQUEST, changing nothing', async () => {
    const [a, b] = await Promise.all([mint(), mint()]);
    const before = await digest();
    for (const method of ['PUT', 'DELETE']) {
      const r = await call(relay, method, `/v1/blocks/${b.peerId}`, { token: a.token, body: { reason: 'x' } });
      await expectRefused(r, 'INVALID_REQUEST', before);
    }
  });

  it('refuses a call without a token with TOKEN_MISSING, changing nothing', async () => {
    const [b] = await Promise.all([mint()]);
    const before = await digest();
    await expectRefused(await call(relay, 'PUT', `/v1/blocks/${b.peerId}`), 'TOKEN_MISSING', before);
    await expectRefused(await call(relay, 'DELETE', `/v1/blocks/${b.peerId}`), 'TOKEN_MISSING', before);
    await expectRefused(await call(relay, 'GET', '/v1/blocks'), 'TOKEN_MISSING', before);
  });

  it(`takes the ${BLOCKS_PER_KEY.toLocaleString('en')}th block and refuses the next with BLOCK_LIMIT, changing nothing; re-blocking a blocked KEY still answers`, async () => {
    const [a, last, over] = await Promise.all([mint(), mint(), mint()]);
    // Fixture: the blocker already blocks all but one of its allowance (registered KEYS each).
    const now = relay.clock.now();
    const addKey = relay.store.db.prepare("INSERT INTO keys (peer_id, key_type, public_key, registered_at) VALUES (?, 'ed25519', ?, ?)");
    const addBlock = relay.store.db.prepare('INSERT INTO message_blocks (blocker, blocked, created_at) VALUES (?, ?, ?)');
    let some = '';
    await relay.store.db.transaction(async () => {
      for (let i = 0; i < BLOCKS_PER_KEY - 1; i++) {
        const peer = unregistered();
        await addKey.run(peer, randomBytes(32).toString('hex'), now);
        await addBlock.run(a.peerId, peer, now);
        some = peer;
      }
    })();
    const ok = await block(a, last.peerId);
    expect(ok.status, ok.text).toBe(200);
    expect(await relay.store.messageBlocks.count(a.peerId)).toBe(BLOCKS_PER_KEY);

    const before = await digest();
    await expectRefused(await block(a, over.peerId), 'BLOCK_LIMIT', before);
    const again = await block(a, some);
    expect(again.status).toBe(200);
    expect(again.body.changed).toBe(false);
    // Unblocking one makes room again.
    expect((await unblock(a, some)).body.changed).toBe(true);
    expect((await block(a, over.peerId)).body.changed).toBe(true);
  });
});

describe('blocks.list', () => {
  it('pages the blocked KEYS by peer id with next_after and has_more, and shows nobody else’s', async () => {
    const [a, other] = await Promise.all([mint(), mint()]);
    const targets = await Promise.all([mint(), mint(), mint(), mint(), mint()]);
    for (const t of targets) {
      relay.clock.advance(10);
      expect((await block(a, t.peerId)).status).toBe(200);
    }
    await block(other, a.peerId);
    const ids = targets.map((t) => t.peerId).sort();
    const seen: string[] = [];
    let after: string | null = null;
    const pages: boolean[] = [];
    do {
      const r = await list(a, `?limit=2${after ? `&after=${after}` : ''}`);
      expect(r.status, r.text).toBe(200);
      for (const item of r.body.items) {
        expect(Object.keys(item).sort()).toEqual(['blocked_at', 'peer_id']);
        seen.push(item.peer_id);
      }
      pages.push(r.body.has_more);
      expect(r.body.next_after).toBe(r.body.has_more ? r.body.items.at(-1).peer_id : null);
      expect(typeof r.body.notice).toBe('string');
      after = r.body.next_after;
    } while (after !== null);
    expect(seen).toEqual(ids);
    expect(pages).toEqual([true, true, false]);
    expect((await list(other)).body.items.map((i: { peer_id: string }) => i.peer_id)).toEqual([a.peerId]);
  });

  it('refuses a malformed after or limit with INVALID_REQUEST naming the field', async () => {
    const [a] = await Promise.all([mint()]);
    const bad = await list(a, '?after=xyz');
    expect(bad.status).toBe(400);
    expect(bad.body.error.detail).toMatch(/^after:/);
    for (const q of ['?limit=0', '?limit=201', '?limit=two', '?color=red']) {
      const r = await list(a, q);
      expect(r.body.error.code, q).toBe('INVALID_REQUEST');
    }
  });

  it('renders as markdown with each blocked KEY as a section and the paging facts, and no marker legend since nothing is fenced', async () => {
    const [a, b] = await Promise.all([mint(), mint()]);
    await block(a, b.peerId);
    const r = await list(a, '', { accept: 'text/markdown' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(r.text).toContain(`### \`${b.peerId}\` blocked`);
    expect(r.text).toMatch(/- blocked_at: \d{4}-\d\d-\d\dT/);
    expect(r.text).toContain('- has_more: false');
    expect(r.text).not.toMatch(/⟦/);
  });
});

describe('a block declines the blocked KEY’s waiting requests', () => {
  /** Start a conversation over HTTP; throws unless 201. */
  async function start(from: MintedToken, to: MintedToken[], body = 'hello'): Promise<string> {
    const r = await call(relay, 'POST', '/v1/conversations', { token: from.token, body: { to: to.map((t) => t.peerId), body } });
    if (r.status !== 201) throw new Error(`conversations.start refused: ${r.status} ${r.text}`);
    return r.body.conversation.conversation_id;
  }
  const stateOf = async (id: string, peer: MintedToken) => (await relay.store.conversations.member(id, peer.peerId))?.state;

  it('declines the blocked KEY’s waiting pair request and leaves another KEY’s request waiting; unblocking leaves it declined', async () => {
    const [a, b, c, d] = await Promise.all([mint(), mint(), mint(), mint()]);
    const fromB = await start(b, [a]);
    const fromC = await start(c, [a, d]);
    expect(await stateOf(fromB, a)).toBe('requested');
    expect(await stateOf(fromC, a)).toBe('requested');

    const r = await block(a, b.peerId);
    expect(r.status, r.text).toBe(200);
    expect(await stateOf(fromB, a)).toBe('declined');
    expect(await stateOf(fromB, b)).toBe('accepted');
    expect(await stateOf(fromC, a)).toBe('requested');
    const requested = await call(relay, 'GET', '/v1/conversations?state=requested', { token: a.token });
    expect(requested.status, requested.text).toBe(200);
    expect(requested.body.items.map((i: { conversation_id: string }) => i.conversation_id)).toEqual([fromC]);

    expect((await unblock(a, b.peerId)).body.changed).toBe(true);
    expect(await stateOf(fromB, a)).toBe('declined');
  });

  it('declines the blocker’s request in a group the blocked KEY started, and nobody else’s state in it', async () => {
    const [a, b, d] = await Promise.all([mint(), mint(), mint()]);
    const group = await start(b, [a, d]);
    expect((await block(a, b.peerId)).status).toBe(200);
    expect(await stateOf(group, a)).toBe('declined');
    expect(await stateOf(group, d)).toBe('requested');
    expect(await stateOf(group, b)).toBe('accepted');
  });

  it('leaves a conversation the blocker already accepted as it is', async () => {
    const [a, b] = await Promise.all([mint(), mint()]);
    const pair = await start(b, [a]);
    const reply = await call(relay, 'POST', `/v1/conversations/${pair}/messages`, { token: a.token, body: { body: 'hi' } });
    expect(reply.status, reply.text).toBe(201);
    expect(await stateOf(pair, a)).toBe('accepted');
    expect((await block(a, b.peerId)).status).toBe(200);
    expect(await stateOf(pair, a)).toBe('accepted');
  });
});
