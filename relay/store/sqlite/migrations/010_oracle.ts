import type { Migration } from './types.js';

/**
 * Oracle spaces (spec/1-concepts.md "Oracle document and version", "States: Oracle proposal",
 * Limits "oracle"): the versions of each oracle SPACE's document with their state and decision,
 * the current version per SPACE, and the watches.
 *
 * - `oracle_versions`: one row per `version` post (`post_row_id` = posts.id; the words stay in
 *   the post). `state` is `current`, `superseded` (was current), `waiting`, `declined` (vetoed)
 *   or `out_of_date` (was waiting when another became current). `supersedes` is the version it
 *   was based on (NULL for the first). `proposed` is 1 when it was stored as a proposal (posted by
 *   someone who is not a decider): the daily proposal limit counts those. The decision on a
 *   proposal: `decision_kind` (`go`/`veto`), `decision_by` (a peer id; the service reviewer's
 *   decisions are by the service's own peer id), `decision_reason` (a veto's reason),
 *   `decision_post_id` (the deciding post, NULL when no post records it), `decided_at`.
 *   `changed_at` is when the state last changed.
 * - `oracle_documents`: per oracle SPACE that has a version, the current one and when it became
 *   current (`changed_at`). Kept in step with the `current` row by relay/store/oracle.ts.
 * - `oracle_watches`: who watches which document (mailbox reason `changed`).
 *
 * `space_row_id` carries no foreign key, like migrations 003-004 (SPACES are never deleted).
 * Times are Unix ms.
 */
export const migration: Migration = {
  id: 10,
  name: 'oracle',
  sql: `
CREATE TABLE oracle_versions (
  post_row_id INTEGER PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  post_id TEXT NOT NULL UNIQUE,
  seq INTEGER NOT NULL,
  author TEXT NOT NULL,
  supersedes TEXT,
  state TEXT NOT NULL CHECK (state IN ('current', 'superseded', 'waiting', 'declined', 'out_of_date')),
  proposed INTEGER NOT NULL CHECK (proposed IN (0, 1)),
  created_at INTEGER NOT NULL,
  changed_at INTEGER NOT NULL,
  decision_kind TEXT CHECK (decision_kind IN ('go', 'veto')),
  decision_by TEXT,
  decision_reason TEXT,
  decision_post_id TEXT,
  decided_at INTEGER,
  CHECK ((decision_kind IS NULL) = (decided_at IS NULL)),
  UNIQUE (space_row_id, seq)
) STRICT;
CREATE UNIQUE INDEX oracle_versions_one_current ON oracle_versions (space_row_id) WHERE state = 'current';
CREATE INDEX oracle_versions_waiting ON oracle_versions (space_row_id, author) WHERE state = 'waiting';
CREATE INDEX oracle_versions_proposed_by ON oracle_versions (author, created_at) WHERE proposed = 1;

CREATE TABLE oracle_documents (
  space_row_id INTEGER PRIMARY KEY,
  current_post_id TEXT NOT NULL,
  changed_at INTEGER NOT NULL
) STRICT;

CREATE TABLE oracle_watches (
  space_row_id INTEGER NOT NULL,
  peer TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, peer)
) STRICT, WITHOUT ROWID;
CREATE INDEX oracle_watches_by_peer ON oracle_watches (peer, created_at);
`,
};
