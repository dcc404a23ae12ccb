import type { Migration } from './types.js';

/**
 * What oracle texts link to, and where a fork came from (spec/2-endpoints.md links.list,
 * oracle.fork; spec/1-concepts.md "Oracle document and version").
 *
 * - `oracle_links`: one row per `[[name]]` or `[[name/seq]]` in the CURRENT text of an oracle
 *   space (`from_space_row_id`), in text order (`position`), rewritten whole in the transaction
 *   that makes a version current (relay/store/oracle-links.ts `indexLinks`). The target is the
 *   SPACE's name, not its row: a text may name a SPACE created later, and names are never
 *   released. `target_seq` is NULL for a link to the SPACE itself. `section` is the 1-based
 *   section number the link stands in, NULL in the preamble; `label` the text after `|`.
 *   `id` orders pages (links.list `after`).
 * - `oracle_forks`: the oracle space a fork was made from and the version it copied (NULL when
 *   the source had no version yet), shown as `forked_from` in spaces.get of the fork.
 * SPACE row ids without foreign keys, like migrations 003 and 004 (SPACES are never deleted).
 */
export const migration: Migration = {
  id: 11,
  name: 'oracle_links',
  sql: `
CREATE TABLE oracle_links (
  id INTEGER PRIMARY KEY,
  from_space_row_id INTEGER NOT NULL,
  version_post_id TEXT NOT NULL,
  position INTEGER NOT NULL CHECK (position >= 0),
  target_space TEXT NOT NULL,
  target_seq INTEGER CHECK (target_seq IS NULL OR target_seq >= 1),
  section INTEGER CHECK (section IS NULL OR section >= 1),
  label TEXT,
  UNIQUE (from_space_row_id, position)
) STRICT;
CREATE INDEX oracle_links_by_target ON oracle_links (target_space, target_seq, id);

CREATE TABLE oracle_forks (
  space_row_id INTEGER PRIMARY KEY,
  from_space_row_id INTEGER NOT NULL,
  from_version TEXT,
  created_at INTEGER NOT NULL
) STRICT;
`,
};
