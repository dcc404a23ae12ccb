import type { Migration } from './types.js';

/**
 * Encryption keys and sealed SPACES (spec/1-concepts.md "Encryption key", "Sealed key
 * records", "States: Sealed key"; protocol/sealed.md §2, §3, §4, §6, §8, §9).
 *
 * The relay stores only public or sealed material: statements, commitments, back links, locks,
 * keeper lists, stamps, item headers and ciphertexts. No table here holds a secret that opens
 * anything.
 *
 * - `encryption_keys`: one per KEY for life (`peer_id` primary key), each public key used by one
 *   KEY only (UNIQUE). The statement's exact bytes and its signature envelope (JSON) are kept so
 *   members can check them themselves.
 * - `sealed_spaces`: one row per sealed SPACE: the generation in use, the owner it was handed
 *   over from (`owner_was`, and the generation in use then), the last keeper action, and the
 *   upkeep marks (first departure and first keeper drop not yet covered by a key change).
 * - `sealed_generations`: every generation with its commitment and back link (NULL for 1);
 *   `activated_at` NULL marks the one staged change (at most one per SPACE: partial UNIQUE).
 * - `sealed_locks`: one lock per (SPACE, generation, recipient), with its sender.
 * - `sealed_keeper_lists`: every revision the owner signed, as signed (bytes + envelope).
 * - `sealed_stamps`: the stamp a KEY holds in a SPACE (a newer one replaces it).
 * - `sealed_posts`: the header and ciphertext of a sealed post (`post_row` = posts.id), beside
 *   the posts row whose title, body, data and fingerprints stay NULL.
 * - `space_row_id` carries no foreign key, as in 003 and 004 (SPACES are never deleted).
 * - Times are Unix ms.
 */
export const migration: Migration = {
  id: 6,
  name: 'sealed',
  sql: `
CREATE TABLE encryption_keys (
  peer_id TEXT PRIMARY KEY REFERENCES keys (peer_id),
  public_key TEXT NOT NULL UNIQUE,
  fingerprint TEXT NOT NULL,
  statement BLOB NOT NULL,
  envelope_json TEXT NOT NULL,
  published_at INTEGER NOT NULL
) STRICT;

CREATE TABLE sealed_spaces (
  space_row_id INTEGER PRIMARY KEY,
  generation INTEGER NOT NULL CHECK (generation >= 1),
  owner_was TEXT,
  handed_over_generation INTEGER,
  kept_at INTEGER,
  kept_by TEXT,
  departed_at INTEGER,
  keeper_dropped_at INTEGER
) STRICT;

CREATE TABLE sealed_generations (
  space_row_id INTEGER NOT NULL,
  generation INTEGER NOT NULL CHECK (generation >= 1),
  commitment BLOB NOT NULL CHECK (length(commitment) = 32),
  back BLOB CHECK (back IS NULL OR length(back) = 48),
  created_by TEXT NOT NULL,
  staged_at INTEGER NOT NULL,
  activated_at INTEGER,
  progressed_at INTEGER,
  CHECK ((generation = 1) = (back IS NULL)),
  PRIMARY KEY (space_row_id, generation)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX sealed_one_staged ON sealed_generations (space_row_id) WHERE activated_at IS NULL;

CREATE TABLE sealed_locks (
  space_row_id INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  recipient TEXT NOT NULL,
  sender TEXT NOT NULL,
  lock BLOB NOT NULL CHECK (length(lock) = 80),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, generation, recipient)
) STRICT, WITHOUT ROWID;
CREATE INDEX sealed_locks_by_recipient ON sealed_locks (space_row_id, recipient);

CREATE TABLE sealed_keeper_lists (
  space_row_id INTEGER NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 1),
  list BLOB NOT NULL,
  envelope_json TEXT NOT NULL,
  signed_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, revision)
) STRICT, WITHOUT ROWID;

CREATE TABLE sealed_stamps (
  space_row_id INTEGER NOT NULL,
  peer_id TEXT NOT NULL,
  issuer TEXT NOT NULL,
  not_after INTEGER,
  stamp BLOB NOT NULL,
  envelope_json TEXT NOT NULL,
  put_by TEXT NOT NULL,
  put_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, peer_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE sealed_posts (
  post_row INTEGER PRIMARY KEY,
  generation INTEGER NOT NULL CHECK (generation >= 1),
  header BLOB NOT NULL,
  ciphertext BLOB NOT NULL
) STRICT;
`,
};
