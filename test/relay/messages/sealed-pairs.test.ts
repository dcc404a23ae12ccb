/**
 * Sealed pairs over the real HTTP relay (protocol/sealed.md §3, §4, §7, §9; spec/3-errors.md
 * SEALED_HEADER_MISMATCH, SEALED_NEEDS_ACQUAINTANCE, SEALED_CONVERSATION_EXISTS,
 * CONVERSATION_SEALED, CONVERSATION_NOT_SEALED, ENCRYPTION_KEY_MISSING). The test plays both
 * KEYS' bridges: it makes the secret, the commitment and a lock for each KEY, and seals every
 * message with shared/sealed; the relay sees only what a bridge would send. The plaintext is
 * then looked for in every file of the relay's data directory.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex, toHex } from '../../../shared/encoding.js';
import { commitmentHex, pairContainer } from '../../../shared/sealed/generations.js';
import { openMessage, sealMessage, sealedTransport } from '../../../shared/sealed/items.js';
import { openLock, sealLock } from '../../../shared/sealed/locks.js';
import type { MessageHeaderFields } from '../../../shared/sealed/headers.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import { storedContent } from '../../helpers/test-store.js';
import { publishKey, sealedKey, type SealedKey } from '../../helpers/sealed.js';
import { acquaint, call, expectRefusedUnchanged, getConversation, readMessages, send, start, started } from '../../helpers/conversations.js';

let relay: RunningRelay;
let a: SealedKey;
let b: SealedKey;

const fresh = (n: number) => new Uint8Array(randomBytes(n));

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});
beforeEach(async () => {
  relay.clock.advance(61_000);
  a = await sealedKey(relay);
  b = await sealedKey(relay);
  for (const k of [a, b]) expect((await publishKey(relay, k)).status).toBe(200);
  await acquaint(relay, a, b);
});

/** The starter's side: a fresh secret, its commitment and a lock for each of the two KEYS. */
function pairSecret(from: SealedKey, to: SealedKey) {
  const container = pairContainer(from.peerId, to.peerId);
  const secret = fresh(32);
  const lock = (k: SealedKey) =>
    toHex(
      sealLock({
        container,
        generation: 1,
        secret,
        recipient: { peerId: k.peerId, publicKey: k.enc.publicKey },
        sender: { peerId: from.peerId, privateKey: from.enc.privateKey },
        ephemeral: fresh(32),
      }),
    );
  return { container, secret, commitment: commitmentHex(container, 1, secret), locks: { [from.peerId]: lock(from), [to.peerId]: lock(to) } };
}

function seal(author: SealedKey, peer: SealedKey, secret: Uint8Array, body: string, extra: Partial<MessageHeaderFields> = {}) {
  const item = sealMessage({ header: { author: author.peerId, peer: peer.peerId, ...extra }, body, secret, salt: fresh(16) });
  return sealedTransport(item.headerBytes, item.ciphertext);
}

function startSealed(from: SealedKey, to: SealedKey, body: string, over: { secret?: ReturnType<typeof pairSecret>; extra?: Partial<MessageHeaderFields>; fields?: Record<string, unknown> } = {}) {
  const p = over.secret ?? pairSecret(from, to);
  const sealed = { ...seal(from, to, p.secret, body, over.extra), commitment: p.commitment, locks: p.locks };
  return { p, run: () => start(relay, from, [to.peerId], { body: undefined, sealed, ...over.fields }) };
}

describe('a sealed pair', () => {
  it('starts with the starter’s locks for both, stores only ciphertext, and each KEY opens its lock and the messages', async () => {
    const { p, run } = startSealed(a, b, 'the launch code is tulip');
    const r = await run();
    expect(r.status, r.text).toBe(201);
    const id = r.body.conversation.conversation_id;
    expect(r.body.conversation).toMatchObject({ kind: 'pair', sealed: true, commitment: p.commitment, lock: { lock: p.locks[a.peerId], sender: a.peerId } });
    expect(r.body.message).toMatchObject({ body: null, sealed: { bytes: expect.any(Number) } });

    // b's own view: its own lock, which opens to the secret under the commitment.
    const got = (await getConversation(relay, b, id)).body;
    expect(got.lock).toEqual({ lock: p.locks[b.peerId], sender: a.peerId });
    const secret = openLock({
      container: p.container,
      generation: 1,
      lock: fromHex(got.lock.lock),
      commitment: got.commitment,
      recipient: { peerId: b.peerId, privateKey: b.enc.privateKey },
      sender: { peerId: a.peerId, publicKey: a.enc.publicKey },
    });
    // b answers, sealed with the secret it opened.
    const reply = await send(relay, b, id, { body: undefined, sealed: seal(b, a, secret, 'noted, tulip', { reply_to: r.body.message.message_id }), reply_to: r.body.message.message_id });
    expect(reply.status, reply.text).toBe(201);
    const read = await readMessages(relay, a, id);
    const opened = read.body.items.map((m: any) => openMessage(fromBase64url(m.sealed.header), fromBase64url(m.sealed.ciphertext), p.secret).content.body);
    expect(opened).toEqual(['the launch code is tulip', 'noted, tulip']);
    const snippets = await readMessages(relay, a, id, '?detail=snippets');
    expect(snippets.body.items[0]).toMatchObject({ snippet: null, sealed: { bytes: expect.any(Number) } });
    expect(snippets.body.items[0].sealed.header).toBeUndefined();
  });

  it('leaves the plaintext nowhere in the relay’s data directory: database, WAL and shared memory', async () => {
    const words = `plaintext-${toHex(fresh(8))}`;
    const { p, run } = startSealed(a, b, `first ${words}`);
    const r = await run();
    expect(r.status).toBe(201);
    await send(relay, b, r.body.conversation.conversation_id, { body: undefined, sealed: seal(b, a, p.secret, `second ${words}`) });
    // The search does find words a message carried in the clear (in the ordinary pair).
    const clear = `cleartext-${toHex(fresh(8))}`;
    await start(relay, a, [b.peerId], { body: clear });
    if (relay.store.db.dialect === 'sqlite') expect(readdirSync(relay.dataDir)).toContain('relay.sqlite-wal');
    const stored = await storedContent(relay);
    expect(stored(clear)).toBe(true);
    expect(stored(words)).toBe(false);
    expect(stored(toHex(p.secret))).toBe(false);
    expect(stored(p.secret)).toBe(false);
  });

  it('may stand beside the ordinary pair of the same two KEYS, but only one sealed pair: SEALED_CONVERSATION_EXISTS names it', async () => {
    const plain = await started(relay, a, [b]);
    const first = await startSealed(a, b, 'one').run();
    expect(first.status).toBe(201);
    expect(first.body.conversation.conversation_id).not.toBe(plain.conversation.conversation_id);
    const r = await expectRefusedUnchanged(relay, startSealed(b, a, 'two').run, 'SEALED_CONVERSATION_EXISTS', 409);
    expect(r.body.error.detail).toBe(first.body.conversation.conversation_id);
  });
});

describe('sealed pair refusals', () => {
  it('refuses a sealed start between KEYS that do not know each other with SEALED_NEEDS_ACQUAINTANCE: never a request', async () => {
    const stranger = await sealedKey(relay);
    await publishKey(relay, stranger);
    await expectRefusedUnchanged(relay, startSealed(a, stranger, 'hi').run, 'SEALED_NEEDS_ACQUAINTANCE', 403);
  });

  it('refuses a KEY without an encryption key with ENCRYPTION_KEY_MISSING naming it', async () => {
    const bare = await sealedKey(relay);
    await acquaint(relay, a, bare);
    const r = await expectRefusedUnchanged(relay, startSealed(a, bare, 'hi').run, 'ENCRYPTION_KEY_MISSING', 409);
    expect(r.body.error.detail).toMatch(new RegExp(`^${bare.peerId}`));
  });

  it('refuses a header that names another pair, another author, another about or a reply with SEALED_HEADER_MISMATCH', async () => {
    const c3 = await sealedKey(relay);
    const p = pairSecret(a, b);
    const cases: [string, object][] = [
      ['pair', seal(a, c3, p.secret, 'x')],
      ['author', seal(b, a, p.secret, 'x')],
      ['about', seal(a, b, p.secret, 'x', { about: 'some-space' })],
      ['reply_to', seal(a, b, p.secret, 'x', { reply_to: '00000000-0000-4000-8000-000000000000' })],
    ];
    for (const [field, item] of cases) {
      const r = await expectRefusedUnchanged(
        relay,
        () => start(relay, a, [b.peerId], { body: undefined, sealed: { ...item, commitment: p.commitment, locks: p.locks } }),
        'SEALED_HEADER_MISMATCH',
        400,
      );
      expect(r.body.error.detail).toMatch(new RegExp(field));
    }
  });

  it('refuses a header of another shape or generation with SEALED_HEADER_MISMATCH', async () => {
    const p = pairSecret(a, b);
    const header = (o: Record<string, unknown>) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const base = { author: a.peerId, generation: 2, pair: [a.peerId, b.peerId].sort(), salt: '00'.repeat(16), suite: 1, type: 'message', v: 1 };
    const ciphertext = Buffer.from(fresh(40)).toString('base64url');
    for (const h of [base, { ...base, generation: 1, type: 'post' }]) {
      await expectRefusedUnchanged(
        relay,
        () => start(relay, a, [b.peerId], { body: undefined, sealed: { header: header(h), ciphertext, commitment: p.commitment, locks: p.locks } }),
        'SEALED_HEADER_MISMATCH',
        400,
      );
    }
  });

  it('refuses locks that are not exactly one for each KEY, and a sealed group, with INVALID_REQUEST', async () => {
    const p = pairSecret(a, b);
    const item = seal(a, b, p.secret, 'x');
    const c3 = await sealedKey(relay);
    for (const sealed of [
      { ...item, commitment: p.commitment, locks: { [a.peerId]: p.locks[a.peerId] } },
      { ...item, commitment: p.commitment, locks: { [a.peerId]: p.locks[a.peerId], [c3.peerId]: p.locks[b.peerId] } },
      { ...item, commitment: 'zz', locks: p.locks },
    ]) {
      await expectRefusedUnchanged(relay, () => start(relay, a, [b.peerId], { body: undefined, sealed }), 'INVALID_REQUEST', 400);
    }
    await expectRefusedUnchanged(relay, () => start(relay, a, [b.peerId, c3.peerId], { body: undefined, sealed: { ...item, commitment: p.commitment, locks: p.locks } }), 'INVALID_REQUEST', 400);
  });

  it('refuses body in a sealed pair with CONVERSATION_SEALED and sealed in a plain one with CONVERSATION_NOT_SEALED', async () => {
    const { p, run } = startSealed(a, b, 'sealed one');
    const sealedId = (await run()).body.conversation.conversation_id;
    await expectRefusedUnchanged(relay, () => send(relay, b, sealedId, { body: 'plain words' }), 'CONVERSATION_SEALED', 409);
    const plain = await started(relay, a, [b]);
    await expectRefusedUnchanged(
      relay,
      () => send(relay, b, plain.conversation.conversation_id, { body: undefined, sealed: seal(b, a, p.secret, 'x') }),
      'CONVERSATION_NOT_SEALED',
      400,
    );
    // A send whose header names a reply that is not sent beside it.
    await expectRefusedUnchanged(
      relay,
      () => send(relay, b, sealedId, { body: undefined, sealed: seal(b, a, p.secret, 'x', { about: 'other-space' }) }),
      'SEALED_HEADER_MISMATCH',
      400,
    );
    expect((await call(relay, 'GET', `/v1/conversations/${sealedId}`, { token: b.token })).body.sealed).toBe(true);
  });
});
