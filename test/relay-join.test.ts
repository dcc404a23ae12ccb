/**
 * Joining a SPACE (spec/1-concepts.md "Join request", "Mailbox"; spec/2-endpoints.md join,
 * join.link, requests.*), over the real HTTP server with a real SQLite store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, startRelay, type RunningRelay } from './helpers/relay.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

describe('mailbox rows', () => {
  it('numbers each KEY stream from one without gaps, apart from other KEYS', async () => {
    const a = await mintToken(relay.url, new Uint8Array(randomBytes(32)));
    const b = await mintToken(relay.url, new Uint8Array(randomBytes(32)));
    const mb = relay.store.mailbox;
    const now = relay.clock.now();
    expect(mb.head(a.peerId)).toBe(0);
    expect(mb.deliver(a.peerId, 'request', { requestId: 'r1' }, now)).toBe(1);
    expect(mb.deliver(b.peerId, 'hand_over', { offerId: 'o1' }, now)).toBe(1);
    expect(mb.deliver(a.peerId, 'decision', { requestId: 'r1' }, now)).toBe(2);
    expect(mb.head(a.peerId)).toBe(2);
    expect(mb.list(a.peerId, 0, 10).map((r) => [r.mailboxSeq, r.reason, r.requestId])).toEqual([
      [1, 'request', 'r1'],
      [2, 'decision', 'r1'],
    ]);
    expect(mb.list(a.peerId, 0, 10, ['decision']).map((r) => r.mailboxSeq)).toEqual([2]);
  });

  it('assigns no position when the surrounding write rolls back', async () => {
    const a = await mintToken(relay.url);
    const db = relay.store.db;
    const mb = relay.store.mailbox;
    const now = relay.clock.now();
    mb.deliver(a.peerId, 'to', { postId: 'p1' }, now);
    expect(() =>
      db.transaction(() => {
        mb.deliver(a.peerId, 'to', { postId: 'p2' }, now);
        throw new Error('refused later in the same write');
      }).immediate(),
    ).toThrow(/refused later/);
    expect(mb.head(a.peerId)).toBe(1);
    expect(mb.deliver(a.peerId, 'to', { postId: 'p3' }, now)).toBe(2);
  });

  it('refuses a row naming no subject or two', async () => {
    const a = await mintToken(relay.url);
    const mb = relay.store.mailbox;
    expect(() => mb.deliver(a.peerId, 'to', {}, 0)).toThrow();
    expect(() => mb.deliver(a.peerId, 'to', { postId: 'p', offerId: 'o' }, 0)).toThrow();
    expect(mb.head(a.peerId)).toBe(0);
  });
});
