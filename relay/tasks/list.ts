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
import { budgetPage, intParam, PEER_CONTENT_NOTICE, tokenBudgetParam } from '../posts/read-params.js';
import { isoTime } from '../http/schemas.js';
import type { StoredTaskState } from '../store/tasks.js';
import { taskSpaceForRead } from './access.js';
import { readNumber, readTag } from './input.js';
import { renderRetired, renderTask } from './render.js';

export const TASKS_LIMIT_DEFAULT = 50;

const STATES: readonly string[] = ['open', 'held', 'done', 'accepted', 'retired'];

/** Earlier revisions a read of one task pages through, unless asked for fewer, and at most. */
export const HISTORY_LIMIT = 10;

export interface ListQuery {
  state?: string | undefined;
  tag?: string | undefined;
  before?: string | undefined;
  limit?: string | undefined;
  token_budget?: string | undefined;
}

/**
 * A page as the list answers it: the rendered tasks the token budget pays for (the first
 * always), what they cost (`tokens_estimated`, as every budgeted read reports it) and
 * `budget_cut` only when the budget left a task out; `next_before` then continues after the
 * last task kept.
 */
function listPage(rendered: JsonObject[], hasMore: boolean, budget: number | undefined): JsonObject {
  const page = budgetPage(rendered, budget);
  const more = hasMore || page.budgetCut;
  const last = page.items[page.items.length - 1];
  return {
    items: page.items,
    next_before: more && last ? (last.number as number) : null,
    has_more: more,
    tokens_estimated: page.tokensEstimated,
    ...(page.budgetCut ? { budget_cut: true } : {}),
    notice: PEER_CONTENT_NOTICE,
  };
}

export async function listTasks(ctx: RelayContext, name: string, caller: string | null, q: ListQuery): Promise<JsonObject> {
  const { space } = await taskSpaceForRead(ctx, name, caller);
  if (q.state !== undefined && !(STATES as readonly string[]).includes(q.state)) {
    throw new SvcError('INVALID_REQUEST', `state: one of ${STATES.join(', ')}`);
  }
  const tag = q.tag === undefined ? undefined : readTag(q.tag);
  const before = intParam(q.before, 'before', 1, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? TASKS_LIMIT_DEFAULT;
  const budget = tokenBudgetParam(q.token_budget);
  const now = ctx.clock();
  if (q.state === 'retired') {
    // Retired tasks are listed only when asked for by state (a reader of API 0.1 knows four states).
    const retired = await ctx.store.tasks.retiredPage({ spaceRowId: space.id, before, limit, tag });
    return listPage(retired.items.map((row) => renderRetired(space, row)), retired.hasMore, budget);
  }
  const page = await ctx.store.tasks.page({ spaceRowId: space.id, before, limit, state: q.state as StoredTaskState | undefined, tag, now });
  const rendered = await Promise.all(page.items.map(async (row) => await renderTask(ctx.store.tasks, space, row, now)));
  return listPage(rendered, page.hasMore, budget);
}

export interface GetQuery {
  history?: string | undefined;
  before?: string | undefined;
  limit?: string | undefined;
}

/**
 * tasks.get: one task by its number, for whoever reads the SPACE's list, a retired one
 * included. With `history=true`, its earlier words too, newest first, each with who changed
 * them, when and why: `before` (an earlier `next_before`, a revision) and `limit` page them.
 */
export async function getTask(ctx: RelayContext, name: string, caller: string | null, written: string, q: GetQuery): Promise<JsonObject> {
  const { space } = await taskSpaceForRead(ctx, name, caller);
  if (q.history !== undefined && q.history !== 'true' && q.history !== 'false') throw new SvcError('INVALID_REQUEST', 'history: true or false');
  const history = q.history === 'true';
  if (!history && (q.before !== undefined || q.limit !== undefined)) {
    throw new SvcError('INVALID_REQUEST', 'before and limit page the history: send history=true with them');
  }
  const before = intParam(q.before, 'before', 1, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q.limit, 'limit', 1, HISTORY_LIMIT) ?? HISTORY_LIMIT;
  const number = readNumber(written);
  const now = ctx.clock();
  const row = await ctx.store.tasks.get(space.id, number);
  const retired = row ? undefined : await ctx.store.tasks.retiredGet(space.id, number);
  if (!row && !retired) throw new SvcError('TASK_NOT_FOUND', `${space.name} has no task ${number}`);
  const out: JsonObject = { task: row ? await renderTask(ctx.store.tasks, space, row, now) : renderRetired(space, retired!) };
  if (history) {
    const page = await ctx.store.tasks.revisions(space.id, number, before, limit);
    const end = page.items[page.items.length - 1];
    out.history = page.items.map((r) => ({
      revision: r.revision,
      title: r.title,
      body: r.body,
      tag: r.tag,
      after: r.after,
      ended: { by: r.ended.by, at: isoTime(r.ended.at), reason: r.ended.reason },
    }));
    out.next_before = page.hasMore && end ? end.revision : null;
    out.has_more = page.hasMore;
  }
  out.notice = PEER_CONTENT_NOTICE;
  return out;
}
