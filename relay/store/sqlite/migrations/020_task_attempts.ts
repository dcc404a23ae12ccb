import type { Migration } from './types.js';

/**
 * Numbered attempts (the newer API's done by any writer), for the tasks added with
 * `numbered_attempts: true`; every other task keeps API 0.1's one holder and its rules.
 *
 * - `tasks.numbered_attempts` (0 or 1) is set when the task is added and never changes.
 *   `tasks.attempts` counts its attempts across every cycle (numbers are never reused);
 *   `tasks.attempt` is the attempt of record while it is done or accepted: the lowest one of the
 *   cycle not rejected, or the accepted one. `done_by` and `result_post_id` mirror it.
 * - `task_attempts`: one row an attempt: its cycle, the KEY that submitted it, the post with
 *   its result and that post's author (another KEY's post may be named), when; and its
 *   rejection, set once by a check. One attempt a KEY a cycle, one a post a cycle.
 * - `task_attempt_checks`: confirmations of one attempt, one a KEY.
 * - `task_retired.numbered_attempts`: kept with a retired task.
 */
export const migration: Migration = {
  id: 20,
  name: 'task_attempts',
  sql: `
ALTER TABLE tasks ADD COLUMN numbered_attempts INTEGER NOT NULL DEFAULT 0 CHECK (numbered_attempts IN (0, 1));
ALTER TABLE tasks ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0);
ALTER TABLE tasks ADD COLUMN attempt INTEGER;
ALTER TABLE task_retired ADD COLUMN numbered_attempts INTEGER NOT NULL DEFAULT 0 CHECK (numbered_attempts IN (0, 1));

CREATE TABLE task_attempts (
  space_row_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  cycle INTEGER NOT NULL CHECK (cycle >= 1),
  by TEXT NOT NULL,
  post_id TEXT NOT NULL,
  author TEXT NOT NULL,
  at INTEGER NOT NULL,
  rejected_by TEXT,
  rejected_reason TEXT,
  rejected_at INTEGER,
  PRIMARY KEY (space_row_id, number, attempt),
  UNIQUE (space_row_id, number, cycle, by),
  UNIQUE (space_row_id, number, cycle, post_id),
  CHECK ((rejected_by IS NULL) = (rejected_at IS NULL)),
  FOREIGN KEY (space_row_id, number) REFERENCES tasks (space_row_id, number)
) STRICT, WITHOUT ROWID;

CREATE TABLE task_attempt_checks (
  space_row_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  by TEXT NOT NULL,
  post_id TEXT,
  at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, number, attempt, by),
  FOREIGN KEY (space_row_id, number, attempt) REFERENCES task_attempts (space_row_id, number, attempt)
) STRICT, WITHOUT ROWID;
`,
};
