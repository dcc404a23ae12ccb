import type { Migration } from './types.js';

/**
 * Checkpoints and the SEEK index (spec/1-concepts.md "Chains, checkpoints and proofs", "SEEK";
 * protocol/objects.md §11-§13).
 *
 * Checkpoints
 * - One row per signed range of one stream (`posts` or `events`) of one SPACE, keyed by its
 *   `last` position: the covering checkpoint of a position p is the first row with last ≥ p.
 * - `canonical` holds the exact signed bytes (every served member is read back from them, one
 *   source of truth); `checkpoint_id` and `signature` as signed.
 * - `signer_row` names the served signer rendering in use when it was signed
 *   (`checkpoint_signers`), so a checkpoint keeps the certificate that vouched for it.
 * - `space_row_id` is the SPACES row id without a foreign key, like migrations 003 and 004.
 *
 * SEEK (filled by a follow-up indexer, outside the append's write lock; see
 * relay/store/seek.ts)
 * - `seek_docs`: one row per indexed post (`post_row` = posts.id); `public` whether its SPACE is
 *   public (visibility never changes); `unscoped` whether it joins unscoped SEEK (only a KEY's
 *   first 200 public posts a UTC day do; `seek_daily` counts them).
 * - `seek_text`: contentless FTS5 over terms the relay tokenised itself (lowercase letters and
 *   digits split at every other character, so `src/main.rs` is `src main rs`), plus one
 *   `_s<space row id>` token per document so a SPACE-scoped search narrows inside FTS5. The
 *   FTS tokenizer only splits on spaces what is already split: `_` is a token character and
 *   never appears in tokenised peer text.
 * - `seek_fingerprints`: exact and prefix lookup by (scheme, value); values are compared as
 *   UTF-8 bytes (BINARY collation), so a prefix is a range.
 * - `seek_state.indexed_upto`: the highest posts.id indexed. Posts are never deleted and their
 *   row ids grow in commit order (one writer at a time), so everything above it is new.
 *
 * Read indexes over posts (table of migration 004) for the `kind` and `author` filters.
 */
export const migration: Migration = {
  id: 5,
  name: 'checkpoints',
  sql: `
CREATE TABLE checkpoint_signers (
  id INTEGER PRIMARY KEY,
  key_id TEXT NOT NULL,
  rendering TEXT NOT NULL UNIQUE
) STRICT;

CREATE TABLE checkpoints (
  space_row_id INTEGER NOT NULL,
  stream TEXT NOT NULL CHECK (stream IN ('posts', 'events')),
  last INTEGER NOT NULL,
  first INTEGER NOT NULL,
  checkpoint_id BLOB NOT NULL UNIQUE,
  canonical BLOB NOT NULL,
  signature BLOB NOT NULL,
  signer_row INTEGER NOT NULL REFERENCES checkpoint_signers (id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, stream, last),
  CHECK (first >= 1 AND last >= first AND last - first < 1024)
) STRICT, WITHOUT ROWID;

CREATE TABLE seek_docs (
  post_row INTEGER PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  public INTEGER NOT NULL CHECK (public IN (0, 1)),
  unscoped INTEGER NOT NULL CHECK (unscoped IN (0, 1))
) STRICT;
CREATE INDEX seek_docs_by_space ON seek_docs (space_row_id, post_row);

CREATE VIRTUAL TABLE seek_text USING fts5(
  terms,
  content = '',
  tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);

CREATE TABLE seek_fingerprints (
  scheme TEXT NOT NULL,
  value TEXT NOT NULL,
  post_row INTEGER NOT NULL,
  PRIMARY KEY (scheme, value, post_row)
) STRICT, WITHOUT ROWID;

CREATE TABLE seek_daily (
  author TEXT NOT NULL,
  day INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (author, day)
) STRICT, WITHOUT ROWID;

CREATE TABLE seek_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_upto INTEGER NOT NULL
) STRICT;
INSERT INTO seek_state (id, indexed_upto) VALUES (1, 0);

CREATE INDEX posts_by_space_kind ON posts (space_row_id, kind, seq);
CREATE INDEX posts_by_space_author ON posts (space_row_id, author, seq);
`,
};
