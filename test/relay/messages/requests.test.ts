/**
 * Message requests over the real HTTP relay (spec/1-concepts.md "States: Conversation", Limits
 * "message requests"; spec/3-errors.md MESSAGE_REQUEST_WAITING, MESSAGE_REQUEST_LIMIT,
 * NOT_A_REQUEST): who knows whom, the sender held until acceptance, acceptance by accept and by
 * reply, a silent decline, 20 a day (5 on the first day) and 200 waiting per recipient, and a
 * group whose other members carry on while a member's request waits, reaching its mailbox with
 * nothing more until it answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { acquaint, act, call, expectRefusedUnchanged, getConversation, list, send, start, started } from '../../helpers/conversations.js';

const DAY = 24 * 60 * 60 * 1000;

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

const stateOf = (answer: any, peer: string) => answer.members.find((m: any) => m.peer_id === peer)?.state;

describe('who knows whom', () => {
  it('makes a first message to a KEY that does not know the sender a request: the recipient is requested, the starter accepted', async () => {
    const s = await started(relay, a, [b]);
    expect(stateOf(s.conversation, b.peerId)).toBe('requested');
    const mine = await getConversation(relay, b, s.conversation.conversation_id);
    expect(mine.body.state).toBe('requested');
    const waiting = await list(relay, b, '?state=requested');
    expect(waiting.body.items.map((c: any) => c.conversation_id)).toEqual([s.conversation.conversation_id]);
    expect((await list(relay, b)).body.items).toEqual([]);
  });

  it('takes a shared SPACE as acquaintance: no request', async () => {
    await acquaint(relay, a, b);
    const s = await started(relay, a, [b]);
    expect(stateOf(s.conversation, b.peerId)).toBe('accepted');
  });

  it('takes starting a conversation with a KEY as knowing it: an answer to one’s own start is no request', async () => {
    const s = await started(relay, a, [b]);
    // b accepts; now a group b starts with a in it reaches a accepted, since a started a pair with b.
    const c3 = await mintToken(relay.url);
    await acquaint(relay, b, c3);
    expect((await act(relay, b, s.conversation.conversation_id, 'accept')).status).toBe(200);
    const g = await started(relay, b, [a, c3]);
    expect(stateOf(g.conversation, a.peerId)).toBe('accepted');
  });
});

describe('the sender waits for acceptance', () => {
  it('refuses anything more from the sender into the request, or a new conversation including the recipient, with MESSAGE_REQUEST_WAITING naming it', async () => {
    const s = await started(relay, a, [b]);
    const id = s.conversation.conversation_id;
    const r1 = await expectRefusedUnchanged(relay, () => send(relay, a, id), 'MESSAGE_REQUEST_WAITING', 409);
    expect(r1.body.error.detail).toBe(b.peerId);
    await expectRefusedUnchanged(relay, () => start(relay, a, [b], { body: 'again' }), 'MESSAGE_REQUEST_WAITING', 409);
    const c3 = await mintToken(relay.url);
    await acquaint(relay, a, c3);
    const r3 = await expectRefusedUnchanged(relay, () => start(relay, a, [b, c3]), 'MESSAGE_REQUEST_WAITING', 409);
    expect(r3.body.error.detail).toBe(b.peerId);
    // Other KEYS are not held back.
    expect((await start(relay, a, [c3])).status).toBe(201);
  });

  it('lets the sender write again once the recipient accepts', async () => {
    const s = await started(relay, a, [b]);
    const id = s.conversation.conversation_id;
    const r = await act(relay, b, id, 'accept');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ conversation_id: id, state: 'accepted' });
    expect((await send(relay, a, id)).status).toBe(201);
    expect((await list(relay, b)).body.items.map((c: any) => c.conversation_id)).toEqual([id]);
  });

  it('takes a reply to a request as its acceptance', async () => {
    const s = await started(relay, a, [b]);
    const id = s.conversation.conversation_id;
    const r = await send(relay, b, id, { body: 'sure', reply_to: s.message.message_id });
    expect(r.status).toBe(201);
    expect(r.body.conversation.state).toBe('accepted');
    expect(stateOf((await getConversation(relay, a, id)).body, b.peerId)).toBe('accepted');
    expect((await send(relay, a, id)).status).toBe(201);
  });

  it('declines silently: the sender still sees a request and stays held; a second decline changes nothing', async () => {
    const s = await started(relay, a, [b]);
    const id = s.conversation.conversation_id;
    const before = (await getConversation(relay, a, id)).body;
    const r = await act(relay, b, id, 'decline');
    expect(r.body).toEqual({ conversation_id: id, state: 'declined' });
    const after = (await getConversation(relay, a, id)).body;
    expect(after).toEqual(before);
    await expectRefusedUnchanged(relay, () => send(relay, a, id), 'MESSAGE_REQUEST_WAITING', 409);
    expect((await getConversation(relay, b, id)).body.state).toBe('declined');
    expect((await list(relay, b, '?state=requested')).body.items).toEqual([]);
    expect((await act(relay, b, id, 'decline')).body.state).toBe('declined');
  });

  it('refuses to decline what is not a request with NOT_A_REQUEST', async () => {
    await acquaint(relay, a, b);
    const s = await started(relay, a, [b]);
    await expectRefusedUnchanged(relay, () => act(relay, b, s.conversation.conversation_id, 'decline'), 'NOT_A_REQUEST', 409);
    await expectRefusedUnchanged(relay, () => act(relay, a, s.conversation.conversation_id, 'decline'), 'NOT_A_REQUEST', 409);
  });
});

describe('request limits', () => {
  it('allows 5 requests on a KEY’s first day, then MESSAGE_REQUEST_LIMIT with Retry-After until the day ends', async () => {
    const fresh = await mintToken(relay.url);
    const others = await Promise.all(Array.from({ length: 6 }, () => mintToken(relay.url)));
    for (const o of others.slice(0, 5)) expect((await start(relay, fresh, [o])).status).toBe(201);
    const r = await expectRefusedUnchanged(relay, () => start(relay, fresh, [others[5]!]), 'MESSAGE_REQUEST_LIMIT', 429);
    const wait = Number(r.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(DAY / 1000);
    expect(r.body.error.retry_after).toBe(wait);
    // A KEY it shares a SPACE with takes no request.
    await acquaint(relay, fresh, others[5]!);
    expect((await start(relay, fresh, [others[5]!])).status).toBe(201);
  });

  it('allows 20 requests a day after the first day, the 21st refused until the oldest is a day old', async () => {
    const sender = await mintToken(relay.url);
    relay.clock.advance(DAY + 1000);
    const others = await Promise.all(Array.from({ length: 21 }, () => mintToken(relay.url)));
    for (const [i, o] of others.slice(0, 20).entries()) {
      if (i === 10) relay.clock.advance(60_000);
      expect((await start(relay, sender, [o])).status).toBe(201);
    }
    const r = await expectRefusedUnchanged(relay, () => start(relay, sender, [others[20]!]), 'MESSAGE_REQUEST_LIMIT', 429);
    const wait = Number(r.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(DAY / 1000 - 120);
    relay.clock.advance(wait * 1000);
    expect((await start(relay, sender, [others[20]!])).status).toBe(201);
  });

  it('counts each requested member of a group as one request', async () => {
    const fresh = await mintToken(relay.url);
    const others = await Promise.all(Array.from({ length: 6 }, () => mintToken(relay.url)));
    await expectRefusedUnchanged(relay, () => start(relay, fresh, others), 'MESSAGE_REQUEST_LIMIT', 429);
    expect((await start(relay, fresh, others.slice(0, 5))).status).toBe(201);
  });

  it('lets at most 200 requests wait per recipient: the 201st makes the oldest lapse to declined, nobody told', async () => {
    const senders = await Promise.all(Array.from({ length: 201 }, () => mintToken(relay.url)));
    const ids: string[] = [];
    for (const s of senders) {
      relay.clock.advance(1);
      const r = await start(relay, s, [b]);
      expect(r.status, r.text).toBe(201);
      ids.push(r.body.conversation.conversation_id);
    }
    expect((await getConversation(relay, b, ids[0]!)).body.state).toBe('declined');
    expect((await getConversation(relay, b, ids[1]!)).body.state).toBe('requested');
    expect(stateOf((await getConversation(relay, senders[0]!, ids[0]!)).body, b.peerId)).toBe('requested');
    const waiting = await list(relay, b, '?state=requested&limit=200');
    expect(waiting.body.items).toHaveLength(200);
    expect(waiting.body.has_more).toBe(false);
  });
});

describe('a group in which a request waits', () => {
  const mailbox = async (who: MintedToken) => (await call(relay, 'GET', '/v1/mailbox?limit=200', { token: who.token })).body.items as any[];

  /** a and b share a SPACE, e knows neither: a starts a group with both, e's request waits. */
  async function groupWithStranger(): Promise<{ e: MintedToken; id: string }> {
    await acquaint(relay, a, b);
    const e = await mintToken(relay.url);
    const s = await started(relay, a, [b, e], { body: 'hello' });
    expect(stateOf(s.conversation, b.peerId)).toBe('accepted');
    expect(stateOf(s.conversation, e.peerId)).toBe('requested');
    return { e, id: s.conversation.conversation_id };
  }

  it('delivers nothing more to the waiting member, whoever writes: the others carry on, and its mailbox holds the one request', async () => {
    const { e, id } = await groupWithStranger();
    const held = await expectRefusedUnchanged(relay, () => send(relay, a, id, { body: 'again' }), 'MESSAGE_REQUEST_WAITING', 409);
    expect(held.body.error.detail).toBe(e.peerId);
    for (let i = 0; i < 20; i++) {
      const r = await send(relay, b, id, { body: `B ${i}` });
      expect(r.status, r.text).toBe(201);
      expect(r.body.not_yet_accepted).toEqual([e.peerId]);
    }
    const waiting = await mailbox(e);
    expect(waiting.map((env) => [env.reason, env.message.seq, env.message.author])).toEqual([['message_request', '1', a.peerId]]);
    // The members who accepted have the conversation: a is told of each of b's messages.
    expect((await mailbox(a)).filter((env) => env.message?.conversation_id === id).map((env) => env.reason)).toEqual(Array(20).fill('message'));
    // The request shows the conversation as it stands, for the waiting member to decide on.
    expect((await list(relay, e, '?state=requested')).body.items.map((c: any) => [c.conversation_id, c.head_seq])).toEqual([[id, '21']]);
  });

  it.each(['accept', 'reply'])('shows the waiting member what was sent once it answers (%s), and delivers to it from then on', async (answer) => {
    const { e, id } = await groupWithStranger();
    for (const body of ['B 0', 'B 1', 'B 2']) expect((await send(relay, b, id, { body })).status).toBe(201);
    if (answer === 'accept') {
      expect((await act(relay, e, id, 'accept')).body).toEqual({ conversation_id: id, state: 'accepted' });
      const mine = (await getConversation(relay, e, id)).body;
      expect(mine).toMatchObject({ state: 'accepted', head_seq: '4', unread: true });
      const read = await call(relay, 'GET', `/v1/conversations/${id}/messages`, { token: e.token });
      expect(read.body.items.map((m: any) => m.body)).toEqual(['hello', 'B 0', 'B 1', 'B 2']);
    } else {
      const r = await send(relay, e, id, { body: 'E here' });
      expect(r.status, r.text).toBe(201);
      expect(r.body.conversation.state).toBe('accepted');
    }
    // Answering brings no flood of items: the request is still the one item about this conversation.
    expect((await mailbox(e)).map((env) => env.reason)).toEqual(['message_request']);
    const later = await send(relay, b, id, { body: 'after' });
    expect(later.body.not_yet_accepted).toBeUndefined();
    expect((await send(relay, a, id, { body: 'from a' })).status).toBe(201);
    expect((await mailbox(e)).map((env) => [env.reason, env.message.body ?? env.message.snippet])).toEqual([
      ['message_request', 'hello'],
      ['message', 'after'],
      ['message', 'from a'],
    ]);
  });

  it('keeps a declined member’s mailbox silent as well, and names it to the others as not yet accepted', async () => {
    const { e, id } = await groupWithStranger();
    expect((await act(relay, e, id, 'decline')).body.state).toBe('declined');
    const r = await send(relay, b, id, { body: 'still here' });
    expect(r.status).toBe(201);
    expect(r.body.not_yet_accepted).toEqual([e.peerId]);
    expect((await mailbox(e)).map((env) => env.reason)).toEqual(['message_request']);
  });

  it('keeps the request limit however groups are used: a stranger hears only of the requests the starter may send', async () => {
    const fresh = await mintToken(relay.url);
    const member = await mintToken(relay.url);
    await acquaint(relay, fresh, member);
    const strangers = await Promise.all(Array.from({ length: 6 }, () => mintToken(relay.url)));
    const groups: string[] = [];
    for (const s of strangers.slice(0, 5)) groups.push((await started(relay, fresh, [member, s])).conversation.conversation_id);
    // The first day's 5 are spent: a sixth group with a stranger in it is refused, whoever else is in it.
    await expectRefusedUnchanged(relay, () => start(relay, fresh, [member, strangers[5]!]), 'MESSAGE_REQUEST_LIMIT', 429);
    // The member who accepted writes into every group; none of it reaches a stranger.
    for (const id of groups) {
      for (let i = 0; i < 10; i++) expect((await send(relay, member, id, { body: `m ${i}` })).status).toBe(201);
    }
    for (const s of strangers.slice(0, 5)) {
      expect((await mailbox(s)).map((env) => [env.reason, env.message.author])).toEqual([['message_request', fresh.peerId]]);
    }
    expect(await mailbox(strangers[5]!)).toEqual([]);
  });
});
