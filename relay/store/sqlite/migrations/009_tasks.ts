import type { Migration } from './types.js';

/**
 * Task lists of work SPACES (spec/1-concepts.md "Task", "States and transitions: Task"). A task
 * is a row, not a post: nothing here touches a chain, a checkpoint, the audit log or a mailbox.
 *
 * - `task_lists`: one row per SPACE that has tasks: the last number given (numbers are never
 *   reused) and how many tasks are not yet accepted, so TASK_LIMIT is checked without counting.
 * - `tasks.state` is the stored state. A claim that has expired is still stored as `held` with
 *   its holder; readers compute `open` from `claim_expires_at` (a read writes nothing).
 * - `tasks.waiting` counts the task's `after` tasks not yet accepted. `accepted` has no way
 *   out, so the count only falls: accepting a task takes one from each task that waits for it
 *   (`task_after`, read from the accepted task's side), and `next` looks only at rows with
 *   `waiting = 0` instead of checking every task's dependencies.
 * - `next` hands out the lower of two index heads, never walking past tasks it may not take:
 *   the first entry of `tasks_open_ready` (open, every `after` accepted; by number) and the
 *   lowest-numbered claim that has expired, found on `tasks_claims` (held rows by expiry; held
 *   implies ready, since only a ready task is ever claimed). Live claims are in neither range,
 *   so 5,000 held tasks in front of the first open one cost nothing. Tag twins for `tag`.
 * - `tasks_one_held`: a KEY holds at most one task per SPACE (`next` by a holder renews it).
 * - `task_checks`: confirmations, per cycle; a rejection starts a new cycle, so earlier
 *   confirmations stop counting without being deleted.
 */
export const migration: Migration = {
  id: 9,
  name: 'tasks',
  sql: `
CREATE TABLE task_lists (
  space_row_id INTEGER PRIMARY KEY REFERENCES spaces (id),
  last_number INTEGER NOT NULL CHECK (last_number >= 0),
  not_accepted INTEGER NOT NULL CHECK (not_accepted >= 0)
) STRICT;

CREATE TABLE tasks (
  id INTEGER PRIMARY KEY,
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  number INTEGER NOT NULL CHECK (number >= 1),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tag TEXT,
  after_json TEXT NOT NULL,
  waiting INTEGER NOT NULL CHECK (waiting >= 0),
  state TEXT NOT NULL CHECK (state IN ('open', 'held', 'done', 'accepted')),
  holder TEXT,
  claim_expires_at INTEGER,
  result_post_id TEXT,
  done_by TEXT,
  cycle INTEGER NOT NULL CHECK (cycle >= 1),
  rejected_reason TEXT,
  rejected_by TEXT,
  rejected_at INTEGER,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  CHECK ((state = 'held') = (holder IS NOT NULL)),
  CHECK ((holder IS NULL) = (claim_expires_at IS NULL)),
  CHECK ((state IN ('done', 'accepted')) = (done_by IS NOT NULL)),
  CHECK ((done_by IS NULL) = (result_post_id IS NULL)),
  UNIQUE (space_row_id, number)
) STRICT;
CREATE INDEX tasks_by_state ON tasks (space_row_id, state, number);
CREATE INDEX tasks_by_tag ON tasks (space_row_id, tag, number) WHERE tag IS NOT NULL;
CREATE INDEX tasks_open_ready ON tasks (space_row_id, number) WHERE state = 'open' AND waiting = 0;
CREATE INDEX tasks_open_ready_by_tag ON tasks (space_row_id, tag, number)
  WHERE state = 'open' AND waiting = 0 AND tag IS NOT NULL;
CREATE INDEX tasks_claims ON tasks (space_row_id, claim_expires_at) WHERE state = 'held';
CREATE UNIQUE INDEX tasks_one_held ON tasks (space_row_id, holder) WHERE state = 'held';

CREATE TABLE task_after (
  space_row_id INTEGER NOT NULL,
  after_number INTEGER NOT NULL,
  number INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, after_number, number),
  FOREIGN KEY (space_row_id, number) REFERENCES tasks (space_row_id, number)
) STRICT, WITHOUT ROWID;

CREATE TABLE task_checks (
  space_row_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  cycle INTEGER NOT NULL,
  by TEXT NOT NULL,
  post_id TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, number, cycle, by),
  FOREIGN KEY (space_row_id, number) REFERENCES tasks (space_row_id, number)
) STRICT, WITHOUT ROWID;
`,
};
