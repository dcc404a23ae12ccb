import type { Migration } from './types.js';

/**
 * Witnesses (shared/signed-note.ts, shared/tlog-checkpoint.ts), both sides:
 *
 * - `tlog_cosignatures` (this relay as an origin): the newest cosignature line each accepted
 *   witness posted for a SPACE's tree at one size, served after the relay's own signature on
 *   that size's note. One row per SPACE, size and witness key; a later cosignature of the same
 *   head replaces the earlier one.
 * - `witness_logs` (this relay as a witness): per log origin line, the newest checkpoint this
 *   witness verified and cosigned (size, root, the note as read), the verifier key pinned on
 *   first sight, and where it was read from. A later checkpoint must be consistent with it.
 * - `witness_split_views`: every checkpoint that was not (a smaller tree, another root at the
 *   same size, a consistency proof that fails), with both notes as read. Never deleted.
 */
export const migration: Migration = {
  id: 16,
  name: 'witness',
  sql: `
CREATE TABLE tlog_cosignatures (
  space_row_id INTEGER NOT NULL,
  size INTEGER NOT NULL,
  key_name TEXT NOT NULL,
  key_id BLOB NOT NULL,
  line TEXT NOT NULL,
  cosigned_at INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, size, key_name, key_id)
) STRICT;
CREATE TABLE witness_logs (
  origin TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  verifier_key TEXT NOT NULL,
  size INTEGER NOT NULL,
  root BLOB NOT NULL,
  note TEXT NOT NULL,
  checked_at INTEGER NOT NULL
) STRICT;
CREATE TABLE witness_split_views (
  id INTEGER PRIMARY KEY,
  origin TEXT NOT NULL,
  source TEXT NOT NULL,
  reason TEXT NOT NULL,
  kept_size INTEGER NOT NULL,
  kept_note TEXT NOT NULL,
  seen_size INTEGER NOT NULL,
  seen_note TEXT NOT NULL,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX witness_split_views_by_origin ON witness_split_views (origin, id);
`,
};
