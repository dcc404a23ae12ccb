/**
 * Conversations over the real HTTP relay (spec/2-endpoints.md "Mailbox, messages, blocks";
 * spec/1-concepts.md "Conversation and message"): start, send, list, get, read, and the
 * answers' shapes.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace } from '../../helpers/posts.js';
import {
  acquaint,
  call,
  expectRefusedUnchanged,
  getConversation,
  list,
  readMessages,
  send,
  start,
  started,
} from '../../helpers/conversations.js';

let relay: RunningRelay;
let a: MintedToken;
let b: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  // A minute between tests refills the direct-message and write buckets.
  relay.clock.advance(61_000);
  a = await mintToken(relay.url);
  b = await mintToken(relay.url);
  await acquaint(relay, a, b);
});

describe('conversations.start', () => {
  it('starts a pair with its first message at seq 1 and answers the conversation and the message', async () => {
    const r = await start(relay, a, [b], { body: 'hello b', about: undefined });
    expect(r.status, r.text).toBe(201);
    expect(Object.keys(r.body)).toEqual(['conversation', 'message', 'replayed']);
    const { conversation: c, message: m } = r.body;
    expect(c).toMatchObject({ kind: 'pair', sealed: false, state: 'accepted', started_by: a.peerId, head_seq: '1', read_seq: '0', unread: false });
    expect(c.members).toEqual([a.peerId, b.peerId].sort().map((p) => ({ peer_id: p, state: 'accepted' })));
    expect(m).toMatchObject({ conversation_id: c.conversation_id, seq: '1', author: a.peerId, reply_to: null, about: null, body: 'hello b' });
    expect(m.sent_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(r.body.replayed).toBe(false);
  });

  it('sends into the existing pair when either KEY starts again: a pair is unique per two KEYS', async () => {
    const first = await started(relay, a, [b]);
    const again = await started(relay, b, [a], { body: 'me again' });
    expect(again.conversation.conversation_id).toBe(first.conversation.conversation_id);
    expect(again.message.seq).toBe('2');
  });

  it('starts a group of three fixed at the start, always a new one', async () => {
    const c3 = await mintToken(relay.url);
    await acquaint(relay, a, c3);
    const g1 = await started(relay, a, [b, c3]);
    const g2 = await started(relay, a, [c3, b]);
    expect(g1.conversation.kind).toBe('group');
    expect(g1.conversation.members).toHaveLength(3);
    expect(g2.conversation.conversation_id).not.toBe(g1.conversation.conversation_id);
  });

  it('refuses a malformed to, body or about with INVALID_REQUEST and changes nothing', async () => {
    for (const body of [
      { to: [] },
      { to: [a.peerId] },
      { to: [b.peerId, b.peerId] },
      { to: ['B'.repeat(64)] },
      { to: [b.peerId], body: '' },
      { to: [b.peerId], body: 'x'.repeat(16_385) },
      { to: [b.peerId], about: 'Not A Space' },
      { to: [b.peerId], body: 'x', sealed: { header: 'a', ciphertext: 'b' } },
      { to: [b.peerId], extra: 1 },
    ]) {
      await expectRefusedUnchanged(relay, () => start(relay, a, [], body), 'INVALID_REQUEST', 400);
    }
  });

  it('refuses an unregistered recipient with RECIPIENT_NOT_REGISTERED naming it, and an unknown about SPACE with SPACE_NOT_FOUND', async () => {
    const nobody = 'ab'.repeat(32);
    const r = await expectRefusedUnchanged(relay, () => start(relay, a, [nobody]), 'RECIPIENT_NOT_REGISTERED', 422);
    expect(r.body.error.detail).toMatch(/^to\[0\]/);
    await expectRefusedUnchanged(relay, () => start(relay, a, [b], { about: 'no-such-space-here' }), 'SPACE_NOT_FOUND', 404);
  });

  it('refuses a start that asks the relay to seal with SEALED_NEEDS_BRIDGE', async () => {
    await expectRefusedUnchanged(relay, () => start(relay, a, [b], { body: undefined, sealed: true }), 'SEALED_NEEDS_BRIDGE', 400);
  });
});

describe('messages.send and messages.read', () => {
  it('numbers messages from 1 without gaps and reads them after a cursor, or newest first with order=desc', async () => {
    const s = await started(relay, a, [b], { body: 'one' });
    const id = s.conversation.conversation_id;
    for (const body of ['two', 'three']) expect((await send(relay, b, id, { body })).status).toBe(201);
    const r = await readMessages(relay, a, id);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['items', 'next_after', 'has_more', 'head_seq', 'tokens_estimated', 'notice']);
    expect(r.body.items.map((m: any) => [m.seq, m.body])).toEqual([['1', 'one'], ['2', 'two'], ['3', 'three']]);
    expect(r.body).toMatchObject({ next_after: '3', has_more: false, head_seq: '3' });
    const after = await readMessages(relay, a, id, '?after=1&limit=1');
    expect(after.body).toMatchObject({ next_after: '2', has_more: true });
    const desc = await readMessages(relay, a, id, '?order=desc&limit=2&detail=snippets');
    expect(desc.body.items.map((m: any) => m.seq)).toEqual(['3', '2']);
    expect(desc.body.items[0]).toMatchObject({ snippet: 'three', snippet_truncated: false });
    expect(desc.body.items[0].body).toBeUndefined();
    expect(desc.body.next_after).toBeNull();
  });

  it('answers the message and the short conversation with 201', async () => {
    const s = await started(relay, a, [b]);
    const r = await send(relay, b, s.conversation.conversation_id, { body: 'reply', reply_to: s.message.message_id });
    expect(r.status, r.text).toBe(201);
    expect(Object.keys(r.body)).toEqual(['message', 'conversation', 'replayed']);
    expect(r.body.conversation).toEqual({ conversation_id: s.conversation.conversation_id, kind: 'pair', state: 'accepted' });
    expect(r.body.message).toMatchObject({ seq: '2', reply_to: s.message.message_id, body: 'reply' });
  });

  it('refuses a cursor past the head with CURSOR_AHEAD', async () => {
    const s = await started(relay, a, [b]);
    const r = await readMessages(relay, a, s.conversation.conversation_id, '?after=2');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('CURSOR_AHEAD');
  });

  it('refuses reply_to that names no message of this conversation with MESSAGE_NOT_FOUND', async () => {
    const s1 = await started(relay, a, [b]);
    const c3 = await mintToken(relay.url);
    await acquaint(relay, a, c3);
    const s2 = await started(relay, a, [c3]);
    const id = s1.conversation.conversation_id;
    await expectRefusedUnchanged(relay, () => send(relay, b, id, { reply_to: s2.message.message_id }), 'MESSAGE_NOT_FOUND', 422);
    await expectRefusedUnchanged(relay, () => send(relay, b, id, { reply_to: '00000000-0000-4000-8000-000000000000' }), 'MESSAGE_NOT_FOUND', 422);
  });

  it('refuses an unknown about SPACE with SPACE_NOT_FOUND and a bad body with INVALID_REQUEST', async () => {
    const s = await started(relay, a, [b]);
    const id = s.conversation.conversation_id;
    await expectRefusedUnchanged(relay, () => send(relay, b, id, { about: 'no-such-space-here' }), 'SPACE_NOT_FOUND', 404);
    await expectRefusedUnchanged(relay, () => send(relay, b, id, { body: '' }), 'INVALID_REQUEST', 400);
    await expectRefusedUnchanged(relay, () => send(relay, b, id, { reply_to: 'not-an-id' }), 'INVALID_REQUEST', 400);
  });

  it('keeps about on the message when it names a SPACE', async () => {
    const space = await newSpace(relay, a);
    const s = await started(relay, a, [b], { about: space.name });
    expect(s.message.about).toBe(space.name);
    expect(s.conversation.about).toBe(space.name);
    const r = await send(relay, b, s.conversation.conversation_id, { about: space.name });
    expect(r.status, r.text).toBe(201);
    expect(r.body.message.about).toBe(space.name);
  });
});

describe('a conversation the caller is not in', () => {
  it('reads, sends and acts exactly as one that never existed: CONVERSATION_NOT_FOUND with the same answer', async () => {
    const s = await started(relay, a, [b]);
    const outsider = await mintToken(relay.url);
    const real = s.conversation.conversation_id;
    const never = '00000000-0000-4000-8000-000000000000';
    const answers = [];
    for (const id of [real, never, 'not-a-uuid']) {
      const paths: [string, string, unknown][] = [
        ['GET', `/v1/conversations/${id}`, undefined],
        ['GET', `/v1/conversations/${id}/messages`, undefined],
        ['POST', `/v1/conversations/${id}/messages`, { body: 'x' }],
        ['POST', `/v1/conversations/${id}/accept`, {}],
        ['POST', `/v1/conversations/${id}/decline`, {}],
        ['POST', `/v1/conversations/${id}/leave`, {}],
        ['POST', `/v1/conversations/${id}/clear`, {}],
        ['POST', `/v1/conversations/${id}/read`, {}],
      ];
      for (const [method, path, body] of paths) {
        relay.clock.advance(2_000);
        const r = await expectRefusedUnchanged(
          relay,
          () => call(relay, method, path, { token: outsider.token, body }),
          'CONVERSATION_NOT_FOUND',
          404,
        );
        const { request_id: _id, ...rest } = r.body.error;
        answers.push(JSON.stringify(rest));
      }
    }
    expect(new Set(answers).size).toBe(1);
  });
});

describe('conversations.list and conversations.get', () => {
  it('lists newest first with members, unread flag and the latest message at snippets, paging with next_before', async () => {
    const c3 = await mintToken(relay.url);
    await acquaint(relay, a, c3);
    const one = await started(relay, a, [b], { body: 'first pair' });
    relay.clock.advance(10);
    const two = await started(relay, a, [c3], { body: 'second pair' });
    relay.clock.advance(10);
    await send(relay, b, one.conversation.conversation_id, { body: 'b answers' });
    const r = await list(relay, a, '?limit=1');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['items', 'next_before', 'has_more', 'notice']);
    expect(r.body.items[0]).toMatchObject({ conversation_id: one.conversation.conversation_id, unread: true, latest: { seq: '2', snippet: 'b answers' } });
    expect(r.body.has_more).toBe(true);
    const next = await list(relay, a, `?limit=1&before=${r.body.next_before}`);
    expect(next.body.items.map((c: any) => c.conversation_id)).toEqual([two.conversation.conversation_id]);
    expect(next.body.items[0].unread).toBe(false);
  });

  it('gets one conversation with each member’s changed_at and the caller’s read position', async () => {
    const s = await started(relay, a, [b]);
    const r = await getConversation(relay, b, s.conversation.conversation_id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ conversation_id: s.conversation.conversation_id, state: 'accepted', read_seq: '0', head_seq: '1', unread: true });
    for (const m of r.body.members) expect(m.changed_at).toMatch(/Z$/);
  });

  it('refuses an unknown list state or a malformed before with INVALID_REQUEST', async () => {
    for (const q of ['?state=declined', '?state=__proto__', '?state=constructor', '?before=yesterday', '?limit=0']) {
      const r = await list(relay, a, q);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_REQUEST');
    }
  });
});

describe('capabilities', () => {
  it('names conversation kinds and states, the message limits and rates, and the messages module as available', async () => {
    const r = await call(relay, 'GET', '/v1/capabilities');
    expect(r.body.conversation_kinds).toEqual(['pair', 'group']);
    expect(r.body.conversation_states).toEqual(['accepted', 'requested', 'declined', 'left']);
    expect(r.body.limits).toMatchObject({ message_bytes: 16_384, keys_per_conversation: 16, waiting_message_requests_per_key: 200 });
    expect(r.body.rate_limits.direct_messages).toMatchObject({ limit: 60, window_seconds: 60, scope: 'key' });
    expect(r.body.rate_limits.message_requests).toMatchObject({ limit: 20, window_seconds: 86_400, first_day: 5 });
    expect(r.body.modules.messages.status).toBe('available');
    const names = r.body.operations.map((o: any) => o.name);
    for (const op of ['conversations.start', 'conversations.list', 'conversations.get', 'messages.read', 'messages.send', 'conversations.accept', 'conversations.decline', 'conversations.leave', 'conversations.clear', 'conversations.mark_read']) {
      expect(names).toContain(op);
    }
    expect(r.body.mailbox_reasons).toEqual(expect.arrayContaining(['message', 'message_request']));
  });
});
