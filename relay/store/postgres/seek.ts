/**
 * The SEEK index on PostgreSQL: the interface of relay/store/seek-store.ts with the rules of
 * relay/store/seek.ts, over `seek_text` (one tsvector of the relay's own terms per post, under
 * a GIN index; ./seek-text.ts) instead of FTS5. The SQLite module documents the design; what
 * follows is where PostgreSQL does the same thing another way.
 *
 * - Candidates. The walk is SQLite's, newest first, no further back than `scan` matches,
 *   stopping at `cap` kept candidates, with the same two counters for the unscoped caps; what
 *   FTS5 gives as one iteration comes here in pages (FIRST_PAGE), each a statement that finds
 *   the page's matches (GIN, or the primary key walked backwards when the planner prefers) and
 *   says for each whether the scope lets it through. Hidden posts are left out after the walk,
 *   as on SQLite (so a hidden post takes its place in the caps there and here).
 * - Fingerprints: the same (scheme, value, post_row) key, values compared bytewise (COLLATE
 *   "C"), so a prefix is the same range; the prefix's `scan` first index entries are taken in
 *   index order (value, then row), which is the order SQLite's walk of its key visits them.
 * - Storing. A post's rows (its day count, seek_docs, seek_text, seek_fingerprints) are written
 *   by one statement, data-modifying CTEs: a round trip costs far more here than a statement
 *   does in SQLite, and an append holds its SPACE's lock while it indexes (about 4.8 ms a post
 *   as one statement each, 1.5 ms as one, on this machine under load). The posts a transaction
 *   appends (a group commit's) are gathered and stored together, one statement just before its
 *   COMMIT (`Db.atCommit`).
 * - The watermark. Writers to different SPACES run side by side here (relay/store/postgres/
 *   locks.ts), so a posts id below an append's own may belong to a transaction still open in
 *   another process, and one row every append updated would make them all wait for each other.
 *   So an append always stores its own post's rows, in its own transaction, and never moves
 *   the watermark: every post an append commits is indexed when it is committed. What is left
 *   for the follow-up indexer is a post written some other way (a migration, an older
 *   database): `pending` first moves the watermark up to just below the oldest post with no
 *   SEEK rows (or to the newest post when there is none), one statement on the one row, outside
 *   every append, then answers the posts above `after` with no SEEK rows. A post still being
 *   appended is passed over safely: its own transaction indexes it.
 */
import type { Fingerprint } from '../../../shared/validate.js';
import { SEEKABLE_PUBLIC_POSTS_PER_DAY } from '../../../shared/limits.js';
import type { AtCommit, Db, Statement } from '../database.js';
import type { PreparedDoc, SeekCandidate, SeekScope, SeekStore, TextCandidate, TextWalk } from '../seek-store.js';
import { tsqueryLiteral, tsvectorLiteral } from './seek-text.js';
import { MAX_CHAR, OWN_SPACES, scopeSql, shownCandidates, type CandidateRow } from '../seek-scope.js';

const DAY_MS = 86_400_000;

/**
 * A text walk reads its matches in pages, newest first, each page four times the one before:
 * a common word whose newest matches are visible stops after the first page, as SQLite's walk
 * stops iterating, and a walk through matches the caller cannot see takes a few round trips.
 */
const FIRST_PAGE = 128;

function ownSql(scope: SeekScope): string {
  return scope.caller === null ? '0' : `CASE WHEN d.space_row_id IN ${OWN_SPACES} THEN 1 ELSE 0 END`;
}

/** Statements depend on the scope's shape only; a handful of shapes exist. */
function shapeKey(kind: string, scope: SeekScope): string {
  const who = scope.spaceRowId !== undefined ? 'space' : scope.caller === null ? 'anon' : 'key';
  const filters = [scope.categories, scope.oracle, scope.kinds, scope.author].map((f) => (f === undefined ? 0 : 1)).join('');
  return `${kind}:${who}:${filters}`;
}

export function createPostgresSeekStore(db: Db): SeekStore {
  if (db.dialect !== 'postgres') throw new Error('createPostgresSeekStore: a PostgreSQL database is needed');
  const selectWatermark = db.prepare<[], { indexed_upto: number }>('SELECT indexed_upto FROM seek_state WHERE id = 1');
  const advanceWatermark = db.prepare<[], { indexed_upto: number }>(
    `UPDATE seek_state w SET indexed_upto = GREATEST(w.indexed_upto, COALESCE(
        (SELECT min(p.id) - 1 FROM posts p
          WHERE p.id > w.indexed_upto AND NOT EXISTS (SELECT 1 FROM seek_docs d WHERE d.post_row = p.id)),
        (SELECT max(p.id) FROM posts p), 0))
      WHERE w.id = 1 RETURNING indexed_upto`,
  );
  const moveWatermark = db.prepare<[number, number]>('UPDATE seek_state SET indexed_upto = ? WHERE id = 1 AND indexed_upto = ?');
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
      WHERE p.id > ? AND NOT EXISTS (SELECT 1 FROM seek_docs d WHERE d.post_row = p.id)
      ORDER BY p.id LIMIT ?`,
  );
  /**
   * A post's SEEK rows in one statement (one round trip inside the write lock), stored only
   * when `ready` (a condition over the watermark row `w`) holds, the watermark moved to the
   * post with them when `mark`; answers whether they were stored.
   * A public post counts toward its author's posts of the UTC day, and is unscoped when the
   * count it raised is within SEEKABLE_PUBLIC_POSTS_PER_DAY (the count before it was under).
   */
  const storeWhen = (ready: string, mark: boolean) =>
    db.prepare<Record<string, unknown>, { stored: number }>(
      `WITH ready AS (
         SELECT 1 AS one FROM seek_state w WHERE w.id = 1 AND ${ready}
       ), daily AS (
         INSERT INTO seek_daily (author, day, count)
         SELECT @author, @day, 1 FROM ready WHERE @public = 1
         ON CONFLICT (author, day) DO UPDATE SET count = seek_daily.count + 1
         RETURNING count
       ), doc AS (
         INSERT INTO seek_docs (post_row, space_row_id, public, unscoped)
         SELECT @row, @space, @public, CASE WHEN (SELECT count FROM daily) <= @perDay THEN 1 ELSE 0 END FROM ready
         RETURNING post_row
       ), words AS (
         INSERT INTO seek_text (post_row, terms)
         SELECT @row, CAST(@terms AS tsvector) FROM ready WHERE CAST(@terms AS tsvector) IS NOT NULL
       ), prints AS (
         INSERT INTO seek_fingerprints (scheme, value, post_row)
         SELECT f.scheme, f.value, @row FROM ready, unnest(CAST(@schemes AS text[]), CAST(@values AS text[])) AS f (scheme, value)
         ON CONFLICT DO NOTHING
       )${mark ? ', mark AS (UPDATE seek_state SET indexed_upto = @row WHERE id = 1 AND EXISTS (SELECT 1 FROM ready))' : ''}
       SELECT count(*) AS stored FROM doc`,
    );
  // The follow-up indexer: a post already indexed (a watermark set back by hand, say) is left
  // as it is, nothing twice; its batch moves the watermark once, at the end.
  const storeUnlessIndexed = storeWhen('NOT EXISTS (SELECT 1 FROM seek_docs x WHERE x.post_row = @row)', false);
  // Appends: their own new posts, always (see the top of this file), every post a transaction
  // appended in one statement just before its COMMIT; the watermark stays. A public post counts
  // toward its author's posts of the UTC day, in the order appended, and is unscoped when the
  // count it raised is within SEEKABLE_PUBLIC_POSTS_PER_DAY, as one post at a time counts.
  const storeAppended = db.prepare<{ docs: string; prints: string; perDay: number }>(
    `WITH d AS (
       SELECT * FROM json_to_recordset(@docs::json)
         AS d(n int, post_row bigint, space_row_id bigint, author text, day bigint, public int, terms text)
     ), daily AS (
       INSERT INTO seek_daily (author, day, count)
       SELECT author, day, count(*) FROM d WHERE public = 1 GROUP BY author, day
       ON CONFLICT (author, day) DO UPDATE SET count = seek_daily.count + EXCLUDED.count
       RETURNING author, day, count
     ), ranked AS (
       SELECT n, row_number() OVER (PARTITION BY author, day ORDER BY n) AS k, count(*) OVER (PARTITION BY author, day) AS m
         FROM d WHERE public = 1
     ), doc AS (
       INSERT INTO seek_docs (post_row, space_row_id, public, unscoped)
       SELECT d.post_row, d.space_row_id, d.public, CASE WHEN y.count - r.m + r.k <= @perDay::bigint THEN 1 ELSE 0 END
         FROM d LEFT JOIN ranked r ON r.n = d.n LEFT JOIN daily y ON d.public = 1 AND y.author = d.author AND y.day = d.day
     ), words AS (
       INSERT INTO seek_text (post_row, terms) SELECT post_row, CAST(terms AS tsvector) FROM d WHERE terms IS NOT NULL
     )
     INSERT INTO seek_fingerprints (scheme, value, post_row)
     SELECT f.scheme, f.value, f.post_row FROM json_to_recordset(@prints::json) AS f(scheme text, value text, post_row bigint)
     ON CONFLICT DO NOTHING`,
  );
  const appended: AtCommit<PreparedDoc> = {
    async flush(docs) {
      if (docs.length === 0) return;
      const rows = docs.map((d, n) => ({
        n,
        post_row: d.rowId,
        space_row_id: d.spaceRowId,
        author: d.author,
        day: Math.floor(d.postedAt / DAY_MS),
        public: d.public ? 1 : 0,
        terms: d.terms === null ? null : tsvectorLiteral(d.terms),
      }));
      const prints = docs.flatMap((d) => d.fingerprints.map((f) => ({ scheme: f.scheme, value: f.value, post_row: d.rowId })));
      await storeAppended.run({ docs: JSON.stringify(rows), prints: JSON.stringify(prints), perDay: SEEKABLE_PUBLIC_POSTS_PER_DAY });
    },
  };
  const selectNewest = db.prepare<[string, number], { found: number; oldest: number | null }>(
    `SELECT count(*) AS found, min(post_row) AS oldest
       FROM (SELECT post_row FROM seek_text WHERE terms @@ ?::tsquery ORDER BY post_row DESC LIMIT ?) t`,
  );
  const selectHidden = db.prepare<[number[]], { id: number }>('SELECT id FROM posts WHERE id = ANY(?::bigint[]) AND hidden_at IS NOT NULL');
  const selectTexts = db.prepare<[number, number[]], { id: number; hidden_at: number | null; title: string | null; body: string | null }>(
    'SELECT id, hidden_at, title, substr(body, 1, ?) AS body FROM posts WHERE id = ANY(?::bigint[])',
  );

  const cache = new Map<string, Statement<Record<string, unknown>, CandidateRow>>();
  function prepared(key: string, sql: string): Statement<Record<string, unknown>, CandidateRow> {
    let stmt = cache.get(key);
    if (!stmt) {
      stmt = db.prepare<Record<string, unknown>, CandidateRow>(sql);
      cache.set(key, stmt);
    }
    return stmt;
  }

  function docParams(d: PreparedDoc): Record<string, unknown> {
    return {
      row: d.rowId,
      space: d.spaceRowId,
      author: d.author,
      day: Math.floor(d.postedAt / DAY_MS),
      public: d.public ? 1 : 0,
      perDay: SEEKABLE_PUBLIC_POSTS_PER_DAY,
      terms: d.terms === null ? null : tsvectorLiteral(d.terms),
      schemes: d.fingerprints.map((f) => f.scheme),
      values: d.fingerprints.map((f) => f.value),
    };
  }

  const watermark = async (): Promise<number> => (await selectWatermark.get())?.indexed_upto ?? 0;
  // The follow-up indexer asks here first: the watermark moves up past every post indexed by its
  // own append, then what is left (if anything) is answered.
  const pending = async (after: number, limit: number) => {
    await advanceWatermark.get();
    return (await selectPending.all(after, limit)).map((r) => ({
      rowId: r.id,
      spaceRowId: r.space_row_id,
      author: r.author,
      title: r.title,
      body: r.body,
      fingerprintsJson: r.fingerprints_json,
      postedAt: r.posted_at,
      public: r.visibility === 'public',
    }));
  };

  // The watermark's row, moved first, is what makes two indexers take turns: the second waits
  // for the first's COMMIT, then finds the watermark moved and stores nothing. No write lock:
  // appends never store these posts.
  const indexTx = db.transaction(async (from: number, upto: number, docs: readonly PreparedDoc[]): Promise<boolean> => {
    if ((await moveWatermark.run(upto, from)).changes !== 1) return false;
    for (const d of docs) await storeUnlessIndexed.get(docParams(d));
    return true;
  });

  /** Candidates of the rows a scope lets through, hidden posts left out (looked up for them only). */
  async function unhidden(rows: CandidateRow[]): Promise<SeekCandidate[]> {
    if (rows.length === 0) return [];
    const hidden = new Set((await selectHidden.all(rows.map((r) => r.post_row))).map((h) => h.id));
    return rows
      .filter((r) => !hidden.has(r.post_row))
      .map((r) => ({ rowId: r.post_row, spaceRowId: r.space_row_id, owner: r.owner, own: r.own === 1, score: 0 }));
  }

  async function fingerprintCandidates(kind: 'fp' | 'prefix', scope: SeekScope, bind: Record<string, unknown>): Promise<SeekCandidate[]> {
    const { sql: where, params, posts } = scopeSql('postgres', scope);
    const joins = `JOIN seek_docs d ON d.post_row = f.post_row JOIN spaces s ON s.id = d.space_row_id${posts ? ' JOIN posts p ON p.id = f.post_row' : ''}`;
    const source =
      kind === 'fp'
        ? 'seek_fingerprints f'
        : `(SELECT post_row FROM seek_fingerprints WHERE scheme = @scheme AND value >= @value AND value < @upper
             ORDER BY value, post_row LIMIT @scan) f`;
    const exact = kind === 'fp' ? 'f.scheme = @scheme AND f.value = @value AND ' : '';
    const sql = `SELECT f.post_row, d.space_row_id, s.owner, ${ownSql(scope)} AS own
                   FROM ${source} ${joins}
                  WHERE ${exact}${where}
                  ORDER BY f.post_row DESC LIMIT @cap`;
    return await unhidden(await prepared(shapeKey(kind, scope), sql).all({ ...params, ...bind }));
  }

  async function textCandidates(expression: string, scope: SeekScope, walk: TextWalk): Promise<TextCandidate[]> {
    if (walk.cap <= 0) return [];
    const { sql: where, params, posts } = scopeSql('postgres', scope);
    // One page of the walk: the next matches below `before`, newest first, each with whether
    // the scope lets it through. LEFT JOINs keep every match in the page, so the rows counted
    // are the matches walked.
    const sql = `SELECT t.post_row, d.space_row_id, s.owner, ${ownSql(scope)} AS own, CASE WHEN ${where} THEN 1 ELSE 0 END AS visible
                   FROM (SELECT post_row FROM seek_text WHERE terms @@ @match::tsquery AND post_row < @before
                          ORDER BY post_row DESC LIMIT @page) t
                   LEFT JOIN seek_docs d ON d.post_row = t.post_row
                   LEFT JOIN spaces s ON s.id = d.space_row_id${posts ? ' LEFT JOIN posts p ON p.id = t.post_row' : ''}
                  ORDER BY t.post_row DESC`;
    const stmt = prepared(shapeKey('text', scope), sql) as Statement<Record<string, unknown>, CandidateRow & { visible: number }>;
    const bind: Record<string, unknown> = { ...params, match: tsqueryLiteral(expression) };
    const capped = scope.spaceRowId === undefined;
    const perSpace = new Map<number, number>();
    const perOwner = new Map<string, number>();
    const chosen: CandidateRow[] = [];
    let before = Number.MAX_SAFE_INTEGER;
    let walked = 0;
    let page = FIRST_PAGE;
    pages: while (walked < walk.scan) {
      const want = Math.min(page, walk.scan - walked);
      const rows = await stmt.all({ ...bind, before, page: want });
      for (const r of rows) {
        walked++;
        before = r.post_row;
        if (r.visible !== 1) continue;
        if (capped && r.own !== 1) {
          const inSpace = perSpace.get(r.space_row_id) ?? 0;
          const ofOwner = perOwner.get(r.owner) ?? 0;
          if (inSpace >= walk.perSpace || ofOwner >= walk.perOwner) continue;
          perSpace.set(r.space_row_id, inSpace + 1);
          perOwner.set(r.owner, ofOwner + 1);
        }
        chosen.push(r);
        if (chosen.length >= walk.cap) break pages;
      }
      if (rows.length < want) break; // no older match
      page *= 4;
    }
    if (chosen.length === 0) return [];
    const texts = new Map((await selectTexts.all(walk.chars, chosen.map((r) => r.post_row))).map((t) => [t.id, t]));
    return shownCandidates(chosen, texts);
  }

  return {
    watermark,
    pending,
    index: async (from, upto, docs) => await indexTx(from, upto, docs),
    async indexNext(doc) {
      if (!db.inTransaction) throw new Error('indexNext: call it inside the write transaction that inserts the post');
      // Written with the transaction's other appended posts, one statement before COMMIT.
      await db.atCommit(appended, doc);
      return true;
    },
    textCandidates,
    async newestMatches(expression, most) {
      const r = await selectNewest.get(tsqueryLiteral(expression), most);
      return { found: r?.found ?? 0, oldest: r?.oldest ?? 0 };
    },
    fingerprint: async (fp: Fingerprint, scope, cap) => await fingerprintCandidates('fp', scope, { scheme: fp.scheme, value: fp.value, cap }),
    fingerprintPrefix: async (fp: Fingerprint, scope, cap, scan) =>
      await fingerprintCandidates('prefix', scope, { scheme: fp.scheme, value: fp.value, upper: fp.value + MAX_CHAR, cap, scan }),
  };
}
