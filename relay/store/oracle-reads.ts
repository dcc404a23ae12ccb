/**
 * The read side of oracle spaces beside relay/store/oracle.ts (which holds the version rows and
 * the current version, written by the append pipeline): the words of version posts as the
 * document and version list show them, and the watches (spec/2-endpoints.md watches.set,
 * watches.remove, watches.list) over migration 010's `oracle_watches`.
 *
 * Watch limits (spec/1-concepts.md Limits "watches 200 per KEY and 10,000 per document") are
 * counted inside the immediate transaction that adds the watch, so concurrent calls cannot pass
 * them together.
 */
import { SvcError } from '../../shared/errors.js';
import { ORACLE_LIMITS, SNIPPET_CHARACTERS } from '../../shared/limits.js';
import type { Db } from './database.js';

/** What a version post says: its title (the summary) and text, and whether it is hidden. */
export interface VersionWords {
  summary: string | null;
  postedAt: number;
  /** When the owner or an admin hid it (it then shows no words), else null. */
  hiddenAt: number | null;
}

export interface VersionHead extends VersionWords {
  /** The first 280 characters of the text. */
  snippet: string;
  snippetTruncated: boolean;
}

export interface WatchItem {
  space: string;
  /** The watched document's current version, or null before its first. */
  current: string | null;
  /** When it last became current, or null. */
  changedAt: number | null;
  watchedAt: number;
}

export interface OracleReadStore {
  /** A version post's summary and snippet by post row id (oracle_versions.post_row_id). */
  head(postRowId: number): Promise<VersionHead | undefined>;
  /** Is `peer` watching the document of `spaceRowId`? */
  watching(spaceRowId: number, peer: string): Promise<boolean>;
  /** watches.set: WATCH_LIMIT past the KEY's or the document's limit; `changed` false when already watching. */
  watch(spaceRowId: number, peer: string, now: number): Promise<{ changed: boolean }>;
  /** watches.remove: `changed` false when not watching. */
  unwatch(spaceRowId: number, peer: string): Promise<{ changed: boolean }>;
  /** What `peer` watches, by SPACE name after `after` (exclusive). */
  watches(peer: string, page: { after: string | null; limit: number }): Promise<{ items: WatchItem[]; hasMore: boolean }>;
}

/** Limits as parameters so a test can reach them with few rows; the spec's by default. */
export interface WatchLimits {
  perKey: number;
  perDocument: number;
}

/** The first 280 characters (code points) of `head`, which holds at most one more. */
function cut(head: string): { snippet: string; snippetTruncated: boolean } {
  const chars = [...head];
  if (chars.length <= SNIPPET_CHARACTERS) return { snippet: head, snippetTruncated: false };
  return { snippet: chars.slice(0, SNIPPET_CHARACTERS).join(''), snippetTruncated: true };
}

export function createOracleReadStore(
  db: Db,
  limits: WatchLimits = { perKey: ORACLE_LIMITS.watchesPerKey, perDocument: ORACLE_LIMITS.watchersPerDocument },
): OracleReadStore {
  // substr counts characters (code points), as snippets do; one more tells whether it was cut.
  const selectHead = db.prepare<[number, number], { title: string | null; head: string | null; posted_at: number; hidden_at: number | null }>(
    'SELECT title, substr(body, 1, ?) AS head, posted_at, hidden_at FROM posts WHERE id = ?',
  );
  const selectWatch = db.prepare<[number, string], { one: number }>('SELECT 1 AS one FROM oracle_watches WHERE space_row_id = ? AND peer = ?');
  const countByPeer = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM oracle_watches WHERE peer = ?');
  const countBySpace = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM oracle_watches WHERE space_row_id = ?');
  const insertWatch = db.prepare('INSERT INTO oracle_watches (space_row_id, peer, created_at) VALUES (?, ?, ?)');
  const deleteWatch = db.prepare('DELETE FROM oracle_watches WHERE space_row_id = ? AND peer = ?');
  const selectWatches = db.prepare<[string, string, number], { name: string; current_post_id: string | null; changed_at: number | null; created_at: number }>(
    `SELECT s.name, d.current_post_id, d.changed_at, w.created_at FROM oracle_watches w
     JOIN spaces s ON s.id = w.space_row_id
     LEFT JOIN oracle_documents d ON d.space_row_id = w.space_row_id
     WHERE w.peer = ? AND s.name > ? ORDER BY s.name LIMIT ?`,
  );

  const watchTx = db.transaction(async (spaceRowId: number, peer: string, now: number): Promise<{ changed: boolean }> => {
    if (await selectWatch.get(spaceRowId, peer)) return { changed: false };
    if ((await countByPeer.get(peer))!.n >= limits.perKey) {
      throw new SvcError('WATCH_LIMIT', `yours: you watch ${limits.perKey} documents; unwatch one first`);
    }
    if ((await countBySpace.get(spaceRowId))!.n >= limits.perDocument) {
      throw new SvcError('WATCH_LIMIT', `this SPACE: ${limits.perDocument} watchers`);
    }
    await insertWatch.run(spaceRowId, peer, now);
    return { changed: true };
  });

  return {
    async head(postRowId) {
      const r = await selectHead.get(SNIPPET_CHARACTERS + 1, postRowId);
      if (!r) return undefined;
      return { summary: r.title, postedAt: r.posted_at, hiddenAt: r.hidden_at, ...cut(r.head ?? '') };
    },
    watching: async (spaceRowId, peer) => await selectWatch.get(spaceRowId, peer) !== undefined,
    watch: async (spaceRowId, peer, now) => await watchTx.under({ spaces: [spaceRowId], keys: [peer] }, spaceRowId, peer, now),
    unwatch: async (spaceRowId, peer) => ({ changed: (await deleteWatch.run(spaceRowId, peer)).changes > 0 }),
    async watches(peer, page) {
      const rows = await selectWatches.all(peer, page.after ?? '', page.limit + 1);
      return {
        items: rows.slice(0, page.limit).map((r) => ({ space: r.name, current: r.current_post_id, changedAt: r.changed_at, watchedAt: r.created_at })),
        hasMore: rows.length > page.limit,
      };
    },
  };
}
