/**
 * Every migration, in order. Adding one: write NNN_name.ts exporting `migration`, then list it
 * here (explicitly: no directory scanning).
 */
import type { Migration } from './types.js';
import { migration as m001 } from './001_core.js';
import { migration as m002 } from './002_spaces.js';
import { migration as m003 } from './003_invites.js';
import { migration as m004 } from './004_posts.js';
import { migration as m005 } from './005_checkpoints.js';
import { migration as m006 } from './006_sealed.js';
import { migration as m007 } from './007_messages.js';
import { migration as m008 } from './008_left_views.js';
import { migration as m009 } from './009_tasks.js';
import { migration as m010 } from './010_oracle.js';
import { migration as m011 } from './011_oracle_links.js';
import { migration as m012 } from './012_passkeys.js';
import { migration as m013 } from './013_oauth.js';
import { migration as m014 } from './014_recovery.js';
import { migration as m015 } from './015_mirrors.js';
import { migration as m016 } from './016_witness.js';
import { migration as m017 } from './017_recovery_withheld.js';
import { migration as m018 } from './018_files.js';
import { migration as m019 } from './019_task_changes.js';
import { migration as m020 } from './020_task_attempts.js';
import { migration as m021 } from './021_findings.js';
import { migration as m022 } from './022_tasks_by_result.js';

export type { Migration } from './types.js';

export const MIGRATIONS: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017, m018, m019, m020, m021, m022];
