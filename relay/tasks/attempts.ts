/**
 * Numbered attempts: done, confirm and reject of a task added with `numbered_attempts`, as the
 * newer API has every task (its 0.6: any writer marks a task done, each done a numbered attempt,
 * up to five a cycle). A task added without it keeps API 0.1's one holder and its refusals
 * (relay/tasks/machine.ts), so an 0.1 client never meets what follows.
 *
 * done: any writer, holding the task or not, names a post of this SPACE with the result: its
 * own, or another KEY's that is not hidden. Refused, in this order: TASK_NOT_OPEN once accepted,
 * or when the caller already made an attempt this cycle (the same post again answers the task
 * and changes nothing); TASK_ALREADY_CHECKED when it checked an attempt this cycle; TASK_LIMIT
 * past five attempts a cycle; TASK_WAITING; TASK_CHANGED (a `revision` that is not the current
 * one, or a holder whose task changed since it took it); TASK_POST_NOT_FOUND; TASK_NOT_DONE for a
 * post a reject already set aside as this task's result; INVALID_REQUEST for a post an attempt
 * of this cycle names; TASK_ALREADY_CHECKED when the post's author checked this cycle. The first
 * attempt of a cycle makes the task done, ending any claim, and is accepted at once where the
 * SPACE asks no confirmation and nobody contests it (the first cycle, no other KEY's live claim);
 * a later one joins the done task.
 *
 * confirm and reject check one attempt: `attempt` names it, or the one pending; with two or more
 * pending it must be named (INVALID_REQUEST listing them). `cycle` above the task's is
 * INVALID_REQUEST; an earlier cycle, or an attempt of one, or an attempt already rejected, is
 * TASK_NOT_DONE naming who rejected it. The attempt's submitter or its post's author checks none
 * of it, nor does a KEY with an attempt this cycle, except to confirm another's where the SPACE
 * asks no confirmation (TASK_SELF_CHECK); one check a KEY an attempt (TASK_ALREADY_CHECKED). An
 * attempt whose confirmations reach the SPACE's setting (at least one) is accepted with its post;
 * a reject sets the attempt aside, and the task opens in a new cycle only when no other attempt
 * of the cycle waits.
 */
import { SvcError } from '../../shared/errors.js';
import { TASK_LIMITS } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import type { TaskAttempt, TaskRow } from '../store/tasks.js';
import { ownPost, type TaskSpaceAccess } from './access.js';
import type { CheckTarget } from './input.js';
import { checkDoneWords, isHolder, stateAt } from './machine.js';

/** Whether `me` checked an attempt of the cycle: confirmed one, or rejected one. */
async function checkedIn(ctx: RelayContext, a: TaskSpaceAccess, row: TaskRow, cycle: readonly TaskAttempt[], me: string): Promise<boolean> {
  for (const at of cycle) {
    if (at.rejected?.by === me) return true;
    if ((await ctx.store.tasks.attemptChecks(a.space.id, row.number, at.attempt)).some((c) => c.by === me)) return true;
  }
  return false;
}

/** The confirmations a done task needs: the SPACE's setting, and one at least once it waits. */
export function confirmationsRequired(setting: number): number {
  return Math.max(setting, 1);
}

/**
 * done on a task with numbered attempts (see the file comment). Answers the caller's attempt:
 * the one just made, or, for the same KEY's same post again this cycle, the one it made then.
 */
export async function attemptDone(ctx: RelayContext, a: TaskSpaceAccess, row: TaskRow, me: string, postId: string, revision: number | undefined, now: number): Promise<number> {
  const tasks = ctx.store.tasks;
  const n = row.number;
  const cycle = await tasks.attemptsIn(a.space.id, n, row.cycle);
  const mine = cycle.find((at) => at.by === me);
  if (mine !== undefined && mine.postId === postId && (row.state === 'done' || row.state === 'accepted')) return mine.attempt;
  if (row.state === 'accepted') throw new SvcError('TASK_NOT_OPEN', `task ${n} is accepted`);
  if (mine !== undefined) throw new SvcError('TASK_NOT_OPEN', `you made attempt ${mine.attempt} at task ${n} in cycle ${row.cycle}: one attempt a KEY a cycle`);
  if (await checkedIn(ctx, a, row, cycle, me)) throw new SvcError('TASK_ALREADY_CHECKED', `you checked an attempt at task ${n} in cycle ${row.cycle}, so you make none in it`);
  if (cycle.length >= TASK_LIMITS.attemptsPerCycle) {
    throw new SvcError('TASK_LIMIT', `attempts: task ${n} has its ${TASK_LIMITS.attemptsPerCycle} attempts of cycle ${row.cycle}; check them instead`);
  }
  // The holder's words are the ones it took; anyone else answers the words as they are, or the
  // revision it names.
  checkDoneWords(isHolder(row, me) ? row : { ...row, heldRevision: null }, revision);
  const post = await ctx.store.posts.byPostId(postId);
  if (!post || post.spaceRowId !== a.space.id || post.hiddenAt !== null) {
    throw new SvcError('TASK_POST_NOT_FOUND', `post_id: not a post of ${a.space.name} shown to its members`);
  }
  const setAside = await tasks.rejectedWithPost(a.space.id, n, postId);
  if (setAside !== undefined) throw new SvcError('TASK_NOT_DONE', `attempt ${setAside.attempt}: rejected by ${setAside.rejected!.by}`);
  const named = cycle.find((at) => at.postId === postId);
  if (named !== undefined) throw new SvcError('INVALID_REQUEST', `post_id: attempt ${named.attempt} names that post`);
  if (post.author !== me && await checkedIn(ctx, a, row, cycle, post.author)) {
    throw new SvcError('TASK_ALREADY_CHECKED', `post_id: its author checked task ${n} in cycle ${row.cycle}`);
  }
  const first = row.state !== 'done';
  const attempt = row.attempts + 1;
  await tasks.addAttempt(a.space.id, n, { attempt, cycle: row.cycle, by: me, postId, author: post.author, at: now }, first);
  const contested = row.cycle > 1 || (stateAt(row, now) === 'held' && row.holder !== me);
  if (first && a.space.taskConfirmations === 0 && !contested) await tasks.accept(a.space.id, n, now);
  return attempt;
}

/** The attempt a confirm or reject checks (see the file comment), or its refusal. */
async function attemptChecked(ctx: RelayContext, a: TaskSpaceAccess, row: TaskRow, target: CheckTarget, now: number): Promise<TaskAttempt> {
  const tasks = ctx.store.tasks;
  const n = row.number;
  const late = async (cycle: number): Promise<SvcError> => {
    const rejected = (await tasks.attemptsIn(a.space.id, n, cycle)).filter((at) => at.rejected !== null).sort((x, y) => y.rejected!.at - x.rejected!.at)[0];
    const by = rejected?.rejected?.by ?? row.rejected?.by;
    return new SvcError('TASK_NOT_DONE', `cycle ${cycle} of task ${n} is over${by === undefined ? '' : `: rejected by ${by}`}; it is at cycle ${row.cycle}`);
  };
  if (target.cycle !== undefined && target.cycle > row.cycle) throw new SvcError('INVALID_REQUEST', `cycle: task ${n} is at cycle ${row.cycle}`);
  if (target.cycle !== undefined && target.cycle < row.cycle) throw await late(target.cycle);
  if (row.state !== 'done') throw new SvcError('TASK_NOT_DONE', `task ${n} is ${stateAt(row, now)}`);
  let chosen: TaskAttempt | undefined;
  if (target.attempt !== undefined) {
    chosen = await tasks.attemptGet(a.space.id, n, target.attempt);
    if (chosen === undefined) throw new SvcError('TASK_NOT_FOUND', `task ${n} has no attempt ${target.attempt}`);
    if (chosen.cycle < row.cycle) throw await late(chosen.cycle);
  } else {
    const pending = (await tasks.attemptsIn(a.space.id, n, row.cycle)).filter((at) => at.rejected === null);
    if (pending.length > 1) throw new SvcError('INVALID_REQUEST', `attempt: name the attempt you checked: ${pending.map((at) => at.attempt).join(', ')}`);
    chosen = pending[0];
    if (chosen === undefined) throw new SvcError('TASK_NOT_DONE', `task ${n} has no attempt waiting`);
  }
  if (chosen.rejected !== null) throw new SvcError('TASK_NOT_DONE', `attempt ${chosen.attempt}: rejected by ${chosen.rejected.by}`);
  return chosen;
}

/**
 * confirm (`reason` undefined) or reject of one attempt at a task with numbered attempts.
 * Answers the attempt checked.
 */
export async function attemptCheck(
  ctx: RelayContext,
  a: TaskSpaceAccess,
  row: TaskRow,
  me: string,
  target: CheckTarget,
  check: { postId?: string | undefined; reason?: string | undefined },
  now: number,
): Promise<TaskAttempt> {
  const tasks = ctx.store.tasks;
  const n = row.number;
  const at = await attemptChecked(ctx, a, row, target, now);
  if (row.waiting > 0) throw new SvcError('TASK_WAITING', `task ${n} waits for ${row.waiting} of its after tasks (${row.after.join(', ')}) to be accepted`);
  if (at.by === me || at.author === me) throw new SvcError('TASK_SELF_CHECK', `attempt ${at.attempt} at task ${n} is yours; another member checks it`);
  const confirming = check.reason === undefined;
  const own = (await tasks.attemptsIn(a.space.id, n, row.cycle)).find((x) => x.by === me);
  if (own !== undefined && !(confirming && a.space.taskConfirmations === 0)) {
    throw new SvcError('TASK_SELF_CHECK', `you made attempt ${own.attempt} at task ${n} in cycle ${row.cycle}; another member checks this cycle's attempts`);
  }
  const checks = await tasks.attemptChecks(a.space.id, n, at.attempt);
  if (checks.some((c) => c.by === me)) throw new SvcError('TASK_ALREADY_CHECKED', `you checked attempt ${at.attempt} at task ${n}`);
  if (check.postId !== undefined) await ownPost(ctx, a, me, check.postId);
  if (confirming) {
    await tasks.addAttemptCheck(a.space.id, n, at.attempt, { by: me, postId: check.postId ?? null, at: now });
    if (checks.length + 1 >= confirmationsRequired(a.space.taskConfirmations)) {
      await tasks.setRecord(a.space.id, n, at, now);
      await tasks.accept(a.space.id, n, now);
    }
    return at;
  }
  const rejected = { by: me, reason: check.reason!, at: now };
  await tasks.rejectAttempt(a.space.id, n, at.attempt, rejected);
  const waiting = (await tasks.attemptsIn(a.space.id, n, row.cycle)).find((x) => x.rejected === null);
  if (waiting !== undefined) await tasks.setRecord(a.space.id, n, waiting, now);
  else await tasks.reject(a.space.id, n, rejected);
  return at;
}
