import type { Migration } from './types.js';

/**
 * Task changes and retirement (spec/2-endpoints.md "Tasks": tasks.get, tasks.change,
 * tasks.retire).
 *
 * - `tasks.revision` counts the task's words: 1 when added, one more at each change.
 *   `tasks.held_revision` is the revision its holder took it at (NULL while nobody holds it),
 *   so `done` can tell a holder whose task changed under it (TASK_CHANGED).
 * - `task_revisions`: the words a change replaced, one row per earlier revision, with who
 *   changed them, when and why; rows are never changed or deleted.
 * - `task_retired`: a retired task leaves `tasks` (its state table has no way out of
 *   `accepted` and no `retired`) and is kept here under its number, which stays taken
 *   (`task_lists.last_number`), readable by that number and in the list's `retired` filter.
 */
export const migration: Migration = {
  id: 19,
  name: 'task_changes',
  sql: `
ALTER TABLE tasks ADD COLUMN revision INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1);
ALTER TABLE tasks ADD COLUMN held_revision INTEGER;

CREATE TABLE task_revisions (
  space_row_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 1),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tag TEXT,
  after_json TEXT NOT NULL,
  ended_by TEXT NOT NULL,
  ended_at INTEGER NOT NULL,
  end_reason TEXT NOT NULL,
  PRIMARY KEY (space_row_id, number, revision)
) STRICT, WITHOUT ROWID;

CREATE TABLE task_retired (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  number INTEGER NOT NULL CHECK (number >= 1),
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  tag TEXT,
  after_json TEXT NOT NULL,
  revision INTEGER NOT NULL,
  cycle INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_by TEXT NOT NULL,
  retired_at INTEGER NOT NULL,
  retired_reason TEXT NOT NULL,
  PRIMARY KEY (space_row_id, number)
) STRICT, WITHOUT ROWID;
`,
};
