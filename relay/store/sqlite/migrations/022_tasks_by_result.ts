import type { Migration } from './types.js';

/**
 * The task whose result a post is, found by the post: a finding's entry in the findings read
 * asks it for every finding of the page (relay/store/findings.ts `resultTaskOf`). Without an
 * index the question read every task of the SPACE, once a finding.
 */
export const migration: Migration = {
  id: 22,
  name: 'tasks_by_result',
  sql: `
CREATE INDEX tasks_by_result ON tasks (space_row_id, result_post_id, number) WHERE result_post_id IS NOT NULL;
`,
};
