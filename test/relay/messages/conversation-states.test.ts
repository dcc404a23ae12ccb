/**
 * A member's own state and positions over the real HTTP relay (spec/1-concepts.md "States:
 * Conversation"; spec/2-endpoints.md conversations.leave, clear, mark_read), groups, idempotency
 * keys scoped to the KEY across its conversations, and 60 direct messages a minute per KEY.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { acquaint, act, expectRefusedUnchanged, getConversation, list, readMessages, send, start, started } from '../../helpers/conversations.js';

let relay: RunningRelay;
let a: MintedToken;
let b: MintedToken;
let c: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  relay.clock.advance(61_000);
  [a, b, c] = await Promise.all([mintToken(relay.url), mintToken(relay.url), mintToken(relay.url)]);
  await acquaint(relay, a, b);
  await acquaint(relay, a, c);
  await acquaint(relay, b, c);
});

describe('groups', () => {
  it('lets a member leave a group for good: it reads up to its leaving, sends nothing, cannot accept again, and gets nothing after', async () => {
    const g = await started(relay, a, [b, c], { body: 'one' });
    const id = g.conversation.conversation_id;
    const left = await act(relay, c, id, 'leave');
    expect(left.body).toEqual({ conversation_id: id, state: 'left' });
    await send(relay, a, id, { body: 'two' });
    const read = await readMessages(relay, c, id);
    expect(read.body.items.map((m: any) => m.body)).toEqual(['one']);
    expect(read.body.head_seq).toBe('1');
    await expectRefusedUnchanged(relay, () => send(relay, c, id), 'CONVERSATION_LEFT', 409);
    await expectRefusedUnchanged(relay, () => act(relay, c, id, 'accept'), 'CONVERSATION_LEFT', 409);
    expect((await act(relay, c, id, 'leave')).body.state).toBe('left');
    const seen = await getConversation(relay, a, id);
    expect(seen.body.members.find((m: any) => m.peer_id === c.peerId).state).toBe('left');
    // Still in c's list (active) until it clears it.
    expect((await list(relay, c)).body.items.map((x: any) => x.conversation_id)).toContain(id);
    await act(relay, c, id, 'clear');
    expect((await list(relay, c)).body.items.map((x: any) => x.conversation_id)).not.toContain(id);
  });

  it('shows a member who left every member as it was when it left: one that accepted before and left after stays accepted from its acceptance, one still asked stays requested', async () => {
    const [e, d] = await Promise.all([mintToken(relay.url), mintToken(relay.url)]);
    const g = await started(relay, a, [c, e, d], { body: 'one' });
    const id = g.conversation.conversation_id;
    relay.clock.advance(10_000);
    expect((await act(relay, e, id, 'accept')).status).toBe(200);
    const acceptedAt = (await getConversation(relay, a, id)).body.members.find((m: any) => m.peer_id === e.peerId).changed_at;
    expect(acceptedAt).not.toBe(g.conversation.created_at);
    relay.clock.advance(10_000);
    expect((await act(relay, c, id, 'leave')).status).toBe(200);
    const before = await getConversation(relay, c, id);
    expect(before.body.members.find((m: any) => m.peer_id === e.peerId)).toEqual({ peer_id: e.peerId, state: 'accepted', changed_at: acceptedAt });
    expect(before.body.members.find((m: any) => m.peer_id === d.peerId)).toEqual({ peer_id: d.peerId, state: 'requested', changed_at: g.conversation.created_at });

    relay.clock.advance(10_000);
    expect((await act(relay, e, id, 'leave')).status).toBe(200);
    relay.clock.advance(10_000);
    expect((await act(relay, d, id, 'accept')).status).toBe(200);
    await send(relay, d, id, { body: 'after c left' });
    const theirs = await getConversation(relay, a, id);
    const state = (r: any, k: MintedToken) => r.body.members.find((m: any) => m.peer_id === k.peerId).state;
    expect([state(theirs, e), state(theirs, d)]).toEqual(['left', 'accepted']);
    expect(await getConversation(relay, c, id)).toMatchObject({ status: 200, body: before.body });
  });

  it('keeps a group a member left at its place in that member\'s list, and its cursor at the last message before the leaving', async () => {
    const older = (await started(relay, b, [c], { body: 'older pair' })).conversation.conversation_id;
    relay.clock.advance(10_000);
    const g = await started(relay, a, [b, c], { body: 'group' });
    const id = g.conversation.conversation_id;
    const lastSeen = g.message.sent_at;
    relay.clock.advance(10_000);
    expect((await act(relay, c, id, 'leave')).status).toBe(200);
    relay.clock.advance(10_000);
    const newer = (await started(relay, c, [a], { body: 'newer pair' })).conversation.conversation_id;
    relay.clock.advance(10_000);
    await send(relay, a, id, { body: 'the group goes on' });

    const ids = (r: any) => r.body.items.map((x: any) => x.conversation_id);
    expect(ids(await list(relay, c))).toEqual([newer, id, older]);
    const first = await list(relay, c, '?limit=2');
    expect(ids(first)).toEqual([newer, id]);
    expect(first.body.next_before).toBe(`${Date.parse(lastSeen)}_${id}`);
    expect(ids(await list(relay, c, `?limit=2&before=${first.body.next_before}`))).toEqual([older]);
  });

  it('refuses to leave a pair with PAIR_CANNOT_BE_LEFT', async () => {
    const p = await started(relay, a, [b]);
    await expectRefusedUnchanged(relay, () => act(relay, b, p.conversation.conversation_id, 'leave'), 'PAIR_CANNOT_BE_LEFT', 409);
  });

  it('takes 2 to 15 recipients: 16 is INVALID_REQUEST', async () => {
    const many = Array.from({ length: 16 }, (_, i) => (i + 1).toString(16).padStart(64, '0'));
    await expectRefusedUnchanged(relay, () => start(relay, a, many), 'INVALID_REQUEST', 400);
  });
});

describe('clear and mark_read', () => {
  it('clears for the caller alone, and a later message brings the conversation back with only what came after', async () => {
    const p = await started(relay, a, [b], { body: 'old' });
    const id = p.conversation.conversation_id;
    const r = await act(relay, b, id, 'clear');
    expect(r.body).toEqual({ conversation_id: id, state: 'accepted', cleared_seq: '1' });
    expect((await list(relay, b)).body.items).toEqual([]);
    expect((await readMessages(relay, b, id)).body.items).toEqual([]);
    expect((await readMessages(relay, a, id)).body.items).toHaveLength(1);
    await send(relay, a, id, { body: 'new' });
    const back = await list(relay, b);
    expect(back.body.items.map((x: any) => x.conversation_id)).toEqual([id]);
    expect((await readMessages(relay, b, id)).body.items.map((m: any) => m.body)).toEqual(['new']);
  });

  it('marks read up to a seq or the newest, never moving back; beyond the head is INVALID_REQUEST naming it', async () => {
    const p = await started(relay, a, [b], { body: 'one' });
    const id = p.conversation.conversation_id;
    await send(relay, a, id, { body: 'two' });
    expect((await getConversation(relay, b, id)).body.unread).toBe(true);
    expect((await act(relay, b, id, 'read', { seq: '1' })).body).toEqual({ conversation_id: id, read_seq: '1' });
    expect((await getConversation(relay, b, id)).body.unread).toBe(true);
    expect((await act(relay, b, id, 'read', {})).body.read_seq).toBe('2');
    expect((await getConversation(relay, b, id)).body.unread).toBe(false);
    expect((await act(relay, b, id, 'read', { seq: 1 })).body.read_seq).toBe('2');
    const r = await expectRefusedUnchanged(relay, () => act(relay, b, id, 'read', { seq: '3' }), 'INVALID_REQUEST', 400);
    expect(r.body.error.detail).toMatch(/head_seq 2/);
  });
});

describe('idempotency keys', () => {
  it('replays the same key and content with the first message, and refuses different content with IDEMPOTENCY_CONFLICT, across conversations', async () => {
    const first = await start(relay, a, [b], { body: 'once', idempotency_key: 'k-1' });
    expect(first.status).toBe(201);
    const again = await start(relay, a, [b], { body: 'once', idempotency_key: 'k-1' });
    expect(again.status).toBe(201);
    expect(again.body.replayed).toBe(true);
    expect(again.body.message.message_id).toBe(first.body.message.message_id);
    expect((await readMessages(relay, b, first.body.conversation.conversation_id)).body.items).toHaveLength(1);
    await expectRefusedUnchanged(relay, () => start(relay, a, [b], { body: 'different', idempotency_key: 'k-1' }), 'IDEMPOTENCY_CONFLICT', 409);
    const other = await started(relay, a, [c]);
    await expectRefusedUnchanged(relay, () => send(relay, a, other.conversation.conversation_id, { body: 'once', idempotency_key: 'k-1' }), 'IDEMPOTENCY_CONFLICT', 409);
    // Keys are the KEY's own: another KEY may use the same one.
    expect((await start(relay, b, [c], { idempotency_key: 'k-1' })).status).toBe(201);
  });

  it('replays a send with the same key and content', async () => {
    const p = await started(relay, a, [b]);
    const id = p.conversation.conversation_id;
    const one = await send(relay, b, id, { body: 'x', idempotency_key: 'send-1' });
    const two = await send(relay, b, id, { body: 'x', idempotency_key: 'send-1' });
    expect(two.body).toMatchObject({ replayed: true, message: { message_id: one.body.message.message_id } });
  });
});

describe('direct-message rate', () => {
  it('takes 60 direct messages a minute per KEY, then BUSY with Retry-After and the RateLimit headers', async () => {
    // The 61 sends fall in one instant of the relay's clock, however long each took (a token
    // comes back every second of real time, which 61 round trips may take on a slow store).
    const instant = async <T>(fn: () => Promise<T>): Promise<T> => {
      const began = Date.now();
      try {
        return await fn();
      } finally {
        relay.clock.advance(-(Date.now() - began));
      }
    };
    const p = await instant(() => started(relay, a, [b]));
    const id = p.conversation.conversation_id;
    for (let i = 0; i < 59; i++) expect((await instant(() => send(relay, a, id, { body: `m${i}` }))).status).toBe(201);
    const r = await instant(() => expectRefusedUnchanged(relay, () => send(relay, a, id), 'BUSY', 503));
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.headers.get('ratelimit-limit')).toBe('60');
    // b's own allowance is untouched.
    expect((await send(relay, b, id)).status).toBe(201);
    relay.clock.advance(2_000);
    expect((await send(relay, a, id)).status).toBe(201);
  });
});
