/**
 * The findings aggregate (migration 021 on SQLite, 008 on PostgreSQL): a SPACE's findings, the
 * sources each post cites, and the results task checks rejected. The writes are steps of a post's
 * append or a task's reject and run inside the caller's write transaction; which post may cite
 * which, and what a read shows, live in relay/findings/.
 *
 * Claims are peer-written text, to be fenced when rendered.
 */
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

/** One finding as the list reads it, with the columns of its post. */
export interface FindingRow {
  postRow: number;
  number: number;
  postId: string;
  seq: number;
  author: string;
  postedAt: number;
  claim: string;
  status: string;
  confidence: string;
  hiddenAt: number | null;
  /** The post id its own post supersedes, if any. */
  supersedes: string | null;
  supersededBy: string | null;
  retractedBy: string | null;
}

/** A post a post cites (in its author's order), or one that cites a post. */
export interface SourceRow {
  postRow: number;
  postId: string;
  seq: number;
  author: string;
  kind: string;
  hiddenAt: number | null;
  /** Replaced (by anything but a document version) or retracted. */
  withdrawn: boolean;
}

/** A member's warn or fail that cites a post and still stands (neither replaced, retracted nor hidden). */
export interface ObjectionRow {
  /** The seq of the post it cites. */
  onSeq: number;
  kind: string;
  author: string;
  seq: number;
  title: string | null;
  postedAt: number;
}

/** A task check's reject of a post as the task's result. */
export interface RejectionRow {
  /** The seq of the post it rejected. */
  onSeq: number;
  number: number;
  by: string;
  at: number;
}

export interface FindingPageQuery {
  spaceRowId: number;
  /** Only findings numbered below this one. */
  before?: number | undefined;
  /** Only findings posted at or after this time (ms). */
  since?: number | undefined;
  /** `withdrawn`: retracted; any other status: posted so and never retracted. */
  status?: string | undefined;
  /** Only findings whose post carries this fingerprint (and whose words are shown). */
  fingerprint?: { scheme: string; value: string } | undefined;
  limit: number;
}

export interface FindingStore {
  /** Number a new finding next in its SPACE and keep its fields. */
  insert(postRow: number, spaceRowId: number, claim: string, status: string, confidence: string): Promise<number>;
  /** Set, once, the post that superseded (or retracted) the finding of `targetRow`, if it is one. */
  markSuperseded(targetRow: number, byRow: number): Promise<void>;
  markRetracted(targetRow: number, byRow: number): Promise<void>;
  /** The posts `postRow` cites, in order. */
  cite(postRow: number, spaceRowId: number, sourceRows: readonly number[]): Promise<void>;
  /** The finding a post is, or undefined. */
  ofPost(postRow: number): Promise<FindingRow | undefined>;
  /** The posts that cite one post, newest first, at most `limit`. */
  citing(postRow: number, limit: number): Promise<SourceRow[]>;
  /** A page of a SPACE's findings that no newer post replaced, newest first. */
  page(q: FindingPageQuery): Promise<FindingRow[]>;
  /** The posts one post cites, in its author's order. */
  sourcesOf(postRow: number): Promise<SourceRow[]>;
  /** How many posts cite one post. */
  citedBy(postRow: number): Promise<number>;
  /**
   * The members' warns and fails that still stand, citing `postRow` or (with `sources`) a post
   * it cites, each by another author than the post it cites: the newest `limit`.
   */
  objectionsTo(postRow: number, sources: boolean, limit: number): Promise<ObjectionRow[]>;
  /**
   * The authors of the standing findings (neither superseded, retracted nor hidden) that are
   * `postRow` or rest on it: at most `limit`, each once.
   */
  findingAuthorsOn(postRow: number, limit: number): Promise<string[]>;
  /** Record that `by` rejected `resultPostId` as the result of task `number` in `cycle`. */
  recordRejection(spaceRowId: number, number: number, cycle: number, by: string, resultPostId: string, at: number): Promise<void>;
  /**
   * The rejects of `postRow` (or, with `sources`, of a post it cites) as a task's result that
   * still hold (the task has not accepted that post since): the newest of each post and task,
   * newest first.
   */
  rejectionsOf(spaceRowId: number, postRow: number, sources: boolean): Promise<RejectionRow[]>;
  /**
   * The task a post is the result of: the lowest-numbered task whose result it is now, else the
   * task whose check rejected it last; undefined for none.
   */
  resultTaskOf(spaceRowId: number, postId: string): Promise<number | undefined>;
  /** Who rejected `postId` as the result of task `number`, oldest first. */
  rejectersOf(spaceRowId: number, number: number, postId: string): Promise<string[]>;
}

interface FindingDbRow {
  post_row: number;
  number: number;
  post_id: string;
  seq: number;
  author: string;
  posted_at: number;
  claim: string;
  status: string;
  confidence: string;
  hidden_at: number | null;
  supersedes: string | null;
  superseded_by: string | null;
  retracted_by: string | null;
}

const FINDING_COLUMNS = `f.post_row, f.number, p.post_id, p.seq, p.author, p.posted_at, f.claim, f.status, f.confidence,
  p.hidden_at, p.supersedes, s.post_id AS superseded_by, r.post_id AS retracted_by
  FROM findings f JOIN posts p ON p.id = f.post_row
  LEFT JOIN posts s ON s.id = f.superseded_by_row LEFT JOIN posts r ON r.id = f.retracted_by_row`;

interface SourceDbRow {
  post_row: number;
  post_id: string;
  seq: number;
  author: string;
  kind: string;
  hidden_at: number | null;
  withdrawn: number;
}

interface ObjectionDbRow {
  on_seq: number;
  kind: string;
  author: string;
  seq: number;
  title: string | null;
  posted_at: number;
}

function toSource(r: SourceDbRow): SourceRow {
  return {
    postRow: Number(r.post_row),
    postId: r.post_id,
    seq: Number(r.seq),
    author: r.author,
    kind: r.kind,
    hiddenAt: r.hidden_at === null ? null : Number(r.hidden_at),
    withdrawn: Number(r.withdrawn) === 1,
  };
}

function toFinding(r: FindingDbRow): FindingRow {
  return {
    postRow: Number(r.post_row),
    number: Number(r.number),
    postId: r.post_id,
    seq: Number(r.seq),
    author: r.author,
    postedAt: Number(r.posted_at),
    claim: r.claim,
    status: r.status,
    confidence: r.confidence,
    hiddenAt: r.hidden_at === null ? null : Number(r.hidden_at),
    supersedes: r.supersedes,
    supersededBy: r.superseded_by,
    retractedBy: r.retracted_by,
  };
}

export function createFindingStore(db: Db): FindingStore {
  const sql = dialectOf(db);
  const selectLast = db.prepare<[number], { n: number | null }>('SELECT max(number) AS n FROM findings WHERE space_row_id = ?');
  const insertFinding = db.prepare(
    'INSERT INTO findings (post_row, space_row_id, number, claim, status, confidence) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const updateSuperseded = db.prepare('UPDATE findings SET superseded_by_row = ? WHERE post_row = ? AND superseded_by_row IS NULL');
  const updateRetracted = db.prepare('UPDATE findings SET retracted_by_row = ? WHERE post_row = ? AND retracted_by_row IS NULL');
  const insertSource = db.prepare('INSERT INTO post_sources (post_row, ord, source_row, space_row_id) VALUES (?, ?, ?, ?)');
  const WITHDRAWN = `(EXISTS (SELECT 1 FROM posts x WHERE x.supersedes = p.post_id AND x.kind <> 'version')
    OR EXISTS (SELECT 1 FROM posts x WHERE x.retracts = p.post_id))`;
  const selectSources = db.prepare<[number], SourceDbRow>(
    `SELECT p.id AS post_row, p.post_id, p.seq, p.author, p.kind, p.hidden_at, ${sql.bool(WITHDRAWN)} AS withdrawn
       FROM post_sources ps JOIN posts p ON p.id = ps.source_row
      WHERE ps.post_row = ? ORDER BY ps.ord`,
  );
  const selectCiting = db.prepare<[number, number], SourceDbRow>(
    `SELECT p.id AS post_row, p.post_id, p.seq, p.author, p.kind, p.hidden_at, 0 AS withdrawn
       FROM post_sources ps JOIN posts p ON p.id = ps.post_row
      WHERE ps.source_row = ? ORDER BY p.seq DESC LIMIT ?`,
  );
  const selectOfPost = db.prepare<[number], FindingDbRow>(`SELECT ${FINDING_COLUMNS} WHERE f.post_row = ?`);
  const selectCitedBy = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM post_sources WHERE source_row = ?');
  // The post a cause may be on: the post itself, and with a true second parameter each post it cites.
  const targets = (row: string, also: string) =>
    `SELECT ${row} AS id UNION ALL SELECT cs.source_row FROM post_sources cs WHERE cs.post_row = ${row} AND ${also} = 1`;
  // A warn or fail of a member (not posted without a role) citing a target by another author,
  // that nobody replaced or retracted and that is not hidden.
  const selectObjections = db.prepare<[number, number, number, number], ObjectionDbRow>(
    `SELECT tp.seq AS on_seq, w.kind, w.author, w.seq, w.title, w.posted_at
       FROM (${targets(sql.param('?', 'bigint'), sql.param('?', 'bigint'))}) t
       JOIN posts tp ON tp.id = t.id
       JOIN post_sources ps ON ps.source_row = t.id
       JOIN posts w ON w.id = ps.post_row
      WHERE w.kind IN ('warn', 'fail') AND w.no_role = 0 AND w.author <> tp.author AND w.hidden_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM posts y WHERE y.supersedes = w.post_id AND y.kind <> 'version')
        AND NOT EXISTS (SELECT 1 FROM posts y WHERE y.retracts = w.post_id)
      ORDER BY w.seq DESC, tp.seq DESC LIMIT ?`,
  );
  const selectFindingAuthors = db.prepare<[number, number, number], { author: string }>(
    `SELECT DISTINCT p.author FROM findings f JOIN posts p ON p.id = f.post_row
      WHERE f.superseded_by_row IS NULL AND f.retracted_by_row IS NULL AND p.hidden_at IS NULL
        AND (f.post_row = ? OR f.post_row IN (SELECT ps.post_row FROM post_sources ps WHERE ps.source_row = ?))
      ORDER BY p.author LIMIT ?`,
  );
  const insertRejection = db.prepare(
    'INSERT INTO task_rejections (space_row_id, number, cycle, by, result_post_id, at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  // The rejects of each target; a task that has since accepted the post no longer contests it.
  const selectRejections = db.prepare<[number, number, number, number], { on_seq: number; number: number; by: string; at: number }>(
    `SELECT tp.seq AS on_seq, r.number, r.by, r.at
       FROM (${targets(sql.param('?', 'bigint'), sql.param('?', 'bigint'))}) t
       JOIN posts tp ON tp.id = t.id
       JOIN task_rejections r ON r.space_row_id = ? AND r.result_post_id = tp.post_id
      WHERE NOT EXISTS (SELECT 1 FROM tasks tk WHERE tk.space_row_id = r.space_row_id AND tk.number = r.number
                         AND tk.state = 'accepted' AND tk.result_post_id = r.result_post_id)
      ORDER BY r.at DESC, r.number, tp.seq`,
  );
  const selectResultTask = db.prepare<[number, string], { number: number }>(
    'SELECT number FROM tasks WHERE space_row_id = ? AND result_post_id = ? ORDER BY number LIMIT 1',
  );
  const selectRejectedTask = db.prepare<[number, string], { number: number }>(
    'SELECT number FROM task_rejections WHERE space_row_id = ? AND result_post_id = ? ORDER BY at DESC, number LIMIT 1',
  );
  const selectRejecters = db.prepare<[number, number, string], { by: string }>(
    'SELECT by FROM task_rejections WHERE space_row_id = ? AND number = ? AND result_post_id = ? ORDER BY at, by',
  );

  const pages = new Map<string, ReturnType<typeof db.prepare<unknown[], FindingDbRow>>>();
  function pageStatement(q: FindingPageQuery) {
    const where = ['f.space_row_id = ?', 'f.superseded_by_row IS NULL'];
    if (q.before !== undefined) where.push('f.number < ?');
    if (q.since !== undefined) where.push('p.posted_at >= ?');
    if (q.status === 'withdrawn') where.push('f.retracted_by_row IS NOT NULL');
    else if (q.status !== undefined) where.push('f.retracted_by_row IS NULL', 'f.status = ?');
    // The post's own fingerprints, as it was written (SEEK's index of them may lag behind).
    if (q.fingerprint !== undefined) {
      where.push(
        'p.hidden_at IS NULL',
        db.dialect === 'postgres'
          ? "EXISTS (SELECT 1 FROM json_array_elements(p.fingerprints_json::json) j WHERE j->>'scheme' = ? AND j->>'value' = ?)"
          : "EXISTS (SELECT 1 FROM json_each(p.fingerprints_json) j WHERE json_extract(j.value, '$.scheme') = ? AND json_extract(j.value, '$.value') = ?)",
      );
    }
    const sql = `SELECT ${FINDING_COLUMNS} WHERE ${where.join(' AND ')} ORDER BY f.number DESC LIMIT ?`;
    let st = pages.get(sql);
    if (st === undefined) {
      st = db.prepare<unknown[], FindingDbRow>(sql);
      pages.set(sql, st);
    }
    return st;
  }

  return {
    async insert(postRow, spaceRowId, claim, status, confidence) {
      const number = Number((await selectLast.get(spaceRowId))?.n ?? 0) + 1;
      await insertFinding.run(postRow, spaceRowId, number, claim, status, confidence);
      return number;
    },
    async markSuperseded(targetRow, byRow) {
      await updateSuperseded.run(byRow, targetRow);
    },
    async markRetracted(targetRow, byRow) {
      await updateRetracted.run(byRow, targetRow);
    },
    async cite(postRow, spaceRowId, sourceRows) {
      for (const [i, source] of sourceRows.entries()) await insertSource.run(postRow, i + 1, source, spaceRowId);
    },
    async page(q) {
      const params: unknown[] = [q.spaceRowId];
      if (q.before !== undefined) params.push(q.before);
      if (q.since !== undefined) params.push(q.since);
      if (q.status !== undefined && q.status !== 'withdrawn') params.push(q.status);
      if (q.fingerprint !== undefined) params.push(q.fingerprint.scheme, q.fingerprint.value);
      params.push(q.limit);
      return (await pageStatement(q).all(...params)).map(toFinding);
    },
    async sourcesOf(postRow) {
      return (await selectSources.all(postRow)).map(toSource);
    },
    async ofPost(postRow) {
      const r = await selectOfPost.get(postRow);
      return r === undefined ? undefined : toFinding(r);
    },
    async citing(postRow, limit) {
      return (await selectCiting.all(postRow, limit)).map(toSource);
    },
    async citedBy(postRow) {
      return Number((await selectCitedBy.get(postRow))?.n ?? 0);
    },
    async objectionsTo(postRow, sources, limit) {
      return (await selectObjections.all(postRow, postRow, sources ? 1 : 0, limit)).map((r) => ({
        onSeq: Number(r.on_seq),
        kind: r.kind,
        author: r.author,
        seq: Number(r.seq),
        title: r.title,
        postedAt: Number(r.posted_at),
      }));
    },
    async findingAuthorsOn(postRow, limit) {
      return (await selectFindingAuthors.all(postRow, postRow, limit)).map((r) => r.author);
    },
    async recordRejection(spaceRowId, number, cycle, by, resultPostId, at) {
      await insertRejection.run(spaceRowId, number, cycle, by, resultPostId, at);
    },
    async rejectionsOf(spaceRowId, postRow, sources) {
      const seen = new Set<string>();
      const out: RejectionRow[] = [];
      for (const r of await selectRejections.all(postRow, postRow, sources ? 1 : 0, spaceRowId)) {
        const key = `${r.on_seq}:${r.number}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ onSeq: Number(r.on_seq), number: Number(r.number), by: r.by, at: Number(r.at) });
      }
      return out;
    },
    async resultTaskOf(spaceRowId, postId) {
      const r = (await selectResultTask.get(spaceRowId, postId)) ?? (await selectRejectedTask.get(spaceRowId, postId));
      return r === undefined ? undefined : Number(r.number);
    },
    async rejectersOf(spaceRowId, number, postId) {
      return (await selectRejecters.all(spaceRowId, number, postId)).map((r) => r.by);
    },
  };
}
