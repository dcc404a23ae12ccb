/**
 * The bridge's sealed pairs module (bridge/sealed/pairs.ts; protocol/sealed.md §4, §7, §9), two
 * KEYS' own bridge modules in this process against the real relay (their encryption keys are
 * published there and read back through peers.get, checked against their statements). The
 * conversation records and messages handed to the module are built as the relay shows them,
 * so each rule can be broken one at a time: a header naming another author or reply than the
 * relay shows, a lock from a KEY that did not start the pair, a changed ciphertext byte, a relay
 * that later shows another commitment for a pair kept here.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../bridge/relay-client.js';
import { createSealer, ensurePublished } from '../../bridge/sealed/encryption.js';
import { createKey, loadKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { openCache } from '../../bridge/cache/cache-file.js';
import { SealedPairs } from '../../bridge/sealed/pairs.js';
import { fromBase64url, toBase64url } from '../../shared/encoding.js';
import { readSealedHeader } from '../../shared/sealed/headers.js';
import { tempHome } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;

interface Side {
  peerId: string;
  pairs: SealedPairs;
  close(): void;
}

function side(name: string): Side {
  const dir = openKeyDirectory(tempHome());
  createKey(dir, name);
  const k = loadKey(dir, name);
  const sealer = createSealer(k);
  const api = new RelayClient({ api: new URL(relay.url), key: k, dir });
  const cache = openCache(dir, k.name);
  const pairs = new SealedPairs({ api, identity: { peerId: k.peerId }, signer: k.signer, sealer, privateSalt: k.privateSalt, now: Date.now, log: () => {} }, cache);
  return { peerId: k.peerId, pairs, close: () => cache.close() };
}

let a: Side;
let b: Side;

beforeAll(async () => {
  relay = await startRelay();
  a = side('alice');
  b = side('bob');
  for (const s of [a, b]) await ensurePublished(s.pairs.deps.api, s.pairs.deps.sealer, s.pairs.deps.signer);
});

afterAll(async () => {
  a?.close();
  b?.close();
  await relay?.close();
});

/** A started pair as the relay would show it to `reader`, and its first message. */
async function started(body: string, about?: string) {
  const s = await a.pairs.startBody(b.peerId, body, { about, idempotencyKey: randomUUID() });
  const conversationId = randomUUID();
  const locks = s.sealed.locks as Record<string, string>;
  const record = (reader: Side, sender = a.peerId) => ({
    conversation_id: conversationId,
    kind: 'pair',
    sealed: true,
    state: 'accepted',
    started_by: a.peerId,
    members: [
      { peer_id: a.peerId, state: 'accepted' },
      { peer_id: b.peerId, state: 'accepted' },
    ],
    commitment: s.commitment,
    lock: { lock: locks[reader.peerId], sender },
  });
  const message = {
    message_id: randomUUID(),
    conversation_id: conversationId,
    seq: '1',
    author: a.peerId,
    sent_at: new Date().toISOString(),
    reply_to: null,
    about: about ?? null,
    body: null,
    sealed: { header: s.sealed.header, ciphertext: s.sealed.ciphertext, bytes: fromBase64url(s.sealed.ciphertext as string).length },
  };
  return { s, conversationId, record, message };
}

describe('a sealed pair in the bridge', () => {
  it('is started with one secret locked for both KEYS, and its first message opens for the peer from its own lock and for the starter', async () => {
    const { s, record, message } = await started('the first sealed words', 'some-space');
    const header = readSealedHeader(fromBase64url(s.sealed.header as string), 'header', 'message');
    expect(header).toMatchObject({ type: 'message', generation: 1, author: a.peerId, pair: [a.peerId, b.peerId].sort(), about: 'some-space' });
    expect(Object.keys(s.sealed.locks as object).sort()).toEqual([a.peerId, b.peerId].sort());
    const [forB] = await b.pairs.openMessages(record(b), [message]);
    expect(forB).toMatchObject({ body: 'the first sealed words', sealed: { opened: true } });
    const [forA] = await a.pairs.openMessages(record(a), [message]);
    expect(forA).toMatchObject({ body: 'the first sealed words', sealed: { opened: true } });
  });

  it('seals a reply into the conversation that the other KEY opens, naming the message it answers', async () => {
    const { record, message } = await started('question');
    await b.pairs.openMessages(record(b), [message]);
    const sealed = await b.pairs.sealInto(record(b), 'answer', { reply_to: message.message_id, idempotencyKey: randomUUID() });
    const reply = { ...message, message_id: randomUUID(), seq: '2', author: b.peerId, reply_to: message.message_id, sealed: { ...sealed, bytes: 0 } };
    const [opened] = await a.pairs.openMessages(record(a), [reply]);
    expect(opened).toMatchObject({ body: 'answer', sealed: { opened: true } });
  });

  it('sends the same bytes for the same idempotency key and words, and another salt for other words', async () => {
    const { record } = await started('hello');
    const key = randomUUID();
    const one = await a.pairs.sealInto(record(a), 'same words', { idempotencyKey: key });
    const two = await a.pairs.sealInto(record(a), 'same words', { idempotencyKey: key });
    const other = await a.pairs.sealInto(record(a), 'other words', { idempotencyKey: key });
    expect(two).toEqual(one);
    expect(readSealedHeader(fromBase64url(other.header)).salt).not.toBe(readSealedHeader(fromBase64url(one.header)).salt);
  });

  it('shows nothing of a message whose header names another author than the relay shows', async () => {
    const { record, message } = await started('who wrote this');
    const [shown] = await b.pairs.openMessages(record(b), [{ ...message, author: b.peerId }]);
    expect(shown).toMatchObject({ body: null, sealed: { opened: false, retry: false } });
    expect((shown!.sealed as any).not_opened).toContain('its header differs from what the relay shows (SEALED_HEADER_MISMATCH: author');
    expect(JSON.stringify(shown)).not.toContain('who wrote this');
  });

  it('shows nothing of a message whose header names another reply than the relay shows', async () => {
    const { record, message } = await started('in reply');
    const [shown] = await b.pairs.openMessages(record(b), [{ ...message, reply_to: randomUUID() }]);
    expect((shown!.sealed as any).not_opened).toContain('SEALED_HEADER_MISMATCH: reply_to');
  });

  it('refuses a lock that does not come from the KEY that started the pair', async () => {
    const { record, message } = await started('locked by the starter');
    const [shown] = await b.pairs.openMessages(record(b, b.peerId), [message]);
    expect(shown).toMatchObject({ body: null, sealed: { opened: false } });
    expect((shown!.sealed as any).not_opened).toContain(`not from the KEY that started it (${a.peerId})`);
  });

  it('shows nothing of a message whose ciphertext was changed by one byte', async () => {
    const { record, message } = await started('one byte');
    const ct = fromBase64url(message.sealed.ciphertext as string);
    ct[0]! ^= 1;
    const [shown] = await b.pairs.openMessages(record(b), [{ ...message, sealed: { ...message.sealed, ciphertext: toBase64url(ct) } }]);
    expect((shown!.sealed as any).not_opened).toContain('does not authenticate');
  });

  it('keeps the secret it opened and refuses the pair when the relay later shows another commitment', async () => {
    const { record, message } = await started('kept');
    await b.pairs.openMessages(record(b), [message]);
    const changed = { ...record(b), commitment: '00'.repeat(32) };
    const [shown] = await b.pairs.openMessages(changed, [message]);
    expect(shown!.sealed).toMatchObject({ opened: false, retry: false });
    expect((shown!.sealed as any).not_opened).toContain('SEALED_PAIR_CHANGED');
  });

  it('refuses to start a sealed pair with a KEY that published no encryption key, naming how it gets one', async () => {
    const c = side('carol');
    try {
      // Known to the relay (signed in), no encryption key.
      await c.pairs.deps.api.request({ path: '/v1/me' });
      await expect(a.pairs.startBody(c.peerId, 'x', { idempotencyKey: randomUUID() })).rejects.toMatchObject({ code: 'SEALED_NO_KEY', detail: c.peerId });
    } finally {
      c.close();
    }
  });
});
