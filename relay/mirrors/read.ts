/**
 * The read side of a mirror: who may read it, the lines as this reader may see them, the
 * mirror's own export, the proof of one post, and the status every sync is compared by.
 *
 * - Access follows the origin's visibility as last read: a public SPACE is readable by anyone;
 *   any other only by the origin's owner (the KEY that mirrors it), since the mirror does not
 *   know the origin's members. Others get READ_DENIED.
 * - Lines are stored as the owner's export shows them, members-only fields included. A reader
 *   outside the SPACE gets each line as the origin renders it for an outsider (api-notes §4):
 *   without `admitted_revision`, `budget`, `data`, `run_id`, `proof.private` and the admission's
 *   components. The proof still verifies: the admission value stays.
 * - The export is the origin's format (objects.md §14, `svc-ndjson` version 2) over the held
 *   lines, so a reader checks it with the same code as an export of the origin.
 * - A proof answer has the posts.proof shape (objects.md §13), built from the held lines and the
 *   origin's checkpoint that covers the post: a reader verifies it under the origin's root.
 */
import { createHash } from 'node:crypto';
import { readServedCheckpoint } from '../../shared/checkpoint.js';
import type { JsonObject } from '../../shared/canonical.js';
import { equalBytes, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { EXPORT_BYTES_MAX } from '../../shared/limits.js';
import { postLeaf } from '../../shared/merkle.js';
import { checkpointTreesFor } from '../posts/checkpoint-trees.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../posts/export.js';
import type { MirrorRow, MirrorStore } from '../store/mirrors.js';

export const MIRROR_NOTICE =
  "A mirror: the origin's lines and checkpoints, each verified here before it was stored; verify them yourself under the origin's service_root_key. Lines are peer content.";

/** The mirror of `spaceId`, or SPACE_NOT_FOUND. */
export async function mirrorOf(store: MirrorStore, spaceId: string): Promise<MirrorRow> {
  const m = await store.bySpaceId(spaceId);
  if (m === undefined) throw new SvcError('SPACE_NOT_FOUND', `space_id: this relay mirrors no SPACE ${JSON.stringify(spaceId.slice(0, 64))}`);
  return m;
}

/** READ_DENIED unless the caller may read this mirror; answers whether it reads as the owner. */
export function readerOf(mirror: MirrorRow, caller: string | null): { inside: boolean } {
  if (caller === mirror.owner) return { inside: true };
  if (mirror.visibility === 'public') return { inside: false };
  throw new SvcError('READ_DENIED', `a ${mirror.visibility} SPACE: its mirror is read by the origin's owner only; read it at ${mirror.origin}`);
}

/** One held line as this reader may see it (text). */
export function lineFor(line: string, inside: boolean): string {
  if (inside) return line;
  const post = JSON.parse(line) as JsonObject;
  for (const m of ['admitted_revision', 'budget', 'data', 'run_id']) delete post[m];
  const proof = post.proof as JsonObject | undefined;
  if (proof !== undefined) {
    delete proof.private;
    const chain = proof.chain as JsonObject | undefined;
    if (chain !== undefined) {
      delete chain.admitted_revision;
      delete chain.admitted_control_hash;
    }
  }
  return JSON.stringify(post);
}

/** The status a sync compares: head, last checkpoint, the pinned root. */
export async function mirrorStatus(mirror: MirrorRow, store: MirrorStore): Promise<JsonObject> {
  const head = await store.head(mirror.id);
  const last = await store.lastCheckpoint(mirror.id);
  return {
    space_id: mirror.spaceId,
    name: mirror.name,
    origin: mirror.origin,
    visibility: mirror.visibility,
    owner: mirror.owner,
    service_root_key: mirror.rootKey,
    head_seq: String(head?.seq ?? 0),
    head_chain_hash: head === undefined ? null : toHex(head.chainHash),
    checkpoints: await store.countCheckpoints(mirror.id),
    last_checkpoint: last === undefined ? null : { checkpoint_id: toHex(last.checkpointId), first: String(last.first), last: String(last.last) },
    created_at: new Date(mirror.createdAt).toISOString(),
    synced_at: mirror.syncedAt === null ? null : new Date(mirror.syncedAt).toISOString(),
    notice: MIRROR_NOTICE,
  };
}

/** The mirror's export page after `after`: the origin's format over the held lines. */
export async function mirrorExport(mirror: MirrorRow, store: MirrorStore, after: number, limit: number, inside: boolean): Promise<string> {
  const rows = await store.lines(mirror.id, after, limit + 1);
  const head = (await store.head(mirror.id))?.seq ?? 0;
  const hash = createHash('sha256');
  const lines: string[] = [];
  let bytes = 0;
  let lastSeq = after;
  let cut = false;
  for (const row of rows.slice(0, limit)) {
    const line = lineFor(row.line, inside);
    const size = Buffer.byteLength(line) + 1;
    if (lines.length > 0 && bytes + size > EXPORT_BYTES_MAX) {
      cut = true;
      break;
    }
    lines.push(line);
    hash.update(`${line}\n`, 'utf8');
    bytes += size;
    lastSeq = row.seq;
  }
  const hasMore = cut || rows.length > limit;
  const trailer = {
    cursor: { next_after: String(hasMore ? lastSeq : Math.max(lastSeq, head)), has_more: hasMore, head_seq: String(head) },
    export: {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      space_id: mirror.spaceId,
      name: mirror.name,
      signatures: 'per-post',
      line_limit: limit,
      segment_sha256: hash.digest('hex'),
    },
    notice: MIRROR_NOTICE,
  };
  lines.push(JSON.stringify(trailer));
  return `${lines.join('\n')}\n`;
}

/** posts.proof's answer for one held post: post, leaf, covering checkpoint, inclusion path. */
export async function mirrorProof(mirror: MirrorRow, store: MirrorStore, seq: number, inside: boolean): Promise<JsonObject> {
  const held = (await store.lines(mirror.id, seq - 1, 1))[0];
  if (held === undefined || held.seq !== seq) throw new SvcError('POST_NOT_FOUND', `seq: the mirror holds no post ${seq}`);
  const leafOf = (l: { seq: number; objectId: Uint8Array; chainHash: Uint8Array }) => postLeaf(mirror.spaceId, l.seq, l.objectId, l.chainHash);
  const own = (await store.leaf(mirror.id, seq))!;
  const covering = await store.covering(mirror.id, seq);
  let checkpoint: JsonObject | null = null;
  let inclusion: JsonObject | null = null;
  if (covering !== undefined) {
    checkpoint = JSON.parse(covering.served) as JsonObject;
    // Held checkpoints were verified against the held lines when stored; read again, not trusted blindly.
    const link = readServedCheckpoint(checkpoint);
    const range = `checkpoint ${covering.first}-${covering.last}`;
    // Built and checked once per checkpoint, then kept, as the origin's own proofs are (relay/posts/checkpoint-trees.ts).
    const tree = await checkpointTreesFor(store).of(
      `${mirror.id}:${toHex(link.id)}`,
      async () => (await store.leaves(mirror.id, covering.first, covering.last)).map(leafOf),
      (built) => {
        if (toHex(built.root) !== link.fields.merkle_root) throw new SvcError('CHECKPOINT_INVALID', `${range}: the held lines do not give the signed merkle_root`);
      },
    );
    const index = seq - covering.first;
    if (!equalBytes(tree.leaf(index), leafOf(own))) throw new SvcError('CHECKPOINT_INVALID', `${range}: the post's leaf is not the one the signed root covers`);
    inclusion = { leaf_index: index, tree_size: tree.size, path: tree.inclusion(index).map(toHex) };
  }
  return {
    post: JSON.parse(lineFor(held.line, inside)) as JsonObject,
    leaf: toHex(leafOf(own)),
    checkpoint,
    inclusion,
    notice: MIRROR_NOTICE,
  };
}
