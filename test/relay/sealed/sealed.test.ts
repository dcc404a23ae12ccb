/**
 * Sealed SPACES' key records over the real HTTP relay (spec/2-endpoints.md "Sealed SPACES",
 * spaces.create, members.set, join, requests.approve, hand_over.accept; spec/1-concepts.md
 * "States: Sealed key"; protocol/sealed.md §3-§9).
 *
 * The test plays the bridge: it derives encryption keys from the KEYS' seeds, makes secrets,
 * commitments, locks, back links, keeper lists and stamps with shared/sealed/*, and opens what
 * the relay serves. Every refusal is checked to leave the relay's records exactly as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { equalBytes, toBase64url, toHex } from '../../../shared/encoding.js';
import { openBackLink } from '../../../shared/sealed/generations.js';
import { sealedSpaceCreation } from '../../../shared/sealed/locks.js';
import { buildStamp, signStamp } from '../../../shared/sealed/stamps.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  keeperListBody,
  lockFor,
  nextGeneration,
  openServedLock,
  publishKey,
  sealedKey,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../../helpers/sealed.js';
import { call, createSpace, freshName, type Answer } from '../../helpers/spaces.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay.close();
});

/** A KEY signed in with its encryption key published. */
async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  const r = await publishKey(relay, k);
  if (r.status !== 200) throw new Error(`publish refused: ${r.text}`);
  return k;
}

const path = (s: SealedSpace, rest = ''): string => `/v1/spaces/${s.name}/sealed${rest}`;
const status = (k: SealedKey, s: SealedSpace): Promise<Answer> => call(relay, 'GET', path(s), { token: k.token });
const putList = (k: SealedKey, s: SealedSpace, body: unknown): Promise<Answer> => call(relay, 'PUT', path(s, '/keepers'), { token: k.token, body });
const putStamp = (k: SealedKey, s: SealedSpace, body: unknown): Promise<Answer> => call(relay, 'PUT', path(s, '/stamp'), { token: k.token, body });
const putLocks = (k: SealedKey, s: SealedSpace, generation: number, commitment: string, locks: Record<string, string>): Promise<Answer> =>
  call(relay, 'POST', path(s, '/locks'), { token: k.token, body: { generation, commitment, locks } });
const stage = (k: SealedKey, s: SealedSpace, body: unknown): Promise<Answer> => call(relay, 'POST', path(s, '/generations'), { token: k.token, body });
const activate = (k: SealedKey, s: SealedSpace, g: number | string): Promise<Answer> =>
  call(relay, 'POST', path(s, `/generations/${g}/activate`), { token: k.token });
const abandon = (k: SealedKey, s: SealedSpace, g: number | string): Promise<Answer> =>
  call(relay, 'DELETE', path(s, `/generations/${g}`), { token: k.token });
const admit = (by: SealedKey, s: SealedSpace, k: { peerId: string }, role = 'writer'): Promise<Answer> =>
  call(relay, 'PUT', `/v1/spaces/${s.name}/members/${k.peerId}`, { token: by.token, body: { role } });

/** Everything the relay holds about a SPACE's keys and members, as one comparable text. */
async function records(name: string): Promise<string> {
  const space = await relay.store.spaces.byName(name);
  if (!space) return 'no such SPACE';
  const q = async (sql: string): Promise<unknown[]> => await relay.store.db.prepare(sql).all(space.id);
  return JSON.stringify({
    owner: space.owner,
    state: await q('SELECT * FROM sealed_spaces WHERE space_row_id = ?'),
    generations: await q('SELECT * FROM sealed_generations WHERE space_row_id = ? ORDER BY generation'),
    locks: await q('SELECT * FROM sealed_locks WHERE space_row_id = ? ORDER BY generation, recipient'),
    lists: await q('SELECT * FROM sealed_keeper_lists WHERE space_row_id = ? ORDER BY revision'),
    stamps: await q('SELECT * FROM sealed_stamps WHERE space_row_id = ? ORDER BY peer_id'),
    members: await q('SELECT * FROM members WHERE space_row_id = ? ORDER BY peer_id'),
    requests: await q('SELECT * FROM join_requests WHERE space_row_id = ? ORDER BY id'),
    revision: (await relay.store.events.head(space.id)).revision,
  });
}

/** `act` is refused with `code` (detail matching `detail`) and the records stay as they were. */
async function expectRefused(s: SealedSpace, act: () => Promise<Answer>, code: string, detail?: RegExp | string): Promise<Answer> {
  const before = await records(s.name);
  const r = await act();
  expect(r.body?.error?.code, r.text).toBe(code);
  if (typeof detail === 'string') expect(r.body.error.detail).toBe(detail);
  else if (detail) expect(r.body.error.detail).toMatch(detail);
  expect(await records(s.name)).toBe(before);
  return r;
}

/** A sealed SPACE with `member` admitted and vouched for by an owner's stamp. */
async function withMember(owner: SealedKey, member: SealedKey): Promise<SealedSpace> {
  const s = await createSealedSpace(relay, owner);
  expect((await admit(owner, s, member)).status).toBe(201);
  expect((await putStamp(member, s, stampBody(owner, member.peerId))).status).toBe(200);
  return s;
}

describe('creating a sealed SPACE', () => {
  it('keeps the SPACE id the software chose, the first commitment and the creator lock, which opens to the secret', async () => {
    const owner = await keyed();
    const s = await createSealedSpace(relay, owner);
    const profile = await call(relay, 'GET', `/v1/spaces/${s.name}`, { token: owner.token });
    expect(profile.body).toMatchObject({ space_id: s.spaceId, visibility: 'sealed', join_policy: 'request', oracle: false });
    const st = await status(owner, s);
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({
      space: s.name,
      space_id: s.spaceId,
      suite: 1,
      generation: 1,
      commitment: commitmentOfGeneration(s, 1),
      staged: null,
      keeper_list: null,
      keeper: true,
      owner_was: null,
      owner_was_key: null,
    });
    expect(st.body.owner.peer_id).toBe(owner.peerId);
    expect(st.body.owner.encryption_key.public_key).toBe(toHex(owner.enc.publicKey));
    expect(st.body.locks).toHaveLength(1);
    const lock = st.body.locks[0];
    expect(lock.sender.peer_id).toBe(owner.peerId);
    const secret = openServedLock(s, 1, lock.lock, st.body.commitment, owner, owner);
    expect(equalBytes(secret, s.secrets[1]!)).toBe(true);
  });

  it('refuses a creator without an encryption key with ENCRYPTION_KEY_MISSING and creates nothing', async () => {
    const bare = await sealedKey(relay);
    const name = freshName('sealed');
    const sealed = sealedSpaceCreation({
      spaceId: randomUUID(),
      secret: new Uint8Array(randomBytes(32)),
      owner: { peerId: bare.peerId, publicKey: bare.enc.publicKey, privateKey: bare.enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    });
    const r = await call(relay, 'POST', '/v1/spaces', { token: bare.token, body: { name, visibility: 'sealed', sealed } });
    expect(r.body.error.code).toBe('ENCRYPTION_KEY_MISSING');
    expect(r.body.error.detail).toContain(bare.peerId);
    expect(await relay.store.spaces.byName(name)).toBeUndefined();
    expect(await relay.store.spaces.bySpaceId(sealed.space_id)).toBeUndefined();
  });

  it('refuses to make the key itself (SEALED_NEEDS_BRIDGE), other join policies, oracles, bad parts and a reused SPACE id', async () => {
    const owner = await keyed();
    const good = (): Record<string, unknown> =>
      sealedSpaceCreation({
        spaceId: randomUUID(),
        secret: new Uint8Array(randomBytes(32)),
        owner: { peerId: owner.peerId, publicKey: owner.enc.publicKey, privateKey: owner.enc.privateKey },
        ephemeral: new Uint8Array(randomBytes(32)),
      });
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ visibility: 'sealed' }, 'SEALED_NEEDS_BRIDGE'],
      [{ visibility: 'sealed', sealed: true }, 'SEALED_NEEDS_BRIDGE'],
      [{ visibility: 'sealed', sealed: good(), join_policy: 'invite' }, 'INVALID_REQUEST', /join_policy/],
      [{ visibility: 'sealed', sealed: good(), oracle: true }, 'INVALID_REQUEST', /oracle/],
      [{ visibility: 'sealed', sealed: { ...good(), lock: 'ab' } }, 'INVALID_REQUEST', /sealed\.lock/],
      [{ visibility: 'sealed', sealed: { ...good(), commitment: 'AB'.repeat(32) } }, 'INVALID_REQUEST', /sealed\.commitment/],
      [{ visibility: 'sealed', sealed: { ...good(), space_id: 'not-a-uuid' } }, 'INVALID_REQUEST', /sealed\.space_id/],
      [{ visibility: 'sealed', sealed: { ...good(), extra: 1 } }, 'INVALID_REQUEST', /sealed\.extra/],
      [{ visibility: 'private', sealed: good() }, 'INVALID_REQUEST', /sealed/],
    ];
    for (const [extra, code, detail] of cases) {
      const name = freshName('sealed');
      const r = await call(relay, 'POST', '/v1/spaces', { token: owner.token, body: { name, ...extra } });
      expect(r.body.error?.code, `${JSON.stringify(extra).slice(0, 80)}: ${r.text}`).toBe(code);
      if (detail) expect(r.body.error.detail).toMatch(detail);
      expect(await relay.store.spaces.byName(name)).toBeUndefined();
    }
    const first = await createSealedSpace(relay, owner);
    const again = { ...good(), space_id: first.spaceId };
    const name = freshName('sealed');
    const r = await call(relay, 'POST', '/v1/spaces', { token: owner.token, body: { name, visibility: 'sealed', sealed: again } });
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    expect(await relay.store.spaces.byName(name)).toBeUndefined();
  });

  it('has no links (SEALED_NO_LINKS) and keeps join policy request', async () => {
    const owner = await keyed();
    const s = await createSealedSpace(relay, owner);
    await expectRefused(s, () => call(relay, 'POST', `/v1/spaces/${s.name}/invites`, { token: owner.token, body: { role: 'writer' } }), 'SEALED_NO_LINKS');
    await expectRefused(s, () => call(relay, 'POST', `/v1/spaces/${s.name}/hand-over`, { token: owner.token, body: {} }), 'SEALED_NO_LINKS');
    await expectRefused(s, () => call(relay, 'PATCH', `/v1/spaces/${s.name}`, { token: owner.token, body: { join_policy: 'invite' } }), 'INVALID_REQUEST', /join_policy/);
  });
});

describe('admission needs an encryption key', () => {
  it('refuses a grant to a KEY without one with ENCRYPTION_KEY_MISSING, then admits it once published', async () => {
    const owner = await keyed();
    const s = await createSealedSpace(relay, owner);
    const bob = await sealedKey(relay);
    const r = await expectRefused(s, () => admit(owner, s, bob), 'ENCRYPTION_KEY_MISSING');
    expect(r.body.error.detail).toContain(bob.peerId);
    expect((await publishKey(relay, bob)).status).toBe(200);
    expect((await admit(owner, s, bob)).status).toBe(201);
  });

  it('refuses a join request from a KEY without one, takes it once published, and approving admits', async () => {
    const owner = await keyed();
    const s = await createSealedSpace(relay, owner);
    const carol = await sealedKey(relay);
    await expectRefused(s, () => call(relay, 'POST', `/v1/spaces/${s.name}/join`, { token: carol.token, body: { message: 'let me in' } }), 'ENCRYPTION_KEY_MISSING');
    expect((await publishKey(relay, carol)).status).toBe(200);
    const ask = await call(relay, 'POST', `/v1/spaces/${s.name}/join`, { token: carol.token, body: { message: 'let me in' } });
    expect(ask.status).toBe(202);
    // Keepers see the waiting request with the requester's keys and stamp.
    expect((await putStamp(carol, s, stampBody(owner, carol.peerId))).status).toBe(200);
    const waiting = await call(relay, 'GET', path(s, '/requests'), { token: owner.token });
    expect(waiting.status).toBe(200);
    expect(waiting.body.items).toHaveLength(1);
    expect(waiting.body.items[0]).toMatchObject({ request_id: ask.body.request_id, requester: carol.peerId, vouched: true });
    expect(waiting.body.items[0].requester_key.encryption_key.public_key).toBe(toHex(carol.enc.publicKey));
    expect(waiting.body.items[0].stamp.issuer).toBe(owner.peerId);
    const approved = await call(relay, 'POST', `/v1/requests/${ask.body.request_id}/approve`, { token: owner.token, body: {} });
    expect(approved.status).toBe(200);
    expect(await relay.store.members.roleOf((await relay.store.spaces.byName(s.name))!, carol.peerId)).toBe('writer');
  });
});

describe('keeper lists', () => {
  it('takes the owner-signed list at the next revision and refuses others, stale revisions and bad signatures', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const s = await withMember(owner, bob);
    await expectRefused(s, () => putList(bob, s, keeperListBody(s, bob, { revision: 1 })), 'NOT_A_KEEPER');
    await expectRefused(s, () => putList(owner, s, keeperListBody(s, bob, { revision: 1 })), 'SEALED_SIGNATURE_INVALID');
    const tampered = keeperListBody(s, owner, { revision: 1 });
    tampered.signature = (tampered.signature![0] === '0' ? '1' : '0') + tampered.signature!.slice(1);
    await expectRefused(s, () => putList(owner, s, tampered), 'SEALED_SIGNATURE_INVALID');
    await expectRefused(s, () => putList(owner, s, keeperListBody(s, owner, { revision: 2 })), 'KEEPER_LIST_STALE', '1');
    const other = await createSealedSpace(relay, owner);
    await expectRefused(s, () => putList(owner, s, keeperListBody(other, owner, { revision: 1 })), 'INVALID_REQUEST', /space_id/);
    await expectRefused(s, () => putList(owner, s, { ...keeperListBody(s, owner, { revision: 1 }), extra: 'x' }), 'INVALID_REQUEST');

    const ok = await putList(owner, s, keeperListBody(s, owner, { revision: 1, keepers: [bob.peerId] }));
    expect(ok.status).toBe(200);
    expect(ok.body.keeper_list).toMatchObject({ revision: 1, in_force: true });
    expect(ok.body.keeper_list.signed_by.peer_id).toBe(owner.peerId);
    await expectRefused(s, () => putList(owner, s, keeperListBody(s, owner, { revision: 1 })), 'KEEPER_LIST_STALE', '2');
    const st = await status(bob, s);
    expect(st.body.keeper).toBe(true);
    expect(st.body.keeper_list.list).toBe(keeperListBody(s, owner, { revision: 1, keepers: [bob.peerId] }).list);
  });

  it('answers SPACE_NOT_SEALED for a SPACE that is not sealed and SPACE_NOT_FOUND for none', async () => {
    const owner = await keyed();
    const plain = await createSpace(relay, owner.token, { name: freshName('plain') });
    const fake: SealedSpace = { name: plain.name, spaceId: plain.space_id, container: new Uint8Array(17), owner, secrets: [] };
    for (const act of [
      () => status(owner, fake),
      () => call(relay, 'GET', path(fake, '/chain'), { token: owner.token }),
      () => putList(owner, fake, keeperListBody(fake, owner, { revision: 1 })),
      () => stage(owner, fake, { generation: 2, commitment: '00'.repeat(32), back: '00'.repeat(48) }),
    ]) {
      expect((await act()).body.error.code).toBe('SPACE_NOT_SEALED');
    }
    const none = { ...fake, name: freshName('none') };
    expect((await status(owner, none)).body.error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('stamps', () => {
  it('takes a stamp from the KEY it names or from its issuer as a keeper, checking the signature', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const carol = await keyed();
    const s = await createSealedSpace(relay, owner);
    expect((await admit(owner, s, bob)).status).toBe(201);
    // Bob puts a stamp Carol signed for Bob: carol is no keeper, so it is stored but does not vouch.
    const own = await putStamp(bob, s, stampBody(carol, bob.peerId));
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ stored: true, stamp: { issuer: carol.peerId, peer_id: bob.peerId } });
    let unlocked = await call(relay, 'GET', path(s, '/unlocked'), { token: owner.token });
    expect(unlocked.body.items.find((i: any) => i.peer_id === bob.peerId)).toMatchObject({ vouched: false });
    // Refusals: a stamp signed by someone else than its issuer, an unknown issuer, a stamp for
    // another KEY put by a non-keeper or not by its issuer.
    const forged = stampBody(owner, bob.peerId);
    forged.signature = stampBody(carol, bob.peerId).signature!;
    await expectRefused(s, () => putStamp(bob, s, forged), 'SEALED_SIGNATURE_INVALID');
    const nobody = toHex(new Uint8Array(randomBytes(32)));
    const unknownIssuer = buildStamp({ issuer: nobody, peer_id: bob.peerId });
    await expectRefused(s, () => putStamp(bob, s, { stamp: toBase64url(unknownIssuer), ...signStamp(carol.signer, unknownIssuer) }), 'PEER_NOT_FOUND', /issuer/);
    await expectRefused(s, () => putStamp(carol, s, stampBody(carol, bob.peerId)), 'NOT_A_KEEPER');
    await expectRefused(s, () => putStamp(owner, s, stampBody(carol, bob.peerId)), 'INVALID_REQUEST', /issuer/);
    // The owner (a keeper) puts its own stamp for Bob: Carol's did not vouch, so it is replaced.
    const byKeeper = await putStamp(owner, s, stampBody(owner, bob.peerId));
    expect(byKeeper.body).toMatchObject({ stored: true, stamp: { issuer: owner.peerId, put_by: owner.peerId } });
    unlocked = await call(relay, 'GET', path(s, '/unlocked'), { token: owner.token });
    const item = unlocked.body.items.find((i: any) => i.peer_id === bob.peerId);
    expect(item).toMatchObject({ vouched: true, role: 'writer' });
    expect(item.stamp.issuer).toBe(owner.peerId);
    // Members that are not keepers see vouching but no stamps.
    const asBob = await call(relay, 'GET', path(s, '/unlocked'), { token: bob.token });
    expect(asBob.body.items.every((i: any) => !('stamp' in i))).toBe(true);
  });

  it("never lets a keeper replace another issuer's stamp that still vouches", async () => {
    const owner = await keyed();
    const keeper = await keyed();
    const bob = await keyed();
    const s = await createSealedSpace(relay, owner);
    expect((await admit(owner, s, keeper, 'admin')).status).toBe(201);
    expect((await admit(owner, s, bob)).status).toBe(201);
    expect((await putList(owner, s, keeperListBody(s, owner, { revision: 1, keepers: [keeper.peerId] }))).status).toBe(200);
    expect((await putStamp(bob, s, stampBody(owner, bob.peerId))).status).toBe(200);
    const before = await records(s.name);
    const r = await putStamp(keeper, s, stampBody(keeper, bob.peerId));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stored: false, stamp: { issuer: owner.peerId } });
    expect(await records(s.name)).toBe(before);
  });

  it('lets a stamp run out at not_after', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const s = await createSealedSpace(relay, owner);
    expect((await admit(owner, s, bob)).status).toBe(201);
    const until = Math.floor(relay.clock.now() / 1000) + 60;
    expect((await putStamp(bob, s, stampBody(owner, bob.peerId, until))).status).toBe(200);
    const vouched = async (): Promise<boolean> =>
      (await call(relay, 'GET', path(s, '/unlocked'), { token: owner.token })).body.items.find((i: any) => i.peer_id === bob.peerId).vouched;
    expect(await vouched()).toBe(true);
    relay.clock.advance(61_000);
    expect(await vouched()).toBe(false);
  });
});

describe('locks', () => {
  it('stores locks a keeper makes for vouched members, which open to the secret', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const s = await withMember(owner, bob);
    const r = await putLocks(owner, s, 1, commitmentOfGeneration(s, 1), { [bob.peerId]: lockFor(s, 1, owner, bob) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ generation: 1, stored: 1, missing: 0 });
    const st = await status(bob, s);
    expect(st.body.locks).toHaveLength(1);
    expect(st.body.locks[0]).toMatchObject({ generation: '1', commitment: commitmentOfGeneration(s, 1) });
    expect(st.body.locks[0].sender.peer_id).toBe(owner.peerId);
    const secret = openServedLock(s, 1, st.body.locks[0].lock, st.body.commitment, bob, owner);
    expect(equalBytes(secret, s.secrets[1]!)).toBe(true);
    const unlocked = await call(relay, 'GET', path(s, '/unlocked'), { token: owner.token });
    expect(unlocked.body.items).toEqual([]);
  });

  it('refuses non-members, unvouched members, non-keepers, other generations and other commitments, storing nothing', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const carol = await keyed();
    const outsider = await keyed();
    const s = await withMember(owner, bob);
    expect((await admit(owner, s, carol)).status).toBe(201);
    const c1 = commitmentOfGeneration(s, 1);
    // The detail is the recipient's bare peer id, which a keeper reads whole to pass it over.
    await expectRefused(s, () => putLocks(owner, s, 1, c1, { [outsider.peerId]: lockFor(s, 1, owner, outsider) }), 'LOCK_RECIPIENT_NOT_A_MEMBER', outsider.peerId);
    // One bad recipient refuses the whole chunk.
    await expectRefused(
      s,
      () => putLocks(owner, s, 1, c1, { [bob.peerId]: lockFor(s, 1, owner, bob), [carol.peerId]: lockFor(s, 1, owner, carol) }),
      'LOCK_RECIPIENT_NOT_VOUCHED',
      carol.peerId,
    );
    await expectRefused(s, () => putLocks(bob, s, 1, c1, { [bob.peerId]: lockFor(s, 1, bob, bob) }), 'NOT_A_KEEPER');
    await expectRefused(s, () => putLocks(outsider, s, 1, c1, { [bob.peerId]: lockFor(s, 1, outsider, bob) }), 'NOT_A_KEEPER');
    await expectRefused(s, () => putLocks(owner, s, 1, '00'.repeat(32), { [bob.peerId]: lockFor(s, 1, owner, bob) }), 'KEY_CHANGED', '1');
    await expectRefused(s, () => putLocks(owner, s, 2, c1, { [bob.peerId]: lockFor(s, 1, owner, bob) }), 'KEY_CHANGED', '1');
    await expectRefused(s, () => putLocks(owner, s, 1, c1, {}), 'INVALID_REQUEST');
    await expectRefused(s, () => putLocks(owner, s, 1, c1, { [bob.peerId]: 'ab' }), 'INVALID_REQUEST');
  });

  it('takes up to 1,000 locks in one call and refuses 1,001', async () => {
    const owner = await keyed();
    const s = await createSealedSpace(relay, owner);
    const many: Record<string, string> = {};
    const lock = lockFor(s, 1, owner, owner);
    for (let i = 0; i < 1001; i++) many[toHex(new Uint8Array(randomBytes(32)))] = lock;
    await expectRefused(s, () => putLocks(owner, s, 1, commitmentOfGeneration(s, 1), many), 'INVALID_REQUEST', /1 to 1000/);
  });
});

describe('changing the key', () => {
  it('stages, refuses a second stage, waits for every vouched member, activates, and serves the chain whose back link opens', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const unvouched = await keyed();
    const s = await withMember(owner, bob);
    expect((await admit(owner, s, unvouched)).status).toBe(201);
    expect((await putLocks(owner, s, 1, commitmentOfGeneration(s, 1), { [bob.peerId]: lockFor(s, 1, owner, bob) })).status).toBe(200);

    await expectRefused(s, () => stage(bob, s, { generation: 2, commitment: '00'.repeat(32), back: '00'.repeat(48) }), 'NOT_A_KEEPER');
    const next = nextGeneration(s);
    await expectRefused(s, () => stage(owner, s, { ...next, generation: 3 }), 'KEY_CHANGED', '1');
    await expectRefused(s, () => stage(owner, s, { ...next, back: 'ab' }), 'INVALID_REQUEST', /back/);
    const staged = await stage(owner, s, { ...next, generation: '2' });
    expect(staged.status).toBe(201);
    expect(staged.body.staged).toMatchObject({ generation: 2, commitment: next.commitment, back: next.back, created_by: owner.peerId });
    await expectRefused(s, () => stage(owner, s, next), 'KEY_CHANGE_STAGED');

    // Activation waits for a lock for the owner and Bob (the unvouched member never blocks it).
    await expectRefused(s, () => activate(owner, s, 2), 'LOCKS_MISSING', '2');
    await expectRefused(s, () => activate(bob, s, 2), 'NOT_A_KEEPER');
    await expectRefused(s, () => activate(owner, s, 3), 'KEY_CHANGED', '1');
    const c2 = next.commitment;
    const first = await putLocks(owner, s, 2, c2, { [owner.peerId]: lockFor(s, 2, owner, owner) });
    expect(first.body).toMatchObject({ stored: 1, missing: 1 });
    const unlocked = await call(relay, 'GET', `${path(s, '/unlocked')}?generation=2`, { token: owner.token });
    expect(unlocked.body.items.map((i: any) => i.peer_id).sort()).toEqual([bob.peerId, unvouched.peerId].sort());
    await expectRefused(s, () => activate(owner, s, 2), 'LOCKS_MISSING', '1');
    await expectRefused(s, () => putLocks(owner, s, 2, c2, { [unvouched.peerId]: lockFor(s, 2, owner, unvouched) }), 'LOCK_RECIPIENT_NOT_VOUCHED');
    expect((await putLocks(owner, s, 2, c2, { [bob.peerId]: lockFor(s, 2, owner, bob) })).body.missing).toBe(0);
    const bobBefore = await status(bob, s);
    expect(bobBefore.body.locks.map((l: any) => l.generation)).toEqual(['2', '1']);

    const on = await activate(owner, s, 2);
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ changed: true, generation: { generation: 2, commitment: c2 } });
    expect((await activate(owner, s, 2)).body.changed).toBe(false);
    const st = await status(bob, s);
    expect(st.body).toMatchObject({ generation: 2, commitment: c2, staged: null });
    // Locks for older generations are gone: back links reach them.
    expect(st.body.locks.map((l: any) => l.generation)).toEqual(['2']);
    const secret2 = openServedLock(s, 2, st.body.locks[0].lock, c2, bob, owner);
    const chain = await call(relay, 'GET', path(s, '/chain'), { token: bob.token });
    expect(chain.body.items.map((g: any) => g.generation)).toEqual([2, 1]);
    expect(chain.body.items[1].back).toBeNull();
    const secret1 = openBackLink(s.container, 2, secret2, Buffer.from(chain.body.items[0].back, 'hex'), chain.body.items[1].commitment);
    expect(equalBytes(secret1, s.secrets[1]!)).toBe(true);
    const page = await call(relay, 'GET', `${path(s, '/chain')}?limit=1`, { token: bob.token });
    expect(page.body).toMatchObject({ has_more: true, next_before: '2' });
    const rest = await call(relay, 'GET', `${path(s, '/chain')}?before=2`, { token: bob.token });
    expect(rest.body.items.map((g: any) => g.generation)).toEqual([1]);
  });

  it('abandons a staged change with its locks; the number is staged again with another commitment', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const s = await withMember(owner, bob);
    const next = nextGeneration(s);
    expect((await stage(owner, s, next)).status).toBe(201);
    expect((await putLocks(owner, s, 2, next.commitment, { [owner.peerId]: lockFor(s, 2, owner, owner) })).status).toBe(200);
    await expectRefused(s, () => abandon(bob, s, 2), 'NOT_A_KEEPER');
    await expectRefused(s, () => abandon(owner, s, 3), 'KEY_CHANGED', '1');
    const r = await abandon(owner, s, 2);
    expect(r.status).toBe(200);
    expect(r.body.abandoned).toMatchObject({ generation: 2, commitment: next.commitment });
    expect((await status(owner, s)).body).toMatchObject({ staged: null, generation: 1 });
    expect((await status(owner, s)).body.locks.map((l: any) => l.generation)).toEqual(['1']);
    await expectRefused(s, () => abandon(owner, s, 2), 'KEY_CHANGED', '1');
    // Re-staged under the same number: chunks made for the abandoned commitment are refused.
    s.secrets.pop();
    const again = nextGeneration(s);
    expect((await stage(owner, s, again)).status).toBe(201);
    await expectRefused(s, () => putLocks(owner, s, 2, next.commitment, { [owner.peerId]: lockFor(s, 2, owner, owner) }), 'KEY_CHANGED', '1');
  });

  it('lets a listed keeper lock and change the key, and stops it at once when a new list drops it', async () => {
    const owner = await keyed();
    const keeper = await keyed();
    const bob = await keyed();
    const s = await withMember(owner, bob);
    expect((await admit(owner, s, keeper, 'admin')).status).toBe(201);
    expect((await putList(owner, s, keeperListBody(s, owner, { revision: 1, keepers: [keeper.peerId] }))).status).toBe(200);
    const c1 = commitmentOfGeneration(s, 1);
    // A keeper holds the key from the owner, then hands it on.
    expect((await putLocks(owner, s, 1, c1, { [keeper.peerId]: lockFor(s, 1, owner, keeper) })).status).toBe(200);
    expect((await putLocks(keeper, s, 1, c1, { [bob.peerId]: lockFor(s, 1, keeper, bob) })).status).toBe(200);
    const st = await status(bob, s);
    expect(st.body.locks[0].sender.peer_id).toBe(keeper.peerId);
    expect((await status(keeper, s)).body.kept).toMatchObject({ by: keeper.peerId });

    expect((await putList(owner, s, keeperListBody(s, owner, { revision: 2, keepers: [] }))).status).toBe(200);
    await expectRefused(s, () => putLocks(keeper, s, 1, c1, { [bob.peerId]: lockFor(s, 1, keeper, bob) }), 'NOT_A_KEEPER');
    const upkeep = (await status(owner, s)).body.upkeep;
    // It still holds the key and nobody vouches for it any more: lapsed too.
    expect(upkeep).toMatchObject({ change_due: true, reasons: ['keeper_dropped', 'lapsed'], lapsed: 1 });
  });

  it('makes a change due after a departure, and drops the departed member locks at activation', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const s = await withMember(owner, bob);
    const c1 = commitmentOfGeneration(s, 1);
    expect((await putLocks(owner, s, 1, c1, { [bob.peerId]: lockFor(s, 1, owner, bob) })).status).toBe(200);
    expect((await status(owner, s)).body.upkeep).toMatchObject({ change_due: false, reasons: [], departed_at: null });
    expect((await call(relay, 'DELETE', `/v1/spaces/${s.name}/members/${bob.peerId}`, { token: owner.token })).status).toBe(200);
    // No list: one day after the last change.
    let upkeep = (await status(owner, s)).body.upkeep;
    expect(upkeep).toMatchObject({ reasons: ['departure'], change_every: 86400 });
    expect(upkeep.departed_at).not.toBeNull();
    // A removed member reads nothing: its lock stays out of reach until the change drops it.
    expect((await status(bob, s)).body.error.code).toBe('READ_DENIED');
    const next = nextGeneration(s);
    expect((await stage(owner, s, next)).status).toBe(201);
    expect((await putLocks(owner, s, 2, next.commitment, { [owner.peerId]: lockFor(s, 2, owner, owner) })).status).toBe(200);
    expect((await activate(owner, s, 2)).status).toBe(200);
    const space = (await relay.store.spaces.byName(s.name))!;
    const held = await relay.store.db.prepare('SELECT recipient FROM sealed_locks WHERE space_row_id = ?').all(space.id) as { recipient: string }[];
    expect(held.map((h) => h.recipient)).toEqual([owner.peerId]);
    upkeep = (await status(owner, s)).body.upkeep;
    expect(upkeep).toMatchObject({ change_due: false, reasons: [], departed_at: null });
  });
});

describe('reading the key records', () => {
  it('is for the owner and members (READ_DENIED), waiting requests for keepers (NOT_A_KEEPER)', async () => {
    const owner = await keyed();
    const bob = await keyed();
    const outsider = await keyed();
    const s = await withMember(owner, bob);
    for (const rest of ['', '/chain', '/unlocked', '/requests']) {
      expect((await call(relay, 'GET', path(s, rest), { token: outsider.token })).body.error.code).toBe('READ_DENIED');
    }
    expect((await call(relay, 'GET', path(s, '/requests'), { token: bob.token })).body.error.code).toBe('NOT_A_KEEPER');
    expect((await call(relay, 'GET', `${path(s, '/unlocked')}?generation=5`, { token: owner.token })).body.error.code).toBe('INVALID_REQUEST');
    const st = await status(bob, s);
    expect(st.body).toMatchObject({ keeper: false, vouched: true });
    expect(st.body.notice).toMatch(/opens none/);
  });
});

describe('handing a sealed SPACE over', () => {
  it('needs the successor named as keeper (SEALED_SUCCESSOR_NOT_KEEPER) holding a lock (SEALED_NEEDS_LOCK)', async () => {
    const owner = await keyed();
    const carol = await keyed();
    const s = await withMember(owner, carol);
    const offer = await call(relay, 'POST', `/v1/spaces/${s.name}/hand-over`, { token: owner.token, body: { to: carol.peerId } });
    expect(offer.status).toBe(201);
    const accept = (): Promise<Answer> => call(relay, 'POST', `/v1/hand-overs/${offer.body.offer_id}/accept`, { token: carol.token });
    await expectRefused(s, accept, 'SEALED_SUCCESSOR_NOT_KEEPER');
    expect((await putList(owner, s, keeperListBody(s, owner, { revision: 1, keepers: [carol.peerId] }))).status).toBe(200);
    const r = await expectRefused(s, accept, 'SEALED_NEEDS_LOCK');
    expect(r.body.error.detail).toBe(carol.peerId);
    expect((await putLocks(owner, s, 1, commitmentOfGeneration(s, 1), { [carol.peerId]: lockFor(s, 1, owner, carol) })).status).toBe(200);
    const done = await accept();
    expect(done.status, done.text).toBe(200);
    const st = await status(carol, s);
    expect(st.body.owner.peer_id).toBe(carol.peerId);
    // The previous owner as a peer id (as the governance log names it), its keys beside it.
    expect(st.body.owner_was).toBe(owner.peerId);
    expect(st.body.owner_was_key.peer_id).toBe(owner.peerId);
    expect(st.body.owner_was_key.encryption_key.public_key).toBe(toHex(owner.enc.publicKey));
    // The previous owner's list stays in force (it names the new owner) until the new owner signs one.
    expect(st.body.keeper_list).toMatchObject({ revision: 1, in_force: false });
    expect(st.body.upkeep).toMatchObject({ list_needed: true, change_due: true });
    expect(st.body.keeper).toBe(true);
    const events = await call(relay, 'GET', `/v1/spaces/${s.name}/events`, { token: carol.token });
    const handed = events.body.items.find((e: any) => e.event === 'space.handed_over');
    expect(handed.payload).toMatchObject({ owner_was: owner.peerId, to: carol.peerId });
    // The new owner signs the next list; the previous owner can no longer act.
    expect((await putList(carol, s, keeperListBody(s, carol, { revision: 2 }))).status).toBe(200);
    expect((await status(carol, s)).body.upkeep.list_needed).toBe(false);
    expect((await putList(owner, s, keeperListBody(s, owner, { revision: 3 }))).body.error.code).toBe('NOT_A_KEEPER');
  });

  it('needs an encryption key to take over a role in a sealed SPACE', async () => {
    const owner = await keyed();
    const admin = await keyed();
    const s = await createSealedSpace(relay, owner);
    expect((await admit(owner, s, admin, 'admin')).status).toBe(201);
    // A KEY without an encryption key shares another SPACE with the admin.
    const bare = await sealedKey(relay);
    const plain = await createSpace(relay, admin.token, { name: freshName('plain') });
    expect((await call(relay, 'PUT', `/v1/spaces/${plain.name}/members/${bare.peerId}`, { token: admin.token, body: { role: 'writer' } })).status).toBe(201);
    const offer = await call(relay, 'POST', `/v1/spaces/${s.name}/hand-over`, { token: admin.token, body: { to: bare.peerId } });
    expect(offer.status).toBe(201);
    await expectRefused(s, () => call(relay, 'POST', `/v1/hand-overs/${offer.body.offer_id}/accept`, { token: bare.token }), 'ENCRYPTION_KEY_MISSING');
  });
});
