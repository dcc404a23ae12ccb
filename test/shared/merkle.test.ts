import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromHex, toHex, utf8 } from '../../shared/encoding.js';
import { isSvcError } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import {
  consistencyProof,
  eventLeaf,
  inclusionProof,
  leafHash,
  merkleRoot,
  merkleTree,
  nodeHash,
  postLeaf,
  verifyConsistency,
  verifyInclusion,
} from '../../shared/merkle.js';
import { loadOwnVector, loadVector } from '../helpers/vectors.js';
import { expectEvidenceRefused, refusal } from '../helpers/refusals.js';

const objects = loadVector('object-vectors.json');
const pin = loadOwnVector('service.json');
const SPACE = pin.inputs.space_id as string;

const objectId = (seq: number) => sha256(utf8(`svc-vector object ${seq}`));
const chainHash = (seq: number) => sha256(utf8(`svc-vector chain ${seq}`));
const commandId = (rev: number) => sha256(utf8(`svc-vector command ${rev}`));
const controlChain = (rev: number) => sha256(utf8(`svc-vector control-chain ${rev}`));
const hexes = (list: string[]) => list.map((h) => fromHex(h, 32));

/** Post leaves of the pin: seq 1..1024 at indexes 0..1023. */
const PIN_LEAVES = Array.from({ length: 1024 }, (_, i) => postLeaf(SPACE, i + 1, objectId(i + 1), chainHash(i + 1)));

/** RFC 9162 §2.1.1 written as the recursion, as the independent reference for the fast root. */
function referenceRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 1) return leaves[0]!;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

function largestPowerBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * Which side each sibling of PATH(m, D[n]) sits on, bottom up (RFC 9162 §2.1.3.1). Two
 * (index, size) pairs with the same shape accept the same proofs, so an off-by-one index or
 * size is refused exactly when its shape differs; that is why both come from the signed range.
 */
function inclusionShape(m: number, n: number): string | null {
  if (m < 0 || n < 1 || m >= n) return null;
  if (n === 1) return '';
  const k = largestPowerBelow(n);
  return m < k ? `${inclusionShape(m, k)}R` : `${inclusionShape(m - k, n - k)}L`;
}

/** The same for SUBPROOF(m, D[n], b) (§2.1.4.1): O = the old root seeds it, P = a proof hash does. */
function consistencyShape(m: number, n: number): string | null {
  if (m < 1 || m > n) return null;
  if (m === n) return '';
  const sub = (mm: number, nn: number, b: boolean): string => {
    if (mm === nn) return b ? 'O' : 'P';
    const k = largestPowerBelow(nn);
    return mm <= k ? `${sub(mm, k, b)}R` : `${sub(mm - k, nn - k, false)}L`;
  };
  return sub(m, n, true);
}

function flipBit(bytes: Uint8Array, byte: number, bit: number): Uint8Array {
  const out = bytes.slice();
  out[byte]! ^= 1 << bit;
  return out;
}

describe('leaves (objects.md §12)', () => {
  it('the post leaf of object-vectors.json seq 1 is checkpoint_leaf', () => {
    const leaf = postLeaf(
      objects.space_id,
      1n,
      fromHex(objects.object.object_id, 32),
      fromHex(objects.chain.chain_hash, 32),
    );
    expect(toHex(leaf)).toBe(objects.checkpoint_leaf);
  });

  it('a one-leaf tree has the leaf as its root and an empty path that verifies', () => {
    const leaf = fromHex(objects.checkpoint_leaf, 32);
    expect(toHex(merkleRoot([leaf]))).toBe(objects.merkle_root_one_leaf);
    expect(inclusionProof([leaf], 0).map(toHex)).toEqual(objects.merkle_path_one_leaf);
    expect(() => verifyInclusion(leaf, 0, 1, [], fromHex(objects.merkle_root_one_leaf, 32))).not.toThrow();
  });

  it('post and event leaves match the Python pin', () => {
    expect(PIN_LEAVES.slice(0, 3).map(toHex)).toEqual(pin.post_leaves);
    const events = [1, 2, 3].map((r) => toHex(eventLeaf(SPACE, r, commandId(r), controlChain(r))));
    expect(events).toEqual(pin.event_leaves);
  });

  it('a post leaf and an event leaf over the same bytes differ by their label', () => {
    const id = objectId(1);
    const link = chainHash(1);
    expect(toHex(postLeaf(SPACE, 1, id, link))).not.toBe(toHex(eventLeaf(SPACE, 1, id, link)));
  });

  it('leafHash prefixes 0x00 and nodeHash 0x01 (RFC 9162 §2.1.1)', () => {
    const a = sha256(utf8('a'));
    const b = sha256(utf8('b'));
    expect(toHex(leafHash(a))).toBe(toHex(sha256(new Uint8Array([0]), a)));
    expect(toHex(nodeHash(a, b))).toBe(toHex(sha256(new Uint8Array([1]), a, b)));
  });
});

describe('roots (pinned by the Python generator)', () => {
  for (const { size, root } of pin.roots as { size: number; root: string }[]) {
    it(`the root over ${size} leaves matches the pin`, () => {
      expect(toHex(merkleRoot(PIN_LEAVES.slice(0, size)))).toBe(root);
    });
  }

  it('an empty tree has no root', () => {
    expect(() => merkleRoot([])).toThrow(RangeError);
  });

  it('the fast root equals the recursive definition for 1 to 300 leaves', () => {
    for (let n = 1; n <= 300; n++) {
      expect(toHex(merkleRoot(PIN_LEAVES.slice(0, n)))).toBe(toHex(referenceRoot(PIN_LEAVES.slice(0, n))));
    }
  });
});

describe('inclusion proofs (RFC 9162 §2.1.3)', () => {
  for (const c of pin.inclusion.valid as { tree_size: number; leaf_index: number; leaf: string; root: string; path: string[] }[]) {
    it(`leaf ${c.leaf_index} of ${c.tree_size}: our path equals the pin and verifies`, () => {
      const leaves = PIN_LEAVES.slice(0, c.tree_size);
      expect(toHex(leaves[c.leaf_index]!)).toBe(c.leaf);
      expect(inclusionProof(leaves, c.leaf_index).map(toHex)).toEqual(c.path);
      expect(() => verifyInclusion(fromHex(c.leaf), c.leaf_index, c.tree_size, hexes(c.path), fromHex(c.root))).not.toThrow();
    });
  }

  it('a 1,024-leaf tree gives a ten-hash path', () => {
    expect(inclusionProof(PIN_LEAVES, 513)).toHaveLength(10);
  });

  it('a tree kept whole gives the root and paths computed from the leaves: every leaf of 1 to 70 leaves, and of 1,024 every 37th', () => {
    for (const n of [...Array.from({ length: 70 }, (_, i) => i + 1), 1024]) {
      const leaves = PIN_LEAVES.slice(0, n);
      const tree = merkleTree(leaves);
      expect(tree.size).toBe(n);
      expect(toHex(tree.root)).toBe(toHex(merkleRoot(leaves)));
      for (let i = 0; i < n; i += n > 70 ? 37 : 1) {
        expect(toHex(tree.leaf(i))).toBe(toHex(leaves[i]!));
        expect(tree.inclusion(i).map(toHex)).toEqual(inclusionProof(leaves, i).map(toHex));
      }
    }
  });

  it('a tree kept whole gives the pinned paths, keeps its own copy of the leaves, hands out copies and refuses an index outside it', () => {
    for (const c of pin.inclusion.valid as { tree_size: number; leaf_index: number; path: string[] }[]) {
      expect(merkleTree(PIN_LEAVES.slice(0, c.tree_size)).inclusion(c.leaf_index).map(toHex)).toEqual(c.path);
    }
    const leaves = PIN_LEAVES.slice(0, 5).map((l) => l.slice());
    const tree = merkleTree(leaves);
    leaves[0]!.fill(0);
    tree.leaf(1).fill(0);
    tree.root.fill(0);
    tree.inclusion(0)[0]!.fill(0);
    expect(toHex(tree.root)).toBe(toHex(merkleRoot(PIN_LEAVES.slice(0, 5))));
    expect(toHex(tree.leaf(0))).toBe(toHex(PIN_LEAVES[0]!));
    expect(toHex(tree.leaf(1))).toBe(toHex(PIN_LEAVES[1]!));
    expect(tree.inclusion(0).map(toHex)).toEqual(inclusionProof(PIN_LEAVES.slice(0, 5), 0).map(toHex));
    expect(() => tree.inclusion(5)).toThrow(RangeError);
    expect(() => tree.leaf(-1)).toThrow(RangeError);
    expect(() => merkleTree([])).toThrow(RangeError);
  });

  for (const c of pin.inclusion.invalid as { rule: string; tree_size: number; leaf_index: number; leaf: string; root: string; path: string[] }[]) {
    it(`refuses an inclusion proof whose ${c.rule}`, () => {
      expectEvidenceRefused(() => verifyInclusion(fromHex(c.leaf), c.leaf_index, c.tree_size, hexes(c.path), fromHex(c.root)));
    });
  }

  it('refuses a path hash that is not 32 bytes and a negative or fractional index', () => {
    const leaves = PIN_LEAVES.slice(0, 5);
    const root = merkleRoot(leaves);
    const path = inclusionProof(leaves, 2);
    expectEvidenceRefused(() => verifyInclusion(leaves[2]!, 2, 5, [path[0]!.subarray(0, 31), ...path.slice(1)], root));
    expectEvidenceRefused(() => verifyInclusion(leaves[2]!, -1, 5, path, root));
    expectEvidenceRefused(() => verifyInclusion(leaves[2]!, 1.5, 5, path, root));
    expectEvidenceRefused(() => verifyInclusion(leaves[2]!, 2, 0, path, root));
  });
});

describe('consistency proofs (RFC 9162 §2.1.4)', () => {
  for (const c of pin.consistency.valid as { first: number; second: number; first_root: string; second_root: string; proof: string[] }[]) {
    it(`${c.first} to ${c.second} leaves: our proof equals the pin and verifies`, () => {
      const leaves = PIN_LEAVES.slice(0, c.second);
      expect(toHex(merkleRoot(leaves.slice(0, c.first)))).toBe(c.first_root);
      expect(consistencyProof(leaves, c.first).map(toHex)).toEqual(c.proof);
      expect(() =>
        verifyConsistency(c.first, c.second, fromHex(c.first_root), fromHex(c.second_root), hexes(c.proof)),
      ).not.toThrow();
    });
  }

  for (const c of pin.consistency.invalid as { rule: string; first: number; second: number; first_root: string; second_root: string; proof: string[] }[]) {
    it(`refuses a consistency proof whose ${c.rule}`, () => {
      expectEvidenceRefused(() =>
        verifyConsistency(c.first, c.second, fromHex(c.first_root), fromHex(c.second_root), hexes(c.proof)),
      );
    });
  }
});

describe('properties on random trees of 1 to 5,000 leaves', () => {
  const POOL = Array.from({ length: 5001 }, (_, i) => sha256(utf8(`pool ${i}`)));
  const tree = fc.integer({ min: 1, max: 5000 }).chain((n) =>
    fc.record({ n: fc.constant(n), index: fc.integer({ min: 0, max: n - 1 }), offset: fc.integer({ min: 0, max: 5000 - n }) }),
  );
  const tamper = fc.record({ pick: fc.nat(), byte: fc.integer({ min: 0, max: 31 }), bit: fc.integer({ min: 0, max: 7 }) });

  it('an inclusion proof verifies, and one flipped bit in a path hash, the leaf or the root is refused', () => {
    fc.assert(
      fc.property(tree, tamper, ({ n, index, offset }, t) => {
        const leaves = POOL.slice(offset, offset + n);
        const root = merkleRoot(leaves);
        const path = inclusionProof(leaves, index);
        expect(path).toHaveLength(inclusionShape(index, n)!.length);
        verifyInclusion(leaves[index]!, index, n, path, root);
        if (path.length > 0) {
          const at = t.pick % path.length;
          const bad = path.map((p, i) => (i === at ? flipBit(p, t.byte, t.bit) : p));
          expectEvidenceRefused(() => verifyInclusion(leaves[index]!, index, n, bad, root));
        }
        expectEvidenceRefused(() => verifyInclusion(flipBit(leaves[index]!, t.byte, t.bit), index, n, path, root));
        expectEvidenceRefused(() => verifyInclusion(leaves[index]!, index, n, path, flipBit(root, t.byte, t.bit)));
      }),
      { numRuns: 60 },
    );
  });

  it('an index or size one off is refused unless it gives a tree of the same shape', () => {
    fc.assert(
      fc.property(tree, ({ n, index, offset }) => {
        const leaves = POOL.slice(offset, offset + n);
        const root = merkleRoot(leaves);
        const path = inclusionProof(leaves, index);
        const shape = inclusionShape(index, n);
        for (const [i, s] of [[index + 1, n], [index - 1, n], [index, n + 1], [index, n - 1]] as const) {
          const err = refusal(() => verifyInclusion(leaves[index]!, i, s, path, root));
          if (inclusionShape(i, s) === shape) expect(err).toBeUndefined();
          else expect(isSvcError(err, 'CHECKPOINT_INVALID'), `index ${i} size ${s}`).toBe(true);
        }
      }),
      { numRuns: 60 },
    );
  });

  const growth = fc.integer({ min: 1, max: 5000 }).chain((n) =>
    fc.record({ n: fc.constant(n), m: fc.integer({ min: 1, max: n }), offset: fc.integer({ min: 0, max: 5000 - n }) }),
  );

  it('a consistency proof verifies, and one flipped bit in a proof hash or either root is refused', () => {
    fc.assert(
      fc.property(growth, tamper, ({ n, m, offset }, t) => {
        const leaves = POOL.slice(offset, offset + n);
        const oldRoot = merkleRoot(leaves.slice(0, m));
        const newRoot = merkleRoot(leaves);
        const proof = consistencyProof(leaves, m);
        verifyConsistency(m, n, oldRoot, newRoot, proof);
        if (proof.length > 0) {
          const at = t.pick % proof.length;
          const bad = proof.map((p, i) => (i === at ? flipBit(p, t.byte, t.bit) : p));
          expectEvidenceRefused(() => verifyConsistency(m, n, oldRoot, newRoot, bad));
        }
        expectEvidenceRefused(() => verifyConsistency(m, n, flipBit(oldRoot, t.byte, t.bit), newRoot, proof));
        expectEvidenceRefused(() => verifyConsistency(m, n, oldRoot, flipBit(newRoot, t.byte, t.bit), proof));
      }),
      { numRuns: 40 },
    );
  });

  it('an old or new size one off is refused unless it gives a tree of the same shape', () => {
    fc.assert(
      fc.property(growth, ({ n, m, offset }) => {
        const leaves = POOL.slice(offset, offset + n);
        const oldRoot = merkleRoot(leaves.slice(0, m));
        const newRoot = merkleRoot(leaves);
        const proof = consistencyProof(leaves, m);
        const shape = consistencyShape(m, n);
        for (const [a, b] of [[m + 1, n], [m - 1, n], [m, n + 1], [m, n - 1]] as const) {
          const err = refusal(() => verifyConsistency(a, b, oldRoot, newRoot, proof));
          // Equal sizes are only accepted with equal roots, which these two trees do not have.
          if (consistencyShape(a, b) === shape && a !== b) expect(err).toBeUndefined();
          else expect(isSvcError(err, 'CHECKPOINT_INVALID'), `sizes ${a} ${b}`).toBe(true);
        }
      }),
      { numRuns: 40 },
    );
  });
});
