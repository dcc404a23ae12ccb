/**
 * Commitments, back links and locks (protocol/sealed.md §3, §4, §6): round trips for random
 * secrets, and every way a lock or back link the relay hands over can be wrong.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { concatBytes, toHex } from '../../../shared/encoding.js';
import { SvcError } from '../../../shared/errors.js';
import { peerIdHexOf, signerFromSeed } from '../../../shared/identity.js';
import { deriveEncryptionKey } from '../../../shared/sealed/encryption-key.js';
import { SealedError, type SealedErrorReason } from '../../../shared/sealed/errors.js';
import {
  commitmentHolds,
  commitmentOf,
  openBackLink,
  pairContainer,
  readBackLink,
  readCommitment,
  readGeneration,
  sealBackLink,
  secretForGeneration,
  spaceContainer,
  stageGeneration,
  type ChainLink,
} from '../../../shared/sealed/generations.js';
import { sealAuth } from '../../../shared/sealed/hpke.js';
import { lockAad, lockInfo, openLock, readLock, readLockMap, sealedSpaceCreation, sealLock } from '../../../shared/sealed/locks.js';

const bytes = (text: string, n = 32): Uint8Array => new Uint8Array(createHash('sha256').update(text).digest()).subarray(0, n);

function party(name: string) {
  const seed = bytes(`locks test ${name}`);
  const peerId = peerIdHexOf(signerFromSeed(seed).publicKey);
  return { peerId, ...deriveEncryptionKey(seed, peerId) };
}

const owner = party('owner');
const keeper = party('keeper');
const member = party('member');
const C = spaceContainer('0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee');
const secret1 = bytes('secret 1');

function reasonOf(fn: () => unknown): SealedErrorReason | string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SealedError) return e.reason;
    if (e instanceof SvcError) return e.code;
    throw e;
  }
  return 'opened';
}

function lockFor(from: typeof owner, to: typeof member, secret = secret1, generation = 1, container = C): Uint8Array {
  return sealLock({
    container,
    generation,
    secret,
    recipient: { peerId: to.peerId, publicKey: to.publicKey },
    sender: { peerId: from.peerId, privateKey: from.privateKey },
    ephemeral: bytes(`ephemeral ${from.peerId} ${to.peerId} ${generation}`),
  });
}

function open(lock: Uint8Array, claimed: { from?: typeof owner; fromPeerId?: string; to?: typeof member; generation?: number; commitment?: Uint8Array; container?: Uint8Array } = {}) {
  const from = claimed.from ?? owner;
  const to = claimed.to ?? member;
  const container = claimed.container ?? C;
  const generation = claimed.generation ?? 1;
  return openLock({
    container,
    generation,
    lock,
    commitment: claimed.commitment ?? commitmentOf(container, generation, secret1),
    recipient: { peerId: to.peerId, privateKey: to.privateKey },
    sender: { peerId: claimed.fromPeerId ?? from.peerId, publicKey: from.publicKey },
  });
}

describe('containers and commitments', () => {
  it('a pair container is 65 bytes, a SPACE container 17, and a pair of one KEY with itself is refused', () => {
    expect(pairContainer(owner.peerId, member.peerId)).toHaveLength(65);
    expect(C).toHaveLength(17);
    expect(() => pairContainer(owner.peerId, owner.peerId)).toThrow(SvcError);
  });

  it('a commitment binds the container, the generation and the secret', () => {
    const c = commitmentOf(C, 1, secret1);
    expect(commitmentHolds(C, 1, secret1, c)).toBe(true);
    expect(commitmentHolds(C, 1, secret1, toHex(c))).toBe(true);
    expect(commitmentHolds(C, 2, secret1, c)).toBe(false);
    expect(commitmentHolds(pairContainer(owner.peerId, member.peerId), 1, secret1, c)).toBe(false);
    expect(commitmentHolds(C, 1, bytes('other'), c)).toBe(false);
    expect(commitmentHolds(C, 1, secret1, toHex(c).toUpperCase())).toBe(false);
  });

  it('a generation on the wire is a decimal string or integer of at least 1', () => {
    expect(readGeneration(3)).toBe(3);
    expect(readGeneration('12')).toBe(12);
    for (const bad of [0, -1, 1.5, '0', '01', '', 'x', null, '99999999999999999']) {
      expect(() => readGeneration(bad)).toThrow(SvcError);
    }
  });
});

describe('locks', () => {
  it('a lock is 80 bytes and opens to the secret for its recipient, from its sender', () => {
    const lock = lockFor(owner, member);
    expect(lock).toHaveLength(80);
    expect(toHex(open(lock))).toBe(toHex(secret1));
  });

  it('seal then open round-trips for random secrets, generations and ephemeral keys', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        (secret, ephemeral, generation) => {
          const lock = sealLock({
            container: C,
            generation,
            secret,
            recipient: { peerId: member.peerId, publicKey: member.publicKey },
            sender: { peerId: keeper.peerId, privateKey: keeper.privateKey },
            ephemeral,
          });
          const got = openLock({
            container: C,
            generation,
            lock,
            commitment: commitmentOf(C, generation, secret),
            recipient: { peerId: member.peerId, privateKey: member.privateKey },
            sender: { peerId: keeper.peerId, publicKey: keeper.publicKey },
          });
          expect(toHex(got)).toBe(toHex(secret));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('every one of the 80 bytes, flipped, makes the lock fail to open', () => {
    const lock = lockFor(owner, member);
    for (let i = 0; i < lock.length; i++) {
      const bad = lock.map((b, j) => (j === i ? b ^ 0x01 : b));
      expect(reasonOf(() => open(bad)), `byte ${i}`).toMatch(/^(aead-open|x25519-zero)$/);
    }
  });

  it('a lock from the wrong sender fails OpenAuth, whether the key or only the named peer id is wrong', () => {
    const fromKeeper = lockFor(keeper, member);
    expect(reasonOf(() => open(fromKeeper, { from: owner }))).toBe('aead-open');
    expect(reasonOf(() => open(fromKeeper, { from: keeper, fromPeerId: owner.peerId }))).toBe('aead-open');
    expect(toHex(open(fromKeeper, { from: keeper }))).toBe(toHex(secret1));
  });

  it('a lock opens for nobody but its recipient', () => {
    expect(reasonOf(() => open(lockFor(owner, member), { to: keeper }))).toBe('aead-open');
  });

  it('a lock moved to another generation, another container or another commitment fails to open', () => {
    const lock = lockFor(owner, member);
    expect(reasonOf(() => open(lock, { generation: 2, commitment: commitmentOf(C, 1, secret1) }))).toBe('aead-open');
    const pair = pairContainer(owner.peerId, member.peerId);
    expect(reasonOf(() => open(lock, { container: pair, commitment: commitmentOf(C, 1, secret1) }))).toBe('aead-open');
    expect(reasonOf(() => open(lock, { commitment: commitmentOf(C, 1, bytes('another secret')) }))).toBe('aead-open');
  });

  it('a lock that authenticates but carries a secret not holding the commitment is refused', () => {
    // A sender that seals one secret under another generation's commitment.
    const shown = commitmentOf(C, 1, bytes('the real secret'));
    const { enc, ct } = sealAuth({
      pkR: member.publicKey,
      info: lockInfo(C, 1),
      aad: lockAad(member.peerId, owner.peerId, shown),
      pt: secret1,
      skS: owner.privateKey,
      ikmE: bytes('ephemeral forged'),
    });
    expect(reasonOf(() => open(concatBytes(enc, ct), { commitment: shown }))).toBe('commitment');
  });

  it('a lock of the wrong length is refused without throwing anything else', () => {
    const lock = lockFor(owner, member);
    expect(reasonOf(() => open(lock.subarray(0, 79)))).toBe('aead-open');
    expect(reasonOf(() => open(concatBytes(lock, new Uint8Array(1))))).toBe('aead-open');
  });

  it('locks on the wire are 160 lowercase hex, in maps of 1 to 1,000 keyed by peer id', () => {
    const hex = toHex(lockFor(owner, member));
    expect(toHex(readLock(hex))).toBe(hex);
    for (const bad of [hex.slice(2), hex.toUpperCase(), `${hex}00`, 7]) expect(() => readLock(bad)).toThrow(SvcError);
    expect(readLockMap({ [member.peerId]: hex }).get(member.peerId)).toHaveLength(80);
    expect(() => readLockMap({})).toThrow(SvcError);
    expect(() => readLockMap({ [member.peerId.toUpperCase()]: hex })).toThrow(/not a peer id/);
    expect(() => readLockMap({ [member.peerId]: hex.slice(1) })).toThrow(SvcError);
    const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [toHex(bytes(`p${i}`)), hex]));
    expect(() => readLockMap(many)).toThrow(/1 to 1000/);
  });
});

describe('back links', () => {
  const secrets = [bytes('g1'), bytes('g2'), bytes('g3'), bytes('g4')];
  const chain = new Map<number, ChainLink>(
    secrets.map((s, i) => {
      const g = i + 1;
      return [g, { generation: g, commitment: commitmentOf(C, g, s), back: g > 1 ? sealBackLink(C, g, s, secrets[i - 1]!) : undefined }];
    }),
  );

  it('a back link is 48 bytes and the newest secret opens every earlier generation', () => {
    expect(chain.get(2)!.back).toHaveLength(48);
    for (let target = 1; target <= 4; target++) {
      const got = secretForGeneration(C, { generation: 4, secret: secrets[3]! }, target, (g) => chain.get(g));
      expect(toHex(got)).toBe(toHex(secrets[target - 1]!));
    }
  });

  it('a flipped byte in a back link is refused', () => {
    const back = chain.get(3)!.back!;
    for (let i = 0; i < back.length; i++) {
      const bad = back.map((b, j) => (j === i ? b ^ 0x80 : b));
      expect(reasonOf(() => openBackLink(C, 3, secrets[2]!, bad, chain.get(2)!.commitment))).toBe('back-link');
    }
  });

  it('a back link whose result does not hold the earlier commitment is refused', () => {
    const forged = sealBackLink(C, 3, secrets[2]!, bytes('not g2'));
    expect(reasonOf(() => openBackLink(C, 3, secrets[2]!, forged, chain.get(2)!.commitment))).toBe('commitment');
  });

  it('a back link does not open under another generation or container', () => {
    const back = chain.get(3)!.back!;
    expect(reasonOf(() => openBackLink(C, 2, secrets[2]!, back, chain.get(1)!.commitment))).toBe('back-link');
    const other = spaceContainer('0199aaaa-bbbb-7ccc-8ddd-ffffffffffff');
    expect(reasonOf(() => openBackLink(other, 3, secrets[2]!, back, chain.get(2)!.commitment))).toBe('back-link');
  });

  it('a walk refuses a missing link, a target newer than the secret held, and a starting secret not holding its commitment', () => {
    const gap = (g: number) => (g === 2 ? undefined : chain.get(g));
    expect(reasonOf(() => secretForGeneration(C, { generation: 4, secret: secrets[3]! }, 1, gap))).toBe('chain-gap');
    expect(reasonOf(() => secretForGeneration(C, { generation: 2, secret: secrets[1]! }, 3, (g) => chain.get(g)))).toBe('chain-gap');
    expect(reasonOf(() => secretForGeneration(C, { generation: 4, secret: secrets[2]! }, 1, (g) => chain.get(g)))).toBe('commitment');
  });
});

describe('creating a sealed SPACE and staging a change', () => {
  const spaceId = '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';

  it("the creation body's lock opens for the owner, from the owner, to a secret holding commitment 1", () => {
    const body = sealedSpaceCreation({ spaceId, secret: secret1, owner, ephemeral: bytes('create ephemeral') });
    expect(body.space_id).toBe(spaceId);
    expect(body.lock).toMatch(/^[0-9a-f]{160}$/);
    const got = openLock({
      container: C,
      generation: 1,
      lock: readLock(body.lock),
      commitment: readCommitment(body.commitment),
      recipient: { peerId: owner.peerId, privateKey: owner.privateKey },
      sender: { peerId: owner.peerId, publicKey: owner.publicKey },
    });
    expect(toHex(got)).toBe(toHex(secret1));
  });

  it("a staged generation's back link leads from the new secret to the one in use", () => {
    const next = bytes('g2 staged');
    const staged = stageGeneration({ container: C, generation: 2, secret: next, previousSecret: secret1 });
    expect(staged.back).toMatch(/^[0-9a-f]{96}$/);
    expect(commitmentHolds(C, 2, next, staged.commitment)).toBe(true);
    const back = readBackLink(staged.back);
    expect(toHex(openBackLink(C, 2, next, back, commitmentOf(C, 1, secret1)))).toBe(toHex(secret1));
  });
});
