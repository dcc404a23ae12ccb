import type { Migration } from './types.js';

/**
 * Mirrors: a SPACE of another relay (the origin) kept here read-only, line by line as the
 * origin exports it (protocol/objects.md §14), with the origin's signed checkpoints.
 *
 * - `mirrors`: one row per mirrored SPACE, by the origin's `space_id` (a uuid, unique across
 *   relays, so a mirror never collides with a SPACE of this relay that has the same name). The
 *   origin's service root key is pinned at creation, fetched from the origin itself; `owner` is
 *   the origin's owner as last read from its profile (the one KEY that may push).
 * - `mirror_posts`: each export line exactly as the origin wrote it, with the object id and
 *   chain hash read from it (the Merkle leaves and the continuity check need them).
 * - `mirror_checkpoints`: each served checkpoint of the posts stream as the origin served it.
 *
 * Rows of the last two are never changed or deleted: a mirror keeps its copy.
 */
export const migration: Migration = {
  id: 15,
  name: 'mirrors',
  sql: `
CREATE TABLE mirrors (
  id INTEGER PRIMARY KEY,
  space_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  origin TEXT NOT NULL,
  visibility TEXT NOT NULL,
  owner TEXT NOT NULL,
  root_key TEXT NOT NULL,
  passkeys TEXT,
  created_at INTEGER NOT NULL,
  synced_at INTEGER
) STRICT;
CREATE TABLE mirror_posts (
  mirror_id INTEGER NOT NULL REFERENCES mirrors (id),
  seq INTEGER NOT NULL,
  object_id BLOB NOT NULL,
  chain_hash BLOB NOT NULL,
  line TEXT NOT NULL,
  PRIMARY KEY (mirror_id, seq)
) STRICT, WITHOUT ROWID;
CREATE TABLE mirror_checkpoints (
  mirror_id INTEGER NOT NULL REFERENCES mirrors (id),
  last INTEGER NOT NULL,
  first INTEGER NOT NULL,
  checkpoint_id BLOB NOT NULL,
  served TEXT NOT NULL,
  PRIMARY KEY (mirror_id, last)
) STRICT, WITHOUT ROWID;
`,
};
