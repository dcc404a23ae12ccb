/**
 * "Changes nothing", made checkable: a digest of every row of every table a relay write can
 * touch (KEYS and their passkeys, SPACES, members, blocks, the audit log, links, requests, offers, posts, mailboxes,
 * encryption keys, sealed records, conversations and messages, message blocks and retention,
 * oracle versions, documents, watches, the links of current texts and forks,
 * task lists with their after links, checks and numbered attempts, findings, the sources posts
 * cite and the results task checks rejected).
 * Two equal digests mean those tables hold the same rows.
 * Background tables (checkpoints, SEEK index) and sign-in bookkeeping are left out on purpose.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { codeOf } from './posts.js';
import type { Answer, RunningRelay } from './relay.js';
import type { Db, Statement } from '../../relay/store/database.js';

export const WRITTEN_TABLES = [
  'keys',
  'passkeys',
  'encryption_keys',
  'spaces',
  'space_categories',
  'members',
  'space_blocks',
  'space_events',
  'invites',
  'invite_uses',
  'join_requests',
  'hand_overs',
  'posts',
  'sealed_posts',
  'mailbox',
  'sealed_spaces',
  'sealed_generations',
  'sealed_locks',
  'sealed_keeper_lists',
  'sealed_stamps',
  'conversations',
  'conversation_members',
  'messages',
  'message_idempotency',
  'message_requests_sent',
  'message_blocks',
  'message_retention',
  'oracle_versions',
  'oracle_documents',
  'oracle_watches',
  'oracle_links',
  'oracle_forks',
  'task_lists',
  'tasks',
  'task_after',
  'task_checks',
  'task_revisions',
  'task_retired',
  'task_attempts',
  'task_attempt_checks',
  'findings',
  'post_sources',
  'task_rejections',
] as const;

/**
 * A function answering the digest of `relay`'s written tables. Each table is read as one text
 * built inside SQLite: every column quoted, rows sorted by that text (some tables are WITHOUT
 * ROWID, so there is no rowid order to rely on). Statements are prepared once.
 */
export async function stateProbe(relay: RunningRelay): Promise<() => Promise<string>> {
  const dumps = await Promise.all(WRITTEN_TABLES.map(async (table) => ({ table, sql: await tableDump(relay.store.db, table) })));
  return async () => {
    const h = createHash('sha256');
    for (const d of dumps) h.update(`\u0001${d.table}\u0001${(await d.sql.get())?.t ?? ''}`);
    return h.digest('hex');
  };
}

/**
 * A statement answering every row of `table` as one text, rows sorted: on SQLite each column
 * quoted and joined, on PostgreSQL the row's own text form.
 */
export async function tableDump(db: Db, table: string): Promise<Statement<[], { t: string | null }>> {
  if (db.dialect === 'postgres') {
    return db.prepare(`SELECT string_agg(x.r, chr(10) ORDER BY x.r) AS t FROM (SELECT (tbl.*)::text AS r FROM ${table} tbl) x`);
  }
  const columns = ((await db.prepare(`PRAGMA table_info(${table})`).all()) as { name: string }[]).map((c) => c.name);
  const row = columns.map((c) => `quote("${c}")`).join(" || ',' || ");
  return db.prepare(`SELECT group_concat(${row}, char(10) ORDER BY ${row}) AS t FROM ${table}`);
}

/**
 * `send` is refused with `code` (and `status`, where given) in the error envelope, and the tables
 * `probe` digests hold the same rows after it as before: the refusal changed nothing.
 */
export async function refusedUnchanged(probe: () => Promise<string>, code: string, status: number | undefined, send: () => Promise<Answer>): Promise<Answer> {
  const before = await probe();
  const r = await send();
  expect(codeOf(r), r.text).toBe(code);
  if (status !== undefined) expect(r.status, r.text).toBe(status);
  expect(r.body.error).toMatchObject({ message: expect.any(String), fix: expect.any(String), request_id: expect.any(String) });
  expect(await probe()).toBe(before);
  return r;
}
