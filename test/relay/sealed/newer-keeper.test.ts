/**
 * The newer API's keeper against this relay (spec/2-endpoints.md "Sealed SPACES"; protocol/
 * sealed.md §6-§9): the requests its bridge's keeper sends, written here from what its published
 * code reads and sends, and the answers it expects. One cycle: a member puts the stamp it was
 * given and asks to join; the keeper reads the SPACE's key records, finds its own lock by the
 * generation's decimal text, reads the waiting requests a thousand at a time and admits one by
 * checking its stamp itself (`peer.peer_id`, `stamp`), lists the members still without a lock
 * and locks the key for them with the generation as a decimal string (`added` counted); the
 * member then opens its lock and a sealed post. Generations go both as JSON numbers and as
 * decimal strings where that keeper sends them; an 0.1 client's answers keep their members.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase64url, fromHex, toHex } from '../../../shared/encoding.js';
import { readEncryptionKeyStatement } from '../../../shared/sealed/encryption-key.js';
import { readEnvelope } from '../../../shared/sealed/envelope.js';
import { openPost } from '../../../shared/sealed/items.js';
import { sealLock } from '../../../shared/sealed/locks.js';
import { verifyStamp } from '../../../shared/sealed/stamps.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  lockFor,
  nextGeneration,
  openServedLock,
  publishKey,
  sealedKey,
  signedSealedPostBody,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../../helpers/sealed.js';
import { call, type Answer } from '../../helpers/spaces.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  const r = await publishKey(relay, k);
  if (r.status !== 200) throw new Error(`publish refused: ${r.text}`);
  return k;
}

const sealedPath = (s: SealedSpace, rest = ''): string => `/v1/spaces/${s.name}/sealed${rest}`;
const get = (k: SealedKey, path: string): Promise<Answer> => call(relay, 'GET', path, { token: k.token });
const post = (k: SealedKey, path: string, body: unknown): Promise<Answer> => call(relay, 'POST', path, { token: k.token, body });

/** The X25519 key a served key record's statement names (the keeper reads it from the page's item). */
function encryptionKeyOf(record: { encryption_key: { statement: string } }): Uint8Array {
  return fromHex(readEncryptionKeyStatement(fromBase64url(record.encryption_key.statement)).public_key, 32);
}

/** The secret of generation `g` for `me`, from `me`'s own lock in sealed.status as that keeper finds it. */
async function ownSecret(s: SealedSpace, me: SealedKey, g: number, sender: SealedKey): Promise<Uint8Array> {
  const st = await get(me, sealedPath(s));
  expect(st.status, st.text).toBe(200);
  const lock = st.body.locks.find((l: { generation: unknown }) => l.generation === String(g));
  expect(lock, JSON.stringify(st.body.locks)).toBeDefined();
  expect(lock.sender.peer_id).toBe(sender.peerId);
  return openServedLock(s, g, lock.lock, lock.commitment, me, sender);
}

describe('the newer keeper, one cycle', () => {
  it('stamp, lock, admit a request by its stamp, open a post', async () => {
    const keeper = await keyed();
    const member = await keyed();
    const s = await createSealedSpace(relay, keeper);

    // The member puts the stamp it was given before it asks (the keeper vouched for it outside the service).
    const stamp = stampBody(keeper, member.peerId);
    expect((await call(relay, 'PUT', sealedPath(s, '/stamp'), { token: member.token, body: stamp })).status).toBe(200);
    const asked = await call(relay, 'POST', `/v1/spaces/${s.name}/join`, { token: member.token, body: { message: 'let me in' } });
    expect([200, 201, 202], asked.text).toContain(asked.status);

    // The keeper's round: the key records, its own lock found by the generation's text.
    const st = await get(keeper, sealedPath(s));
    expect(st.body.keeper).toBe(true);
    const g = Number(st.body.generation);
    expect(g).toBe(1);
    expect(st.body.upkeep).toHaveProperty('change_due_at', null);
    const secret = await ownSecret(s, keeper, g, keeper);
    expect(toHex(secret)).toBe(toHex(s.secrets[1]!));

    // Waiting requests, a thousand at a time, each admitted after the keeper checks its stamp itself.
    const asks = await get(keeper, `${sealedPath(s, '/requests')}?limit=1000`);
    expect(asks.status, asks.text).toBe(200);
    expect(asks.body.items).toHaveLength(1);
    const request = asks.body.items[0];
    expect(request.peer.peer_id).toBe(member.peerId);
    expect(request.requester).toBe(member.peerId);
    const stampBytes = fromBase64url(request.stamp.stamp);
    const issuer = await get(keeper, `/v1/peers/${keeper.peerId}`);
    const checked = verifyStamp(stampBytes, readEnvelope(request.stamp.signature), { peerId: issuer.body.peer_id, keyType: 'ed25519', publicKey: fromHex(issuer.body.public_key, 32) });
    expect(checked).toMatchObject({ issuer: keeper.peerId, peer_id: request.peer.peer_id });
    const approved = await post(keeper, `/v1/requests/${request.request_id}/approve`, { role: 'writer' });
    expect(approved.status, approved.text).toBe(200);

    // Members without a lock, a thousand at a time; the locks go with the generation as text.
    const page = await get(keeper, `${sealedPath(s, '/unlocked')}?generation=${g}&limit=1000`);
    expect(page.status, page.text).toBe(200);
    const waiting = page.body.items.filter((m: { peer_id: string }) => m.peer_id !== keeper.peerId);
    expect(waiting.map((m: { peer_id: string }) => m.peer_id)).toEqual([member.peerId]);
    expect(waiting[0].stamp.stamp).toBe(request.stamp.stamp);
    const pk = encryptionKeyOf(waiting[0]);
    const lock = sealLock({
      container: s.container,
      generation: g,
      secret,
      recipient: { peerId: member.peerId, publicKey: pk },
      sender: { peerId: keeper.peerId, privateKey: keeper.enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    });
    const locked = await post(keeper, sealedPath(s, '/locks'), { generation: String(g), commitment: st.body.commitment, locks: { [member.peerId]: toHex(lock) } });
    expect(locked.status, locked.text).toBe(200);
    expect(locked.body).toMatchObject({ added: 1, stored: 1 });
    expect(page.body.has_more).toBe(false);

    // The keeper posts; the member opens its lock and the post, its generation read as a number.
    const sent = await call(relay, 'POST', `/v1/spaces/${s.name}/posts`, { token: keeper.token, body: signedSealedPostBody(s, keeper, 1, { title: 'sealed hello', body: 'for members' }) });
    expect(sent.status, sent.text).toBe(201);
    const memberSecret = await ownSecret(s, member, g, keeper);
    const read = await get(member, `/v1/posts?ids=${sent.body.post_id}&detail=full&token_budget=65536`);
    const item = read.body.items[0];
    expect(Number(item.sealed.generation)).toBe(1);
    const opened = openPost(fromBase64url(item.sealed.header), fromBase64url(item.sealed.ciphertext), memberSecret);
    expect(opened.content).toMatchObject({ title: 'sealed hello', body: 'for members' });
  });
});

describe('what that keeper sends and reads, one by one', () => {
  it('sealed pages take limit 1,000 and refuse 1,001 (INVALID_REQUEST)', async () => {
    const keeper = await keyed();
    const s = await createSealedSpace(relay, keeper);
    for (const page of ['/chain', '/unlocked', '/requests']) {
      expect((await get(keeper, `${sealedPath(s, page)}?limit=1000`)).status, page).toBe(200);
      const over = await get(keeper, `${sealedPath(s, page)}?limit=1001`);
      expect(over.body.error.code, page).toBe('INVALID_REQUEST');
    }
  });

  it('a change of key staged and locked with decimal-string generations, and the same with JSON numbers', async () => {
    const keeper = await keyed();
    for (const asText of [true, false]) {
      const s = await createSealedSpace(relay, keeper);
      const next = nextGeneration(s);
      const gen = (n: number) => (asText ? String(n) : n);
      const staged = await post(keeper, sealedPath(s, '/generations'), { generation: gen(next.generation), commitment: next.commitment, back: next.back });
      expect(staged.status, staged.text).toBe(201);
      const locked = await post(keeper, sealedPath(s, '/locks'), {
        generation: gen(2),
        commitment: commitmentOfGeneration(s, 2),
        locks: { [keeper.peerId]: lockFor(s, 2, keeper, keeper) },
      });
      expect(locked.body, locked.text).toMatchObject({ added: 1, generation: 2 });
      const st = await get(keeper, sealedPath(s));
      expect(st.body.staged.generation).toBe(2);
      expect(st.body.locks.map((l: { generation: unknown }) => l.generation).sort()).toEqual(['1', '2']);
      const active = await post(keeper, sealedPath(s, `/generations/${next.generation}/activate`), {});
      expect(active.status, active.text).toBe(200);
      expect(Number((await get(keeper, sealedPath(s))).body.generation)).toBe(2);
    }
  });

  it('a waiting request shows its requester under both names, and the keeper still sees what an 0.1 keeper saw', async () => {
    const keeper = await keyed();
    const asker = await keyed();
    const s = await createSealedSpace(relay, keeper);
    await call(relay, 'POST', `/v1/spaces/${s.name}/join`, { token: asker.token, body: {} });
    const asks = await get(keeper, sealedPath(s, '/requests'));
    const item = asks.body.items[0];
    expect(item).toMatchObject({ requester: asker.peerId, requester_key: { peer_id: asker.peerId }, peer: { peer_id: asker.peerId }, stamp: null });
    expect(item.peer).toEqual(item.requester_key);
    expect(item.peer.encryption_key.public_key).toBe(toHex(asker.enc.publicKey));
  });
});
