/**
 * The relay's tree over a SPACE's posts (relay/tlog/tree.ts) past one block of 1,024 leaves: the
 * MTH it builds from kept block hashes and leaves equals shared/merkle.ts's over every leaf, and
 * a missing position is CHECKPOINT_INVALID. The links come from a stand-in for the checkpoint
 * store's `links` (the one method the tree reads), so thousands of positions need no appends.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sha256 } from '../../../shared/hash.js';
import { utf8 } from '../../../shared/encoding.js';
import { consistencyProof, inclusionProof, merkleRoot, postLeaf } from '../../../shared/merkle.js';
import { treeConsistencyProof, treeInclusionProof, treeRoot } from '../../../shared/tlog-checkpoint.js';
import type { CheckpointStore, StreamLink } from '../../../relay/store/checkpoints.js';
import { createSpaceTrees } from '../../../relay/tlog/tree.js';

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
  it('builds the same roots and consistency proofs as the leaves give, across block boundaries, reading each whole block once', async () => {
    const { store, reads } = storeWith(() => true);
    const trees = createSpaceTrees(store);
    for (const size of [1, 1023, 1024, 1025, 2048, 2049, 3000, N]) {
      expect(treeRoot(size, await trees.rangeRoot(1, SPACE, size)), String(size)).toEqual(merkleRoot(leaves.slice(0, size)));
    }
    for (const [m, n] of [[1000, N], [1024, 2049], [2048, N], [3, 1500]] as const) {
      const rangeRoot = await trees.rangeRoot(1, SPACE, n, [m - 1, m]);
      expect(treeConsistencyProof(m, n, rangeRoot)).toEqual(consistencyProof(leaves.slice(0, n), m));
    }
    for (const [i, n] of [[0, N], [1500, 2049], [N - 1, N]] as const) {
      const rangeRoot = await trees.rangeRoot(1, SPACE, n, [i]);
      expect(treeInclusionProof(i, n, rangeRoot)).toEqual(inclusionProof(leaves.slice(0, n), i));
    }
    // Whole blocks were read once each; later roots read only partial blocks.
    const before = reads.filter((r) => r === 1024).length;
    await trees.rangeRoot(1, SPACE, N);
    expect(reads.slice(-1)).toEqual([77]);
    expect(reads.filter((r) => r === 1024).length).toBe(before);
  });

  it('hashes every whole block first, so a root over the whole tree then reads only its tail', async () => {
    const { store, reads } = storeWith(() => true);
    const trees = createSpaceTrees(store);
    expect(treeRoot(N, await trees.rangeRoot(3, SPACE, N))).toEqual(merkleRoot(leaves));
    expect(reads).toEqual([1024, 1024, 1024, 77]);
  });

  it('a proof reaching outside the leaves it was prepared with fails loudly instead of guessing', async () => {
    const { store } = storeWith(() => true);
    const rangeRoot = await createSpaceTrees(store).rangeRoot(4, SPACE, N);
    expect(() => treeInclusionProof(1500, N, rangeRoot)).toThrow(/not read/);
  });

  it('a missing position is CHECKPOINT_INVALID, not a root over fewer leaves', async () => {
    const { store } = storeWith((p) => p !== 1500);
    const trees = createSpaceTrees(store);
    expect(treeRoot(1499, await trees.rangeRoot(2, SPACE, 1499))).toEqual(merkleRoot(leaves.slice(0, 1499)));
    await expect(trees.rangeRoot(2, SPACE, 2048)).rejects.toThrow(/CHECKPOINT_INVALID|posts/);
  });
});
