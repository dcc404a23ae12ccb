/**
 * RFC 9162 Merkle trees over a checkpoint's range (protocol/objects.md §12).
 *
 *   leaf   = H(0x00 ‖ leaf input)           leaf input = L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash
 *                                                      or L("checkpoint-control") ‖ uuid16 ‖ u64(revision) ‖ command_id ‖ chain_hash
 *   node   = H(0x01 ‖ left ‖ right)          (no label)
 *   MTH(D) = the leaf when |D| = 1; else H(0x01 ‖ MTH(D[0:k]) ‖ MTH(D[k:n])), k the largest
 *            power of two strictly below n (RFC 9162 §2.1.1). Nothing is duplicated.
 *
 * Proof builders follow RFC 9162 §2.1.3.1 (inclusion) and §2.1.4.1 (consistency); the
 * verifiers follow §2.1.3.2 and §2.1.4.2 step by step. Every verifier returns nothing or throws
 * SvcError('CHECKPOINT_INVALID') with a detail naming the check. Proof input (path hashes,
 * index, size, roots) is attacker-controlled.
 *
 * Sizes and indexes are JavaScript numbers (safe integers); a checkpoint covers at most 1,024
 * positions, so nothing here comes near the limit.
 */
import { hash } from 'node:crypto';
import { SvcError } from './errors.js';
import { equalBytes, u64, uuid16 } from './encoding.js';
import { label } from './labels.js';

const HASH_BYTES = 32;
const LEAF_PREFIX = new Uint8Array([0x00]);

function fail(detail: string): SvcError {
  return new SvcError('CHECKPOINT_INVALID', detail);
}

function digest(bytes: Uint8Array): Uint8Array {
  const out = hash('sha256', bytes, 'buffer');
  return new Uint8Array(out.buffer, out.byteOffset, HASH_BYTES);
}

function checkHash(value: Uint8Array, field: string): void {
  if (!(value instanceof Uint8Array) || value.length !== HASH_BYTES) {
    throw new TypeError(`${field} must be ${HASH_BYTES} bytes`);
  }
}

/** H(0x00 ‖ input): the RFC 9162 leaf hash of arbitrary leaf input. */
export function leafHash(input: Uint8Array): Uint8Array {
  const buf = new Uint8Array(1 + input.length);
  buf.set(LEAF_PREFIX, 0);
  buf.set(input, 1);
  return digest(buf);
}

function streamLeaf(
  name: 'checkpoint-object' | 'checkpoint-control',
  spaceId: string,
  position: bigint | number,
  id: Uint8Array,
  chainHash: Uint8Array,
): Uint8Array {
  checkHash(id, 'id');
  checkHash(chainHash, 'chain hash');
  const l = label(name);
  const space = uuid16(spaceId, 'space_id');
  const pos = u64(position);
  const buf = new Uint8Array(1 + l.length + 16 + 8 + HASH_BYTES * 2);
  let at = 1; // buf[0] is the RFC 9162 leaf prefix 0x00
  buf.set(l, at);
  at += l.length;
  buf.set(space, at);
  at += 16;
  buf.set(pos, at);
  at += 8;
  buf.set(id, at);
  at += HASH_BYTES;
  buf.set(chainHash, at);
  return digest(buf);
}

/** Leaf of post `seq`: H(0x00 ‖ L("checkpoint-object") ‖ uuid16 ‖ u64(seq) ‖ object_id ‖ chain_hash). */
export function postLeaf(
  spaceId: string,
  seq: bigint | number,
  objectId: Uint8Array,
  chainHash: Uint8Array,
): Uint8Array {
  return streamLeaf('checkpoint-object', spaceId, seq, objectId, chainHash);
}

/** Leaf of governance event `revision`: H(0x00 ‖ L("checkpoint-control") ‖ uuid16 ‖ u64(revision) ‖ command_id ‖ chain_hash). */
export function eventLeaf(
  spaceId: string,
  revision: bigint | number,
  commandId: Uint8Array,
  chainHash: Uint8Array,
): Uint8Array {
  return streamLeaf('checkpoint-control', spaceId, revision, commandId, chainHash);
}

/** H(0x01 ‖ left ‖ right). `scratch`, when given, is a 65-byte buffer reused between calls. */
export function nodeHash(left: Uint8Array, right: Uint8Array, scratch?: Uint8Array): Uint8Array {
  const buf = scratch ?? new Uint8Array(1 + HASH_BYTES * 2);
  buf[0] = 0x01;
  buf.set(left, 1);
  buf.set(right, 1 + HASH_BYTES);
  return digest(buf);
}

/** Largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

function checkLeaves(leaves: readonly Uint8Array[]): void {
  if (leaves.length < 1) throw new RangeError('a Merkle tree needs at least one leaf');
  for (let i = 0; i < leaves.length; i++) checkHash(leaves[i]!, `leaf ${i}`);
}

/**
 * MTH over leaves[start, end), computed level by level. Pairing neighbours and carrying an odd
 * last node up unchanged gives exactly the RFC 9162 split at the largest power of two, with
 * one array of references and one 65-byte scratch buffer.
 */
function rootOfRange(leaves: readonly Uint8Array[], start: number, end: number, scratch: Uint8Array): Uint8Array {
  let width = end - start;
  if (width === 1) return leaves[start]!;
  const level: Uint8Array[] = new Array<Uint8Array>((width + 1) >> 1);
  for (let i = 0; i + 1 < width; i += 2) {
    level[i >> 1] = nodeHash(leaves[start + i]!, leaves[start + i + 1]!, scratch);
  }
  if (width & 1) level[width >> 1] = leaves[end - 1]!;
  width = level.length;
  while (width > 1) {
    const half = width >> 1;
    for (let i = 0; i < half; i++) level[i] = nodeHash(level[2 * i]!, level[2 * i + 1]!, scratch);
    if (width & 1) level[half] = level[width - 1]!;
    width = (width + 1) >> 1;
  }
  return level[0]!;
}

/** RFC 9162 §2.1.1 Merkle Tree Hash over one or more 32-byte leaf hashes, in position order. */
export function merkleRoot(leaves: readonly Uint8Array[]): Uint8Array {
  checkLeaves(leaves);
  return rootOfRange(leaves, 0, leaves.length, new Uint8Array(1 + HASH_BYTES * 2));
}

function checkIndex(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${field} must be a non-negative integer`);
}

/**
 * RFC 9162 §2.1.3.1 PATH(m, D[n]): sibling hashes from the leaf's level upward.
 * A one-leaf tree has an empty path; 1,024 leaves give ten hashes.
 */
export function inclusionProof(leaves: readonly Uint8Array[], index: number): Uint8Array[] {
  checkLeaves(leaves);
  checkIndex(index, 'index');
  if (index >= leaves.length) throw new RangeError('index must be below the tree size');
  const scratch = new Uint8Array(1 + HASH_BYTES * 2);
  const path: Uint8Array[] = [];
  // Walk down from the whole tree, keeping the sibling subtree's root at each split; the
  // path lists them from the bottom up, so they are collected and reversed.
  let start = 0;
  let end = leaves.length;
  let m = index;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m < k) {
      path.push(rootOfRange(leaves, start + k, end, scratch));
      end = start + k;
    } else {
      path.push(rootOfRange(leaves, start, start + k, scratch));
      start += k;
      m -= k;
    }
  }
  return path.reverse();
}

/** One tree whose every node is computed once: its root, and any leaf's inclusion path. */
export interface MerkleTree {
  readonly size: number;
  /** The root (32 bytes, a copy). */
  readonly root: Uint8Array;
  /** The leaf at `index` (32 bytes, a copy). */
  leaf(index: number): Uint8Array;
  /** RFC 9162 §2.1.3.1 PATH(index, D[size]), as `inclusionProof` gives it. */
  inclusion(index: number): Uint8Array[];
}

/**
 * The tree over `leaves` with every node kept, for many proofs from one tree: building it costs
 * what one `merkleRoot` does, and each path after that only reads. The nodes are kept level by
 * level as rootOfRange computes them (neighbours paired, an odd last node carried up unchanged,
 * which is the RFC 9162 split); in that form a leaf's path is, from the bottom up, its ancestor's
 * neighbour on each level where the ancestor has one (a carried node has none). Each level is one
 * buffer of 32-byte hashes: 1,024 leaves keep 2,047 hashes in 64 KiB.
 */
export function merkleTree(leaves: readonly Uint8Array[]): MerkleTree {
  checkLeaves(leaves);
  const first = new Uint8Array(leaves.length * HASH_BYTES);
  leaves.forEach((l, i) => first.set(l, i * HASH_BYTES));
  const levels: Uint8Array[] = [first];
  const buf = new Uint8Array(1 + HASH_BYTES * 2);
  buf[0] = 0x01;
  for (let below = first; below.length > HASH_BYTES; ) {
    const width = below.length / HASH_BYTES;
    const level = new Uint8Array(((width + 1) >> 1) * HASH_BYTES);
    for (let i = 0; i + 1 < width; i += 2) {
      buf.set(below.subarray(i * HASH_BYTES, (i + 2) * HASH_BYTES), 1);
      level.set(digest(buf), (i >> 1) * HASH_BYTES);
    }
    if (width & 1) level.set(below.subarray((width - 1) * HASH_BYTES), (width >> 1) * HASH_BYTES);
    levels.push(level);
    below = level;
  }
  const size = leaves.length;
  // Copies out: a kept tree is shared by every caller, and none may change another's bytes.
  const node = (level: Uint8Array, i: number): Uint8Array => level.slice(i * HASH_BYTES, (i + 1) * HASH_BYTES);
  const top = levels[levels.length - 1]!;
  return {
    size,
    get root() {
      return node(top, 0);
    },
    leaf(index) {
      checkIndex(index, 'index');
      if (index >= size) throw new RangeError('index must be below the tree size');
      return node(first, index);
    },
    inclusion(index) {
      checkIndex(index, 'index');
      if (index >= size) throw new RangeError('index must be below the tree size');
      const path: Uint8Array[] = [];
      let i = index;
      for (const level of levels.slice(0, -1)) {
        const neighbour = i ^ 1;
        if (neighbour < level.length / HASH_BYTES) path.push(node(level, neighbour));
        i >>= 1;
      }
      return path;
    },
  };
}

/**
 * RFC 9162 §2.1.3.2: does `path` lead from `leaf` at `index` to `root` in a tree of `size`?
 * Throws CHECKPOINT_INVALID otherwise. Index and size must come from signed data (the
 * checkpoint's range), never from the proof alone.
 */
export function verifyInclusion(
  leaf: Uint8Array,
  index: number,
  size: number,
  path: readonly Uint8Array[],
  root: Uint8Array,
): void {
  if (!Number.isSafeInteger(index) || index < 0) throw fail('inclusion: leaf_index is not a non-negative integer');
  if (!Number.isSafeInteger(size) || size < 1) throw fail('inclusion: tree_size is not a positive integer');
  if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_BYTES) throw fail('inclusion: leaf is not 32 bytes');
  if (!(root instanceof Uint8Array) || root.length !== HASH_BYTES) throw fail('inclusion: root is not 32 bytes');
  // Step 1.
  if (index >= size) throw fail('inclusion: leaf_index is not below tree_size');
  // Step 2-3.
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  const scratch = new Uint8Array(1 + HASH_BYTES * 2);
  // Step 4.
  for (let i = 0; i < path.length; i++) {
    const p = path[i]!;
    if (!(p instanceof Uint8Array) || p.length !== HASH_BYTES) throw fail(`inclusion: path[${i}] is not 32 bytes`);
    if (sn === 0) throw fail('inclusion: path is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r, scratch);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p, scratch);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // Step 5.
  if (sn !== 0) throw fail('inclusion: path is shorter than the tree is deep');
  if (!equalBytes(r, root)) throw fail('inclusion: path does not lead to merkle_root');
}

/**
 * RFC 9162 §2.1.4.1 PROOF(m, D[n]) for the first `oldSize` leaves of `leaves` (n = leaves.length),
 * 1 ≤ oldSize ≤ n. Equal sizes give an empty proof.
 */
export function consistencyProof(leaves: readonly Uint8Array[], oldSize: number): Uint8Array[] {
  checkLeaves(leaves);
  checkIndex(oldSize, 'oldSize');
  if (oldSize < 1 || oldSize > leaves.length) throw new RangeError('oldSize must be between 1 and the tree size');
  const scratch = new Uint8Array(1 + HASH_BYTES * 2);
  // SUBPROOF(m, D[start:end], b) unrolled: each step appends one sibling subtree root, from
  // the top down; RFC 9162 lists them in that order (innermost SUBPROOF first), so reverse.
  const proof: Uint8Array[] = [];
  let start = 0;
  let end = leaves.length;
  let m = oldSize;
  let whole = true; // b: is D[start:start+m] the complete old tree?
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push(rootOfRange(leaves, start + k, end, scratch));
      end = start + k;
    } else {
      proof.push(rootOfRange(leaves, start, start + k, scratch));
      start += k;
      m -= k;
      whole = false;
    }
  }
  if (!whole) proof.push(rootOfRange(leaves, start, end, scratch));
  return proof.reverse();
}

/**
 * RFC 9162 §2.1.4.2: is the tree of `newSize` with `newRoot` an append-only extension of the
 * tree of `oldSize` with `oldRoot`? Throws CHECKPOINT_INVALID otherwise. Equal sizes need an
 * empty proof and equal roots.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  if (!Number.isSafeInteger(oldSize) || oldSize < 1) throw fail('consistency: old tree_size is not a positive integer');
  if (!Number.isSafeInteger(newSize) || newSize < 1) throw fail('consistency: new tree_size is not a positive integer');
  if (!(oldRoot instanceof Uint8Array) || oldRoot.length !== HASH_BYTES) throw fail('consistency: old root is not 32 bytes');
  if (!(newRoot instanceof Uint8Array) || newRoot.length !== HASH_BYTES) throw fail('consistency: new root is not 32 bytes');
  if (oldSize > newSize) throw fail('consistency: old tree_size is above the new one');
  for (let i = 0; i < proof.length; i++) {
    const p = proof[i];
    if (!(p instanceof Uint8Array) || p.length !== HASH_BYTES) throw fail(`consistency: proof[${i}] is not 32 bytes`);
  }
  if (oldSize === newSize) {
    if (proof.length !== 0) throw fail('consistency: proof between equal sizes must be empty');
    if (!equalBytes(oldRoot, newRoot)) throw fail('consistency: equal sizes with different roots');
    return;
  }
  // Step 1.
  if (proof.length === 0) throw fail('consistency: proof is empty');
  // Step 2: an old tree whose size is a power of two is itself a node of the new tree.
  const path: readonly Uint8Array[] = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof;
  // Step 3-4.
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // Step 5.
  let fr = path[0]!;
  let sr = path[0]!;
  const scratch = new Uint8Array(1 + HASH_BYTES * 2);
  // Step 6.
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) throw fail('consistency: proof is longer than the tree is deep');
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr, scratch);
      sr = nodeHash(c, sr, scratch);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      sr = nodeHash(sr, c, scratch);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  // Step 7.
  if (sn !== 0) throw fail('consistency: proof is shorter than the tree is deep');
  if (!equalBytes(fr, oldRoot)) throw fail('consistency: proof does not lead to the old root');
  if (!equalBytes(sr, newRoot)) throw fail('consistency: proof does not lead to the new root');
}
