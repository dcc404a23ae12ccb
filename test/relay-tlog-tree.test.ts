/**
 * The relay's tree over a SPACE's posts (relay/tlog/tree.ts) past one block of 1,024 leaves: the
 * MTH it builds from kept block hashes and leaves equals shared/merkle.ts's over every leaf, and
 * a missing position is CHECKPOINT_INVALID. The links come from a stand-in for the checkpoint
 * store's `links` (the one method the tree reads), so thousands of positions need no appends.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../shared/hash.js';
import { utf8 } from '../shared/encoding.js';
import { consistencyProof, merkleRoot, postLeaf } from '../shared/merkle.js';
import { treeConsistencyProof, treeRoot } from '../shared/tlog-checkpoint.js';
import type { CheckpointStore, StreamLink } from '../relay/store/checkpoints.js';
import { createSpaceTrees } from '../relay/tlog/tree.js';

const SPACE = randomUUID();
const N = 3 * 1024 + 77;
const links: StreamLink[] = Array.from({ length: N }, (_, i) => ({
  position: i + 1,
  id: sha256(utf8(`object ${i + 1}`)),
  previousHash: new Uint8Array(32),
  chainHash: sha256(utf8(`chain ${i + 1}`)),
}));
const leaves = links.map((l) => postLeaf(SPACE, l.position, l.id, l.chainHash));

function storeWith(have: (position: number) => boolean): { store: CheckpointStore; reads: number[] } {
  const reads: number[] = [];
  const store = {
    links(_space: number, _stream: string, first: number, last: number) {
      reads.push(last - first + 1);
      return links.slice(first - 1, last).filter((l) => have(l.position));
    },
  } as unknown as CheckpointStore;
  return { store, reads };
}

describe("the relay's tree over a SPACE's posts", () => {
  it('builds the same roots and consistency proofs as the leaves give, across block boundaries, reading each block once', () => {
    const { store, reads } = storeWith(() => true);
    const rangeRoot = createSpaceTrees(store).rangeRoot(1, SPACE);
    for (const size of [1, 1023, 1024, 1025, 2048, 2049, 3000, N]) {
      expect(treeRoot(size, rangeRoot), String(size)).toEqual(merkleRoot(leaves.slice(0, size)));
    }
    for (const [m, n] of [[1000, N], [1024, 2049], [2048, N], [3, 1500]] as const) {
      expect(treeConsistencyProof(m, n, rangeRoot)).toEqual(consistencyProof(leaves.slice(0, n), m));
    }
    // Whole blocks were read once each; later roots read only partial tails.
    const before = reads.filter((r) => r === 1024).length;
    treeRoot(N, rangeRoot);
    expect(reads.filter((r) => r === 1024).length).toBe(before);
    expect(before).toBe(3);
  });

  it('warming hashes every whole block ahead, one per turn of the event loop, so a root then reads only its tail', async () => {
    const { store, reads } = storeWith(() => true);
    const trees = createSpaceTrees(store);
    await trees.warm(3, SPACE, N);
    expect(reads).toEqual([1024, 1024, 1024]);
    expect(treeRoot(N, trees.rangeRoot(3, SPACE))).toEqual(merkleRoot(leaves));
    expect(reads.slice(3)).toEqual([77]);
  });

  it('a missing position is CHECKPOINT_INVALID, not a root over fewer leaves', () => {
    const { store } = storeWith((p) => p !== 1500);
    const rangeRoot = createSpaceTrees(store).rangeRoot(2, SPACE);
    expect(treeRoot(1499, rangeRoot)).toEqual(merkleRoot(leaves.slice(0, 1499)));
    expect(() => treeRoot(2048, rangeRoot)).toThrow(/CHECKPOINT_INVALID|posts/);
  });
});
