/**
 * The SEEK index (migration 005; spec/1-concepts.md "SEEK", Limits "unscoped SEEK") on SQLite:
 * the interface of ./seek-store.ts over FTS5 (./postgres/seek.ts is the same on PostgreSQL).
 *
 * Indexing happens inside the append (STYLE.md rule 8): the append tokenises with no lock held
 * (shared/seek/terms.ts) and `indexNext` stores the post's rows in its own write transaction,
 * so a post is findable from the commit that writes it and no later pass stalls the writers.
 * The watermark is a posts row id: posts are never deleted and their row ids grow in commit
 * order. `indexNext` stores only the row just above the watermark; when the index is behind
 * (a database written before inline indexing, or a post that reached the table another way)
 * the appends leave their rows to the follow-up indexer (relay/seek/indexer.ts): `pending`
 * reads posts above the watermark, the caller tokenises them, and `index` writes them in one
 * short write transaction that first re-checks the watermark (two indexers racing store
 * nothing twice). Once it has caught up, appends index their own posts again.
 *
 * Candidates: a text query never walks every match of its expression. FTS5 walks the doclist
 * newest first (row ids backwards) and stops after the `scan` newest matches at most (a
 * co-routine with its own LIMIT, ~0.03 µs a match); visibility is checked in the same
 * statement (under a µs a row), and the walk ends as soon as `cap` visible candidates are
 * found. There is no bm25() in SQL: FTS5's counts every match of each phrase before its first
 * row, 4 ms for a word in 150,000 posts; shared/seek/rank.ts ranks the candidates instead,
 * from their title and body start, read here for them only. So a common word in SPACES the
 * caller cannot read costs at most `scan` visibility checks, never its whole doclist. A search
 * scoped to one SPACE narrows inside FTS5 by the SPACE's token, so its `scan` newest matches
 * are all in that SPACE. Matches older than the window are not found: SEEK ranks within a
 * bounded, recency-ordered candidate set. An unscoped walk also keeps at most `perSpace`
 * candidates from one SPACE and `perOwner` from one owner's SPACES outside the caller's own
 * (of which the unscoped caps keep 2 and 3 after ranking), so one busy public SPACE cannot
 * fill the set. A fingerprint prefix looks at most at `scan` index entries.
 *
 * Visibility, in SQL: a hit is in one of the caller's own SPACES (owner or member), or in a
 * public SPACE and among its author's first 200 public posts of that UTC day (`unscoped`),
 * or, for a search scoped to one SPACE the caller may read, anywhere in it. Hidden posts
 * never match.
 */
import { SEEKABLE_PUBLIC_POSTS_PER_DAY } from '../../shared/limits.js';
import type { Db } from './database.js';
import type { SqliteDb } from './sqlite/connection.js';
import { MAX_CHAR, OWN_SPACES, pendingPosts, scopeSql, shownCandidates, type CandidateRow } from './seek-scope.js';
import type { PreparedDoc, SeekCandidate, SeekScope, SeekStore, TextCandidate, TextWalk } from './seek-store.js';

const DAY_MS = 86_400_000;

export function createSeekStore(db: SqliteDb): SeekStore {
  // The candidate walk stops as soon as it has enough (FTS5 then walks no further): a
  // synchronous iteration over the driver's own statement, at a moment no transaction is open.
  const rawStatements = new Map<string, ReturnType<SqliteDb['prepareRaw']>>();
  const selectWatermark = db.prepare<[], { indexed_upto: number }>('SELECT indexed_upto FROM seek_state WHERE id = 1');
  const updateWatermark = db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1');
  /** Move the watermark one post on, only from the post before it: one statement for test and move. */
  const advanceWatermark = db.prepare('UPDATE seek_state SET indexed_upto = ? WHERE id = 1 AND indexed_upto = ?');
  const insertDoc = db.prepare('INSERT INTO seek_docs (post_row, space_row_id, public, unscoped) VALUES (?, ?, ?, ?)');
  const insertText = db.prepare('INSERT INTO seek_text (rowid, terms) VALUES (?, ?)');
  const insertFingerprint = db.prepare('INSERT OR IGNORE INTO seek_fingerprints (scheme, value, post_row) VALUES (?, ?, ?)');
  const selectDaily = db.prepare<[string, number], { count: number }>('SELECT count FROM seek_daily WHERE author = ? AND day = ?');
  const upsertDaily = db.prepare(
    `INSERT INTO seek_daily (author, day, count) VALUES (?, ?, 1)
     ON CONFLICT (author, day) DO UPDATE SET count = count + 1`,
  );

  const selectDoc = db.prepare<[number], { post_row: number }>('SELECT post_row FROM seek_docs WHERE post_row = ?');

  /** One post's rows; a public post counts toward its author's seekable posts of the day. */
  async function storeDoc(d: PreparedDoc): Promise<void> {
    let unscoped = 0;
    if (d.public) {
      const day = Math.floor(d.postedAt / DAY_MS);
      const count = (await selectDaily.get(d.author, day))?.count ?? 0;
      if (count < SEEKABLE_PUBLIC_POSTS_PER_DAY) unscoped = 1;
      await upsertDaily.run(d.author, day);
    }
    await insertDoc.run(d.rowId, d.spaceRowId, d.public ? 1 : 0, unscoped);
    if (d.terms !== null) await insertText.run(d.rowId, d.terms);
    for (const fp of d.fingerprints) await insertFingerprint.run(fp.scheme, fp.value, d.rowId);
  }

  const watermark = async (): Promise<number> => (await selectWatermark.get())?.indexed_upto ?? 0;

  const indexTx = db.transaction(async (from: number, upto: number, docs: readonly PreparedDoc[]): Promise<boolean> => {
    if (await watermark() !== from) return false;
    // A post already indexed (a watermark set back by hand, say) is left as it is: nothing
    // twice. `indexNext` needs no such look: its row was inserted in the same transaction.
    for (const d of docs) if (await selectDoc.get(d.rowId) === undefined) await storeDoc(d);
    await updateWatermark.run(upto);
    return true;
  });

  const selectNewest = db.prepare<[string, number], { found: number; oldest: number | null }>(
    'SELECT count(*) AS found, min(rowid) AS oldest FROM (SELECT rowid FROM seek_text WHERE seek_text MATCH ? ORDER BY rowid DESC LIMIT ?)',
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

  const selectHidden = db.prepare<[string], { id: number }>(
    'SELECT id FROM posts WHERE id IN (SELECT value FROM json_each(?)) AND hidden_at IS NOT NULL',
  );
  const selectTexts = db.prepare<[number, string], { id: number; hidden_at: number | null; title: string | null; body: string | null }>(
    'SELECT id, hidden_at, title, substr(body, 1, ?) AS body FROM posts WHERE id IN (SELECT value FROM json_each(?))',
  );

  function ownSql(scope: SeekScope): string {
    return scope.caller === null ? '0' : `d.space_row_id IN ${OWN_SPACES}`;
  }

  /** Fingerprint candidates (exact or prefix), newest first, at most `cap`. */
  async function fingerprintCandidates(kind: 'fp' | 'prefix', scope: SeekScope, bind: Record<string, unknown>): Promise<SeekCandidate[]> {
    const { sql: where, params, posts } = scopeSql('sqlite', scope);
    const joins = `JOIN seek_docs d ON d.post_row = f.post_row JOIN spaces s ON s.id = d.space_row_id${posts ? ' JOIN posts p ON p.id = f.post_row' : ''}`;
    const source =
      kind === 'fp'
        ? 'seek_fingerprints f'
        : '(SELECT post_row FROM seek_fingerprints WHERE scheme = @scheme AND value >= @value AND value < @upper LIMIT @scan) f';
    const exact = kind === 'fp' ? 'f.scheme = @scheme AND f.value = @value AND ' : '';
    const sql = `SELECT f.post_row, d.space_row_id, s.owner, ${ownSql(scope)} AS own
                   FROM ${source} ${joins}
                  WHERE ${exact}${where}
                  ORDER BY f.post_row DESC LIMIT @cap`;
    const rows = await prepared(shapeKey(kind, scope), sql).all({ ...params, ...bind }) as CandidateRow[];
    if (rows.length === 0) return [];
    // Hidden posts never match: looked up for the candidates only (at most `cap`).
    const hidden = new Set((await selectHidden.all(JSON.stringify(rows.map((r) => r.post_row)))).map((h) => h.id));
    return rows
      .filter((r) => !hidden.has(r.post_row))
      .map((r) => ({ rowId: r.post_row, spaceRowId: r.space_row_id, owner: r.owner, own: r.own === 1, score: 0 }));
  }

  async function textCandidates(expression: string, scope: SeekScope, walk: TextWalk): Promise<TextCandidate[]> {
    const { sql: where, params, posts } = scopeSql('sqlite', scope);
    // The inner LIMIT bounds the walk; rows come out newest first with no sort (the
    // co-routine's order), so stopping the iteration stops FTS5. CROSS JOIN keeps the walk
    // outermost: left to itself the planner starts a scoped search from the SPACE's
    // seek_docs rows, which materialises the whole walk and sorts it.
    const sql = `SELECT t.rowid AS post_row, d.space_row_id, s.owner, ${ownSql(scope)} AS own
                   FROM (SELECT rowid FROM seek_text WHERE seek_text MATCH @match ORDER BY rowid DESC LIMIT @scan) t
                   CROSS JOIN seek_docs d ON d.post_row = t.rowid
                   CROSS JOIN spaces s ON s.id = d.space_row_id${posts ? ' CROSS JOIN posts p ON p.id = t.rowid' : ''}
                  WHERE ${where}
                  ORDER BY t.rowid DESC`;
    const key = shapeKey('text', scope);
    const capped = scope.spaceRowId === undefined;
    const perSpace = new Map<number, number>();
    const perOwner = new Map<string, number>();
    const chosen: CandidateRow[] = [];
    if (walk.cap > 0) await db.withRaw(() => {
      let stmt = rawStatements.get(key);
      if (stmt === undefined) {
        stmt = db.prepareRaw(sql);
        rawStatements.set(key, stmt);
      }
      for (const r of stmt.iterate({ ...params, match: expression, scan: walk.scan }) as IterableIterator<CandidateRow>) {
        if (capped && r.own !== 1) {
          const s = perSpace.get(r.space_row_id) ?? 0;
          const o = perOwner.get(r.owner) ?? 0;
          if (s >= walk.perSpace || o >= walk.perOwner) continue;
          perSpace.set(r.space_row_id, s + 1);
          perOwner.set(r.owner, o + 1);
        }
        chosen.push(r);
        if (chosen.length >= walk.cap) break; // ends the statement: FTS5 walks no further
      }
    });
    if (chosen.length === 0) return [];
    const texts = new Map((await selectTexts.all(walk.chars, JSON.stringify(chosen.map((r) => r.post_row)))).map((t) => [t.id, t]));
    return shownCandidates(chosen, texts);
  }

  return {
    watermark,
    pending: pendingPosts(db),
    index: async (from, upto, docs) => await indexTx.immediate(from, upto, docs),
    async indexNext(doc) {
      if (!db.inTransaction) throw new Error('indexNext: call it inside the write transaction that inserts the post');
      // Not the next post (the index is behind): the indexer catches up in order instead.
      if ((await advanceWatermark.run(doc.rowId, doc.rowId - 1)).changes === 0) return false;
      await storeDoc(doc);
      return true;
    },
    textCandidates,
    async newestMatches(expression, most) {
      const r = await selectNewest.get(expression, most);
      return { found: r?.found ?? 0, oldest: r?.oldest ?? 0 };
    },
    fingerprint: async (fp, scope, cap) => await fingerprintCandidates('fp', scope, { scheme: fp.scheme, value: fp.value, cap }),
    fingerprintPrefix: async (fp, scope, cap, scan) =>
      await fingerprintCandidates('prefix', scope, { scheme: fp.scheme, value: fp.value, upper: fp.value + MAX_CHAR, cap, scan }),
  };
}
