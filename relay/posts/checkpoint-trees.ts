/**
 * The Merkle trees of signed checkpoint ranges, built once and kept, for posts.proof.
 *
 * A proof needs the covering checkpoint's tree: its root recomputed from the stored leaves
 * (CHECKPOINT_INVALID when it is not the signed merkle_root) and the post's inclusion path.
 * Built for every request, that is up to 1,024 rows read and three thousand SHA-256 hashes,
 * 14-20 ms of CPU on a two-core machine: a relay answering nothing but proofs would answer
 * some 50-70 a second. A signed range never changes (positions are appended, never rewritten),
 * so the tree of a checkpoint is built and checked against its signed root once, kept under the
 * checkpoint's id (its object id: another range, or the same range signed again, is another
 * key), and every proof after that reads its path from the kept tree.
 *
 * The check stays where it matters to the reader: the served post's own leaf, computed from its
 * row as before, must be the kept tree's leaf at its position, or the answer is
 * CHECKPOINT_INVALID as when the recomputed root differed.
 *
 * Kept per store (one relay's database), at most TREES_KEPT trees (64 KiB each for a full range
 * of 1,024), the least recently used dropped first.
 */
import { merkleTree, type MerkleTree } from '../../shared/merkle.js';

/** Trees kept per store: 4 MiB at most. */
export const TREES_KEPT = 64;

export class CheckpointTrees {
  private readonly kept = new Map<string, MerkleTree>();
  /** Trees built (not found kept): diagnostics, and what tests read to see one kept. */
  built = 0;

  constructor(private readonly max: number = TREES_KEPT) {}

  /**
   * The tree of the checkpoint `id`, kept or made from `leaves()` (which reads and hashes the
   * range; a tree is kept only once `check` has accepted it, so a refused one is built again,
   * and refused again, on the next request).
   */
  async of(id: string, leaves: () => Promise<Uint8Array[]>, check: (tree: MerkleTree) => void): Promise<MerkleTree> {
    const hit = this.kept.get(id);
    if (hit !== undefined) {
      this.kept.delete(id); // most recently used goes last
      this.kept.set(id, hit);
      return hit;
    }
    const tree = merkleTree(await leaves());
    this.built++;
    check(tree);
    this.kept.set(id, tree);
    if (this.kept.size > this.max) this.kept.delete(this.kept.keys().next().value!);
    return tree;
  }
}

const byStore = new WeakMap<object, CheckpointTrees>();

/** The trees kept for `store` (a relay's store object), made on first use. */
export function checkpointTreesFor(store: object): CheckpointTrees {
  let trees = byStore.get(store);
  if (trees === undefined) {
    trees = new CheckpointTrees();
    byStore.set(store, trees);
  }
  return trees;
}
