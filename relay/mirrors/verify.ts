/**
 * What a mirror checks before it stores a sync (every line and checkpoint the pushing KEY sends
 * is attacker-controlled input; nothing is stored unless all of it passes):
 *
 * - Each line is one post of the origin's export (protocol/objects.md §14) and passes the
 *   verifier's steps 1-5 of §13 (object id, object against the post, private part, author's
 *   signature, chain link: shared/post-proof.ts `checkPostProof`, the same code the bridge runs).
 * - Lines continue the mirror's head: seq = head + 1 and `previous_hash` = the head's
 *   `chain_hash`. A line for a position already held must carry the same `chain_hash`: the
 *   mirror keeps its copy and never takes another history.
 * - Each checkpoint verifies under the origin's root pinned when the mirror was made (signature,
 *   certificate for the purpose `checkpoint`, root; shared/checkpoint.ts `verifyCheckpoint`), is
 *   of this SPACE's posts stream, extends the mirror's last checkpoint (`checkExtends`), and
 *   signs exactly the held lines: predecessor and ending links, and the RFC 9162 root recomputed
 *   over the leaves of its range (objects.md §12). A checkpoint already held must be the same.
 *
 * Export lines carry no receipts (objects.md §14): what the origin signed of them is in its
 * checkpoints. Lines past the last checkpoint are stored on their chain links alone, as the
 * origin serves them; the checkpoint that later covers them must sign exactly them.
 *
 * Refusals: INVALID_REQUEST for a line or checkpoint that fails a check (detail names the line,
 * its seq and the check), HISTORY_ROLLBACK for validly formed data of another history than the
 * one held (detail names the position and both hashes).
 */
import type { JsonValue } from '../../shared/canonical.js';
import { checkExtends, readServedCheckpoint, streamGenesis, verifyCheckpoint, type CheckpointLink, type VerifiedCheckpoint } from '../../shared/checkpoint.js';
import { fromHex, isHex, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { nestsDeeperThan } from '../../shared/json-text.js';
import { merkleRoot, postLeaf } from '../../shared/merkle.js';
import { checkPostProof } from '../../shared/post-proof.js';
import type { MirrorCheckpoint, MirrorLeaf, MirrorLine, MirrorRow, MirrorStore } from '../store/mirrors.js';

/** Deepest nesting a line may have (a post's `data` is bounded well below this). */
const LINE_DEPTH_MAX = 64;

export interface VerifiedSync {
  /** The head and last checkpoint the checks ran against (applySync re-checks them). */
  expectHead: number;
  expectLast: number;
  lines: MirrorLine[];
  checkpoints: MirrorCheckpoint[];
  /** Lines and checkpoints already held, identical, not stored again. */
  alreadyHeld: { lines: number; checkpoints: number };
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function diverges(detail: string): SvcError {
  return new SvcError('HISTORY_ROLLBACK', `${detail}; this mirror keeps its copy and takes no other history`);
}

/** One line read as a post: an object of this SPACE with a decimal seq and a proof block. */
function readLine(text: string, index: number, spaceId: string): { post: Obj; seq: number; objectId: string; chainHash: string; previousHash: string } {
  const where = `lines[${index}]`;
  if (nestsDeeperThan(text, LINE_DEPTH_MAX)) throw new SvcError('INVALID_REQUEST', `${where}: nested deeper than ${LINE_DEPTH_MAX}`);
  let post: unknown;
  try {
    post = JSON.parse(text);
  } catch {
    throw new SvcError('INVALID_REQUEST', `${where}: not JSON`);
  }
  if (!isObject(post)) throw new SvcError('INVALID_REQUEST', `${where}: not a JSON object`);
  if (post.space_id !== spaceId) throw new SvcError('INVALID_REQUEST', `${where}: a post of another SPACE`);
  const seqText = post.seq;
  if (typeof seqText !== 'string' || !/^[1-9][0-9]{0,15}$/.test(seqText) || !Number.isSafeInteger(Number(seqText))) {
    throw new SvcError('INVALID_REQUEST', `${where}.seq: a decimal position`);
  }
  const proof = isObject(post.proof) ? post.proof : undefined;
  const chain = proof !== undefined && isObject(proof.chain) ? proof.chain : undefined;
  if (proof === undefined || chain === undefined || !isHex(proof.object_id, 32) || !isHex(chain.chain_hash, 32) || !isHex(chain.previous_hash, 32)) {
    throw new SvcError('INVALID_REQUEST', `${where} (seq ${seqText}): no proof block with object_id and chain hashes (export lines carry one)`);
  }
  return { post, seq: Number(seqText), objectId: proof.object_id, chainHash: chain.chain_hash, previousHash: chain.previous_hash };
}

async function verifyLines(mirror: MirrorRow, store: MirrorStore, texts: readonly string[], head: MirrorLeaf | undefined) {
  const lines: MirrorLine[] = [];
  let held = 0;
  let at = head === undefined ? { seq: 0, hash: toHex(streamGenesis(mirror.spaceId, 'posts')) } : { seq: head.seq, hash: toHex(head.chainHash) };
  for (const [i, text] of texts.entries()) {
    const line = readLine(text, i, mirror.spaceId);
    if (line.seq <= at.seq) {
      const kept = lines.find((l) => l.seq === line.seq) ?? await store.leaf(mirror.id, line.seq);
      const keptHash = kept === undefined ? undefined : toHex(kept.chainHash);
      if (keptHash !== line.chainHash) {
        throw diverges(`SPACE ${mirror.name} seq ${line.seq}: the mirror holds chain_hash ${keptHash ?? '(none)'}, lines[${i}] has ${line.chainHash}`);
      }
      held++;
      continue;
    }
    if (line.seq !== at.seq + 1) {
      throw new SvcError('INVALID_REQUEST', `lines[${i}]: seq ${line.seq} does not follow ${at.seq}, the mirror's head; send the lines after it in order`);
    }
    if (line.previousHash !== at.hash) {
      throw diverges(`SPACE ${mirror.name} seq ${line.seq}: links to previous_hash ${line.previousHash}, the mirror's seq ${at.seq} has chain_hash ${at.hash}`);
    }
    const check = checkPostProof(line.post as Record<string, JsonValue>, mirror.passkeys);
    if (check.ok !== true) throw new SvcError('INVALID_REQUEST', `lines[${i}] (seq ${line.seq}): ${check.detail}`);
    lines.push({ seq: line.seq, objectId: fromHex(line.objectId, 32), chainHash: fromHex(line.chainHash, 32), line: text });
    at = { seq: line.seq, hash: line.chainHash };
  }
  return { lines, held };
}

/** The leaves of first..last from the held lines and the new ones, or undefined when one is missing. */
async function leavesOf(mirror: MirrorRow, store: MirrorStore, fresh: ReadonlyMap<number, MirrorLeaf>, first: number, last: number) {
  const held = new Map((await store.leaves(mirror.id, first, last)).map((l) => [l.seq, l]));
  const out: MirrorLeaf[] = [];
  let fromHeld = 0;
  for (let seq = first; seq <= last; seq++) {
    const l = held.get(seq) ?? fresh.get(seq);
    if (l === undefined) return undefined;
    if (held.has(seq)) fromHeld++;
    out.push(l);
  }
  return { leaves: out, fromHeld };
}

function verifyOne(mirror: MirrorRow, c: unknown, i: number): VerifiedCheckpoint {
  const root = fromHex(mirror.rootKey, 32);
  let v: VerifiedCheckpoint;
  try {
    v = verifyCheckpoint(c, root, `checkpoints[${i}]`);
  } catch (e) {
    throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: ${(e as SvcError).detail ?? (e as Error).message} (checked under the origin's root ${mirror.rootKey})`);
  }
  if (v.fields.space_id !== mirror.spaceId) throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: a checkpoint of another SPACE`);
  if (v.fields.stream !== 'posts') throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: mirrors keep the posts stream only`);
  return v;
}

async function verifyCheckpoints(mirror: MirrorRow, store: MirrorStore, served: readonly unknown[], fresh: readonly MirrorLine[]) {
  const freshBySeq = new Map<number, MirrorLeaf>(fresh.map((l) => [l.seq, l]));
  const stored = await store.lastCheckpoint(mirror.id);
  let kept: CheckpointLink | undefined = stored === undefined ? undefined : readServedCheckpoint(JSON.parse(stored.served));
  const out: MirrorCheckpoint[] = [];
  let held = 0;
  for (const [i, c] of served.entries()) {
    const v = verifyOne(mirror, c, i);
    const f = v.fields;
    const first = Number(f.first);
    const last = Number(f.last);
    const id = toHex(v.id);
    const same = out.find((x) => x.last === last) ?? await store.checkpointAt(mirror.id, last);
    if (same !== undefined || (kept !== undefined && last <= Number(kept.fields.last))) {
      if (same === undefined || toHex(same.checkpointId) !== id) {
        throw diverges(`SPACE ${mirror.name} checkpoint ${f.first}-${f.last}: the mirror holds ${same === undefined ? 'another range there' : toHex(same.checkpointId)}, checkpoints[${i}] is ${id}`);
      }
      held++;
      continue;
    }
    if (kept === undefined) {
      if (first !== 1) throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: the mirror holds no checkpoint yet; send the first one (first 1)`);
    } else {
      if (first > Number(kept.fields.last) + 1) {
        throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: starts at ${first}; the mirror's last checkpoint ends at ${kept.fields.last}, send the ones between first`);
      }
      try {
        checkExtends(kept, v);
      } catch (e) {
        throw diverges(`SPACE ${mirror.name} checkpoint ${f.first}-${f.last} (${id}): ${(e as SvcError).detail ?? (e as Error).message}`);
      }
    }
    const range = await leavesOf(mirror, store, freshBySeq, first, last);
    if (range === undefined) throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: covers ${first}-${last}; send its lines first`);
    const root = toHex(merkleRoot(range.leaves.map((l) => postLeaf(mirror.spaceId, l.seq, l.objectId, l.chainHash))));
    const ending = toHex(range.leaves[range.leaves.length - 1]!.chainHash);
    if (root !== f.merkle_root || ending !== f.ending_hash) {
      const detail = `SPACE ${mirror.name} checkpoint ${f.first}-${f.last}: signs merkle_root ${f.merkle_root} and ending_hash ${f.ending_hash}, the lines give ${root} and ${ending}`;
      if (range.fromHeld > 0) throw diverges(detail);
      throw new SvcError('INVALID_REQUEST', `checkpoints[${i}]: ${detail}`);
    }
    out.push({ first, last, checkpointId: v.id, served: JSON.stringify(c) });
    kept = v;
  }
  return { checkpoints: out, held };
}

/** Check one sync against what the mirror holds; throws the refusal, stores nothing. */
export async function verifySync(mirror: MirrorRow, store: MirrorStore, lines: readonly string[], checkpoints: readonly unknown[]): Promise<VerifiedSync> {
  const head = await store.head(mirror.id);
  const last = await store.lastCheckpoint(mirror.id);
  const l = await verifyLines(mirror, store, lines, head);
  const c = await verifyCheckpoints(mirror, store, checkpoints, l.lines);
  return {
    expectHead: head?.seq ?? 0,
    expectLast: last?.last ?? 0,
    lines: l.lines,
    checkpoints: c.checkpoints,
    alreadyHeld: { lines: l.held, checkpoints: c.held },
  };
}
