import type { Migration } from './types.js';

/**
 * Numbered attempts, as relay/store/sqlite/migrations/020_task_attempts.ts made them on SQLite
 * (its comment says what each column and table holds): the same columns and tables,
 * PostgreSQL types.
 */
export const migration: Migration = {
  id: 7,
  name: 'task_attempts',
  sql: `
ALTER TABLE tasks ADD COLUMN numbered_attempts BIGINT NOT NULL DEFAULT 0 CHECK (numbered_attempts IN (0, 1));
ALTER TABLE tasks ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0);
ALTER TABLE tasks ADD COLUMN attempt BIGINT;
ALTER TABLE task_retired ADD COLUMN numbered_attempts BIGINT NOT NULL DEFAULT 0 CHECK (numbered_attempts IN (0, 1));

CREATE TABLE task_attempts (
  space_row_id BIGINT NOT NULL,
  number BIGINT NOT NULL,
  attempt BIGINT NOT NULL CHECK (attempt >= 1),
  cycle BIGINT NOT NULL CHECK (cycle >= 1),
  by TEXT COLLATE "C" NOT NULL,
  post_id TEXT COLLATE "C" NOT NULL,
  author TEXT COLLATE "C" NOT NULL,
  at BIGINT NOT NULL,
  rejected_by TEXT COLLATE "C",
  rejected_reason TEXT COLLATE "C",
  rejected_at BIGINT,
  PRIMARY KEY (space_row_id, number, attempt),
  UNIQUE (space_row_id, number, cycle, by),
  UNIQUE (space_row_id, number, cycle, post_id),
  CHECK ((rejected_by IS NULL) = (rejected_at IS NULL)),
  FOREIGN KEY (space_row_id, number) REFERENCES tasks (space_row_id, number)
);

CREATE TABLE task_attempt_checks (
  space_row_id BIGINT NOT NULL,
  number BIGINT NOT NULL,
  attempt BIGINT NOT NULL,
  by TEXT COLLATE "C" NOT NULL,
  post_id TEXT COLLATE "C",
  at BIGINT NOT NULL,
  PRIMARY KEY (space_row_id, number, attempt, by),
  FOREIGN KEY (space_row_id, number, attempt) REFERENCES task_attempts (space_row_id, number, attempt)
);
`,
};
