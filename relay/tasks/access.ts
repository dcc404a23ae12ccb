/**
 * Who may read and work a SPACE's task list (spec/1-concepts.md "Roles matrix", "Task";
 * spec/3-errors.md TASK_DENIED): reading as posts are read (READ_DENIED); adding, taking,
 * finishing and giving back needs writer or above; checking (confirm, reject, `next` with
 * `verify`) needs writer or above, or coordinator or above where `task_confirmers` says
 * `coordinators`. An oracle space has no task list; a blocked KEY does no task writes
 * (WRITE_BLOCKED); a closed SPACE takes none (SPACE_CLOSED), though its list stays readable.
 */
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { spaceForPosts } from '../posts/access.js';
import { canCheckTasks, canWorkTasks, type SpaceRole } from '../policy.js';
import type { SpaceRow } from '../store/spaces.js';

export interface TaskSpaceAccess {
  space: SpaceRow;
  role: SpaceRole;
}

function noTasksInOracle(space: SpaceRow): void {
  if (space.oracle) throw new SvcError('ORACLE_HAS_NO_TASKS', `${space.name} is an oracle space`);
}

/** The SPACE of tasks.list: SPACE_NOT_FOUND, READ_DENIED, ORACLE_HAS_NO_TASKS. */
export async function taskSpaceForRead(ctx: RelayContext, name: string, caller: string | null): Promise<TaskSpaceAccess> {
  const { space, role } = await spaceForPosts(ctx, name, caller);
  noTasksInOracle(space);
  return { space, role };
}

/**
 * The SPACE of a task write by `me`, read under the write lock: SPACE_NOT_FOUND,
 * ORACLE_HAS_NO_TASKS, TASK_DENIED, WRITE_BLOCKED, SPACE_CLOSED, in that order.
 */
export async function taskSpaceForWrite(ctx: RelayContext, name: string, me: string, action: 'work' | 'check'): Promise<TaskSpaceAccess> {
  const space = await ctx.store.spaces.byName(name);
  if (!space) throw new SvcError('SPACE_NOT_FOUND', `name: no SPACE is called ${JSON.stringify(name.slice(0, 64))}`);
  noTasksInOracle(space);
  const role = await ctx.store.members.roleOf(space, me);
  if (action === 'work' && !canWorkTasks(role)) {
    throw new SvcError('TASK_DENIED', `your role here is ${role ?? 'none'}; task work needs writer or above`);
  }
  if (action === 'check' && !canCheckTasks(space.taskConfirmers, role)) {
    const needs = space.taskConfirmers === 'coordinators' ? 'coordinator' : 'writer';
    throw new SvcError('TASK_DENIED', `your role here is ${role ?? 'none'}; checking tasks in ${space.name} needs ${needs} or above`);
  }
  if (await ctx.store.blocks.isBlocked(space.id, me)) throw new SvcError('WRITE_BLOCKED', `you are blocked from writing in ${space.name}`);
  if (space.status === 'closed') {
    throw new SvcError('SPACE_CLOSED', `${space.name} is closed${space.replacedBy ? `; it continues in ${space.replacedBy}` : ''}`);
  }
  return { space, role };
}

/** A `post_id` must be `me`'s own live (not hidden) post in this SPACE: TASK_POST_NOT_FOUND otherwise. */
export async function ownPost(ctx: RelayContext, a: TaskSpaceAccess, me: string, postId: string): Promise<void> {
  const post = await ctx.store.posts.byPostId(postId);
  if (!post || post.spaceRowId !== a.space.id || post.author !== me || post.hiddenAt !== null) {
    throw new SvcError('TASK_POST_NOT_FOUND', `post_id: not a post of yours in ${a.space.name}`);
  }
}
