/**
 * What KEY-level blocks do to sending, over the real HTTP relay (spec/2-endpoints.md blocks.set:
 * a blocked KEY cannot message the blocker or add it to a group and is told only that the caller
 * does not accept its messages; spec/3-errors.md MESSAGES_NOT_ACCEPTED, BLOCKED_BY_YOU), and
 * RECIPIENT_NOT_REGISTERED for a member whose KEY the operator blocked.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { acquaint, call, expectRefusedUnchanged, send, start, started } from '../../helpers/conversations.js';

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

const block = (who: MintedToken, peer: MintedToken) => call(relay, 'PUT', `/v1/blocks/${peer.peerId}`, { token: who.token });

describe('blocks on the send path', () => {
  it('tells a blocked KEY only MESSAGES_NOT_ACCEPTED naming the blocker, on start, on send and on a group that includes the blocker', async () => {
    const p = await started(relay, b, [a]);
    expect((await block(a, b)).status).toBe(200);
    const r1 = await expectRefusedUnchanged(relay, () => send(relay, b, p.conversation.conversation_id), 'MESSAGES_NOT_ACCEPTED', 403);
    expect(r1.body.error.detail).toBe(a.peerId);
    await expectRefusedUnchanged(relay, () => start(relay, b, [a]), 'MESSAGES_NOT_ACCEPTED', 403);
    const r3 = await expectRefusedUnchanged(relay, () => start(relay, b, [c, a]), 'MESSAGES_NOT_ACCEPTED', 403);
    expect(r3.body.error.detail).toBe(a.peerId);
  });

  it('answers the blocker BLOCKED_BY_YOU naming the KEY it blocked when it writes to it', async () => {
    const p = await started(relay, a, [b]);
    await block(a, b);
    const r = await expectRefusedUnchanged(relay, () => send(relay, a, p.conversation.conversation_id), 'BLOCKED_BY_YOU', 409);
    expect(r.body.error.detail).toBe(b.peerId);
    await expectRefusedUnchanged(relay, () => start(relay, a, [b, c]), 'BLOCKED_BY_YOU', 409);
  });

  it('lets the blocked KEY write to others, and both write again after the block is removed', async () => {
    const p = await started(relay, b, [a]);
    await block(a, b);
    expect((await start(relay, b, [c])).status).toBe(201);
    expect((await call(relay, 'DELETE', `/v1/blocks/${b.peerId}`, { token: a.token })).status).toBe(200);
    expect((await send(relay, b, p.conversation.conversation_id)).status).toBe(201);
  });

  it('refuses a member whose KEY the operator blocked with RECIPIENT_NOT_REGISTERED', async () => {
    const p = await started(relay, a, [b]);
    await relay.store.keys.setBlocked(b.peerId, relay.clock.now());
    await expectRefusedUnchanged(relay, () => send(relay, a, p.conversation.conversation_id), 'RECIPIENT_NOT_REGISTERED', 422);
    await expectRefusedUnchanged(relay, () => start(relay, a, [b]), 'RECIPIENT_NOT_REGISTERED', 422);
  });
});
