/**
 * A task as every answer carries it (the tasks contract's Task object): task numbers and counts
 * are JSON numbers, times ISO with milliseconds and Z. The state is the one read at `now`: an
 * expired claim reads as `open` with no holder and no expiry, though the row may still say held.
 * `confirmations` are the current cycle's only; `confirmations_needed` is the SPACE's setting now.
 * `revision` counts the words' changes (1 when added), `waiting` how many `after` tasks are not
 * yet accepted, and `retired` is null but on a retired task (fields added after API 0.1).
 * A task added with numbered attempts (any writer marks it done, each done a numbered attempt)
 * says `numbered_attempts: true` and adds `attempt` and `attempts` (attemptFields); its
 * `confirmations` are its attempt of record's, and while done it needs one at least. A task
 * added without them answers exactly as before, with none of these fields.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { isoTime } from '../http/schemas.js';
import type { RetiredTaskRow, TaskStore, TaskRow } from '../store/tasks.js';
import { holderAt, stateAt } from './machine.js';

export interface TaskSpace {
  id: number;
  name: string;
  taskConfirmations: number;
}

export async function renderTask(tasks: TaskStore, space: TaskSpace, row: TaskRow, now: number): Promise<JsonObject> {
  const state = stateAt(row, now);
  const holder = holderAt(row, now);
  const finished = row.state === 'done' || row.state === 'accepted';
  const checks = !finished ? [] : row.numberedAttempts ? (row.attempt === null ? [] : await tasks.attemptChecks(space.id, row.number, row.attempt)) : await tasks.checks(space.id, row.number, row.cycle);
  return {
    space: space.name,
    number: row.number,
    title: row.title,
    body: row.body,
    tag: row.tag,
    after: row.after,
    state,
    holder,
    claim_expires_at: holder === null ? null : isoTime(row.claimExpiresAt!),
    result_post_id: row.resultPostId,
    done_by: row.doneBy,
    confirmations: checks.map((c) => ({ by: c.by, post_id: c.postId, at: isoTime(c.at) })),
    confirmations_needed: row.numberedAttempts && row.state === 'done' ? Math.max(space.taskConfirmations, 1) : space.taskConfirmations,
    cycle: row.cycle,
    rejected: row.rejected === null ? null : { reason: row.rejected.reason, by: row.rejected.by, at: isoTime(row.rejected.at) },
    created_by: row.createdBy,
    created_at: isoTime(row.createdAt),
    updated_at: isoTime(row.updatedAt),
    revision: row.revision,
    waiting: row.waiting,
    retired: null,
    ...(row.numberedAttempts ? { numbered_attempts: true, ...await attemptFields(tasks, space.id, row) } : {}),
  };
}

/**
 * What a task with numbered attempts adds to its answer: `attempt`, the attempt of record while
 * done or accepted, and `attempts`, every attempt of the current cycle with its state (pending,
 * rejected, accepted, or passed for one not chosen once another was accepted) and the KEYS that
 * confirmed it.
 */
async function attemptFields(tasks: TaskStore, spaceRowId: number, row: TaskRow): Promise<JsonObject> {
  const out: JsonObject[] = [];
  for (const at of await tasks.attemptsIn(spaceRowId, row.number, row.cycle)) {
    const checks = await tasks.attemptChecks(spaceRowId, row.number, at.attempt);
    const state = at.rejected !== null ? 'rejected' : row.state === 'accepted' ? (row.attempt === at.attempt ? 'accepted' : 'passed') : 'pending';
    out.push({
      attempt: at.attempt,
      by: at.by,
      post_id: at.postId,
      author: at.author,
      at: isoTime(at.at),
      state,
      confirmations: checks.map((c) => c.by),
      rejected: at.rejected === null ? null : { by: at.rejected.by, reason: at.rejected.reason, at: isoTime(at.rejected.at) },
    });
  }
  return { attempt: row.state === 'done' || row.state === 'accepted' ? row.attempt : null, attempts: out };
}

/**
 * A retired task, in the same shape: state `retired`, nobody holds it, no result, and
 * `retired` says who retired it, when and why.
 */
export function renderRetired(space: TaskSpace, row: RetiredTaskRow): JsonObject {
  return {
    space: space.name,
    number: row.number,
    title: row.title,
    body: row.body,
    tag: row.tag,
    after: row.after,
    state: 'retired',
    holder: null,
    claim_expires_at: null,
    result_post_id: null,
    done_by: null,
    confirmations: [],
    confirmations_needed: space.taskConfirmations,
    cycle: row.cycle,
    rejected: null,
    created_by: row.createdBy,
    created_at: isoTime(row.createdAt),
    updated_at: isoTime(row.retired.at),
    revision: row.revision,
    waiting: 0,
    retired: { reason: row.retired.reason, by: row.retired.by, at: isoTime(row.retired.at) },
    ...(row.numberedAttempts ? { numbered_attempts: true } : {}),
  };
}
