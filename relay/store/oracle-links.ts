/**
 * What current oracle texts link to, and forks (migration 011; spec/2-endpoints.md links.list,
 * oracle.fork).
 *
 * `indexLinks` rewrites an oracle space's rows from the text of the version that just became
 * current. It MUST run inside the transaction that makes that version current (the append
 * pipeline's, relay/store/oracle.ts), so links.list never shows links of a text that is not
 * current. A hidden version shows no words, so it carries no links while hidden: posts.hide and
 * posts.unhide of the current version call `indexLinks` again in their own transaction
 * (relay/posts/hide.ts). Parsing is shared/oracle-text.ts; only `[[name]]` and `[[name/seq]]` are kept.
 * Text is attacker-controlled: at most one row per link in it (64 KiB of text holds at most
 * about 9,000 links of the shortest form).
 */
import { parseOracleText } from '../../shared/oracle-text.js';
import type { Db } from './database.js';

export interface LinkRow {
  /** Page position (links.list `after`). */
  id: number;
  fromSpaceRowId: number;
  versionPostId: string;
  section: number | null;
  label: string | null;
}

export interface ForkRow {
  spaceRowId: number;
  fromSpaceRowId: number;
  fromVersion: string | null;
  createdAt: number;
}

export interface OracleLinkStore {
  /**
   * Replace the links of oracle space `spaceRowId` by those of the version `versionPostId` that
   * is now current: of `text` when given, else of that post's body as stored; none while that
   * post is hidden. Inside the caller's write transaction (the one that makes the version
   * current, or hides or shows it).
   */
  indexLinks(spaceRowId: number, versionPostId: string, text?: string): Promise<void>;
  /**
   * Links to SPACE `name` (`seq` null: `[[name]]`) or to its post `seq` (`[[name/seq]]`), by
   * page position, after `after` (exclusive).
   */
  linksTo(name: string, seq: number | null, page: { after: number; limit: number }): Promise<{ items: LinkRow[]; hasMore: boolean }>;
  /** Record that `spaceRowId` was forked from `fromSpaceRowId` at `fromVersion`. In the caller's transaction. */
  recordFork(fork: ForkRow): Promise<void>;
  forkOf(spaceRowId: number): Promise<ForkRow | undefined>;
}

interface Row {
  id: number;
  from_space_row_id: number;
  version_post_id: string;
  section: number | null;
  label: string | null;
}

export function createOracleLinkStore(db: Db): OracleLinkStore {
  const deleteFrom = db.prepare('DELETE FROM oracle_links WHERE from_space_row_id = ?');
  const insert = db.prepare(
    `INSERT INTO oracle_links (from_space_row_id, version_post_id, position, target_space, target_seq, section, label)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectToSpace = db.prepare<[string, number, number], Row>(
    `SELECT id, from_space_row_id, version_post_id, section, label FROM oracle_links
     WHERE target_space = ? AND target_seq IS NULL AND id > ? ORDER BY id LIMIT ?`,
  );
  const selectToPost = db.prepare<[string, number, number, number], Row>(
    `SELECT id, from_space_row_id, version_post_id, section, label FROM oracle_links
     WHERE target_space = ? AND target_seq = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  const selectBody = db.prepare<[string], { body: string | null; hidden_at: number | null }>('SELECT body, hidden_at FROM posts WHERE post_id = ?');
  const insertFork = db.prepare(
    'INSERT INTO oracle_forks (space_row_id, from_space_row_id, from_version, created_at) VALUES (?, ?, ?, ?)',
  );
  const selectFork = db.prepare<[number], { space_row_id: number; from_space_row_id: number; from_version: string | null; created_at: number }>(
    'SELECT * FROM oracle_forks WHERE space_row_id = ?',
  );

  return {
    async indexLinks(spaceRowId, versionPostId, text) {
      await deleteFrom.run(spaceRowId);
      const stored = await selectBody.get(versionPostId);
      if (stored?.hidden_at != null) return;
      const words = text ?? stored?.body ?? '';
      let position = 0;
      for (const r of parseOracleText(words).references) {
        if (r.space === undefined) continue;
        await insert.run(spaceRowId, versionPostId, position++, r.space, r.seq ?? null, r.section, r.label);
      }
    },
    async linksTo(name, seq, page) {
      const rows =
        seq === null ? await selectToSpace.all(name, page.after, page.limit + 1) : await selectToPost.all(name, seq, page.after, page.limit + 1);
      return {
        items: rows.slice(0, page.limit).map((r) => ({
          id: r.id,
          fromSpaceRowId: r.from_space_row_id,
          versionPostId: r.version_post_id,
          section: r.section,
          label: r.label,
        })),
        hasMore: rows.length > page.limit,
      };
    },
    async recordFork(f) {
      await insertFork.run(f.spaceRowId, f.fromSpaceRowId, f.fromVersion, f.createdAt);
    },
    async forkOf(spaceRowId) {
      const r = await selectFork.get(spaceRowId);
      return r ? { spaceRowId: r.space_row_id, fromSpaceRowId: r.from_space_row_id, fromVersion: r.from_version, createdAt: r.created_at } : undefined;
    },
  };
}
