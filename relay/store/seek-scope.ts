/**
 * What both SEEK stores (relay/store/seek.ts on SQLite's FTS5, relay/store/postgres/seek.ts on
 * tsvector) say the same way: the scope of a search as SQL conditions over `d` (seek_docs),
 * `s` (its SPACE) and `p` (posts, joined when a post filter is asked), and the candidate row.
 * Only a list parameter is spelled per database: a JSON array walked by `json_each` on SQLite,
 * a text array with `= ANY` on PostgreSQL.
 */
import type { Db, Dialect } from './database.js';
import type { PendingPost, SeekScope, TextCandidate } from './seek-store.js';

/** The largest valid code point: `prefix + it` bounds every value starting with `prefix`. */
export const MAX_CHAR = String.fromCodePoint(0x10ffff);

export interface CandidateRow {
  post_row: number;
  space_row_id: number;
  owner: string;
  /** 1 in one of the caller's own SPACES, else 0 (an integer on both databases). */
  own: number;
}

/** The caller's own SPACES (owner or member), a subquery each database runs once per statement. */
export const OWN_SPACES = '(SELECT id FROM spaces WHERE owner = @caller UNION ALL SELECT space_row_id FROM members WHERE peer_id = @caller)';

/** `column` is one of the list parameter `@name`, and the value to bind for it. */
function inList(dialect: Dialect, column: string, name: string, values: readonly string[]): { sql: string; value: unknown } {
  return dialect === 'postgres'
    ? { sql: `${column} = ANY(@${name}::text[])`, value: [...values] }
    : { sql: `${column} IN (SELECT value FROM json_each(@${name}))`, value: JSON.stringify(values) };
}

/**
 * The WHERE conditions of a scope, with named parameters. Per examined row it costs a seek_docs
 * and a spaces lookup and set probes: the caller's SPACES and categories are subqueries run once
 * per statement.
 */
export function scopeSql(dialect: Dialect, scope: SeekScope): { sql: string; params: Record<string, unknown>; posts: boolean } {
  const parts: string[] = [];
  const params: Record<string, unknown> = { caller: scope.caller ?? '' };
  if (scope.spaceRowId !== undefined) {
    parts.push('d.space_row_id = @space');
    params.space = scope.spaceRowId;
  } else if (scope.caller === null) {
    parts.push('(d.public = 1 AND d.unscoped = 1)');
  } else {
    parts.push(`(d.public = 1 AND d.unscoped = 1 OR d.space_row_id IN ${OWN_SPACES})`);
  }
  if (scope.categories !== undefined) {
    const c = inList(dialect, 'category', 'categories', scope.categories);
    parts.push(`d.space_row_id IN (SELECT space_row_id FROM space_categories WHERE ${c.sql})`);
    params.categories = c.value;
  }
  if (scope.oracle !== undefined) {
    parts.push('s.oracle = @oracle');
    params.oracle = scope.oracle ? 1 : 0;
  }
  if (scope.kinds !== undefined) {
    const k = inList(dialect, 'p.kind', 'kinds', scope.kinds);
    parts.push(k.sql);
    params.kinds = k.value;
  }
  if (scope.author !== undefined) {
    parts.push('p.author = @author');
    params.author = scope.author;
  }
  return { sql: parts.join(' AND '), params, posts: scope.kinds !== undefined || scope.author !== undefined };
}

/** Posts stored after row `after` (the indexer's backlog), at most `limit`, as both stores index them. */
export function pendingPosts(db: Db): (after: number, limit: number) => Promise<PendingPost[]> {
  const select = db.prepare<[number, number], {
    id: number;
    space_row_id: number;
    author: string;
    title: string | null;
    body: string | null;
    fingerprints_json: string | null;
    posted_at: number;
    visibility: string;
  }>(
    `SELECT p.id, p.space_row_id, p.author, p.title, p.body, p.fingerprints_json, p.posted_at, s.visibility
       FROM posts p JOIN spaces s ON s.id = p.space_row_id
      WHERE p.id > ? ORDER BY p.id LIMIT ?`,
  );
  return async (after, limit) =>
    (await select.all(after, limit)).map((r) => ({
      rowId: r.id,
      spaceRowId: r.space_row_id,
      author: r.author,
      title: r.title,
      body: r.body,
      fingerprintsJson: r.fingerprints_json,
      postedAt: r.posted_at,
      public: r.visibility === 'public',
    }));
}

/** The chosen candidates in walk order with their texts, hidden posts left out. */
export function shownCandidates(
  chosen: readonly CandidateRow[],
  texts: ReadonlyMap<number, { hidden_at: number | null; title: string | null; body: string | null }>,
): TextCandidate[] {
  const out: TextCandidate[] = [];
  for (const r of chosen) {
    const t = texts.get(r.post_row);
    if (!t || t.hidden_at !== null) continue;
    out.push({ rowId: r.post_row, spaceRowId: r.space_row_id, owner: r.owner, own: r.own === 1, score: 0, title: t.title, body: t.body });
  }
  return out;
}
