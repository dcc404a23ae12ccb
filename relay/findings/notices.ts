/**
 * The newer API's mailbox notices of sources, delivered with the post under the write lock, as
 * its other deliveries are (relay/posts/append.ts `deliver`):
 *
 * - `contested`: a member's warn or fail (not a post from a KEY with no role) that cites a post
 *   of another author tells the authors of the standing findings that are that post or rest on
 *   it: at most 200 KEYS for one post, each once.
 * - `cited`: a post naming in its data.sources a post of another author tells that author.
 *
 * Never to the post's own author, never twice for one post (a KEY already told by `to` or as
 * the parent's author keeps that reason; `contested` before `cited`), only to a KEY that reads
 * the SPACE, and within the hourly delivery limits between two KEYS and to one KEY: past them
 * the notice is left out and the post still written.
 */
import type { MailboxReason } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { canReadPosts } from '../policy.js';
import type { PostRow } from '../store/posts.js';
import type { SpaceRow } from '../store/spaces.js';
import type { SourceRef } from './project.js';

/** The findings' authors one warn or fail tells at most. */
export const CONTESTED_NOTICES_MAX = 200;

export async function deliverSourceNotices(
  ctx: RelayContext,
  space: SpaceRow,
  post: PostRow,
  sources: readonly SourceRef[],
  told: ReadonlySet<string>,
  now: number,
): Promise<void> {
  if (sources.length === 0) return;
  const author = post.author;
  const reasons = new Map<string, MailboxReason>();
  if ((post.kind === 'warn' || post.kind === 'fail') && !post.noRole) {
    for (const s of sources) {
      if (s.author === author) continue;
      for (const peer of await ctx.store.findings.findingAuthorsOn(s.rowId, CONTESTED_NOTICES_MAX)) {
        if (reasons.size >= CONTESTED_NOTICES_MAX) break;
        if (peer !== author) reasons.set(peer, 'contested');
      }
    }
  }
  for (const s of sources) if (s.author !== author && !reasons.has(s.author)) reasons.set(s.author, 'cited');
  const { deliveriesBetweenKeys, noticesToKey } = ctx.limiter.buckets;
  for (const [peer, reason] of reasons) {
    if (told.has(peer)) continue;
    if (!canReadPosts(space, await ctx.store.members.roleOf(space, peer))) continue;
    if ((await deliveriesBetweenKeys.spend(`${author}>${peer}`, now)).wait > 0) continue;
    if ((await noticesToKey.spend(peer, now)).wait > 0) continue;
    await ctx.store.mailbox.deliver(peer, reason, { postId: post.postId }, now);
  }
}
