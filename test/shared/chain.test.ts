import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  commandIdOf,
  controlGenesis,
  controlLink,
  governanceEventBytes,
  objectAdmission,
  objectGenesis,
  postLink,
  readGovernanceEvent,
  verifyControlChain,
  verifyPostChain,
  type StoredControlLink,
  type StoredPostLink,
} from '../../shared/chain.js';
import { objectIdOf } from '../../shared/objects.js';
import { fromHex, toHex, utf8 } from '../../shared/encoding.js';
import { loadVector } from '../helpers/vectors.js';
import { svcCode } from '../helpers/refusals.js';

const ov = loadVector('object-vectors.json');
const v1 = loadVector('protocol-v1-vectors.json');

describe('object-vectors.json: control', () => {
  const bytes = utf8(ov.control.canonical_utf8);

  it('control: command_id is H(L("control") || event canonical)', () => {
    expect(toHex(commandIdOf(bytes))).toBe(ov.control.command_id);
  });

  it('control: genesis_hash is H(L("control-genesis") || uuid16(space_id))', () => {
    expect(toHex(controlGenesis(ov.space_id))).toBe(ov.control.genesis_hash);
  });

  it('control: chain_hash of revision 1 follows the genesis', () => {
    const link = controlLink({
      spaceId: ov.space_id,
      revision: 1,
      previous: controlGenesis(ov.space_id),
      commandId: fromHex(ov.control.command_id),
    });
    expect(toHex(link)).toBe(ov.control.chain_hash);
  });

  it('control: the event bytes are rebuilt exactly from the event fields, and read back', () => {
    const event = readGovernanceEvent(bytes);
    expect(event.revision).toBe(1n);
    expect(event.spaceId).toBe(ov.space_id);
    expect(event.event).toBe('space.created');
    expect(governanceEventBytes(event)).toEqual(bytes);
    expect(governanceEventBytes({ ...event, revision: 1 })).toEqual(bytes);
  });
});

describe('object-vectors.json: chain', () => {
  const controlHash = fromHex(ov.control.chain_hash);

  it('chain: genesis_hash is H(L("object-genesis") || uuid16(space_id))', () => {
    expect(toHex(objectGenesis(ov.space_id))).toBe(ov.chain.genesis_hash);
  });

  it('chain: admission is H(L("object-admission") || u64(1) || control chain_hash)', () => {
    expect(toHex(objectAdmission(BigInt(ov.chain.admitted_revision), controlHash))).toBe(ov.chain.admission);
    expect(toHex(objectAdmission(1, controlHash))).toBe(ov.chain.admission);
  });

  it('chain: chain_hash of seq 1 links the admission, the genesis and the object id', () => {
    const link = postLink({
      spaceId: ov.space_id,
      seq: BigInt(ov.chain.seq),
      admission: fromHex(ov.chain.admission),
      previous: objectGenesis(ov.space_id),
      objectId: objectIdOf(utf8(ov.object.canonical_utf8)),
    });
    expect(toHex(link)).toBe(ov.chain.chain_hash);
  });

  it('chain: the whole first link verifies from genesis, with its admission recomputed', () => {
    const verdict = verifyPostChain(ov.space_id, [
      {
        seq: 1,
        objectId: fromHex(ov.object.object_id),
        admission: fromHex(ov.chain.admission),
        chainHash: fromHex(ov.chain.chain_hash),
        admittedRevision: 1,
        admittedControlHash: controlHash,
        canonical: utf8(ov.object.canonical_utf8),
      },
    ]);
    expect(verdict).toEqual({
      ok: true,
      count: 1,
      head: { position: 1n, chainHash: fromHex(ov.chain.chain_hash) },
    });
  });
});

describe('protocol-v1-vectors.json (what still holds)', () => {
  it('control: command_id of the old command bytes', () => {
    expect(toHex(commandIdOf(utf8(v1.control.canonical_utf8)))).toBe(v1.control.command_id);
  });

  it('control and object: both genesis hashes', () => {
    expect(toHex(controlGenesis(v1.space_id))).toBe(v1.control.genesis_hash);
    expect(toHex(objectGenesis(v1.space_id))).toBe(v1.object.genesis_hash);
  });

  it('control: chain_hash of revision 1', () => {
    const link = controlLink({
      spaceId: v1.space_id,
      revision: BigInt(v1.control.revision),
      previous: fromHex(v1.control.genesis_hash),
      commandId: fromHex(v1.control.command_id),
    });
    expect(toHex(link)).toBe(v1.control.chain_hash);
  });

  it('object: the historical link without the admission digest is not what postLink computes', () => {
    // README: object.chain_hash uses an older formula; current code must not reproduce it.
    const admission = objectAdmission(1, fromHex(v1.object.admitted_control_hash));
    const link = postLink({
      spaceId: v1.space_id,
      seq: 1,
      admission,
      previous: fromHex(v1.object.genesis_hash),
      objectId: fromHex(v1.object.object_id),
    });
    expect(toHex(link)).not.toBe(v1.object.chain_hash);
  });

  it('control: the old command shape is refused by the governance event reader', () => {
    expect(svcCode(() => readGovernanceEvent(utf8(v1.control.canonical_utf8)))).toBe('INVALID_REQUEST');
  });
});

const SPACE = '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';

function event(revision: number): Uint8Array {
  return governanceEventBytes({
    spaceId: SPACE,
    revision,
    actor: 'ab'.repeat(32),
    event: revision === 1 ? 'space.created' : 'member.added',
    payload: { n: revision },
  });
}

/** A governance log and a post chain of n positions each, posts admitted at revision seq. */
function buildChains(n: number): { control: StoredControlLink[]; posts: StoredPostLink[] } {
  const control: StoredControlLink[] = [];
  let previous = controlGenesis(SPACE);
  for (let r = 1; r <= n; r++) {
    const canonical = event(r);
    const commandId = commandIdOf(canonical);
    const chainHash = controlLink({ spaceId: SPACE, revision: r, previous, commandId });
    control.push({ revision: r, commandId, chainHash, canonical });
    previous = chainHash;
  }
  const posts: StoredPostLink[] = [];
  previous = objectGenesis(SPACE);
  for (let s = 1; s <= n; s++) {
    const canonical = utf8(JSON.stringify({ n: s }));
    const objectId = objectIdOf(canonical);
    const admittedControlHash = control[s - 1]!.chainHash;
    const admission = objectAdmission(s, admittedControlHash);
    const chainHash = postLink({ spaceId: SPACE, seq: BigInt(s), admission, previous, objectId });
    posts.push({ seq: BigInt(s), objectId, admission, chainHash, admittedRevision: s, admittedControlHash, canonical });
    previous = chainHash;
  }
  return { control, posts };
}

describe('walking a stored chain', () => {
  const { control, posts } = buildChains(6);

  it('accepts intact chains and names their head', () => {
    const p = verifyPostChain(SPACE, posts);
    const c = verifyControlChain(SPACE, control);
    expect(p).toEqual({ ok: true, count: 6, head: { position: 6n, chainHash: posts[5]!.chainHash } });
    expect(c).toEqual({ ok: true, count: 6, head: { position: 6n, chainHash: control[5]!.chainHash } });
  });

  it('accepts an empty chain with no head', () => {
    expect(verifyPostChain(SPACE, [])).toEqual({ ok: true, count: 0, head: undefined });
  });

  it('checks a segment from a trusted link (a checkpoint end)', () => {
    const start = { position: 3, chainHash: posts[2]!.chainHash };
    expect(verifyPostChain(SPACE, posts.slice(3), start).ok).toBe(true);
    expect(verifyPostChain(SPACE, posts.slice(4), start)).toMatchObject({ ok: false, position: 4n, index: 0 });
  });

  it('names the first position whose stored chain hash has one byte flipped', () => {
    for (let i = 0; i < posts.length; i++) {
      const broken = posts.map((l) => ({ ...l }));
      const h = broken[i]!.chainHash.slice();
      h[7]! ^= 1;
      broken[i]!.chainHash = h;
      expect(verifyPostChain(SPACE, broken)).toMatchObject({ ok: false, position: BigInt(i + 1), index: i });
    }
  });

  it('names the first post whose object id does not match its bytes', () => {
    const broken = posts.map((l) => ({ ...l }));
    broken[2]!.canonical = utf8('{"n":99}');
    expect(verifyPostChain(SPACE, broken)).toMatchObject({ ok: false, position: 3n, reason: expect.stringMatching(/object_id/) });
  });

  it('names a post whose admission does not match its revision', () => {
    const broken = posts.map((l) => ({ ...l }));
    broken[1]!.admittedRevision = 5;
    expect(verifyPostChain(SPACE, broken)).toMatchObject({ ok: false, position: 2n, reason: expect.stringMatching(/admission/) });
  });

  it('names a gap or a repeat in positions', () => {
    expect(verifyPostChain(SPACE, [posts[0]!, posts[2]!])).toMatchObject({ ok: false, position: 2n, index: 1 });
    expect(verifyControlChain(SPACE, [control[0]!, control[0]!])).toMatchObject({ ok: false, position: 2n });
    expect(verifyControlChain(SPACE, control.slice(1))).toMatchObject({ ok: false, position: 1n, index: 0 });
  });

  it('names swapped links', () => {
    const swapped = [posts[0]!, { ...posts[2]!, seq: 2n }, { ...posts[1]!, seq: 3n }];
    expect(verifyPostChain(SPACE, swapped)).toMatchObject({ ok: false, position: 2n });
  });

  it('names an event whose bytes are altered, or name another revision or SPACE', () => {
    const altered = control.map((l) => ({ ...l }));
    altered[3]!.canonical = event(5);
    expect(verifyControlChain(SPACE, altered)).toMatchObject({ ok: false, position: 4n });

    const wrongRevision = control.map((l) => ({ ...l }));
    const bytes = event(5);
    wrongRevision[3] = { ...wrongRevision[3]!, canonical: bytes, commandId: commandIdOf(bytes) };
    expect(verifyControlChain(SPACE, wrongRevision)).toMatchObject({
      ok: false,
      position: 4n,
      reason: 'event says revision 5',
    });
  });

  it('refuses the chain of another SPACE', () => {
    expect(verifyPostChain('0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeef', posts)).toMatchObject({ ok: false, position: 1n });
  });

  it('finds any single flipped bit in a random link (property)', () => {
    fc.assert(
      fc.property(fc.nat(posts.length - 1), fc.nat(31), fc.nat(7), fc.constantFrom('objectId', 'admission', 'chainHash'), (i, byte, bit, member) => {
        const broken = posts.map((l) => ({ ...l }));
        const link = broken[i]!;
        const h = link[member].slice();
        h[byte]! ^= 1 << bit;
        link[member] = h;
        const verdict = verifyPostChain(SPACE, broken.map(({ canonical: _c, admittedRevision: _r, admittedControlHash: _h, ...rest }) => rest));
        return !verdict.ok && verdict.position === BigInt(i + 1);
      }),
      { numRuns: 200 },
    );
  });
});

describe('link inputs', () => {
  const h = new Uint8Array(32);

  it('refuses positions below 1 (0 allowed for an admission), beyond 2^63 - 1, or not integers', () => {
    expect(() => postLink({ spaceId: SPACE, seq: 0, admission: h, previous: h, objectId: h })).toThrow(RangeError);
    expect(() => controlLink({ spaceId: SPACE, revision: 2n ** 63n, previous: h, commandId: h })).toThrow(RangeError);
    expect(() => objectAdmission(1.5, h)).toThrow(RangeError);
    expect(toHex(objectAdmission(0, controlGenesis(SPACE)))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('takes bigint and number positions alike', () => {
    const a = postLink({ spaceId: SPACE, seq: 7, admission: h, previous: h, objectId: h });
    const b = postLink({ spaceId: SPACE, seq: 7n, admission: h, previous: h, objectId: h });
    expect(a).toEqual(b);
  });

  it('refuses hashes that are not 32 bytes', () => {
    expect(() => postLink({ spaceId: SPACE, seq: 1, admission: h, previous: new Uint8Array(31), objectId: h })).toThrow(/previous/);
    expect(() => objectAdmission(1, new Uint8Array(33))).toThrow(/controlChainHash/);
  });

  it('refuses a space id that is not a lowercase uuid', () => {
    expect(svcCode(() => objectGenesis(SPACE.toUpperCase()))).toBe('INVALID_REQUEST');
  });

  it('writes the event revision as a decimal string, also beyond 2^53', () => {
    const bytes = governanceEventBytes({ spaceId: SPACE, revision: 2n ** 60n, actor: 'ab'.repeat(32), event: 'x', payload: {} });
    expect(new TextDecoder().decode(bytes)).toContain(`"revision":"${2n ** 60n}"`);
    expect(readGovernanceEvent(bytes).revision).toBe(2n ** 60n);
  });

  it('refuses an event with a member too many or a revision as a number', () => {
    const text = new TextDecoder().decode(event(1));
    expect(svcCode(() => readGovernanceEvent(utf8(text.replace('"v":1', '"v":1,"x":1'))))).toBe('INVALID_REQUEST');
    expect(svcCode(() => readGovernanceEvent(utf8(text.replace('"revision":"1"', '"revision":1'))))).toBe('INVALID_REQUEST');
  });
});
