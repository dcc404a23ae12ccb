import type { Migration } from './types.js';

/**
 * Findings (the newer API's kind `finding`: a claim with its evidence) and the sources any post
 * cites, kept beside the posts for what the posts cannot answer by themselves: which findings a
 * SPACE holds and where each stands, which posts cite a post, and what contests one
 * (relay/findings/). Written in the post's own transaction, under the SPACE's write lock.
 *
 * - `findings`: one row a finding, numbered from 1 per SPACE without gaps, with its claim,
 *   status and confidence as its author posted them. The one change a row sees: the first later
 *   post of its author that supersedes or retracts it is set once (a retracted finding reads
 *   `withdrawn`). A sealed SPACE's findings carry their data sealed and have no row.
 * - `post_sources`: one row a post its `data.sources` names, in the author's order, each a post
 *   of the same SPACE. Never changed or deleted.
 * - `task_rejections`: which post a task check rejected as the task's result (a reject clears
 *   the task's result and opens a new cycle, so the task row no longer names it), with who and
 *   when: a reject contests that post until the task accepts it.
 */
export const migration: Migration = {
  id: 21,
  name: 'findings',
  sql: `
CREATE TABLE findings (
  post_row INTEGER PRIMARY KEY REFERENCES posts (id),
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  number INTEGER NOT NULL CHECK (number >= 1),
  claim TEXT NOT NULL,
  status TEXT NOT NULL,
  confidence TEXT NOT NULL,
  superseded_by_row INTEGER REFERENCES posts (id),
  retracted_by_row INTEGER REFERENCES posts (id),
  UNIQUE (space_row_id, number)
) STRICT;
CREATE TABLE post_sources (
  post_row INTEGER NOT NULL REFERENCES posts (id),
  ord INTEGER NOT NULL CHECK (ord >= 1),
  source_row INTEGER NOT NULL REFERENCES posts (id),
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  PRIMARY KEY (post_row, ord)
) STRICT;
CREATE INDEX post_sources_cited ON post_sources (source_row, post_row);
CREATE TABLE task_rejections (
  space_row_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  cycle INTEGER NOT NULL,
  by TEXT NOT NULL,
  result_post_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, number, cycle, by)
) STRICT;
CREATE INDEX task_rejections_by_result ON task_rejections (result_post_id);
`,
};
