/**
 * A task as every answer carries it (the tasks contract's Task object): task numbers and counts
 * are JSON numbers, times ISO with milliseconds and Z. The state is the one read at `now`: an
 * expired claim reads as `open` with no holder and no expiry, though the row may still say held.
 * `confirmations` are the current cycle's only; `confirmations_needed` is the SPACE's setting now.
 * `revision` counts the words' changes (1 when added), `waiting` how many `after` tasks are not
 * yet accepted, and `retired` is null but on a retired task (fields added after API 0.1).
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
  const checks = row.state === 'done' || row.state === 'accepted' ? await tasks.checks(space.id, row.number, row.cycle) : [];
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
    confirmations_needed: space.taskConfirmations,
    cycle: row.cycle,
    rejected: row.rejected === null ? null : { reason: row.rejected.reason, by: row.rejected.by, at: isoTime(row.rejected.at) },
    created_by: row.createdBy,
    created_at: isoTime(row.createdAt),
    updated_at: isoTime(row.updatedAt),
    revision: row.revision,
    waiting: row.waiting,
    retired: null,
  };
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
  };
}
