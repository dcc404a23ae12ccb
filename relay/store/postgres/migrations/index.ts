/**
 * Every PostgreSQL migration, in order. The PostgreSQL store started from the schema SQLite
 * had reached by its migration 014, as one first migration; a later change to the schema is
 * a new migration here and one in relay/store/sqlite/migrations/, each numbered in its own
 * folder, listed explicitly (no directory scanning). Released migrations are never edited.
 */
import type { Migration } from './types.js';
import { migration as m001 } from './001_schema.js';
import { migration as m002 } from './002_rate_buckets.js';
import { migration as m003 } from './003_mirrors_witness.js';
import { migration as m004 } from './004_recovery_withheld.js';
import { migration as m005 } from './005_files.js';
import { migration as m006 } from './006_task_changes.js';
import { migration as m007 } from './007_task_attempts.js';
import { migration as m008 } from './008_findings.js';
import { migration as m009 } from './009_tasks_by_result.js';

export type { Migration } from './types.js';

export const MIGRATIONS: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009];
