/**
 * posts.hide / posts.unhide (spec/2-endpoints.md; spec/1-concepts.md "Roles matrix", "Post"
 * unavailable marker, "Audit log events").
 *
 * - Who: the SPACE's owner (any post), or an admin for a post whose author ranks below admin
 *   (members below it and KEYS with no role), by the author's current rank. Else CONTROL_DENIED.
 * - A post the caller cannot read is POST_NOT_FOUND, like one that does not exist.
 * - SPACE_CLOSED once the SPACE is closed.
 * - The change and its event (`post.hidden` / `post.unhidden`) are one transaction. Hiding a
 *   hidden post (or showing a shown one) changes nothing and writes no event.
 * - A hidden post keeps its position, object and link; reads show `unavailable` (P2's renderer).
 * - In an oracle space, hiding the current version hides its words, so links.list stops listing
 *   the links it carries; showing it again lists them again (same transaction).
 */
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { canModerate, canReadPosts, type SpaceRole } from '../policy.js';
import { notifierFor } from './notify.js';

export interface HiddenAnswer {
  post_id: string;
  space: string;
  seq: string;
  hidden: boolean;
  /** The marker reads carry while hidden, else null. */
  unavailable: { state: 'hidden'; reason: null; since: string } | null;
  /** Whether this call changed anything (and wrote an event). */
  changed: boolean;
  /** The event's revision when one was written, else null. */
  revision: string | null;
}

export async function setPostHidden(ctx: RelayContext, postId: string, actor: string, hide: boolean): Promise<HiddenAnswer> {
  const { store } = ctx;
  return await store.posts.transaction(async () => {
    const post = await store.posts.byPostId(postId);
    const space = post === undefined ? undefined : await store.spaces.byRowId(post.spaceRowId);
    const role: SpaceRole = space === undefined ? null : await store.members.roleOf(space, actor);
    if (post === undefined || space === undefined || !canReadPosts(space, role)) {
      throw new SvcError('POST_NOT_FOUND', 'post_id: no post with this id');
    }
    if (role !== 'owner') {
      const authorRole = await store.members.roleOf(space, post.author);
      if (!canModerate(role, authorRole)) {
        throw new SvcError(
          'CONTROL_DENIED',
          role === 'admin'
            ? `an admin hides only posts of KEYS ranked below it; the author is ${authorRole}`
            : 'hiding a post needs the owner, or an admin over the author',
        );
      }
    }
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', 'the SPACE takes no new writes');
    const now = ctx.clock();
    let hiddenAt = post.hiddenAt;
    let revision: string | null = null;
    const changed = hide !== (post.hiddenAt !== null);
    if (changed) {
      hiddenAt = hide ? now : null;
      await store.posts.setHidden(post.rowId, hiddenAt, hide ? actor : null);
      if (space.oracle && (await store.oracle.current(space.id))?.postId === post.postId) await store.oracleLinks.indexLinks(space.id, post.postId);
      const event = await store.events.append(
        space,
        actor,
        hide ? 'post.hidden' : 'post.unhidden',
        { post_id: post.postId, seq: String(post.seq) },
        now,
      );
      revision = String(event.revision);
      // Those following the post live (the connector) read again after the commit (notify.ts).
      notifierFor(store.db).space(space.id);
    }
    return {
      post_id: post.postId,
      space: space.name,
      seq: String(post.seq),
      hidden: hiddenAt !== null,
      unavailable: hiddenAt === null ? null : { state: 'hidden', reason: null, since: new Date(hiddenAt).toISOString() },
      changed,
      revision,
    };
  });
}
