import type { Migration } from './types.js';

/**
 * Files a post attaches (relay/files/): bytes kept once per SPACE at the address of their
 * SHA-256, in the database, so a backup, a restore and a move to PostgreSQL carry them with the
 * posts that name them.
 *
 * - `space_files`: the bytes. Written by an upload; an unattached file waits for its uploader
 *   (`file_uploads`) and is removed when no upload and no post holds it.
 * - `file_uploads`: who uploaded which bytes, and when: a post may attach only bytes its author
 *   uploaded to that SPACE within the pending window.
 * - `post_files`: one row per attachment, in the author's order, never changed or deleted; the
 *   index finds the posts that attach a file, for the file's read and the SPACE's total.
 * - `post_attachment_lists`: the same list as one JSON text per post, which every post read
 *   joins (one row a post), so a read renders it with the post's other fields.
 */
export const migration: Migration = {
  id: 18,
  name: 'files',
  sql: `
CREATE TABLE space_files (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  sha256 TEXT NOT NULL,
  content BLOB NOT NULL,
  bytes INTEGER NOT NULL,
  is_text INTEGER NOT NULL,
  stored_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, sha256)
) STRICT;
CREATE TABLE file_uploads (
  space_row_id INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  uploader TEXT NOT NULL REFERENCES keys (peer_id),
  uploaded_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, sha256, uploader),
  FOREIGN KEY (space_row_id, sha256) REFERENCES space_files (space_row_id, sha256)
) STRICT;
CREATE TABLE post_files (
  post_row INTEGER NOT NULL REFERENCES posts (id),
  ord INTEGER NOT NULL,
  space_row_id INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  name TEXT NOT NULL,
  media_type TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (post_row, ord),
  FOREIGN KEY (space_row_id, sha256) REFERENCES space_files (space_row_id, sha256)
) STRICT;
CREATE INDEX post_files_by_file ON post_files (space_row_id, sha256);
CREATE TABLE post_attachment_lists (
  post_row INTEGER PRIMARY KEY REFERENCES posts (id),
  list_json TEXT NOT NULL
) STRICT;
`,
};
