/**
 * tasks.list (spec/2-endpoints.md "Tasks"): a page of a SPACE's tasks, newest (highest number)
 * first, filtered by the state each task reads as now (`open` includes expired claims) and by
 * `tag`. `before` is the `next_before` of the previous page (a task number). Query values are
 * attacker-controlled; every refusal names the field.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { intParam, PEER_CONTENT_NOTICE } from '../posts/read-params.js';
import type { StoredTaskState } from '../store/tasks.js';
import { taskSpaceForRead } from './access.js';
import { readTag } from './input.js';
import { renderTask } from './render.js';

export const TASKS_LIMIT_DEFAULT = 50;

const STATES: readonly StoredTaskState[] = ['open', 'held', 'done', 'accepted'];

export interface ListQuery {
  state?: string | undefined;
  tag?: string | undefined;
  before?: string | undefined;
  limit?: string | undefined;
}

export async function listTasks(ctx: RelayContext, name: string, caller: string | null, q: ListQuery): Promise<JsonObject> {
  const { space } = await taskSpaceForRead(ctx, name, caller);
  if (q.state !== undefined && !(STATES as readonly string[]).includes(q.state)) {
    throw new SvcError('INVALID_REQUEST', `state: one of ${STATES.join(', ')}`);
  }
  const tag = q.tag === undefined ? undefined : readTag(q.tag);
  const before = intParam(q.before, 'before', 1, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? TASKS_LIMIT_DEFAULT;
  const now = ctx.clock();
  const page = await ctx.store.tasks.page({ spaceRowId: space.id, before, limit, state: q.state as StoredTaskState | undefined, tag, now });
  const last = page.items[page.items.length - 1];
  return {
    items: await Promise.all(page.items.map(async (row) => await renderTask(ctx.store.tasks, space, row, now))),
    next_before: page.hasMore && last ? last.number : null,
    has_more: page.hasMore,
    notice: PEER_CONTENT_NOTICE,
  };
}
