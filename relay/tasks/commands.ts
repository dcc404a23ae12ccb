/**
 * The task commands (spec/2-endpoints.md "Tasks"; the tasks contract): add, next, done,
 * release, confirm, reject, change, retire. Each runs as one work of the commit queue (relay/posts/commit-queue
 * .ts) under its SPACE's write lock (SQLite's one writer; on PostgreSQL the SPACE's lock), so it
 * reads the SPACE, the caller's role and the task and writes in the same breath: two `next` callers at the same moment are
 * two works in turn, and the second never sees the first's task as claimable. A refusal is
 * thrown inside the work's savepoint and leaves nothing behind.
 *
 * Refusals in the catalogue's order: SPACE_NOT_FOUND, ORACLE_HAS_NO_TASKS, TASK_DENIED,
 * WRITE_BLOCKED, SPACE_CLOSED, then the task's own (relay/tasks/access.ts, machine.ts).
 * Tasks make no post, event, checkpoint or mailbox row (spec "Task").
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { TASK_LIMITS } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { commitQueueFor } from '../posts/commit-queue.js';
import { canGovernTasks, canReleaseOthersTask } from '../policy.js';
import type { TaskRow } from '../store/tasks.js';
import { ownPost, taskSpaceForWrite, type TaskSpaceAccess } from './access.js';
import { attemptCheck, attemptDone } from './attempts.js';
import { readNumber, type AddInput, type ChangeInput, type CheckTarget, type NextInput } from './input.js';
import { checkChange, checkCheck, checkDone, checkDoneWords, checkRelease, checkRetire, checkTake, enoughConfirmations } from './machine.js';
import { renderRetired, renderTask } from './render.js';

const HOUR_MS = 3_600_000;

export const NO_OPEN_TASK = 'no open task whose after tasks are all accepted';
export const NO_TASK_TO_VERIFY = 'no done task you neither did nor checked';

/** The answer of `next`: a task or none, whether the caller now holds it, and why there is none. */
export interface NextAnswer {
  task: JsonObject | null;
  claimed: boolean;
  renewed: boolean;
  why?: string;
}

/**
 * `work` in the group commit under the lock of the SPACE `name` (found again inside `work`; a
 * name that finds none takes the wide lock, and `work` answers SPACE_NOT_FOUND).
 */
async function underLock<T>(ctx: RelayContext, name: string, work: () => Promise<T>): Promise<T> {
  const space = await ctx.store.spaces.byName(name);
  return await commitQueueFor(ctx.store.db).enqueue(work, space === undefined ? undefined : { spaces: [space.id] });
}

/** The task a path names (its number as written, attacker-controlled): TASK_NOT_FOUND when none. */
async function taskOf(ctx: RelayContext, a: TaskSpaceAccess, written: string): Promise<TaskRow> {
  const number = readNumber(written);
  const row = await ctx.store.tasks.get(a.space.id, number);
  if (!row) throw new SvcError('TASK_NOT_FOUND', `${a.space.name} has no task ${number}`);
  return row;
}

async function answer(ctx: RelayContext, a: TaskSpaceAccess, number: number, now: number): Promise<{ task: JsonObject }> {
  return { task: await renderTask(ctx.store.tasks, a.space, (await ctx.store.tasks.get(a.space.id, number))!, now) };
}


export function addTask(ctx: RelayContext, me: string, name: string, input: AddInput): Promise<{ task: JsonObject }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'work');
    const { lastNumber, notAccepted } = await ctx.store.tasks.counts(a.space.id);
    const unknown = input.after.find((n) => n > lastNumber);
    if (unknown !== undefined) throw new SvcError('TASK_AFTER_INVALID', `after: ${a.space.name} has no task ${unknown}`);
    if (notAccepted >= TASK_LIMITS.notAcceptedPerSpace) {
      throw new SvcError('TASK_LIMIT', `${TASK_LIMITS.notAcceptedPerSpace} tasks not yet accepted`);
    }
    const row = await ctx.store.tasks.insert({ spaceRowId: a.space.id, ...input, createdBy: me, now });
    return { task: await renderTask(ctx.store.tasks, a.space, row, now) };
  });
}

/**
 * tasks.next. A holder asking again gets its task back with the claim renewed (whatever `tag`
 * it sends: one task at a time). Otherwise the lowest-numbered claimable task matching `tag` is
 * claimed for `task_claim_hours`. With `verify`, the lowest-numbered done task the caller
 * neither did nor checked, claiming nothing (checking rights needed: TASK_DENIED otherwise).
 * With `number`, that task, if it may be taken now: TASK_NOT_FOUND, TASK_NOT_OPEN (done,
 * accepted, or under another KEY's live claim), TASK_WAITING (its `after` tasks not all accepted).
 */
export function nextTask(ctx: RelayContext, me: string, name: string, input: NextInput): Promise<NextAnswer> {
  return underLock(ctx, name, async (): Promise<NextAnswer> => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, input.verify ? 'check' : 'work');
    const tasks = ctx.store.tasks;
    if (input.verify) {
      const row = await tasks.lowestToVerify(a.space.id, me, input.tag);
      if (!row) return { task: null, claimed: false, renewed: false, why: NO_TASK_TO_VERIFY };
      return { task: await renderTask(tasks, a.space, row, now), claimed: false, renewed: false };
    }
    const expiresAt = now + a.space.taskClaimHours * HOUR_MS;
    const held = await tasks.heldBy(a.space.id, me);
    if (held) {
      await tasks.claim(a.space.id, held.number, me, expiresAt, now);
      return { ...await answer(ctx, a, held.number, now), claimed: true, renewed: true };
    }
    if (input.number !== undefined) {
      const asked = await tasks.get(a.space.id, input.number);
      if (!asked) throw new SvcError('TASK_NOT_FOUND', `${a.space.name} has no task ${input.number}`);
      checkTake(asked, now);
      await tasks.claim(a.space.id, asked.number, me, expiresAt, now);
      return { ...await answer(ctx, a, asked.number, now), claimed: true, renewed: false };
    }
    const row = await tasks.lowestClaimable(a.space.id, now, input.tag);
    if (!row) return { task: null, claimed: false, renewed: false, why: NO_OPEN_TASK };
    await tasks.claim(a.space.id, row.number, me, expiresAt, now);
    return { ...await answer(ctx, a, row.number, now), claimed: true, renewed: false };
  });
}

/**
 * tasks.done: the holder names its own result post; accepted at once when no confirmation is
 * asked. `revision`, when sent, is the revision of the words the result answers: without it,
 * done is refused (TASK_CHANGED) once the task changed after the holder took it. A task added
 * with numbered attempts takes any writer's done as an attempt (relay/tasks/attempts.ts).
 */
export function doneTask(ctx: RelayContext, me: string, name: string, written: string, postId: string, revision?: number): Promise<{ task: JsonObject; attempt?: number }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'work');
    const row = await taskOf(ctx, a, written);
    const number = row.number;
    if (row.numberedAttempts) {
      const attempt = await attemptDone(ctx, a, row, me, postId, revision, now);
      return { ...await answer(ctx, a, number, now), attempt };
    }
    checkDone(row, me, now);
    checkDoneWords(row, revision);
    await ownPost(ctx, a, me, postId);
    await ctx.store.tasks.markDone(a.space.id, number, me, postId, now);
    if (enoughConfirmations(0, a.space.taskConfirmations)) await ctx.store.tasks.accept(a.space.id, number, now);
    return await answer(ctx, a, number, now);
  });
}

/** tasks.release: the holder, or the owner or an admin for anyone's claim. */
export function releaseTask(ctx: RelayContext, me: string, name: string, written: string): Promise<{ task: JsonObject }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'work');
    const row = await taskOf(ctx, a, written);
    const number = row.number;
    checkRelease(row, me, canReleaseOthersTask(a.role), now);
    await ctx.store.tasks.release(a.space.id, number, now);
    return await answer(ctx, a, number, now);
  });
}

async function checkedThisCycle(ctx: RelayContext, a: TaskSpaceAccess, row: TaskRow, me: string): Promise<boolean> {
  return (await ctx.store.tasks.checks(a.space.id, row.number, row.cycle)).some((c) => c.by === me);
}

/**
 * `attempt` and `cycle` name what a check of a task with numbered attempts checks; a task
 * without them has one result a cycle, and a check naming one is refused.
 */
function noTarget(row: TaskRow, target: CheckTarget): void {
  if (target.attempt !== undefined || target.cycle !== undefined) {
    throw new SvcError('INVALID_REQUEST', `${target.attempt !== undefined ? 'attempt' : 'cycle'}: task ${row.number} was added without numbered attempts; check it without naming one`);
  }
}

/** tasks.confirm: one check of this cycle; enough of them accept the task. */
export function confirmTask(ctx: RelayContext, me: string, name: string, written: string, postId: string | undefined, target: CheckTarget = {}): Promise<{ task: JsonObject; attempt?: number }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'check');
    const row = await taskOf(ctx, a, written);
    const number = row.number;
    if (row.numberedAttempts) {
      const checked = await attemptCheck(ctx, a, row, me, target, { postId }, now);
      return { ...await answer(ctx, a, number, now), attempt: checked.attempt };
    }
    noTarget(row, target);
    checkCheck(row, me, await checkedThisCycle(ctx, a, row, me), now);
    if (postId !== undefined) await ownPost(ctx, a, me, postId);
    const tasks = ctx.store.tasks;
    await tasks.addCheck(a.space.id, number, row.cycle, { by: me, postId: postId ?? null, at: now });
    const count = (await tasks.checks(a.space.id, number, row.cycle)).length;
    if (enoughConfirmations(count, a.space.taskConfirmations)) await tasks.accept(a.space.id, number, now);
    return await answer(ctx, a, number, now);
  });
}

/** tasks.reject: back to open in a new cycle; the confirmations of the old one stop counting. */
export function rejectTask(ctx: RelayContext, me: string, name: string, written: string, reason: string, target: CheckTarget = {}): Promise<{ task: JsonObject; attempt?: number }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'check');
    const row = await taskOf(ctx, a, written);
    const number = row.number;
    if (row.numberedAttempts) {
      const checked = await attemptCheck(ctx, a, row, me, target, { reason }, now);
      return { ...await answer(ctx, a, number, now), attempt: checked.attempt };
    }
    noTarget(row, target);
    checkCheck(row, me, await checkedThisCycle(ctx, a, row, me), now);
    // The result it rejects, kept beside the task (whose row forgets it): the reject contests
    // that post, and any finding resting on it, until the task accepts it (relay/findings/).
    if (row.resultPostId !== null) await ctx.store.findings.recordRejection(a.space.id, number, row.cycle, me, row.resultPostId, now);
    await ctx.store.tasks.reject(a.space.id, number, { reason, by: me, at: now });
    return await answer(ctx, a, number, now);
  });
}

/**
 * The `after` of a change, checked under the lock: each a task of the SPACE still in its list
 * (not retired), never the task itself, and never one that waits, through its own `after`
 * chain, for the task being changed (a circle nobody could ever start): TASK_AFTER_INVALID.
 */
async function checkAfter(ctx: RelayContext, a: TaskSpaceAccess, number: number, after: readonly number[]): Promise<void> {
  const seen = new Set<number>();
  const todo = [...after];
  for (const n of after) {
    if (n === number) throw new SvcError('TASK_AFTER_INVALID', `after: task ${n} cannot wait for itself`);
    if (!(await ctx.store.tasks.get(a.space.id, n))) throw new SvcError('TASK_AFTER_INVALID', `after: ${a.space.name} has no task ${n} to wait for`);
  }
  while (todo.length > 0) {
    const n = todo.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    const row = await ctx.store.tasks.get(a.space.id, n);
    if (!row) continue;
    for (const m of row.after) {
      if (m === number) throw new SvcError('TASK_AFTER_INVALID', `after: task ${n} already waits for task ${number}`);
      todo.push(m);
    }
  }
}

/**
 * tasks.change: new words for an open or held task (title, body, tag, after), naming the
 * revision read and why. The task's creator changes it, or a coordinator or above any task
 * (TASK_DENIED otherwise). The old words are kept as an earlier revision; a holder's `done`
 * then needs the new revision (TASK_CHANGED).
 */
export function changeTask(ctx: RelayContext, me: string, name: string, written: string, input: ChangeInput): Promise<{ task: JsonObject }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'work');
    const row = await taskOf(ctx, a, written);
    if (row.createdBy !== me && !canGovernTasks(a.role)) {
      throw new SvcError('TASK_DENIED', `your role here is ${a.role ?? 'none'}; changing a task another member added needs coordinator or above`);
    }
    checkChange(row, input.revision, now);
    if (input.after !== undefined) await checkAfter(ctx, a, row.number, input.after);
    const { revision: _revision, reason, ...words } = input;
    await ctx.store.tasks.change(a.space.id, row.number, { ...words, by: me, at: now, reason });
    return await answer(ctx, a, row.number, now);
  });
}

/**
 * tasks.retire: a coordinator or above takes a task not yet accepted off the list, saying why
 * (TASK_DENIED, TASK_NOT_OPEN). Its number stays taken and reads as `retired`; each task that
 * waited for it waits instead for what it waited for, so no task is left waiting for a task
 * that can never be accepted.
 */
export function retireTask(ctx: RelayContext, me: string, name: string, written: string, reason: string): Promise<{ task: JsonObject }> {
  return underLock(ctx, name, async () => {
    const now = ctx.clock();
    const a = await taskSpaceForWrite(ctx, name, me, 'work');
    if (!canGovernTasks(a.role)) {
      throw new SvcError('TASK_DENIED', `your role here is ${a.role ?? 'none'}; retiring a task needs coordinator or above`);
    }
    const row = await taskOf(ctx, a, written);
    checkRetire(row, now);
    const tasks = ctx.store.tasks;
    const rewired = new Map<number, number[]>();
    for (const dependent of await tasks.dependents(a.space.id, row.number)) {
      const d = (await tasks.get(a.space.id, dependent))!;
      const after = new Set(d.after.filter((n) => n !== row.number));
      for (const n of row.after) after.add(n);
      rewired.set(dependent, [...after].sort((x, y) => x - y));
    }
    await tasks.retire(a.space.id, row.number, { reason, by: me, at: now }, rewired);
    return { task: renderRetired(a.space, (await tasks.retiredGet(a.space.id, row.number))!) };
  });
}
