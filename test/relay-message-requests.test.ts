/**
 * Message requests over the real HTTP relay (spec/1-concepts.md "States: Conversation", Limits
 * "message requests"; spec/3-errors.md MESSAGE_REQUEST_WAITING, MESSAGE_REQUEST_LIMIT,
 * NOT_A_REQUEST): who knows whom, the sender held until acceptance, acceptance by accept and by
 * reply, a silent decline, 20 a day (5 on the first day) and 200 waiting per recipient.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './helpers/relay.js';
import { acquaint, act, expectRefusedUnchanged, getConversation, list, send, start, started } from './helpers/conversations.js';

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
