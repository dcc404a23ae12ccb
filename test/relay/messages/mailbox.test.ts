/**
 * Direct messages in the mailbox over the real HTTP relay (spec/1-concepts.md "Mailbox",
 * "Mailbox item", "Long polling"; protocol/api-notes.md §5): `message` and `message_request`
 * envelopes with the message and the conversation, filters, long polls woken by a message, the
 * 200-an-hour delivery limit between two KEYS, and `unavailable` after a clear.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { newSpace, post, admit } from '../../helpers/posts.js';
import { acquaint, act, call, readMessages, send, started } from '../../helpers/conversations.js';

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
  relay.clock.advance(61_000);
  a = await mintToken(relay.url);
  b = await mintToken(relay.url);
});

const mailbox = (who: MintedToken, query = '') => call(relay, 'GET', `/v1/mailbox${query}`, { token: who.token });

describe('message envelopes', () => {
  it('delivers a request as message_request and later messages as message, with the message and the conversation, never to the author', async () => {
    const s = await started(relay, a, [b], { body: 'hi, I am a' });
    const id = s.conversation.conversation_id;
    const first = await mailbox(b);
    expect(first.body.items).toHaveLength(1);
    const env = first.body.items[0];
    expect(Object.keys(env)).toEqual(['mailbox_seq', 'reason', 'message', 'conversation']);
    expect(env).toMatchObject({
      mailbox_seq: '1',
      reason: 'message_request',
      message: { message_id: s.message.message_id, conversation_id: id, seq: '1', author: a.peerId, snippet: 'hi, I am a', snippet_truncated: false },
      conversation: { conversation_id: id, kind: 'pair', state: 'requested' },
    });
    expect(env.message.body).toBeUndefined();
    await act(relay, b, id, 'accept');
    await send(relay, a, id, { body: 'thanks' });
    const full = await mailbox(b, '?after=1&detail=full');
    expect(full.body.items[0]).toMatchObject({ reason: 'message', message: { body: 'thanks' }, conversation: { state: 'accepted' } });
    expect((await mailbox(a)).body.items).toEqual([]);
  });

  it('filters by author and by kind: kind=message selects messages, a post kind selects posts only', async () => {
    await acquaint(relay, a, b);
    const space = await newSpace(relay, a);
    await admit(relay, space, b, 'writer');
    await started(relay, a, [b], { body: 'dm' });
    await post(relay, a, space, { kind: 'obs', body: 'a post to b', to: [b.peerId] });
    const c3 = await mintToken(relay.url);
    await acquaint(relay, c3, b);
    await started(relay, c3, [b], { body: 'from c' });
    const byKind = await mailbox(b, '?kind=message');
    expect(byKind.body.items.map((e: any) => e.message?.snippet)).toEqual(['dm', 'from c']);
    const posts = await mailbox(b, '?kind=obs');
    expect(posts.body.items.map((e: any) => e.post?.snippet)).toEqual(['a post to b']);
    const byAuthor = await mailbox(b, `?author=${c3.peerId}`);
    expect(byAuthor.body.items.map((e: any) => e.message?.snippet)).toEqual(['from c']);
    const both = await mailbox(b, `?kind=message,obs&author=${a.peerId}`);
    expect(both.body.items).toHaveLength(2);
    const reasons = await mailbox(b, '?reason=message');
    expect(reasons.body.items).toHaveLength(2);
  });

  it('serves unavailable: true for a message the KEY cleared, keeping the position', async () => {
    await acquaint(relay, a, b);
    const s = await started(relay, a, [b], { body: 'soon gone' });
    await act(relay, b, s.conversation.conversation_id, 'clear');
    const r = await mailbox(b);
    expect(r.body.items).toEqual([{ mailbox_seq: '1', reason: 'message', unavailable: true }]);
  });

  it('wakes a long-polling mailbox read and a long-polling messages.read when a message lands', async () => {
    await acquaint(relay, a, b);
    const s = await started(relay, a, [b], { body: 'first' });
    const id = s.conversation.conversation_id;
    const waitingMailbox = mailbox(b, '?after=1&wait=20');
    const waitingRead = readMessages(relay, b, id, '?after=1&wait=20');
    await new Promise((r) => setTimeout(r, 150));
    const t0 = Date.now();
    await send(relay, a, id, { body: 'second' });
    const [m, r] = await Promise.all([waitingMailbox, waitingRead]);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(m.body.items.map((e: any) => e.message.snippet)).toEqual(['second']);
    expect(r.body.items.map((x: any) => x.body)).toEqual(['second']);
  });

  it('stores every message but omits the notices past 200 an hour from one KEY to another', async () => {
    await acquaint(relay, a, b);
    const s = await started(relay, a, [b], { body: 'm0' });
    const id = s.conversation.conversation_id;
    let sent = 1;
    for (let round = 0; round < 4; round++) {
      relay.clock.advance(61_000);
      for (let i = 0; i < 60; i++) {
        expect((await send(relay, a, id, { body: `m${sent}` })).status).toBe(201);
        sent++;
      }
    }
    const read = await readMessages(relay, b, id, '?order=desc&limit=1');
    expect(read.body.head_seq).toBe(String(sent));
    const head = Number((await mailbox(b, `?after=${10_000}`)).body.head_seq);
    expect(head).toBeGreaterThanOrEqual(200);
    expect(head).toBeLessThan(sent);
  });
});

describe('group fan-out', () => {
  it('numbers every member’s stream without gaps when group messages, posts and pair messages interleave, one row per member per message', async () => {
    const [c, d] = await Promise.all([mintToken(relay.url), mintToken(relay.url)]);
    for (const [x, y] of [[a, b], [a, c], [a, d], [b, c], [b, d], [c, d]] as const) await acquaint(relay, x, y);
    const space = await newSpace(relay, a);
    await admit(relay, space, c, 'writer');
    const group = (await started(relay, a, [b, c, d], { body: 'group 1' })).conversation.conversation_id;
    // Sent together, so the relay may commit several in one transaction (relay/posts/commit-queue.ts).
    await Promise.all([
      send(relay, b, group, { body: 'group 2' }),
      started(relay, a, [c], { body: 'pair to c' }),
      post(relay, a, space, { kind: 'obs', body: 'a post to c', to: [c.peerId] }),
      send(relay, d, group, { body: 'group 3' }),
      send(relay, a, group, { body: 'group 4' }),
    ]);
    for (const who of [a, b, c, d]) {
      const rows = await relay.store.mailbox.list(who.peerId, 0, 100);
      expect(rows.map((r) => r.mailboxSeq)).toEqual(rows.map((_, i) => i + 1));
      const messages = rows.flatMap((r) => (r.messageId === null ? [] : [r.messageId]));
      expect(new Set(messages).size).toBe(messages.length);
    }
    // Each member holds every group message but its own.
    const groupRows = async (who: MintedToken) =>
      (await relay.store.messages.byIds((await relay.store.mailbox.list(who.peerId, 0, 100)).flatMap((r) => (r.messageId === null ? [] : [r.messageId]))))
        .filter((m) => m.conversationId === group)
        .map((m) => m.body)
        .sort();
    expect(await groupRows(b)).toEqual(['group 1', 'group 3', 'group 4']);
    expect(await groupRows(c)).toEqual(['group 1', 'group 2', 'group 3', 'group 4']);
    expect(await groupRows(d)).toEqual(['group 1', 'group 2', 'group 4']);
  });

  it('delivers to several KEYS in one write that assigns nothing when the write rolls back, and refuses a KEY named twice', async () => {
    const mb = relay.store.mailbox;
    const now = relay.clock.now();
    await mb.deliver(a.peerId, 'to', { postId: 'p1' }, now);
    const both = [
      { peer: a.peerId, reason: 'message' as const },
      { peer: b.peerId, reason: 'message_request' as const },
    ];
    await expect(
      relay.store.db.transaction(async () => {
        await mb.deliverEach(both, { messageId: 'm1' }, now);
        throw new Error('refused later in the same write');
      }).immediate(),
    ).rejects.toThrow(/refused later/);
    expect([await mb.head(a.peerId), await mb.head(b.peerId)]).toEqual([1, 0]);
    await expect(mb.deliverEach([...both, both[0]!], { messageId: 'm2' }, now)).rejects.toThrow();
    expect([await mb.head(a.peerId), await mb.head(b.peerId)]).toEqual([1, 0]);
    await mb.deliverEach(both, { messageId: 'm3' }, now);
    expect((await mb.list(a.peerId, 0, 10)).map((r) => [r.mailboxSeq, r.reason, r.messageId])).toEqual([
      [1, 'to', null],
      [2, 'message', 'm3'],
    ]);
    expect((await mb.list(b.peerId, 0, 10)).map((r) => [r.mailboxSeq, r.reason, r.messageId])).toEqual([[1, 'message_request', 'm3']]);
  });
});
