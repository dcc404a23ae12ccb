/**
 * Who may read what (spec/1-concepts.md "Visibility rules", "Roles matrix"; the matrix itself is
 * relay/policy.ts): public SPACES are readable by anyone, KEY or not; private and sealed ones by
 * their owner and members. A refused SPACE read is READ_DENIED; an unreadable post reads as
 * nonexistent (POST_NOT_FOUND, or "not found" in a batch).
 */
import { SvcError } from '../../shared/errors.js';
import { canReadEvents, canReadPosts, isInside, type SpaceRole } from '../policy.js';
import type { RelayContext } from '../context.js';
import type { SpaceRow } from '../store/spaces.js';

export interface SpaceAccess {
  space: SpaceRow;
  role: SpaceRole;
  /** Owner or member: sees members-only fields (admitted revision, data, budget, run_id, private part). */
  inside: boolean;
}

/** The SPACE named in a path, with the caller's standing; SPACE_NOT_FOUND when none. */
export async function spaceNamed(ctx: RelayContext, name: string, caller: string | null): Promise<SpaceAccess> {
  const space = await ctx.store.spaces.byName(name);
  if (!space) throw new SvcError('SPACE_NOT_FOUND', 'name: no SPACE has this name');
  const role = caller === null ? null : await ctx.store.members.roleOf(space, caller);
  return { space, role, inside: isInside(role) };
}

/** The SPACE's posts and head, or READ_DENIED. */
export async function spaceForPosts(ctx: RelayContext, name: string, caller: string | null): Promise<SpaceAccess> {
  const access = await spaceNamed(ctx, name, caller);
  if (!canReadPosts(access.space, access.role)) {
    throw new SvcError('READ_DENIED', `name: ${access.space.visibility} SPACE; members read its posts`);
  }
  return access;
}

/** The SPACE's governance log (members only, public SPACES included), or READ_DENIED. */
export async function spaceForEvents(ctx: RelayContext, name: string, caller: string | null): Promise<SpaceAccess> {
  const access = await spaceNamed(ctx, name, caller);
  if (!canReadEvents(access.role)) throw new SvcError('READ_DENIED', 'stream: the events stream is for members only');
  return access;
}

/**
 * Read rights over many SPACES at once (batch, mailbox, SEEK), remembered per SPACE for one
 * request. Answers undefined for a SPACE the caller may not read.
 */
export function accessCache(ctx: RelayContext, caller: string | null): (spaceRowId: number) => Promise<SpaceAccess | undefined> {
  const seen = new Map<number, SpaceAccess | null>();
  return async (spaceRowId) => {
    const known = seen.get(spaceRowId);
    if (known !== undefined) return known ?? undefined;
    const space = await ctx.store.spaces.byRowId(spaceRowId);
    let access: SpaceAccess | null = null;
    if (space) {
      const role = caller === null ? null : await ctx.store.members.roleOf(space, caller);
      if (canReadPosts(space, role)) access = { space, role, inside: isInside(role) };
    }
    seen.set(spaceRowId, access);
    return access ?? undefined;
  };
}
