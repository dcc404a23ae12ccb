/**
 * The SEEK index (migration 005; spec/1-concepts.md "SEEK", Limits "unscoped SEEK").
 *
 * Indexing is a follow-up to the append, never inside it: `pending` reads posts above the
 * watermark, the caller tokenises them with no lock held (relay/seek/terms.ts), and `index`
 * writes the rows in one short write transaction that first re-checks the watermark (two
 * indexers racing store nothing twice). The watermark is a posts row id: posts are never
 * deleted and their row ids grow in commit order.
 *
 * Candidates: a query never ranks every match. Text hits are taken newest first (FTS5 walks
 * row ids backwards), filtered by visibility inside the same statement, and cut at `cap`; bm25
 * (about 3 µs a row) runs on those only. An unscoped search also looks no further back than
 * the `scan` newest matches of its expression (a floor row id found first, ~0.05 µs a match),
 * so a common word in SPACES the caller cannot read costs at most `scan` visibility checks
 * (~0.3 µs each), never its whole doclist. A search scoped to one SPACE narrows inside FTS5 by
 * the SPACE's token instead and keeps full recall. A fingerprint prefix looks at most at
 * `scan` index entries.
 *
 * Visibility, in SQL: a hit is in one of the caller's own SPACES (owner or member), or in a
 * public SPACE and among its author's first 200 public posts of that UTC day (`unscoped`),
 * or, for a search scoped to one SPACE the caller may read, anywhere in it. Hidden posts
 * never match.
 */
import type { Fingerprint } from '../../shared/validate.js';
import { SEEKABLE_PUBLIC_POSTS_PER_DAY } from '../../shared/limits.js';
import type { Db } from './db.js';

const DAY_MS = 86_400_000;

/** A post waiting to be indexed, with what tokenising needs. */
export interface PendingPost {
  rowId: number;
  spaceRowId: number;
  author: string;
  title: string | null;
  body: string | null;
  fingerprintsJson: string | null;
  postedAt: number;
  public: boolean;
}

/** A post ready to store: tokenised text (or null for none) and its fingerprints. */
export interface PreparedDoc {
  rowId: number;
  spaceRowId: number;
  author: string;
  postedAt: number;
  public: boolean;
  terms: string | null;
  fingerprints: Fingerprint[];
}

/** Where a search may look. */
export interface SeekScope {
  /** The caller's KEY, or null when anonymous (public SPACES only). */
  caller: string | null;
  /** Scoped to one SPACE (row id) the caller may read: every post there is a candidate. */
  spaceRowId?: number | undefined;
  /** Only SPACES filed in one of these categories. */
  categories?: readonly string[] | undefined;
  /** Only oracle spaces (true) or only work spaces (false). */
  oracle?: boolean | undefined;
  /** Only posts of these kinds. */
  kinds?: readonly string[] | undefined;
  /** Only posts by this KEY. */
  author?: string | undefined;
}

export interface SeekCandidate {
  rowId: number;
  spaceRowId: number;
  /** The SPACE's owner. */
  owner: string;
  /** In one of the caller's own SPACES. */
  own: boolean;
  /** bm25 score (lower is better); 0 for fingerprint hits. */
  score: number;
}

export interface SeekStore {
  /** The highest posts row id indexed. */
  watermark(): number;
  /** Posts above `after` (row id), ascending, at most `limit`. */
  pending(after: number, limit: number): PendingPost[];
  /**
   * Store prepared docs covering row ids (from, upto]; answers false, storing nothing, when
   * the watermark is no longer `from`.
   */
  index(from: number, upto: number, docs: readonly PreparedDoc[]): boolean;
  /**
   * Newest text matches of an FTS5 expression, visible in `scope`, at most `cap`, looking no
   * further back than the `scan` newest matches unless the scope is one SPACE.
   */
  text(expression: string, scope: SeekScope, cap: number, scan: number): SeekCandidate[];
  /** Newest posts carrying exactly this fingerprint, visible in `scope`, at most `cap`. */
  fingerprint(fp: Fingerprint, scope: SeekScope, cap: number): SeekCandidate[];
  /** Newest posts with a fingerprint of `scheme` whose value starts with `prefix`, among the first `scan` index entries. */
  fingerprintPrefix(fp: Fingerprint, scope: SeekScope, cap: number, scan: number): SeekCandidate[];
}

/** The largest valid code point: `prefix + it` bounds every value starting with `prefix`. */
const MAX_CHAR = String.fromCodePoint(0x10ffff);

interface CandidateRow {
  post_row: number;
  space_row_id: number;
  own: number;
  score: number;
}

/** The caller's own SPACES (owner or member), as a subquery SQLite materialises once per statement. */
const OWN_SPACES = '(SELECT id FROM spaces WHERE owner = @caller UNION ALL SELECT space_row_id FROM members WHERE peer_id = @caller)';

/**
 * The WHERE conditions of a scope over `d` (seek_docs), and `p` (posts) when a post filter is
 * asked, with named parameters. Per examined row it costs one seek_docs lookup and set probes:
 * SPACE-level filters are subqueries materialised once, not joins.
 */
function scopeSql(scope: SeekScope): { sql: string; params: Record<string, unknown>; posts: boolean } {
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
    parts.push(
      'd.space_row_id IN (SELECT space_row_id FROM space_categories WHERE category IN (SELECT value FROM json_each(@categories)))',
    );
    params.categories = JSON.stringify(scope.categories);
  }
  if (scope.oracle !== undefined) {
    parts.push('d.space_row_id IN (SELECT id FROM spaces WHERE oracle = @oracle)');
    params.oracle = scope.oracle ? 1 : 0;
  }
  if (scope.kinds !== undefined) {
    parts.push('p.kind IN (SELECT value FROM json_each(@kinds))');
    params.kinds = JSON.stringify(scope.kinds);
  }
  if (scope.author !== undefined) {
    parts.push('p.author = @author');
    params.author = scope.author;
  }
  return { sql: parts.join(' AND '), params, posts: scope.kinds !== undefined || scope.author !== undefined };
}

export function createSeekStore(db: Db): SeekStore {
  const selectWatermark = db.prepare<[], { indexed_upto: number }>('SELECT indexed_upto FROM seek_state WHERE id = 1');
  const updateWatermark = db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1');
  const selectPending = db.prepare<[number, number], {
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
  const insertDoc = db.prepare('INSERT INTO seek_docs (post_row, space_row_id, public, unscoped) VALUES (?, ?, ?, ?)');
  const insertText = db.prepare('INSERT INTO seek_text (rowid, terms) VALUES (?, ?)');
  const insertFingerprint = db.prepare('INSERT OR IGNORE INTO seek_fingerprints (scheme, value, post_row) VALUES (?, ?, ?)');
  const selectDaily = db.prepare<[string, number], { count: number }>('SELECT count FROM seek_daily WHERE author = ? AND day = ?');
  const upsertDaily = db.prepare(
    `INSERT INTO seek_daily (author, day, count) VALUES (?, ?, 1)
     ON CONFLICT (author, day) DO UPDATE SET count = count + 1`,
  );

  const indexTx = db.transaction((from: number, upto: number, docs: readonly PreparedDoc[]): boolean => {
    if ((selectWatermark.get()?.indexed_upto ?? 0) !== from) return false;
    for (const d of docs) {
      let unscoped = 0;
      if (d.public) {
        const day = Math.floor(d.postedAt / DAY_MS);
        const count = selectDaily.get(d.author, day)?.count ?? 0;
        if (count < SEEKABLE_PUBLIC_POSTS_PER_DAY) unscoped = 1;
        upsertDaily.run(d.author, day);
      }
      insertDoc.run(d.rowId, d.spaceRowId, d.public ? 1 : 0, unscoped);
      if (d.terms !== null) insertText.run(d.rowId, d.terms);
      for (const fp of d.fingerprints) insertFingerprint.run(fp.scheme, fp.value, d.rowId);
    }
    updateWatermark.run(upto);
    return true;
  });

  const selectFloor = db.prepare<[string, number], { rowid: number }>(
    'SELECT rowid FROM seek_text WHERE seek_text MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?',
  );

  // Statements depend on the scope's shape only; a handful of shapes exist.
  const cache = new Map<string, ReturnType<Db['prepare']>>();
  function prepared(key: string, sql: string): ReturnType<Db['prepare']> {
    let stmt = cache.get(key);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(key, stmt);
    }
    return stmt;
  }

  function shapeKey(kind: string, scope: SeekScope): string {
    const who = scope.spaceRowId !== undefined ? 'space' : scope.caller === null ? 'anon' : 'key';
    const filters = [scope.categories, scope.oracle, scope.kinds, scope.author].map((f) => (f === undefined ? 0 : 1)).join('');
    return `${kind}:${who}:${filters}`;
  }

  const selectDetails = db.prepare<[string], { id: number; hidden_at: number | null; owner: string }>(
    'SELECT p.id, p.hidden_at, s.owner FROM posts p JOIN spaces s ON s.id = p.space_row_id WHERE p.id IN (SELECT value FROM json_each(?))',
  );

  function candidates(kind: 'text' | 'fp' | 'prefix', scope: SeekScope, bind: Record<string, unknown>): SeekCandidate[] {
    const { sql: where, params, posts } = scopeSql(scope);
    const own = scope.caller === null ? '0' : `d.space_row_id IN ${OWN_SPACES}`;
    const row = kind === 'text' ? 'seek_text.rowid' : 'f.post_row';
    const joins = `JOIN seek_docs d ON d.post_row = ${row}${posts ? ` JOIN posts p ON p.id = ${row}` : ''}`;
    let sql: string;
    if (kind === 'text') {
      sql = `SELECT seek_text.rowid AS post_row, d.space_row_id, ${own} AS own, bm25(seek_text) AS score
               FROM seek_text ${joins}
              WHERE seek_text MATCH @match AND seek_text.rowid >= @floor AND ${where}
              ORDER BY seek_text.rowid DESC LIMIT @cap`;
    } else if (kind === 'fp') {
      sql = `SELECT f.post_row, d.space_row_id, ${own} AS own, 0 AS score
               FROM seek_fingerprints f ${joins}
              WHERE f.scheme = @scheme AND f.value = @value AND ${where}
              ORDER BY f.post_row DESC LIMIT @cap`;
    } else {
      sql = `SELECT f.post_row, d.space_row_id, ${own} AS own, 0 AS score
               FROM (SELECT post_row FROM seek_fingerprints
                      WHERE scheme = @scheme AND value >= @value AND value < @upper LIMIT @scan) f ${joins}
              WHERE ${where}
              ORDER BY f.post_row DESC LIMIT @cap`;
    }
    const rows = prepared(shapeKey(kind, scope), sql).all({ ...params, ...bind }) as CandidateRow[];
    if (rows.length === 0) return [];
    // Hidden posts never match; owners are for the unscoped fairness caps. Read for the
    // candidates only (at most `cap`), not per examined row.
    const details = new Map(selectDetails.all(JSON.stringify(rows.map((r) => r.post_row))).map((d) => [d.id, d]));
    const out: SeekCandidate[] = [];
    for (const r of rows) {
      const d = details.get(r.post_row);
      if (!d || d.hidden_at !== null) continue;
      out.push({ rowId: r.post_row, spaceRowId: r.space_row_id, owner: d.owner, own: r.own === 1, score: r.score });
    }
    return out;
  }

  return {
    watermark: () => selectWatermark.get()?.indexed_upto ?? 0,
    pending(after, limit) {
      return selectPending.all(after, limit).map((r) => ({
        rowId: r.id,
        spaceRowId: r.space_row_id,
        author: r.author,
        title: r.title,
        body: r.body,
        fingerprintsJson: r.fingerprints_json,
        postedAt: r.posted_at,
        public: r.visibility === 'public',
      }));
    },
    index: (from, upto, docs) => indexTx.immediate(from, upto, docs),
    text(expression, scope, cap, scan) {
      // The floor: the row id of the scan-th newest match (0 when there are fewer, or when the
      // scope is one SPACE, whose token already narrows the expression).
      const floor = scope.spaceRowId !== undefined ? 0 : (selectFloor.get(expression, scan)?.rowid ?? 0);
      return candidates('text', scope, { match: expression, cap, floor });
    },
    fingerprint: (fp, scope, cap) => candidates('fp', scope, { scheme: fp.scheme, value: fp.value, cap }),
    fingerprintPrefix: (fp, scope, cap, scan) =>
      candidates('prefix', scope, { scheme: fp.scheme, value: fp.value, upper: fp.value + MAX_CHAR, cap, scan }),
  };
}
