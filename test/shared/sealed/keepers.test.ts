/**
 * Keeper lists, stamps and the trust rules on them (protocol/sealed.md §4, §5, §8): strict
 * readers, signatures, who may lock, who is vouched for, and how a hand-over changes both.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../../shared/canonical.js';
import { SvcError } from '../../../shared/errors.js';
import { toBase64url, toHex, utf8 } from '../../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed } from '../../../shared/identity.js';
import type { SignerKey } from '../../../shared/sealed/envelope.js';
import {
  buildKeeperList,
  checkNextRevision,
  isKeeper,
  isVouched,
  listForged,
  listInForce,
  mayLock,
  readKeeperList,
  readKeeperListPut,
  signKeeperList,
  verifyKeeperList,
  type KeeperList,
  type KeeperListFields,
  type SpaceAuthority,
} from '../../../shared/sealed/keepers.js';
import { buildStamp, readStamp, readStampPut, signStamp, stampCurrent, verifyStamp, type Stamp } from '../../../shared/sealed/stamps.js';

function key(name: string) {
  const signer = signerFromSeed(new Uint8Array(createHash('sha256').update(`keepers test ${name}`).digest()));
  const peerId = peerIdHexOf(signer.publicKey);
  const k: SignerKey = { peerId, keyType: 'ed25519', publicKey: signer.publicKey };
  return { signer, peerId, key: k };
}

const owner = key('owner');
const keeper = key('keeper');
const stamper = key('stamper');
const member = key('member');
const stranger = key('stranger');
const successor = key('successor');
const spaceId = '0199aaaa-bbbb-7ccc-8ddd-00000000000a';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SvcError) return `${e.code}${e.detail === undefined ? '' : ` ${e.detail}`}`;
    throw e;
  }
  return 'accepted';
}

const fields = (extra: Partial<KeeperListFields> = {}): KeeperListFields => ({
  space_id: spaceId,
  revision: 1,
  keepers: [keeper.peerId],
  stampers: [stamper.peerId],
  admission: 'stamped',
  change_every: 3600,
  ...extra,
});

const list = (extra: Partial<KeeperListFields> = {}): KeeperList => readKeeperList(buildKeeperList(fields(extra), owner.peerId));

describe('keeper lists', () => {
  it('a list built with keepers in any order is sorted, signed by the owner, and verifies', () => {
    const b = buildKeeperList(fields({ keepers: [successor.peerId, keeper.peerId] }), owner.peerId);
    const l = readKeeperList(b);
    expect(l.keepers).toEqual([successor.peerId, keeper.peerId].sort());
    expect(verifyKeeperList(b, signKeeperList(owner.signer, b), owner.key, spaceId)).toEqual(l);
  });

  it('a list with a bad signature, or signed by another KEY, is SEALED_SIGNATURE_INVALID', () => {
    const b = buildKeeperList(fields(), owner.peerId);
    const good = signKeeperList(owner.signer, b);
    const flipped = { alg: 'ed25519' as const, signature: (good.signature.startsWith('0') ? '1' : '0') + good.signature.slice(1) };
    expect(codeOf(() => verifyKeeperList(b, flipped, owner.key, spaceId))).toMatch(/^SEALED_SIGNATURE_INVALID/);
    expect(codeOf(() => verifyKeeperList(b, signKeeperList(stranger.signer, b), owner.key, spaceId))).toMatch(/^SEALED_SIGNATURE_INVALID/);
    const changed = buildKeeperList(fields({ change_every: 7200 }), owner.peerId);
    expect(codeOf(() => verifyKeeperList(changed, good, owner.key, spaceId))).toMatch(/^SEALED_SIGNATURE_INVALID/);
    expect(codeOf(() => verifyKeeperList(b, good, { ...owner.key, publicKey: stranger.signer.publicKey }, spaceId))).toMatch(
      /^SEALED_SIGNATURE_INVALID signer/,
    );
  });

  it('a list for another SPACE, or naming its signer as a keeper, is refused', () => {
    const b = buildKeeperList(fields(), owner.peerId);
    expect(codeOf(() => verifyKeeperList(b, signKeeperList(owner.signer, b), owner.key, '0199aaaa-bbbb-7ccc-8ddd-00000000000b'))).toMatch(
      /^INVALID_REQUEST list.space_id/,
    );
    const self = buildKeeperList(fields({ keepers: [owner.peerId] }), keeper.peerId);
    expect(codeOf(() => verifyKeeperList(self, signKeeperList(owner.signer, self), owner.key, spaceId))).toMatch(/never listed/);
    expect(codeOf(() => buildKeeperList(fields({ keepers: [owner.peerId] }), owner.peerId))).toMatch(/never listed/);
  });

  const raw = (o: Record<string, unknown>) => canonicalBytes({ ...fields(), v: 1, ...o });
  it.each([
    ['not canonical', utf8(JSON.stringify({ ...fields(), v: 1 })), 'not canonical'],
    ['an unknown member', raw({ owner: owner.peerId }), 'list.owner'],
    ['no stampers member', (({ stampers: _s, ...rest }) => canonicalBytes({ ...rest, v: 1 }))(fields()), 'list.stampers'],
    ['admission by invitation', raw({ admission: 'invite' }), 'admission'],
    ['change_every 59', raw({ change_every: 59 }), 'change_every'],
    ['change_every 604,801', raw({ change_every: 604_801 }), 'change_every'],
    ['revision 0', raw({ revision: 0 }), 'revision'],
    ['keepers out of order', raw({ keepers: [keeper.peerId, successor.peerId].sort().reverse() }), 'keepers[1]'],
    ['a repeated stamper', raw({ stampers: [stamper.peerId, stamper.peerId] }), 'stampers[1]'],
    ['33 keepers', raw({ keepers: Array.from({ length: 33 }, (_, i) => toHex(new Uint8Array(32).fill(i))) }), 'keepers'],
    ['v 2', raw({ v: 2 }), 'list.v'],
    ['over 8,192 bytes', utf8(`{"a":"${'x'.repeat(8200)}"}`), '8192'],
  ])('refuses a list with %s (INVALID_REQUEST naming it)', (_name, b, words) => {
    const got = codeOf(() => readKeeperList(b));
    expect(got).toMatch(/^INVALID_REQUEST/);
    expect(got).toContain(words);
  });

  it('a new list takes the next revision, else KEEPER_LIST_STALE with the expected one', () => {
    expect(codeOf(() => checkNextRevision(list(), null))).toBe('accepted');
    expect(codeOf(() => checkNextRevision(list({ revision: 3 }), 2))).toBe('accepted');
    expect(codeOf(() => checkNextRevision(list({ revision: 2 }), 2))).toBe('KEEPER_LIST_STALE 3');
    expect(codeOf(() => checkNextRevision(list({ revision: 2 }), null))).toBe('KEEPER_LIST_STALE 1');
  });

  it('the PUT body carries the list as base64url beside the envelope and nothing else', () => {
    const b = buildKeeperList(fields(), owner.peerId);
    const body = { list: toBase64url(b), ...signKeeperList(owner.signer, b) };
    expect(readKeeperListPut(body).list).toEqual(b);
    expect(codeOf(() => readKeeperListPut({ ...body, revision: 1 }))).toMatch(/^INVALID_REQUEST revision/);
    expect(codeOf(() => readKeeperListPut({ ...body, alg: 'rsa' }))).toMatch(/^INVALID_REQUEST alg/);
  });
});

describe('stamps', () => {
  const stampBytes = buildStamp({ issuer: stamper.peerId, peer_id: member.peerId, not_after: 1_000 });

  it('a stamp signed by its issuer verifies; the signature of another KEY, or a changed stamp, does not', () => {
    expect(verifyStamp(stampBytes, signStamp(stamper.signer, stampBytes), stamper.key)).toEqual({
      issuer: stamper.peerId,
      not_after: 1_000,
      peer_id: member.peerId,
      v: 1,
    });
    expect(codeOf(() => verifyStamp(stampBytes, signStamp(owner.signer, stampBytes), stamper.key))).toMatch(/^SEALED_SIGNATURE_INVALID/);
    expect(codeOf(() => verifyStamp(stampBytes, signStamp(owner.signer, stampBytes), owner.key))).toBe(
      'SEALED_SIGNATURE_INVALID stamp.issuer: not the signing KEY',
    );
    const later = buildStamp({ issuer: stamper.peerId, peer_id: member.peerId, not_after: 2_000 });
    expect(codeOf(() => verifyStamp(later, signStamp(stamper.signer, stampBytes), stamper.key))).toMatch(/^SEALED_SIGNATURE_INVALID/);
  });

  it('counts until and including not_after, and forever without one', () => {
    const s = readStamp(stampBytes);
    expect(stampCurrent(s, 1_000)).toBe(true);
    expect(stampCurrent(s, 1_001)).toBe(false);
    expect(stampCurrent(readStamp(buildStamp({ issuer: owner.peerId, peer_id: member.peerId })), 253_402_300_799)).toBe(true);
  });

  it.each([
    ['a fractional not_after', { issuer: stamper.peerId, not_after: 1.5, peer_id: member.peerId, v: 1 }],
    ['not_after past year 9999', { issuer: stamper.peerId, not_after: 253_402_300_800, peer_id: member.peerId, v: 1 }],
    ['a space_id member', { issuer: stamper.peerId, peer_id: member.peerId, space_id: spaceId, v: 1 }],
    ['no v', { issuer: stamper.peerId, peer_id: member.peerId }],
    ['an uppercase issuer', { issuer: stamper.peerId.toUpperCase(), peer_id: member.peerId, v: 1 }],
  ])('refuses a stamp with %s', (_name, o) => {
    expect(codeOf(() => readStamp(canonicalBytes(o)))).toMatch(/^INVALID_REQUEST/);
  });

  it('the PUT body carries the stamp as base64url beside the envelope', () => {
    const body = { stamp: toBase64url(stampBytes), ...signStamp(stamper.signer, stampBytes) };
    expect(readStampPut(body).stamp).toEqual(stampBytes);
    expect(codeOf(() => readStampPut({ ...body, stamp: toBase64url(new Uint8Array(1025)) }))).toMatch(/1024/);
  });
});

describe('who may lock (§4) and whose list is in force (§5)', () => {
  const signed = (l: KeeperList, by: string) => ({ list: l, signedBy: by });
  const authority: SpaceAuthority = { owner: owner.peerId, latest: signed(list(), owner.peerId) };

  it('the owner and the keepers of the owner-signed list may lock; a stamper or member may not', () => {
    expect(isKeeper(owner.peerId, authority)).toBe(true);
    expect(isKeeper(keeper.peerId, authority)).toBe(true);
    expect(isKeeper(stamper.peerId, authority)).toBe(false);
    const lock = (sender: string) => mayLock({ sender, recipient: member.peerId, generation: 4, authority });
    expect([owner, keeper, stamper, member, stranger].map((k) => lock(k.peerId))).toEqual([true, true, false, false, false]);
  });

  it('a list signed by anyone but the owner in place is not in force: its keepers may not lock', () => {
    const forged: SpaceAuthority = { owner: owner.peerId, latest: signed(list({ keepers: [stranger.peerId] }), stranger.peerId) };
    expect(listInForce(forged)).toBeNull();
    expect(listForged(forged)).toBe(true);
    expect(mayLock({ sender: stranger.peerId, recipient: member.peerId, generation: 1, authority: forged })).toBe(false);
    expect(mayLock({ sender: owner.peerId, recipient: member.peerId, generation: 1, authority: forged })).toBe(true);
  });

  it("after a hand-over, the previous owner's list stays in force while it names the new owner, until the new owner signs one", () => {
    const before = list({ keepers: [keeper.peerId, successor.peerId].sort() });
    const handedOver: SpaceAuthority = { owner: successor.peerId, latest: signed(before, owner.peerId), previousOwner: owner.peerId };
    expect(listInForce(handedOver)?.list).toEqual(before);
    expect(isKeeper(keeper.peerId, handedOver)).toBe(true);
    // The previous owner is not a keeper of its own list, so it may no longer lock...
    expect(isKeeper(owner.peerId, handedOver)).toBe(false);
    // ...except the successor's own lock, for the generation in use at the hand-over only.
    const handOver = { previousOwner: owner.peerId, generation: 5 };
    const lock = (recipient: string, generation: number) =>
      mayLock({ sender: owner.peerId, recipient, generation, authority: handedOver, handOver });
    expect(lock(successor.peerId, 5)).toBe(true);
    expect(lock(successor.peerId, 6)).toBe(false);
    expect(lock(member.peerId, 5)).toBe(false);

    const notNamed: SpaceAuthority = { ...handedOver, latest: signed(list(), owner.peerId) };
    expect(listInForce(notNamed)).toBeNull();

    const newList: SpaceAuthority = { ...handedOver, latest: signed(list({ revision: 2, keepers: [] }), successor.peerId) };
    expect(isKeeper(keeper.peerId, newList)).toBe(false);
    const oldAgain: SpaceAuthority = { owner: successor.peerId, latest: signed(before, owner.peerId) };
    expect(listForged(oldAgain)).toBe(true);
  });
});

describe('the vouching rule (§8)', () => {
  const now = 1_800_000_000;
  const stamp = (issuer: string, peer: string, notAfter?: number): Stamp => readStamp(buildStamp({ issuer, peer_id: peer, not_after: notAfter }));
  const withList = (extra: Partial<KeeperListFields> = {}): SpaceAuthority => ({
    owner: owner.peerId,
    latest: { list: list(extra), signedBy: owner.peerId },
  });

  it('the owner and every listed keeper are vouched for without a stamp', () => {
    expect(isVouched(owner.peerId, [], withList(), now)).toBe(true);
    expect(isVouched(keeper.peerId, [], withList(), now)).toBe(true);
    expect(isVouched(member.peerId, [], withList(), now)).toBe(false);
    expect(isVouched(stamper.peerId, [], withList(), now)).toBe(false);
  });

  it('with admission open, every KEY is vouched for', () => {
    expect(isVouched(stranger.peerId, [], withList({ admission: 'open' }), now)).toBe(true);
  });

  it('a current stamp from the owner, a keeper or a stamper vouches; from anyone else it does not', () => {
    for (const issuer of [owner, keeper, stamper]) expect(isVouched(member.peerId, [stamp(issuer.peerId, member.peerId)], withList(), now)).toBe(true);
    expect(isVouched(member.peerId, [stamp(stranger.peerId, member.peerId)], withList(), now)).toBe(false);
  });

  it('an expired stamp does not vouch, nor a stamp naming another KEY', () => {
    expect(isVouched(member.peerId, [stamp(stamper.peerId, member.peerId, now - 1)], withList(), now)).toBe(false);
    expect(isVouched(member.peerId, [stamp(stamper.peerId, member.peerId, now)], withList(), now)).toBe(true);
    expect(isVouched(member.peerId, [stamp(stamper.peerId, stranger.peerId)], withList(), now)).toBe(false);
  });

  it("a stamper dropped from the list stops vouching for the KEYS it stamped", () => {
    const s = [stamp(stamper.peerId, member.peerId)];
    expect(isVouched(member.peerId, s, withList(), now)).toBe(true);
    expect(isVouched(member.peerId, s, withList({ revision: 2, stampers: [] }), now)).toBe(false);
  });

  it("with no list only the owner vouches, through its stamps", () => {
    const none: SpaceAuthority = { owner: owner.peerId, latest: null };
    expect(isVouched(member.peerId, [stamp(owner.peerId, member.peerId)], none, now)).toBe(true);
    expect(isVouched(member.peerId, [stamp(keeper.peerId, member.peerId)], none, now)).toBe(false);
    expect(isVouched(keeper.peerId, [], none, now)).toBe(false);
  });

  it("after a hand-over the previous owner's list keeps vouching, its signer's stamps counting, if it named the new owner", () => {
    const before = list({ keepers: [keeper.peerId, successor.peerId].sort() });
    const handedOver: SpaceAuthority = { owner: successor.peerId, latest: { list: before, signedBy: owner.peerId }, previousOwner: owner.peerId };
    expect(isVouched(member.peerId, [stamp(owner.peerId, member.peerId)], handedOver, now)).toBe(true);
    expect(isVouched(member.peerId, [stamp(stamper.peerId, member.peerId)], handedOver, now)).toBe(true);
    const notNamed: SpaceAuthority = { ...handedOver, latest: { list: list(), signedBy: owner.peerId } };
    expect(isVouched(member.peerId, [stamp(owner.peerId, member.peerId)], notNamed, now)).toBe(false);
    expect(isVouched(member.peerId, [stamp(successor.peerId, member.peerId)], notNamed, now)).toBe(true);
  });

  it('a forged list vouches for nobody it names', () => {
    const forged: SpaceAuthority = { owner: owner.peerId, latest: { list: list({ admission: 'open' }), signedBy: stranger.peerId } };
    expect(isVouched(member.peerId, [], forged, now)).toBe(false);
    expect(isVouched(keeper.peerId, [], forged, now)).toBe(false);
  });
});
