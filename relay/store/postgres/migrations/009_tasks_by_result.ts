import type { Migration } from './types.js';

/**
 * The task whose result a post is, found by the post, as relay/store/sqlite/migrations/
 * 022_tasks_by_result.ts made it on SQLite (its comment says why).
 */
export const migration: Migration = {
  id: 9,
  name: 'tasks_by_result',
  sql: `
CREATE INDEX tasks_by_result ON tasks (space_row_id, result_post_id, number) WHERE result_post_id IS NOT NULL;
`,
};
