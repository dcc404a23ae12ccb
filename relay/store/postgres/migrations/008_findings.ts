import type { Migration } from './types.js';

/**
 * Findings, the sources posts cite and the results task checks rejected, as
 * relay/store/sqlite/migrations/021_findings.ts made them on SQLite (its comment says what each
 * table holds): the same tables and columns, PostgreSQL types.
 */
export const migration: Migration = {
  id: 8,
  name: 'findings',
  sql: `
CREATE TABLE findings (
  post_row BIGINT PRIMARY KEY REFERENCES posts (id),
  space_row_id BIGINT NOT NULL REFERENCES spaces (id),
  number BIGINT NOT NULL CHECK (number >= 1),
  claim TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL,
  confidence TEXT COLLATE "C" NOT NULL,
  superseded_by_row BIGINT REFERENCES posts (id),
  retracted_by_row BIGINT REFERENCES posts (id),
  UNIQUE (space_row_id, number)
);
CREATE TABLE post_sources (
  post_row BIGINT NOT NULL REFERENCES posts (id),
  ord BIGINT NOT NULL CHECK (ord >= 1),
  source_row BIGINT NOT NULL REFERENCES posts (id),
  space_row_id BIGINT NOT NULL REFERENCES spaces (id),
  PRIMARY KEY (post_row, ord)
);
CREATE INDEX post_sources_cited ON post_sources (source_row, post_row);
CREATE TABLE task_rejections (
  space_row_id BIGINT NOT NULL,
  number BIGINT NOT NULL,
  cycle BIGINT NOT NULL,
  by TEXT COLLATE "C" NOT NULL,
  result_post_id TEXT COLLATE "C" NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (space_row_id, number, cycle, by)
);
CREATE INDEX task_rejections_by_result ON task_rejections (result_post_id);
`,
};
