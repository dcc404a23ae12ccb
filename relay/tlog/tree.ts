/**
 * The Merkle tree over all of a SPACE's posts (shared/tlog-checkpoint.ts): the tree whose heads
 * the relay publishes as signed notes and between whose sizes it serves consistency proofs.
 *
 * Leaves are the checkpoint leaves (shared/merkle.ts `postLeaf`), recomputed from the stored
 * links, never stored apart: the posts table is the one source. A subtree of 1,024 leaves
 * aligned on 1,024 (a "block") never changes once its posts exist, so its hash is kept in
 * memory per SPACE; any MTH over [start, end) is then built from at most a handful of blocks per
 * level plus at most 1,023 leaves read from the store. RFC 9162 splits at the largest power of
 * two, so a range of whole blocks has the same MTH over its block hashes as over its leaves.
 *
 * Only positions every one of which exists are hashed: a gap is CHECKPOINT_INVALID (the relay
 * cannot vouch for a tree it cannot rebuild), as posts.proof does for a root that differs.
 */
import { SvcError } from '../../shared/errors.js';
import { merkleRoot, nodeHash, postLeaf } from '../../shared/merkle.js';
import type { RangeRoot } from '../../shared/tlog-checkpoint.js';
import type { CheckpointStore } from '../store/checkpoints.js';

export const BLOCK_LEAVES = 1024;
/** SPACES whose block hashes are kept; past this the cache starts over (it is only a cache). */
const SPACES_KEPT = 4096;

export interface SpaceTrees {
  /**
   * The MTH callback of one SPACE's tree up to `size`, synchronous over what this reads first:
   * every whole block below `size` (hashed once and kept, one block per turn of the event loop,
   * so the first root over a long SPACE does not hold every other request behind it), the
   * leaves of the partial block at the end, and the leaves of the blocks holding the leaf
   * indexes in `around` (the positions a proof descends to: an inclusion proof's leaf, a
   * consistency proof's old size). RFC 9162's recursion only splits inside those blocks.
   */
  rangeRoot(spaceRowId: number, spaceId: string, size: number, around?: readonly number[]): Promise<RangeRoot>;
}

function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

export function createSpaceTrees(checkpoints: CheckpointStore): SpaceTrees {
  const blocks = new Map<number, Uint8Array[]>();

  async function leaves(spaceRowId: number, spaceId: string, start: number, end: number): Promise<Uint8Array[]> {
    // Leaf index i is seq i + 1.
    const links = await checkpoints.links(spaceRowId, 'posts', start + 1, end);
    if (links.length !== end - start) {
      throw new SvcError('CHECKPOINT_INVALID', `tree: ${links.length} of the ${end - start} posts ${start + 1}-${end} are stored`);
    }
    return links.map((l) => postLeaf(spaceId, l.position, l.id, l.chainHash));
  }

  function keptOf(spaceRowId: number): Uint8Array[] {
    let kept = blocks.get(spaceRowId);
    if (kept === undefined) {
      if (blocks.size >= SPACES_KEPT) blocks.clear();
      kept = [];
      blocks.set(spaceRowId, kept);
    }
    return kept;
  }

  async function warm(spaceRowId: number, spaceId: string, size: number): Promise<void> {
    const whole = Math.floor(size / BLOCK_LEAVES);
    for (let b = 0; b < whole; b++) {
      const known = keptOf(spaceRowId);
      if (known[b] !== undefined) continue;
      known[b] = merkleRoot(await leaves(spaceRowId, spaceId, b * BLOCK_LEAVES, (b + 1) * BLOCK_LEAVES));
      await new Promise<void>((r) => setImmediate(r));
    }
  }

  return {
    async rangeRoot(spaceRowId, spaceId, size, around = []) {
      await warm(spaceRowId, spaceId, size);
      const wanted = new Set<number>();
      if (size % BLOCK_LEAVES !== 0) wanted.add(Math.floor(size / BLOCK_LEAVES));
      for (const at of around) if (at >= 0 && at < size) wanted.add(Math.floor(at / BLOCK_LEAVES));
      const loaded = new Map<number, Uint8Array[]>();
      for (const b of wanted) loaded.set(b, await leaves(spaceRowId, spaceId, b * BLOCK_LEAVES, Math.min(size, (b + 1) * BLOCK_LEAVES)));
      const known = keptOf(spaceRowId);
      const root = (start: number, end: number): Uint8Array => {
        const n = end - start;
        const b = Math.floor(start / BLOCK_LEAVES);
        if (n === BLOCK_LEAVES && start % BLOCK_LEAVES === 0 && known[b] !== undefined) return known[b];
        if (n <= BLOCK_LEAVES) {
          const held = loaded.get(b);
          const from = start - b * BLOCK_LEAVES;
          if (held === undefined || from + n > held.length) throw new Error(`tree: leaves ${start}-${end} were not read for this proof`);
          return merkleRoot(held.slice(from, from + n));
        }
        const k = splitPoint(n);
        return nodeHash(root(start, start + k), root(start + k, end));
      };
      return (start, end) => {
        if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start || end > size) throw new RangeError('range must be non-empty and inside the tree');
        return root(start, end);
      };
    },
  };
}
