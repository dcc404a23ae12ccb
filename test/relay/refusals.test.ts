/**
 * Refusals of spec/2-endpoints.md that no other test file reached (the audit behind this file
 * maps every (operation, code) pair of the implemented operations to the test that reaches it).
 * Each case here drives the real HTTP relay and holds the standard "every refusal the spec lists
 * for an operation is reachable, returns its code with the envelope, and changes nothing":
 *
 * - the status is the catalogue's, the body is exactly the envelope {code, message, fix, doc,
 *   request_id, detail?} and `request_id` equals the X-Request-Id header;
 * - every table a write could touch (SPACES, members, blocks, the audit log, links, requests,
 *   offers, posts, mailboxes, encryption keys, sealed records) is byte-for-byte as before.
 *
 * Limits are reached in one request by seeding the tables through the store, as the other relay
 * tests do; never by a test-only knob. States the API cannot produce (a passkey KEY written
 * straight into the store, whose random assertions are refused; a waiting request from a KEY without an encryption key in a sealed
 * SPACE) are seeded through the store too, to show the guard behind them holds.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CATALOGUE, type ErrorCode } from '../../shared/errors.js';
import { toBase64url, toHex } from '../../shared/encoding.js';
import { passkeyPeerIdOf } from '../../shared/identity.js';
import { ADMINS_PER_SPACE, MEMBERS_PER_SPACE, SPACES_PER_KEY } from '../../shared/limits.js';
import { buildEncryptionKeyStatement, deriveEncryptionKey, encryptionKeyFingerprint } from '../../shared/sealed/encryption-key.js';
import { sealedSpaceCreation } from '../../shared/sealed/locks.js';
import { buildKeeperList } from '../../shared/sealed/keepers.js';
import { buildStamp } from '../../shared/sealed/stamps.js';
import type { WebauthnEnvelope } from '../../shared/sealed/envelope.js';
import { tokenHash } from '../../relay/http/auth.js';
import { newToken } from '../../relay/ids.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { call, createSpace, freshName, type Answer } from '../helpers/spaces.js';
import { grant, makeLink } from '../helpers/invites.js';
import { newSpace } from '../helpers/posts.js';
import { stateProbe } from '../helpers/state.js';
import { deleteWhereIn, insertRows, privateSpaceRow, SPACES_COLUMNS } from '../helpers/test-store.js';
import {
  commitmentOfGeneration,
  createSealedSpace,
  keeperListBody,
  lockFor,
  nextGeneration,
  publishKey,
  sealedKey,
  stampBody,
  type SealedKey,
  type SealedSpace,
} from '../helpers/sealed.js';

let relay: RunningRelay;
/** The digest of every table a write can touch (test/helpers/state.ts). */
let stateDigest: () => Promise<string> = async () => {
  throw new Error('the relay is not started');
};

beforeAll(async () => {
  relay = await startRelay();
  stateDigest = await stateProbe(relay);
});
afterAll(async () => {
  await relay.close();
});
// Writes are 30 a minute per KEY (burst 60): let every bucket refill between tests.
beforeEach(() => relay.clock.advance(3 * 60_000));

// ---- the standard each refusal is held to ---------------------------------------------------

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The answer is `code` with its catalogue status, exactly the envelope, and the header's id. */
function expectEnvelope(r: Answer, code: ErrorCode): void {
  expect({ status: r.status, code: r.body?.error?.code }, r.text).toEqual({ status: CATALOGUE[code].status, code });
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(Object.keys(r.body)).toEqual(['error']);
  const e = r.body.error;
  expect(Object.keys(e).filter((k) => k !== 'detail' && k !== 'retry_after')).toEqual(['code', 'message', 'fix', 'doc', 'request_id']);
  expect(e.message).toBe(`${code}. ${CATALOGUE[code].message}`);
  expect(e.fix).toBe(CATALOGUE[code].fix);
  expect(e.doc).toBe('/reference#errors');
  expect(e.request_id).toMatch(UUID_RE);
  expect(e.request_id).toBe(r.headers.get('x-request-id'));
}

/** Run `act`: it is refused with `code` (detail matching `detail`) and no table moved. */
async function expectRefusal(act: () => Promise<Answer>, code: ErrorCode, detail?: RegExp): Promise<Answer> {
  const before = await stateDigest();
  const r = await act();
  expectEnvelope(r, code);
  if (detail) expect(r.body.error.detail).toMatch(detail);
  expect(await stateDigest(), `${code}: a table changed`).toBe(before);
  return r;
}

// ---- seeding ---------------------------------------------------------------------------------

/**
 * `SPACES_PER_KEY` SPACES owned by `peer`, written straight into the table (reaches SPACE_LIMIT).
 * Answers the removal of what it wrote, so the tables every refusal compares stay small.
 */
async function seedOwnedSpaces(peer: string): Promise<() => Promise<void>> {
  const prefix = `fill-${toHex(randomBytes(4))}-`;
  const rows = Array.from({ length: SPACES_PER_KEY }, (_, i) => [randomUUID(), `${prefix}${i}`, peer]);
  await relay.store.db.transaction(async () => await insertRows(relay.store.db, SPACES_COLUMNS, rows.map(privateSpaceRow)))();
  return async () => void (await relay.store.db.prepare("DELETE FROM spaces WHERE name LIKE ? || '%'").run(prefix));
}

/** The SPACE's member count at the limit (reaches MEMBER_LIMIT). */
async function fillMembers(name: string): Promise<void> {
  await relay.store.db.prepare('UPDATE spaces SET member_count = ? WHERE name = ?').run(MEMBERS_PER_SPACE, name);
}

/** `ADMINS_PER_SPACE` registered admins in the SPACE (reaches ADMIN_LIMIT); answers their removal. */
async function fillAdmins(name: string, owner: string): Promise<() => Promise<void>> {
  const space = (await relay.store.spaces.byName(name))!;
  const db = relay.store.db;
  const peers = Array.from({ length: ADMINS_PER_SPACE }, () => toHex(randomBytes(32)));
  await db.transaction(async () => {
    await insertRows(db, 'keys (peer_id, key_type, public_key, registered_at)', peers.map((p) => [p, 'ed25519', p, 0]));
    await insertRows(
      db,
      'members (space_row_id, peer_id, role, tags_json, brought_in_by, link_id, direct, admitted_at, changed_at)',
      peers.map((p) => [space.id, p, 'admin', '[]', owner, null, 0, 0, 0]),
    );
  })();
  return async () => {
    await db.transaction(async () => {
      await deleteWhereIn(db, 'members', 'peer_id', peers, 'space_row_id = ?', [space.id]);
      await deleteWhereIn(db, 'keys', 'peer_id', peers);
    })();
  };
}

async function close(name: string): Promise<void> {
  await relay.store.spaces.close((await relay.store.spaces.byName(name))!.id, null, relay.clock.now());
}

/**
 * A passkey KEY registered and holding a token, written through the store (its assertions are
 * random bytes; test/relay/passkeys/signing.test.ts signs with a real authenticator).
 */
async function seedPasskeyKey(): Promise<{ peerId: string; token: string }> {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  const peerId = toHex(passkeyPeerIdOf(spki));
  const token = newToken((n) => new Uint8Array(randomBytes(n)));
  const now = relay.clock.now();
  const minted = await relay.store.keys.mint({
    peerId,
    keyType: 'passkey',
    publicKey: toHex(spki),
    nonce: new Uint8Array(randomBytes(16)),
    nonceExpiresAt: now + 300_000,
    tokenId: randomUUID(),
    tokenHash: tokenHash(token),
    label: null,
    now,
    expiresAt: now + 30 * 24 * 3600_000,
  });
  if (!minted.ok) throw new Error('passkey KEY not seeded');
  return { peerId, token };
}

/** A webauthn envelope of the right shape and sizes whose bytes are no assertion. */
const WEBAUTHN: WebauthnEnvelope = {
  alg: 'webauthn',
  credential_id: toBase64url(new Uint8Array(randomBytes(16))),
  client_data_json: toBase64url(new Uint8Array(randomBytes(40))),
  authenticator_data: toBase64url(new Uint8Array(randomBytes(37))),
  signature: toBase64url(new Uint8Array(randomBytes(70))),
};

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  const r = await publishKey(relay, k);
  if (r.status !== 200) throw new Error(`encryption key refused: ${r.text}`);
  return k;
}

describe('the standard itself', () => {
  it('the state digest moves when a write succeeds, so "changes nothing" can fail', async () => {
    const k = await mintToken(relay.url);
    const before = await stateDigest();
    await createSpace(relay, k.token, { name: freshName('probe') });
    const afterCreate = await stateDigest();
    expect(afterCreate).not.toBe(before);
    // A change inside one row (a column other than the key) moves it too.
    await relay.store.db.prepare('UPDATE spaces SET title = ? WHERE owner = ?').run('changed behind the relay', k.peerId);
    expect(await stateDigest()).not.toBe(afterCreate);
  });
});

// ---- Keys, tokens, passkeys -----------------------------------------------------------------

describe('keys, tokens, passkeys', () => {
  it('passkeys.verify refuses a challenge the relay never issued with CHALLENGE_INVALID (test/relay/passkeys/passkeys.test.ts reaches the rest)', async () => {
    const body = {
      // Expires in 2106, with a tag the relay never made.
      challenge: '00000000ffffffff' + 'ab'.repeat(48),
      credential_id: toBase64url(new Uint8Array(randomBytes(16))),
      client_data_json: WEBAUTHN.client_data_json,
      authenticator_data: WEBAUTHN.authenticator_data,
      signature: WEBAUTHN.signature,
      public_key: toBase64url(new Uint8Array(randomBytes(91))),
      algorithm: -7,
    };
    await expectRefusal(() => call(relay, 'POST', '/v1/passkeys/verify', { body }), 'CHALLENGE_INVALID');
  });

  it("me.encryption_key refuses a passkey KEY's webauthn signature that is no assertion with ENCRYPTION_KEY_INVALID", async () => {
    const pk = await seedPasskeyKey();
    const enc = deriveEncryptionKey(new Uint8Array(randomBytes(32)), pk.peerId);
    const statement = buildEncryptionKeyStatement(pk.peerId, enc.publicKey);
    const r = await expectRefusal(
      () => call(relay, 'PUT', '/v1/me/encryption-key', { token: pk.token, body: { statement: toBase64url(statement), ...WEBAUTHN } }),
      'ENCRYPTION_KEY_INVALID',
    );
    expect(r.body.error.detail).toMatch(/client_data_json/);
    expect(await relay.store.encryptionKeys.get(pk.peerId)).toBeUndefined();
  });
});

// ---- SPACES, categories, members --------------------------------------------------------------

describe('members and space blocks', () => {
  let owner: MintedToken;
  let writer: MintedToken;
  beforeAll(async () => {
    [owner, writer] = await Promise.all([mintToken(relay.url), mintToken(relay.url)]);
  });

  it('members.list, members.revoke, space_blocks.list and space_blocks.remove answer SPACE_NOT_FOUND for a name nobody holds', async () => {
    const ghost = freshName('ghost');
    const cases: [string, string][] = [
      ['GET', `/v1/spaces/${ghost}/members`],
      ['DELETE', `/v1/spaces/${ghost}/members/${writer.peerId}`],
      ['GET', `/v1/spaces/${ghost}/blocks`],
      ['DELETE', `/v1/spaces/${ghost}/blocks/${writer.peerId}`],
    ];
    for (const [method, path] of cases) {
      await expectRefusal(() => call(relay, method, path, { token: owner.token }), 'SPACE_NOT_FOUND');
    }
  });

  it('space_blocks.remove refuses in a closed SPACE with SPACE_CLOSED and the block stays', async () => {
    const name = freshName('blk');
    await createSpace(relay, owner.token, { name });
    expect((await call(relay, 'PUT', `/v1/spaces/${name}/blocks/${writer.peerId}`, { token: owner.token })).status).toBe(200);
    await close(name);
    await expectRefusal(() => call(relay, 'DELETE', `/v1/spaces/${name}/blocks/${writer.peerId}`, { token: owner.token }), 'SPACE_CLOSED');
    expect(await relay.store.blocks.isBlocked((await relay.store.spaces.byName(name))!.id, writer.peerId)).toBe(true);
  });
});

// ---- Invites, requests, joining, hand-over ---------------------------------------------------

describe('join requests', () => {
  let owner: MintedToken;
  beforeAll(async () => {
    owner = await mintToken(relay.url);
  });

  /** A private SPACE under policy request, and a waiting request from a fresh KEY. */
  async function asked(): Promise<{ name: string; asker: MintedToken; id: string }> {
    const name = freshName('req');
    await createSpace(relay, owner.token, { name, join_policy: 'request' });
    const asker = await mintToken(relay.url);
    const r = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: asker.token, body: { message: 'may I?' } });
    expect(r.status).toBe(202);
    return { name, asker, id: r.body.request_id };
  }

  function approve(id: string, body: Record<string, unknown> = {}): Promise<Answer> {
    return call(relay, 'POST', `/v1/requests/${id}/approve`, { token: owner.token, body });
  }

  it('requests.list answers SPACE_NOT_FOUND for a name nobody holds', async () => {
    await expectRefusal(() => call(relay, 'GET', `/v1/spaces/${freshName('ghost')}/requests`, { token: owner.token }), 'SPACE_NOT_FOUND');
  });

  it('requests.approve refuses a SPACE at its member limit with MEMBER_LIMIT, the request still waiting', async () => {
    const { name, id } = await asked();
    await fillMembers(name);
    await expectRefusal(() => approve(id), 'MEMBER_LIMIT');
    expect((await relay.store.requests.byId(id, relay.clock.now()))!.state).toBe('pending');
  });

  it('requests.approve refuses a requester already in 10,000 SPACES with SPACE_LIMIT', async () => {
    const { asker, id } = await asked();
    const unseed = await seedOwnedSpaces(asker.peerId);
    await expectRefusal(() => approve(id), 'SPACE_LIMIT');
    await unseed();
    expect((await relay.store.requests.byId(id, relay.clock.now()))!.state).toBe('pending');
  });

  it('requests.approve refuses a new admin past the admins a SPACE may have with ADMIN_LIMIT', async () => {
    const { name, id } = await asked();
    const unseed = await fillAdmins(name, owner.peerId);
    await expectRefusal(() => approve(id, { role: 'admin' }), 'ADMIN_LIMIT');
    await unseed();
    expect((await relay.store.requests.byId(id, relay.clock.now()))!.state).toBe('pending');
  });

  it('requests.approve refuses a requester without an encryption key into a sealed SPACE with ENCRYPTION_KEY_MISSING', async () => {
    // The join route refuses such a request before it waits; the approval guard is checked on
    // one written through the store.
    const sealedOwner = await keyed();
    const s = await createSealedSpace(relay, sealedOwner);
    const bare = await mintToken(relay.url);
    const space = (await relay.store.spaces.byName(s.name))!;
    const request = await relay.store.requests.create({ space, id: randomUUID(), requester: bare.peerId, message: '', now: relay.clock.now(), notify: () => false });
    const r = await expectRefusal(
      () => call(relay, 'POST', `/v1/requests/${request.id}/approve`, { token: sealedOwner.token, body: {} }),
      'ENCRYPTION_KEY_MISSING',
    );
    expect(r.body.error.detail).toContain(bare.peerId);
    expect(await relay.store.members.roleOf(space, bare.peerId)).toBeNull();
  });
});

describe('join by name with a code, join.link and hand-over acceptance', () => {
  let owner: MintedToken;
  beforeAll(async () => {
    owner = await mintToken(relay.url);
  });

  async function team(): Promise<string> {
    const name = freshName('jn');
    await createSpace(relay, owner.token, { name, join_policy: 'request' });
    return name;
  }

  function joinByName(name: string, who: MintedToken, code: string): Promise<Answer> {
    return call(relay, 'POST', `/v1/spaces/${name}/join`, { token: who.token, body: { code } });
  }

  it('join refuses a revoked, an expired and a spent invite code of the SPACE with INVITE_REVOKED, INVITE_EXPIRED, INVITE_EXHAUSTED', async () => {
    const name = await team();
    const revoked = await makeLink(relay, owner, name, { role: 'reader' });
    const expired = await makeLink(relay, owner, name, { role: 'reader', expires_in_seconds: 60 });
    const spent = await makeLink(relay, owner, name, { role: 'reader', max_uses: 1 });
    expect((await call(relay, 'DELETE', `/v1/invites/${revoked.invite_id}`, { token: owner.token })).status).toBe(200);
    expect((await joinByName(name, await mintToken(relay.url), spent.code)).status).toBe(200);
    relay.clock.advance(61_000);
    const k = await mintToken(relay.url);
    for (const [code, refusal] of [
      [revoked.code, 'INVITE_REVOKED'],
      [expired.code, 'INVITE_EXPIRED'],
      [spent.code, 'INVITE_EXHAUSTED'],
    ] as const) {
      await expectRefusal(() => joinByName(name, k, code), refusal);
    }
    expect(await relay.store.members.roleOf((await relay.store.spaces.byName(name))!, k.peerId)).toBeNull();
  });

  it('join refuses a SPACE at its member limit (MEMBER_LIMIT) and a KEY in 10,000 SPACES (SPACE_LIMIT), by code and by open policy', async () => {
    const name = await team();
    const link = await makeLink(relay, owner, name, { role: 'reader', max_uses: null });
    const k = await mintToken(relay.url);
    await fillMembers(name);
    await expectRefusal(() => joinByName(name, k, link.code), 'MEMBER_LIMIT');

    const open = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'open', categories: ['general'] });
    const crowded = await mintToken(relay.url);
    const unseed = await seedOwnedSpaces(crowded.peerId);
    await expectRefusal(() => call(relay, 'POST', `/v1/spaces/${open.name}/join`, { token: crowded.token }), 'SPACE_LIMIT');
    await unseed();
    await fillMembers(open.name);
    await expectRefusal(() => call(relay, 'POST', `/v1/spaces/${open.name}/join`, { token: k.token }), 'MEMBER_LIMIT');
  });

  it('join and join.link refuse the giver taking its own hand-over link, and a KEY above the offered role, with CONTROL_DENIED', async () => {
    const name = await team();
    const giver = await mintToken(relay.url);
    const admin = await mintToken(relay.url);
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, admin.peerId, 'admin');
    const offer = await call(relay, 'POST', `/v1/spaces/${name}/hand-over`, { token: giver.token, body: {} });
    expect(offer.status).toBe(201);
    await expectRefusal(() => joinByName(name, giver, offer.body.code), 'CONTROL_DENIED');
    await expectRefusal(() => call(relay, 'POST', '/v1/join', { token: giver.token, body: { link: offer.body.link } }), 'CONTROL_DENIED');
    await expectRefusal(() => call(relay, 'POST', '/v1/join', { token: admin.token, body: { link: offer.body.link } }), 'CONTROL_DENIED');
    // The link still works for a KEY that may take it.
    const taker = await mintToken(relay.url);
    expect((await call(relay, 'POST', '/v1/join', { token: taker.token, body: { link: offer.body.link } })).body.state).toBe('handed_over');
  });

  it('hand_over.accept refuses a successor already in 10,000 SPACES with SPACE_LIMIT, the offer still waiting', async () => {
    const name = await team();
    const shared = await team();
    const [giver, taker] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, shared, giver.peerId, 'reader');
    await grant(relay, owner, shared, taker.peerId, 'reader');
    const offer = await call(relay, 'POST', `/v1/spaces/${name}/hand-over`, { token: giver.token, body: { to: taker.peerId } });
    expect(offer.status).toBe(201);
    const unseed = await seedOwnedSpaces(taker.peerId);
    await expectRefusal(() => call(relay, 'POST', `/v1/hand-overs/${offer.body.offer_id}/accept`, { token: taker.token }), 'SPACE_LIMIT');
    expect(await relay.store.members.roleOf((await relay.store.spaces.byName(name))!, giver.peerId)).toBe('writer');

    // The SPACE itself offered to such a KEY: the same refusal.
    const own = await mintToken(relay.url);
    const mine = freshName('own');
    await createSpace(relay, own.token, { name: mine });
    await grant(relay, owner, shared, own.peerId, 'reader');
    const whole = await call(relay, 'POST', `/v1/spaces/${mine}/hand-over`, { token: own.token, body: { to: taker.peerId } });
    expect(whole.status).toBe(201);
    await expectRefusal(() => call(relay, 'POST', `/v1/hand-overs/${whole.body.offer_id}/accept`, { token: taker.token }), 'SPACE_LIMIT');
    await unseed();
    expect((await relay.store.spaces.byName(mine))!.owner).toBe(own.peerId);
  });
});

// ---- Sealed SPACES -------------------------------------------------------------------------------

describe('sealed SPACES', () => {
  let owner: SealedKey;
  let member: SealedKey;
  let plain: string;
  let closed: SealedSpace;

  beforeAll(async () => {
    owner = await keyed();
    member = await keyed();
    plain = (await createSpace(relay, owner.token, { name: freshName('plain') })).name;
    // A sealed SPACE with a vouched member and a staged change, then closed.
    closed = await createSealedSpace(relay, owner);
    const admit = await call(relay, 'PUT', `/v1/spaces/${closed.name}/members/${member.peerId}`, { token: owner.token, body: { role: 'writer' } });
    expect(admit.status).toBe(201);
    expect((await call(relay, 'PUT', `/v1/spaces/${closed.name}/sealed/stamp`, { token: member.token, body: stampBody(owner, member.peerId) })).status).toBe(200);
    const staged = await call(relay, 'POST', `/v1/spaces/${closed.name}/sealed/generations`, { token: owner.token, body: nextGeneration(closed) });
    expect(staged.status).toBe(201);
    await close(closed.name);
  });

  type Case = [operation: string, method: string, rest: string, body?: () => unknown];
  /** Every sealed operation, with a body good enough to pass the reading of the body. */
  function operations(s: Pick<SealedSpace, 'name'> & Partial<SealedSpace>): Case[] {
    const full = s as SealedSpace;
    return [
      ['sealed.status', 'GET', ''],
      ['sealed.chain', 'GET', '/chain'],
      ['sealed.unlocked', 'GET', '/unlocked'],
      ['sealed.requests', 'GET', '/requests'],
      ['sealed.keepers', 'PUT', '/keepers', () => (full.spaceId ? keeperListBody(full, owner, { revision: 1 }) : { list: 'AA', alg: 'ed25519', signature: '00'.repeat(64) })],
      ['sealed.stamp', 'PUT', '/stamp', () => stampBody(owner, member.peerId)],
      ['sealed.locks', 'POST', '/locks', () => (full.secrets ? { generation: 1, commitment: commitmentOfGeneration(full, 1), locks: { [member.peerId]: lockFor(full, 1, owner, member) } } : { generation: 1, commitment: '00'.repeat(32), locks: { [member.peerId]: '00'.repeat(80) } })],
      ['sealed.stage', 'POST', '/generations', () => ({ generation: 2, commitment: '00'.repeat(32), back: '00'.repeat(48) })],
      ['sealed.activate', 'POST', '/generations/2/activate'],
      ['sealed.abandon', 'DELETE', '/generations/2'],
    ];
  }

  function run(name: string, [, method, rest, body]: Case, who: MintedToken): Promise<Answer> {
    const b = body?.();
    return call(relay, method, `/v1/spaces/${name}/sealed${rest}`, b === undefined ? { token: who.token } : { token: who.token, body: b });
  }

  it('every sealed operation answers SPACE_NOT_FOUND for a name nobody holds', async () => {
    const ghost = freshName('ghost');
    for (const c of operations({ name: ghost })) {
      const r = await expectRefusal(() => run(ghost, c, owner), 'SPACE_NOT_FOUND');
      expect(r.status, c[0]).toBe(404);
    }
  });

  it('every sealed operation answers SPACE_NOT_SEALED for a SPACE that is not sealed', async () => {
    for (const c of operations({ name: plain })) {
      const r = await expectRefusal(() => run(plain, c, owner), 'SPACE_NOT_SEALED');
      expect(r.status, c[0]).toBe(400);
    }
  });

  it('every sealed write answers SPACE_CLOSED in a closed sealed SPACE, and its reads still work', async () => {
    const ops = operations(closed);
    for (const c of ops.filter(([, method]) => method !== 'GET')) {
      // The stamp is put by the KEY it names; every other write by the owner, a keeper.
      const who = c[0] === 'sealed.stamp' ? member : owner;
      const body = c[0] === 'sealed.stage' ? () => nextStageOf(closed) : c[3];
      await expectRefusal(() => run(closed.name, [c[0], c[1], c[2], body], who), 'SPACE_CLOSED');
    }
    for (const c of ops.filter(([op, method]) => method === 'GET' && op !== 'sealed.requests')) {
      expect((await run(closed.name, c, member)).status, c[0]).toBe(200);
    }
  });

  /** A stage body for the generation after the staged one (a fresh secret, never stored). */
  function nextStageOf(s: SealedSpace): Record<string, unknown> {
    const copy: SealedSpace = { ...s, secrets: [...s.secrets] };
    return nextGeneration(copy);
  }

  it("sealed.stamp refuses a passkey issuer's webauthn signature that is no assertion with SEALED_SIGNATURE_INVALID", async () => {
    const s = await createSealedSpace(relay, owner);
    expect((await call(relay, 'PUT', `/v1/spaces/${s.name}/members/${member.peerId}`, { token: owner.token, body: { role: 'writer' } })).status).toBe(201);
    const issuer = await seedPasskeyKey();
    const stamp = buildStamp({ issuer: issuer.peerId, peer_id: member.peerId });
    const r = await expectRefusal(
      () => call(relay, 'PUT', `/v1/spaces/${s.name}/sealed/stamp`, { token: member.token, body: { stamp: toBase64url(stamp), ...WEBAUTHN } }),
      'SEALED_SIGNATURE_INVALID',
    );
    expect(r.body.error.detail).toMatch(/stamp signature: client_data_json/);
  });

  it("sealed.keepers refuses a passkey owner's webauthn signature that is no assertion with SEALED_SIGNATURE_INVALID", async () => {
    // A passkey KEY owns a sealed SPACE: its encryption key is written through the store (its
    // own random webauthn statement would be refused), then it creates the SPACE over HTTP.
    const pk = await seedPasskeyKey();
    const enc = deriveEncryptionKey(new Uint8Array(randomBytes(32)), pk.peerId);
    await relay.store.encryptionKeys.publish({
      peerId: pk.peerId,
      publicKey: toHex(enc.publicKey),
      fingerprint: encryptionKeyFingerprint(enc.publicKey),
      statement: buildEncryptionKeyStatement(pk.peerId, enc.publicKey),
      envelope: WEBAUTHN,
      now: relay.clock.now(),
    });
    const spaceId = randomUUID();
    const name = freshName('pksealed');
    const sealed = sealedSpaceCreation({
      spaceId,
      secret: new Uint8Array(randomBytes(32)),
      owner: { peerId: pk.peerId, publicKey: enc.publicKey, privateKey: enc.privateKey },
      ephemeral: new Uint8Array(randomBytes(32)),
    });
    const created = await call(relay, 'POST', '/v1/spaces', { token: pk.token, body: { name, visibility: 'sealed', sealed } });
    expect(created.status, created.text).toBe(201);
    const list = buildKeeperList({ space_id: spaceId, keepers: [], stampers: [], admission: 'stamped', change_every: 3600, revision: 1 }, pk.peerId);
    const r = await expectRefusal(
      () => call(relay, 'PUT', `/v1/spaces/${name}/sealed/keepers`, { token: pk.token, body: { list: toBase64url(list), ...WEBAUTHN } }),
      'SEALED_SIGNATURE_INVALID',
    );
    expect(r.body.error.detail).toMatch(/keeper list signature: client_data_json/);
  });
});

// ---- Posts -------------------------------------------------------------------------------------

describe('posts.unhide', () => {
  it('refuses an unknown post and one the caller cannot read (POST_NOT_FOUND), a writer (CONTROL_DENIED), a closed SPACE (SPACE_CLOSED)', async () => {
    const [owner, writer, stranger] = await Promise.all([mintToken(relay.url), mintToken(relay.url), mintToken(relay.url)]);
    const name = freshName('hide');
    await createSpace(relay, owner.token, { name });
    await grant(relay, owner, name, writer.peerId, 'writer');
    const p = await call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: writer.token, body: { kind: 'obs', body: 'to hide' } });
    expect(p.status).toBe(201);
    const id: string = p.body.post_id;
    expect((await call(relay, 'PUT', `/v1/posts/${id}/hidden`, { token: owner.token })).status).toBe(200);
    const unhide = (who: MintedToken, post: string) => call(relay, 'DELETE', `/v1/posts/${post}/hidden`, { token: who.token });
    await expectRefusal(() => unhide(owner, randomUUID()), 'POST_NOT_FOUND');
    await expectRefusal(() => unhide(stranger, id), 'POST_NOT_FOUND');
    await expectRefusal(() => unhide(writer, id), 'CONTROL_DENIED');
    await close(name);
    await expectRefusal(() => unhide(owner, id), 'SPACE_CLOSED');
    expect((await relay.store.posts.byPostId(id))!.hiddenAt).not.toBeNull();
  });
});

describe('posts.append on a damaged chain', () => {
  it('refuses with CHAIN_BROKEN when the stored head no longer matches its own parts, writes nothing, and reads go on', async () => {
    const owner = await mintToken(relay.url);
    const name = freshName('chain');
    await createSpace(relay, owner.token, { name });
    const first = await call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: owner.token, body: { kind: 'obs', body: 'first' } });
    expect(first.status).toBe(201);
    // Damage the head's stored link as a disk fault or a hand edit would.
    await relay.store.db
      .prepare('UPDATE posts SET chain_hash = ? WHERE post_id = ?')
      .run(Buffer.alloc(32, 7), first.body.post_id);
    await expectRefusal(
      () => call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: owner.token, body: { kind: 'obs', body: 'second' } }),
      'CHAIN_BROKEN',
      /seq 1/,
    );
    const read = await call(relay, 'GET', `/v1/spaces/${name}/posts`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.head_seq).toBe('1');
  });
});
