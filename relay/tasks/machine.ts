/**
 * The task state machine (spec/1-concepts.md "States and transitions: Task") as pure functions
 * over a stored row and the time: what a task reads as, and which refusal, if any, a command
 * meets. No database and no clock of its own; relay/tasks/commands.ts reads the row inside its
 * write transaction and asks here.
 *
 *   open --next--> held --done--> done --confirm (enough in this cycle)--> accepted
 *                  held --release--> open
 *                  held --claim expires--> reads as open (`next` may hand it to another)
 *                                 done --reject--> open, cycle + 1
 *
 * A claim only keeps `next` from handing the task to others. Once it expires the task reads as
 * open with no holder, but until another KEY takes it the row still names the KEY that held it:
 * that KEY asking `next` again renews the claim, and its `done` or `release` still counts, so
 * work finished a little late is not lost. Whoever takes the task over becomes its only holder.
 */
import { SvcError } from '../../shared/errors.js';
import type { StoredTaskState, TaskRow } from '../store/tasks.js';

export type TaskState = StoredTaskState;

type Claim = Pick<TaskRow, 'state' | 'holder' | 'claimExpiresAt'>;

/** Whether a held row's claim has run out at `now`. */
export function claimExpired(row: Claim, now: number): boolean {
  return row.state === 'held' && row.claimExpiresAt !== null && row.claimExpiresAt <= now;
}

/** The state a task reads as at `now`: an expired claim reads as open. */
export function stateAt(row: Claim, now: number): TaskState {
  return claimExpired(row, now) ? 'open' : row.state;
}

/** The holder a reader sees at `now`: none once the claim expired. */
export function holderAt(row: Claim, now: number): string | null {
  return stateAt(row, now) === 'held' ? row.holder : null;
}

/** Whether `me` is the KEY the row names as holder (its claim live or expired, not taken over). */
export function isHolder(row: Claim, me: string): boolean {
  return row.state === 'held' && row.holder === me;
}

/** tasks.done: the holder finishes it. TASK_NOT_OPEN past held; TASK_NOT_CLAIMANT otherwise. */
export function checkDone(row: TaskRow, me: string, now: number): void {
  if (row.state === 'done' || row.state === 'accepted') throw notOpen(row, now);
  if (!isHolder(row, me)) throw notClaimant(row, now, 'take it with next first');
}

/**
 * tasks.release: the holder gives it back; the owner or an admin gives back anyone's claim.
 * TASK_NOT_OPEN past held; TASK_NOT_CLAIMANT for anyone else, or when nobody holds it.
 */
export function checkRelease(row: TaskRow, me: string, mayReleaseOthers: boolean, now: number): void {
  if (row.state === 'done' || row.state === 'accepted') throw notOpen(row, now);
  if (isHolder(row, me)) return;
  if (mayReleaseOthers && row.state === 'held') return;
  throw notClaimant(row, now, 'only the holder, the owner or an admin gives it back');
}

/**
 * tasks.done by the holder of a task whose words changed after it was taken: TASK_CHANGED
 * unless `revision` names the words as they are now. A task whose `after` tasks are not all
 * accepted (a change may make a held task wait) is not finished: TASK_WAITING.
 */
export function checkDoneWords(row: TaskRow, revision: number | undefined): void {
  if (row.waiting > 0) throw waiting(row);
  const taken = row.heldRevision ?? row.revision;
  if (revision === undefined ? taken !== row.revision : revision !== row.revision) {
    throw new SvcError('TASK_CHANGED', `task ${row.number} is at revision ${row.revision}${revision === undefined ? `; you took it at revision ${taken}` : ''}: read it, then send revision ${row.revision} with done`);
  }
}

/** tasks.change: open or held tasks only (TASK_NOT_OPEN); `revision` must be the current one (TASK_CHANGED). */
export function checkChange(row: TaskRow, revision: number, now: number): void {
  if (row.state === 'done' || row.state === 'accepted') throw notOpen(row, now);
  if (revision !== row.revision) {
    throw new SvcError('TASK_CHANGED', `task ${row.number} is at revision ${row.revision}, not ${revision}: read it again`);
  }
}

/**
 * tasks.next naming a task: open (or under an expired claim) and not waiting. TASK_NOT_OPEN
 * when done, accepted or held under a live claim; TASK_WAITING while its `after` tasks are not
 * all accepted.
 */
export function checkTake(row: TaskRow, now: number): void {
  if (stateAt(row, now) !== 'open') throw notOpen(row, now);
  if (row.waiting > 0) throw waiting(row);
}

/** tasks.retire: any task not yet accepted (TASK_NOT_OPEN once accepted). */
export function checkRetire(row: TaskRow, now: number): void {
  if (row.state === 'accepted') throw notOpen(row, now);
}

/**
 * tasks.confirm and tasks.reject: a done task, checked by a KEY that did not do it and has not
 * checked it in this cycle. TASK_NOT_DONE, TASK_SELF_CHECK, TASK_ALREADY_CHECKED.
 */
export function checkCheck(row: TaskRow, me: string, checkedThisCycle: boolean, now: number): void {
  if (row.state !== 'done') throw new SvcError('TASK_NOT_DONE', `task ${row.number} is ${stateAt(row, now)}`);
  if (row.waiting > 0) throw waiting(row);
  if (row.doneBy === me) throw new SvcError('TASK_SELF_CHECK', `you did task ${row.number}; another member checks it`);
  if (checkedThisCycle) throw new SvcError('TASK_ALREADY_CHECKED', `you checked task ${row.number} in cycle ${row.cycle}`);
}

/** Whether a done task with `confirmations` in its current cycle is accepted when `needed` are asked. */
export function enoughConfirmations(confirmations: number, needed: number): boolean {
  return confirmations >= needed;
}

function waiting(row: TaskRow): SvcError {
  return new SvcError('TASK_WAITING', `task ${row.number} waits for ${row.waiting} of its after tasks (${row.after.join(', ')}) to be accepted`);
}

function notOpen(row: TaskRow, now: number): SvcError {
  return new SvcError('TASK_NOT_OPEN', `task ${row.number} is ${stateAt(row, now)}`);
}

function notClaimant(row: TaskRow, now: number, hint: string): SvcError {
  const holder = holderAt(row, now);
  const who = holder === null ? 'nobody holds it' : `another KEY holds it until ${new Date(row.claimExpiresAt!).toISOString()}`;
  return new SvcError('TASK_NOT_CLAIMANT', `task ${row.number}: ${who}; ${hint}`);
}
