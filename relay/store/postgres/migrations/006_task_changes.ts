import type { Migration } from './types.js';

/**
 * Task changes and retirement, as relay/store/sqlite/migrations/018_task_changes.ts made them
 * on SQLite (its comment says what each column and table holds): the same columns and tables,
 * PostgreSQL types.
 */
export const migration: Migration = {
  id: 6,
  name: 'task_changes',
  sql: `
ALTER TABLE tasks ADD COLUMN revision BIGINT NOT NULL DEFAULT 1 CHECK (revision >= 1);
ALTER TABLE tasks ADD COLUMN held_revision BIGINT;

CREATE TABLE task_revisions (
  space_row_id BIGINT NOT NULL,
  number BIGINT NOT NULL,
  revision BIGINT NOT NULL CHECK (revision >= 1),
  title TEXT COLLATE "C" NOT NULL,
  body TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C",
  after_json TEXT COLLATE "C" NOT NULL,
  ended_by TEXT COLLATE "C" NOT NULL,
  ended_at BIGINT NOT NULL,
  end_reason TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (space_row_id, number, revision)
);

CREATE TABLE task_retired (
  space_row_id BIGINT NOT NULL REFERENCES spaces (id),
  number BIGINT NOT NULL CHECK (number >= 1),
  title TEXT COLLATE "C" NOT NULL,
  body TEXT COLLATE "C" NOT NULL,
  tag TEXT COLLATE "C",
  after_json TEXT COLLATE "C" NOT NULL,
  revision BIGINT NOT NULL,
  cycle BIGINT NOT NULL,
  created_by TEXT COLLATE "C" NOT NULL,
  created_at BIGINT NOT NULL,
  retired_by TEXT COLLATE "C" NOT NULL,
  retired_at BIGINT NOT NULL,
  retired_reason TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (space_row_id, number)
);
`,
};
