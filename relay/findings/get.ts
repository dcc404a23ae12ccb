/**
 * findings.get, `GET /v1/posts/{id}/finding` (the newer API's one-post view of its sources):
 * any post's sources, each with its seq and kind, whether it was replaced or retracted
 * (`withdrawn`) and whether anything contests it; the posts of its SPACE that cite it (newest
 * first, at most 200; `cited_by` counts them all); and, when the post is a finding, the finding
 * as findings.list shows it. A post the caller cannot read, or an id that is no post's, is
 * POST_NOT_FOUND, as posts.get answers. A hidden post keeps its finding's number, status and
 * confidence and shows no sources (its author's words), with its `unavailable` marker.
 *
 * A source reads contested when a cause holds on it, or, when it is a finding whose words are
 * shown, on a post it rests on: what marks that finding in the list.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { isUuid } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { isoTime } from '../http/schemas.js';
import type { RelayContext } from '../context.js';
import { accessCache } from '../posts/access.js';
import { PEER_CONTENT_NOTICE } from '../posts/read-params.js';
import type { SourceRow } from '../store/findings.js';
import type { SpaceRow } from '../store/spaces.js';
import { causesOf, renderFinding } from './list.js';

/** The citing posts one view names at most; `cited_by` counts them all. */
export const CITING_MAX = 200;

export async function getFinding(ctx: RelayContext, id: string, caller: string | null): Promise<JsonObject> {
  const post = isUuid(id) ? await ctx.store.posts.byPostId(id) : undefined;
  const access = post === undefined ? undefined : await accessCache(ctx, caller)(post.spaceRowId);
  if (post === undefined || access === undefined) throw new SvcError('POST_NOT_FOUND', 'id: no post with this id that you may read');
  const { space } = access;
  const { findings } = ctx.store;
  const hidden = post.hiddenAt !== null;
  const sources = await findings.sourcesOf(post.rowId);
  let withdrawn = false;
  const shownSources: JsonObject[] = [];
  for (const s of sources) {
    withdrawn ||= s.withdrawn;
    shownSources.push({ post_id: s.postId, seq: String(s.seq), kind: s.kind, withdrawn: s.withdrawn, ...((await contested(ctx, space, s)) ? { contested: true } : {}) });
  }
  const finding = await findings.ofPost(post.rowId);
  return {
    space: space.name,
    post_id: post.postId,
    seq: String(post.seq),
    kind: post.kind,
    finding: finding === undefined ? null : await renderFinding(ctx, space, finding),
    sources: hidden ? null : shownSources,
    source_withdrawn: withdrawn,
    cited_by: await findings.citedBy(post.rowId),
    citing: (await findings.citing(post.rowId, CITING_MAX)).map((c) => ({ post_id: c.postId, seq: String(c.seq), kind: c.kind })),
    ...(hidden ? { unavailable: { state: 'hidden', reason: null, since: isoTime(post.hiddenAt!) } } : {}),
    notice: PEER_CONTENT_NOTICE,
  };
}

/** Whether a cause holds on a source, or on the posts a shown finding among them rests on. */
async function contested(ctx: RelayContext, space: SpaceRow, s: SourceRow): Promise<boolean> {
  if (s.hiddenAt !== null) return false;
  const finding = s.kind === 'finding' && (await ctx.store.findings.ofPost(s.postRow)) !== undefined;
  return (await causesOf(ctx, space, s.postRow, finding, 1)).length > 0;
}
