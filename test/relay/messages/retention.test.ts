/**
 * Message retention over the real HTTP relay with its injected clock (spec/1-concepts.md item 9;
 * spec/2-endpoints.md messages.set_retention): the setting and its refusals, `/v1/me` showing it
 * and what waits, and the retention job deleting every message older than its sender's
 * retention after the clock moves, and nothing else, leaving a gap in seq and the mailbox
 * positions in place.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import { acquaint, act, call, expectRefusedUnchanged, send, start, type Answer } from '../../helpers/conversations.js';
import { createMessageRetentionJob, RETENTION_BATCH } from '../../../relay/jobs/message-retention.js';
import { DAY_MS } from '../../../relay/store/message-retention.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});
// Direct messages are 60 a minute per KEY, writes 30 a minute: let the buckets refill between tests.
beforeEach(() => relay.clock.advance(5 * 60_000));

const mint = () => mintToken(relay.url);
const setRetention = (who: MintedToken, body: unknown) => call(relay, 'PUT', '/v1/messages/retention', { token: who.token, body });
const me = async (who: MintedToken) => (await call(relay, 'GET', '/v1/me', { token: who.token })).body;

function created(r: Answer): Answer {
  if (r.status !== 201) throw new Error(`refused: ${r.status} ${r.text}`);
  return r;
}

/** Two acquainted KEYS and their pair, started by `a` with one message. */
async function pair(): Promise<{ a: MintedToken; b: MintedToken; id: string; first: string }> {
  const [a, b] = await Promise.all([mint(), mint()]);
  await acquaint(relay, a, b);
  const r = created(await start(relay, a, [b], { body: 'first' }));
  return { a, b, id: r.body.conversation.conversation_id, first: r.body.message.message_id };
}

/** The seqs `who` reads in conversation `id`, and its head_seq. */
async function seqs(who: MintedToken, id: string): Promise<{ seqs: string[]; head: string }> {
  const r = await call(relay, 'GET', `/v1/conversations/${id}/messages?limit=200`, { token: who.token });
  expect(r.status, r.text).toBe(200);
  return { seqs: r.body.items.map((m: { seq: string }) => String(m.seq)), head: String(r.body.head_seq) };
}

const exists = async (messageId: string) => await relay.store.messages.byId(messageId) !== undefined;
const count = async (sql: string, ...args: unknown[]) => (await relay.store.db.prepare(sql).get(...args) as { n: number }).n;

describe('messages.set_retention', () => {
  it('sets 1 to 720 days, answers {days}, and /v1/me shows it (720 until set)', async () => {
    const [a] = await Promise.all([mint()]);
    expect((await me(a)).message_retention_days).toBe(720);
    for (const days of [1, 30, 720, 7]) {
      const r = await setRetention(a, { days });
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ days });
    }
    expect((await me(a)).message_retention_days).toBe(7);
  });

  it('refuses days out of range, not an integer, missing, or with another member, with INVALID_REQUEST naming the field, changing nothing', async () => {
    const [a] = await Promise.all([mint()]);
    await setRetention(a, { days: 30 });
    for (const body of [{ days: 0 }, { days: 721 }, { days: 1.5 }, { days: '7' }, { days: null }, {}, { days: 7, scope: 'all' }, [7]]) {
      const r = await expectRefusedUnchanged(relay, () => setRetention(a, body), 'INVALID_REQUEST', 400);
      expect(r.body.error.detail, JSON.stringify(body)).toMatch(/^(days|body)/);
    }
    await expectRefusedUnchanged(relay, () => call(relay, 'PUT', '/v1/messages/retention', { body: { days: 7 } }), 'TOKEN_MISSING', 401);
    expect((await me(a)).message_retention_days).toBe(30);
  });
});

describe('GET /v1/me: what waits in direct messages', () => {
  it('counts conversations with unread messages and waiting requests, apart and summed', async () => {
    const [a, b, c] = await Promise.all([mint(), mint(), mint()]);
    await acquaint(relay, a, b);
    expect(await me(a)).toMatchObject({ waiting: { messages: 0, message_requests: 0 }, messages_waiting: 0 });
    const known = created(await start(relay, b, [a])).body.conversation.conversation_id;
    created(await start(relay, c, [a])); // c is a stranger to a: a message request
    expect(await me(a)).toMatchObject({ waiting: { messages: 1, message_requests: 1 }, messages_waiting: 2 });
    // The sender has nothing waiting from its own messages.
    expect(await me(b)).toMatchObject({ messages_waiting: 0 });
    expect((await act(relay, a, known, 'read')).status).toBe(200);
    expect(await me(a)).toMatchObject({ waiting: { messages: 0, message_requests: 1 }, messages_waiting: 1 });
    const md = await call(relay, 'GET', '/v1/me', { token: a.token, headers: { accept: 'text/markdown' } });
    expect(md.text).toContain('- messages_waiting: 1');
    expect(md.text).toContain('- message_retention_days: 720');
  });
});

describe('the retention job', () => {
  it('deletes messages older than their sender’s retention once the clock moves, and nothing else: other senders’, newer ones', async () => {
    const { a, b, id, first } = await pair();
    expect((await setRetention(a, { days: 5 })).status).toBe(200);
    const fromB = created(await send(relay, b, id, { body: 'b old' })).body.message.message_id;
    relay.clock.advance(3 * DAY_MS);
    const aNewer = created(await send(relay, a, id, { body: 'a newer' })).body.message.message_id;

    relay.clock.advance(2 * DAY_MS + 60_000); // `first` is now 5 days and a minute old, `aNewer` 2 days
    expect(await relay.app.messageRetention.runOnce()).toBe(1);
    expect(await exists(first)).toBe(false);
    expect(await exists(fromB)).toBe(true);
    expect(await exists(aNewer)).toBe(true);
    // A gap in seq; the head never moves back, for either member.
    for (const who of [a, b]) expect(await seqs(who, id)).toEqual({ seqs: ['2', '3'], head: '3' });
    expect((await relay.store.conversations.byId(id))!.lastSeq).toBe(3);
    // The next message takes the next number, never the deleted one.
    const next = created(await send(relay, b, id, { body: 'after' }));
    expect(String(next.body.message.seq)).toBe('4');
    // Nothing left to delete.
    expect(await relay.app.messageRetention.runOnce()).toBe(0);
  });

  it('applies a shortened retention to messages sent before the change', async () => {
    const { a, id, first } = await pair();
    relay.clock.advance(30 * DAY_MS);
    await relay.app.messageRetention.runOnce();
    expect(await exists(first)).toBe(true);
    expect((await setRetention(a, { days: 7 })).status).toBe(200);
    await relay.app.messageRetention.runOnce();
    expect(await exists(first)).toBe(false);
    expect((await seqs(a, id)).seqs).toEqual([]);
  });

  it('keeps a message 720 days under the default, and deletes it after', async () => {
    const { b, id, first } = await pair();
    const fromB = created(await send(relay, b, id, { body: 'b' })).body.message.message_id;
    relay.clock.advance(720 * DAY_MS - 60_000);
    await relay.app.messageRetention.runOnce();
    expect(await exists(first)).toBe(true);
    expect(await exists(fromB)).toBe(true);
    relay.clock.advance(120_000);
    await relay.app.messageRetention.runOnce();
    expect(await exists(first)).toBe(false);
    expect(await exists(fromB)).toBe(false);
  });

  it('deletes the idempotency keys of deleted messages and leaves the mailbox positions, served as unavailable', async () => {
    const { a, b, id } = await pair();
    const keyed = created(await send(relay, a, id, { body: 'keyed', idempotency_key: 'k-1' })).body.message.message_id;
    const headBefore = await relay.store.mailbox.head(b.peerId);
    const rows = await count('SELECT count(*) AS n FROM mailbox WHERE peer = ? AND message_id = ?', b.peerId, keyed);
    expect(rows).toBe(1);
    expect(await count('SELECT count(*) AS n FROM message_idempotency WHERE message_id = ?', keyed)).toBe(1);
    expect((await setRetention(a, { days: 1 })).status).toBe(200);
    relay.clock.advance(DAY_MS + 60_000);
    await relay.app.messageRetention.runOnce();
    expect(await exists(keyed)).toBe(false);
    expect(await count('SELECT count(*) AS n FROM message_idempotency WHERE message_id = ?', keyed)).toBe(0);
    expect(await count('SELECT count(*) AS n FROM mailbox WHERE peer = ? AND message_id = ?', b.peerId, keyed)).toBe(1);
    expect(await relay.store.mailbox.head(b.peerId)).toBe(headBefore);
    const box = await call(relay, 'GET', '/v1/mailbox?reason=message', { token: b.token });
    expect(box.status, box.text).toBe(200);
    expect(box.body.items.length).toBeGreaterThan(0);
    for (const item of box.body.items) expect(item).toEqual({ mailbox_seq: item.mailbox_seq, reason: 'message', unavailable: true });
  });

  it(`deletes more than a batch (${RETENTION_BATCH}) in one pass`, async () => {
    const { a, id } = await pair();
    const total = RETENTION_BATCH + 40;
    for (let i = 1; i < total; i++) {
      if (i % 50 === 0) relay.clock.advance(5 * 60_000);
      created(await send(relay, a, id, { body: `m${i}` }));
    }
    expect((await setRetention(a, { days: 1 })).status).toBe(200);
    relay.clock.advance(2 * DAY_MS);
    // Other tests' messages may go in the same pass.
    expect(await relay.app.messageRetention.runOnce()).toBeGreaterThanOrEqual(total);
    expect(await count('SELECT count(*) AS n FROM messages WHERE conversation_id = ?', id)).toBe(0);
  });

  it('runs on its own timer, with the clock it was given', async () => {
    const { a, first } = await pair();
    expect((await setRetention(a, { days: 1 })).status).toBe(200);
    const job = createMessageRetentionJob({
      retention: relay.store.messageRetention,
      clock: () => relay.clock.now() + 2 * DAY_MS,
      intervalMs: 5,
      report: (m) => {
        throw new Error(`unexpected report: ${m}`);
      },
    });
    job.start();
    try {
      for (let i = 0; i < 400 && await exists(first); i++) await new Promise((r) => setTimeout(r, 5));
    } finally {
      await job.stop();
    }
    expect(await exists(first)).toBe(false);
  });

  it('runs its first pass shortly after start, not an interval later, and none inside start itself', async () => {
    const { a, first } = await pair();
    expect((await setRetention(a, { days: 1 })).status).toBe(200);
    const job = createMessageRetentionJob({
      retention: relay.store.messageRetention,
      clock: () => relay.clock.now() + 2 * DAY_MS,
      firstPassMs: 20,
      report: (m) => {
        throw new Error(`unexpected report: ${m}`);
      },
    });
    job.start();
    try {
      // start() only sets timers: the relay's start and first requests do not wait for a pass.
      expect(await exists(first)).toBe(true);
      for (let i = 0; i < 400 && await exists(first); i++) await new Promise((r) => setTimeout(r, 5));
    } finally {
      await job.stop();
    }
    expect(await exists(first)).toBe(false);
  });

  it(`deletes a backlog on its first pass in batches of ${RETENTION_BATCH}, letting other work run between them`, async () => {
    const { a, id } = await pair();
    const total = RETENTION_BATCH + 40;
    for (let i = 1; i < total; i++) {
      if (i % 50 === 0) relay.clock.advance(5 * 60_000);
      created(await send(relay, a, id, { body: `m${i}` }));
    }
    expect((await setRetention(a, { days: 1 })).status).toBe(200);
    const left = async () => await count('SELECT count(*) AS n FROM messages WHERE conversation_id = ?', id);
    const job = createMessageRetentionJob({
      retention: relay.store.messageRetention,
      clock: () => relay.clock.now() + 2 * DAY_MS,
      firstPassMs: 0,
      report: (m) => {
        throw new Error(`unexpected report: ${m}`);
      },
    });
    // What other work sees, a turn of the event loop at a time, while the pass runs.
    const seen: number[] = [];
    job.start();
    try {
      for (let i = 0; i < 10_000 && await left() > 0; i++) {
        seen.push(await left());
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      await job.stop();
    }
    expect(await left()).toBe(0);
    expect(seen).toContain(total - RETENTION_BATCH);
  });
});
