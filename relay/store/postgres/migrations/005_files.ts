import type { Migration } from './types.js';

/**
 * Files a post attaches, as relay/store/sqlite/migrations/018_files.ts made them on SQLite (its
 * comment says what each table holds): the same tables and columns, PostgreSQL types.
 */
export const migration: Migration = {
  id: 5,
  name: 'files',
  sql: `
CREATE TABLE space_files (
  space_row_id BIGINT NOT NULL REFERENCES spaces (id),
  sha256 TEXT COLLATE "C" NOT NULL,
  content BYTEA NOT NULL,
  bytes BIGINT NOT NULL,
  is_text BIGINT NOT NULL,
  stored_at BIGINT NOT NULL,
  PRIMARY KEY (space_row_id, sha256)
);
CREATE TABLE file_uploads (
  space_row_id BIGINT NOT NULL,
  sha256 TEXT COLLATE "C" NOT NULL,
  uploader TEXT COLLATE "C" NOT NULL REFERENCES keys (peer_id),
  uploaded_at BIGINT NOT NULL,
  PRIMARY KEY (space_row_id, sha256, uploader),
  FOREIGN KEY (space_row_id, sha256) REFERENCES space_files (space_row_id, sha256)
);
CREATE TABLE post_files (
  post_row BIGINT NOT NULL REFERENCES posts (id),
  ord BIGINT NOT NULL,
  space_row_id BIGINT NOT NULL,
  sha256 TEXT COLLATE "C" NOT NULL,
  name TEXT COLLATE "C" NOT NULL,
  media_type TEXT COLLATE "C" NOT NULL,
  bytes BIGINT NOT NULL,
  PRIMARY KEY (post_row, ord),
  FOREIGN KEY (space_row_id, sha256) REFERENCES space_files (space_row_id, sha256)
);
CREATE INDEX post_files_by_file ON post_files (space_row_id, sha256);
CREATE TABLE post_attachment_lists (
  post_row BIGINT PRIMARY KEY REFERENCES posts (id),
  list_json TEXT COLLATE "C" NOT NULL
);
`,
};
