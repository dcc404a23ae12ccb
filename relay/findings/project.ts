/**
 * A post's findings record, written with the post under the SPACE's write lock (the newer API's
 * kind `finding` and `data.sources`; relay/store/findings.ts keeps it):
 *
 * - `data.sources` names up to 32 posts of the same SPACE, each by post id or by its seq as a
 *   decimal string (shape: shared/validate.ts `sourcesShape`). On a finding each must name a
 *   post of this SPACE, an earlier one when named by seq, and one post is never named twice
 *   (by its id and its seq): SOURCE_NOT_FOUND with the first as sent, or INVALID_REQUEST. On
 *   the spec's kinds the key keeps its API 0.1 meaning, a reserved name accepted as sent, and is
 *   recorded only when it names posts of the SPACE exactly as a finding's must: that is how a
 *   member's warn or fail contests a finding it cites.
 * - A finding (not sealed: a sealed SPACE's data is sealed) is numbered next in its SPACE with
 *   its claim, status and confidence.
 * - A post that supersedes (not a document version) or retracts one of its author's findings
 *   marks it, once: the list then shows the newer one, or reads the retracted one `withdrawn`.
 */
import { SvcError } from '../../shared/errors.js';
import { isUuid } from '../../shared/encoding.js';
import { sourcesShape } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import type { PreparedPost } from '../posts/prepared.js';
import type { PostRow } from '../store/posts.js';
import type { SpaceRow } from '../store/spaces.js';

/** A post another post cites: its row and its author. */
export interface SourceRef {
  rowId: number;
  author: string;
}

/**
 * The posts `p` cites, in its order, read under the write lock before the post is written (its
 * seq will be the head's next): an empty list when it cites none or, on the spec's kinds, when
 * its sources are not the newer API's.
 */
export async function sourcesOfPost(ctx: RelayContext, space: SpaceRow, p: PreparedPost): Promise<SourceRef[]> {
  const raw = p.input.data?.sources;
  if (raw === undefined) return [];
  const finding = p.input.kind === 'finding';
  // A finding's shape was checked with its data (shared/validate.ts validateFinding).
  const sources = sourcesShape(raw);
  if (sources === undefined) return [];
  const rows: SourceRef[] = [];
  for (const s of sources) {
    const post = isUuid(s) ? await ctx.store.posts.byPostId(s) : await ctx.store.posts.bySeq(space.id, Number(s));
    if (post === undefined || post.spaceRowId !== space.id) {
      if (!finding) return [];
      throw new SvcError('SOURCE_NOT_FOUND', s);
    }
    if (rows.some((r) => r.rowId === post.rowId)) {
      if (!finding) return [];
      throw new SvcError('INVALID_REQUEST', `data.sources: names one post twice: ${s}`);
    }
    rows.push({ rowId: post.rowId, author: post.author });
  }
  return rows;
}

/** After the post is written, in its transaction: its sources, its finding, the finding it ends. */
export async function projectPost(ctx: RelayContext, space: SpaceRow, post: PostRow, p: PreparedPost, sources: readonly SourceRef[]): Promise<void> {
  const { findings, posts } = ctx.store;
  if (sources.length > 0) await findings.cite(post.rowId, space.id, sources.map((s) => s.rowId));
  const data = p.input.data;
  if (p.input.kind === 'finding' && p.sealed === undefined && data !== undefined) {
    await findings.insert(post.rowId, space.id, data.claim as string, data.status as string, data.confidence as string);
  }
  if (post.supersedes !== null && post.kind !== 'version') {
    const target = await posts.byPostId(post.supersedes);
    if (target !== undefined) await findings.markSuperseded(target.rowId, post.rowId);
  }
  if (post.retracts !== null) {
    const target = await posts.byPostId(post.retracts);
    if (target !== undefined) await findings.markRetracted(target.rowId, post.rowId);
  }
}
