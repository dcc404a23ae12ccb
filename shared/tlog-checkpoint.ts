/**
 * A SPACE's posts as a C2SP transparency log (https://c2sp.org/tlog-checkpoint).
 *
 *   tree of a SPACE = the RFC 9162 tree over the leaves of its posts 1..N in seq order, each leaf
 *                     the one its checkpoints use (protocol/objects.md §12, shared/merkle.ts
 *                     `postLeaf`); leaf index i is seq i + 1
 *   checkpoint body = origin ‖ "\n" ‖ decimal N ‖ "\n" ‖ base64(MTH) ‖ "\n"
 *   origin          = <relay host> "/spaces/" <SPACE name>
 *   empty tree      = N 0 and MTH = SHA-256("") (RFC 9162 §2.1.1)
 *
 * The relay signs the body as a signed note (shared/signed-note.ts) with its online service key
 * under the key name <relay host>; witnesses add cosignature lines.
 *
 * Proofs over a tree too large to hold as one array take the subtree hashes from a callback
 * (`RangeRoot`, MTH of leaves [start, end)): the relay answers it from hashes it keeps per
 * 1,024 posts. The builders follow RFC 9162 §2.1.3.1 and §2.1.4.1 as shared/merkle.ts does;
 * shared/merkle.ts `verifyInclusion` and `verifyConsistency` (§2.1.3.2, §2.1.4.2) check them.
 */
import { hash } from 'node:crypto';
import { fromHex } from './encoding.js';
import { SvcError } from './errors.js';
import { fromBase64Std, toBase64Std } from './signed-note.js';

/** MTH of leaves [start, end) of one tree, end > start. */
export type RangeRoot = (start: number, end: number) => Uint8Array;

export interface TreeHead {
  readonly origin: string;
  /** Number of leaves (the SPACE's newest signed seq). */
  readonly size: number;
  readonly root: Uint8Array;
}

/**
 * RFC 9162 §2.1.1: the hash of an empty tree, SHA-256 of no bytes. Written out rather than
 * computed, so that loading this module loads no hash function (the bridge's start loads
 * node:crypto only when it first needs it: scripts/bundle-bridge.mjs).
 */
export const EMPTY_TREE_ROOT: Uint8Array = fromHex('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 32);

function fail(detail: string): SvcError {
  return new SvcError('CHECKPOINT_INVALID', detail);
}

/** The origin line of a SPACE's log at a relay: host (as its key name) and SPACE name. */
export function spaceOrigin(host: string, spaceName: string): string {
  return `${host}/spaces/${spaceName}`;
}

/** The checkpoint body (the note text): origin, size, base64 root, each on its line. */
export function checkpointBody(head: TreeHead): string {
  if (!Number.isSafeInteger(head.size) || head.size < 0) throw new RangeError('size must be a non-negative integer');
  if (!(head.root instanceof Uint8Array) || head.root.length !== 32) throw new TypeError('root must be 32 bytes');
  if (head.origin.length === 0 || /[\n\r]/.test(head.origin)) throw new TypeError('origin must be one non-empty line');
  return `${head.origin}\n${head.size}\n${toBase64Std(head.root)}\n`;
}

/**
 * Read a checkpoint body (attacker-controlled): origin, size with no leading zero, a 32-byte
 * root in standard base64; extension lines after them are allowed (tlog-checkpoint) and returned.
 */
export function readCheckpointBody(text: string, field = 'checkpoint'): TreeHead & { extensions: string[] } {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw fail(`${field}: fewer than three lines`);
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (origin.length === 0) throw fail(`${field}: empty origin`);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw fail(`${field}: tree size is not a decimal`);
  const root = fromBase64Std(rootText, `${field} root hash`);
  if (root.length !== 32) throw fail(`${field}: root hash is not 32 bytes`);
  return { origin, size: Number(sizeText), root, extensions: lines.slice(3, -1) };
}

/** Largest power of two strictly below n (n ≥ 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH of the first `size` leaves (the empty-tree hash for 0). */
export function treeRoot(size: number, rangeRoot: RangeRoot): Uint8Array {
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError('size must be a non-negative integer');
  return size === 0 ? EMPTY_TREE_ROOT : rangeRoot(0, size);
}

/** RFC 9162 §2.1.3.1 PATH(index, D[size]) from subtree hashes, bottom up. */
export function treeInclusionProof(index: number, size: number, rangeRoot: RangeRoot): Uint8Array[] {
  if (!Number.isSafeInteger(size) || size < 1) throw new RangeError('size must be positive');
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) throw new RangeError('index must be below size');
  const path: Uint8Array[] = [];
  let start = 0;
  let end = size;
  let m = index;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m < k) {
      path.push(rangeRoot(start + k, end));
      end = start + k;
    } else {
      path.push(rangeRoot(start, start + k));
      start += k;
      m -= k;
    }
  }
  return path.reverse();
}

/**
 * RFC 9162 §2.1.4.1 PROOF(from, D[to]) from subtree hashes, 1 ≤ from ≤ to; equal sizes give
 * an empty proof. (A proof from the empty tree is empty too: nothing to prove.)
 */
export function treeConsistencyProof(from: number, to: number, rangeRoot: RangeRoot): Uint8Array[] {
  if (!Number.isSafeInteger(to) || to < 1) throw new RangeError('to must be positive');
  if (!Number.isSafeInteger(from) || from < 1 || from > to) throw new RangeError('from must be between 1 and to');
  const proof: Uint8Array[] = [];
  let start = 0;
  let end = to;
  let m = from;
  let whole = true; // SUBPROOF's b: is D[start:start+m] the complete old tree?
  while (m !== end - start) {
    const k = splitPoint(end - start);
    if (m <= k) {
      proof.push(rangeRoot(start + k, end));
      end = start + k;
    } else {
      proof.push(rangeRoot(start, start + k));
      start += k;
      m -= k;
      whole = false;
    }
  }
  if (!whole) proof.push(rangeRoot(start, end));
  return proof.reverse();
}
