/**
 * Read queries over the posts table (migration 004) for the read routes: stream pages with
 * filters, the standing set, lookups by id / row id / position, and the relations a full
 * answer shows (replies, superseding and retracting posts); plus the mailbox page joined with
 * its post subjects (migration 003), so `kind` and `author` filters run in SQL.
 *
 * Rows carry what rendering needs and nothing of the receipt: the SPACE's name and uuid, and
 * the author's public key for the proof block. Access decisions are the caller's
 * (relay/posts/access.ts); these queries answer whatever they are asked.
 *
 * Content columns are peer-written: rendering fences them (relay/posts/render.ts).
 */
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';
import { toMailboxRow, type MailboxDbRow, type MailboxRow } from './mailbox.js';
import { toPostColumns, type PostColumns, type PostColumnsRow } from './posts.js';

/** One post as the read routes render it: the shared columns, its SPACE and its author's KEY. */
export interface ReadPost extends PostColumns {
  spaceName: string;
  spaceId: string;
  /** The author's KEY: hex public key and its type (`ed25519` or `passkey`). */
  authorPublicKey: string;
  authorKeyType: string;
  /** A sealed post's header, ciphertext and generation (migration 006), else null. */
  sealedItem: { generation: number; header: Uint8Array; ciphertext: Uint8Array } | null;
  /** The files it attaches as JSON `[{sha256, name, media_type, bytes}]` (relay/store/files.ts), else null. */
  attachmentsJson: string | null;
  /** The finding it is (migration 021: relay/store/findings.ts), else null. */
  finding: { claim: string; status: string; confidence: string; retracted: boolean; sources: number } | null;
}

export interface PageFilter {
  /** Exclusive lower bound (seq). */
  after: number;
  /** Exclusive upper bound (seq), for descending pages. */
  before?: number | undefined;
  order: 'asc' | 'desc';
  kinds?: readonly string[] | undefined;
  author?: string | undefined;
  replyTo?: string | undefined;
  limit: number;
}

export interface StandingFilter {
  kinds?: readonly string[] | undefined;
  author?: string | undefined;
  limit: number;
}

export interface MailboxFilter {
  after: number;
  reasons?: readonly string[] | undefined;
  kinds?: readonly string[] | undefined;
  author?: string | undefined;
  limit: number;
}

export interface PostReadStore {
  /** The newest seq of a SPACE (0 when empty). */
  head(spaceRowId: number): Promise<number>;
  /** A stream page: `limit` rows at most, in `order`. */
  page(spaceRowId: number, filter: PageFilter): Promise<ReadPost[]>;
  /** Posts nobody superseded or retracted, newest first (hidden posts left out). */
  standing(spaceRowId: number, filter: StandingFilter): Promise<ReadPost[]>;
  byPostId(postId: string): Promise<ReadPost | undefined>;
  bySeq(spaceRowId: number, seq: number): Promise<ReadPost | undefined>;
  /** Posts by id, in no particular order; unknown ids are simply absent. */
  byPostIds(postIds: readonly string[]): Promise<ReadPost[]>;
  byRowIds(rowIds: readonly number[]): Promise<ReadPost[]>;
  replyCount(postId: string): Promise<number>;
  /** Ids of the posts that supersede / retract `postId`, oldest first. */
  supersededBy(postId: string): Promise<string[]>;
  retractedBy(postId: string): Promise<string[]>;
  /** The seqs of those of `postIds` that are in this SPACE: post id → seq. */
  seqsIn(spaceRowId: number, postIds: readonly string[]): Promise<Map<string, number>>;
  /** Superseding and retracting posts of many at once: post id → ids. */
  revisionsOf(postIds: readonly string[]): Promise<Map<string, { supersededBy: string[]; retractedBy: string[] }>>;
  /** A mailbox page of `peer` (filters as the mailbox read takes them). */
  mailboxPage(peer: string, filter: MailboxFilter): Promise<MailboxRow[]>;
  /** Run `fn` in one read transaction (a consistent snapshot under WAL). */
  snapshot<T>(fn: () => Promise<T>): Promise<T>;
}

interface Row extends PostColumnsRow {
  space_name: string;
  space_uuid: string;
  public_key: string;
  key_type: string;
  sealed_generation: number | null;
  sealed_header: Uint8Array | null;
  sealed_ciphertext: Uint8Array | null;
  attachments_json: string | null;
  finding_claim: string | null;
  finding_status: string | null;
  finding_confidence: string | null;
  finding_retracted: number | null;
  finding_sources: number | null;
}

function toReadPost(r: Row): ReadPost {
  return {
    ...toPostColumns(r),
    spaceName: r.space_name,
    spaceId: r.space_uuid,
    authorPublicKey: r.public_key,
    authorKeyType: r.key_type,
    attachmentsJson: r.attachments_json,
    finding:
      r.finding_status === null || r.finding_claim === null || r.finding_confidence === null
        ? null
        : { claim: r.finding_claim, status: r.finding_status, confidence: r.finding_confidence, retracted: r.finding_retracted !== null, sources: Number(r.finding_sources ?? 0) },
    sealedItem:
      r.sealed_generation === null || r.sealed_header === null || r.sealed_ciphertext === null
        ? null
        : { generation: r.sealed_generation, header: plainBytes(r.sealed_header), ciphertext: plainBytes(r.sealed_ciphertext) },
  };
}

const COLUMNS = `p.id, p.space_row_id, s.name AS space_name, s.space_id AS space_uuid, p.seq, p.post_id, p.author,
  p.kind, p.title, p.body, p.to_json, p.reply_to, p.supersedes, p.retracts, p.fingerprints_json, p.data_json,
  p.budget_json, p.run_id, p.canonical, p.private, p.signature, p.signed, p.sealed, p.object_id,
  p.admitted_revision, p.admitted_control_hash, p.admission, p.previous_hash, p.chain_hash, p.posted_at,
  p.no_role, p.hidden_at, k.public_key, k.key_type,
  sp.generation AS sealed_generation, sp.header AS sealed_header, sp.ciphertext AS sealed_ciphertext,
  pa.list_json AS attachments_json,
  fd.claim AS finding_claim, fd.status AS finding_status, fd.confidence AS finding_confidence, fd.retracted_by_row AS finding_retracted,
  CASE WHEN fd.post_row IS NULL THEN NULL ELSE (SELECT count(*) FROM post_sources ps WHERE ps.post_row = p.id) END AS finding_sources`;

const FROM = `FROM posts p JOIN spaces s ON s.id = p.space_row_id JOIN keys k ON k.peer_id = p.author
  LEFT JOIN sealed_posts sp ON sp.post_row = p.id LEFT JOIN post_attachment_lists pa ON pa.post_row = p.id
  LEFT JOIN findings fd ON fd.post_row = p.id`;

export function createPostReadStore(db: Db): PostReadStore {
  const sql = dialectOf(db);
  const selectHead = db.prepare<[number], { head: number | null }>(`SELECT MAX(seq) AS head FROM posts WHERE space_row_id = ${sql.fixed('?')}`);
  const selectById = db.prepare<[string], Row>(`SELECT ${COLUMNS} ${FROM} WHERE p.post_id = ?`);
  const selectBySeq = db.prepare<[number, number], Row>(`SELECT ${COLUMNS} ${FROM} WHERE p.space_row_id = ? AND p.seq = ?`);
  const selectByIds = db.prepare<[string], Row>(
    `SELECT ${COLUMNS} ${FROM} WHERE p.post_id IN (${sql.jsonEach('?')})`,
  );
  const selectByRowIds = db.prepare<[string], Row>(`SELECT ${COLUMNS} ${FROM} WHERE p.id IN (${sql.jsonEach('?', 'bigint')})`);
  const countReplies = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM posts WHERE reply_to = ?');
  const selectSupersededBy = db.prepare<[string], { post_id: string }>(
    'SELECT post_id FROM posts WHERE supersedes = ? ORDER BY id',
  );
  const selectRetractedBy = db.prepare<[string], { post_id: string }>('SELECT post_id FROM posts WHERE retracts = ? ORDER BY id');
  const selectRevisions = db.prepare<[string, string], { post_id: string; supersedes: string | null; retracts: string | null }>(
    `SELECT post_id, supersedes, retracts FROM posts
      WHERE supersedes IN (${sql.jsonEach('?')}) OR retracts IN (${sql.jsonEach('?')})
      ORDER BY id`,
  );
  const selectSeqsIn = db.prepare<[number, string], { post_id: string; seq: number }>(
    `SELECT post_id, seq FROM posts WHERE space_row_id = ? AND post_id IN (${sql.jsonEach('?')})`,
  );
  const readTx = db.transaction(async (fn: () => Promise<unknown>) => await fn());

  // Filtered statements differ only by which filters are present: prepared once per shape.
  const cache = new Map<string, ReturnType<Db['prepare']>>();
  function prepared(key: string, build: () => string): ReturnType<Db['prepare']> {
    let stmt = cache.get(key);
    if (!stmt) {
      stmt = db.prepare(build());
      cache.set(key, stmt);
    }
    return stmt;
  }

  function pageStatement(f: PageFilter): ReturnType<Db['prepare']> {
    const key = `page:${f.order}:${f.before !== undefined}:${f.kinds !== undefined}:${f.author !== undefined}:${f.replyTo !== undefined}`;
    return prepared(key, () => {
      const where = ['p.space_row_id = @space', 'p.seq > @after'];
      if (f.before !== undefined) where.push('p.seq < @before');
      if (f.kinds !== undefined) where.push(`p.kind IN (${sql.jsonEach('@kinds')})`);
      if (f.author !== undefined) where.push('p.author = @author');
      if (f.replyTo !== undefined) where.push('p.reply_to = @replyTo');
      return `SELECT ${COLUMNS} ${FROM} WHERE ${where.join(' AND ')} ORDER BY p.seq ${f.order === 'asc' ? 'ASC' : 'DESC'} LIMIT @limit`;
    });
  }

  function standingStatement(f: StandingFilter): ReturnType<Db['prepare']> {
    const key = `standing:${f.kinds !== undefined}:${f.author !== undefined}`;
    return prepared(key, () => {
      const where = [
        'p.space_row_id = @space',
        'p.hidden_at IS NULL',
        'NOT EXISTS (SELECT 1 FROM posts q WHERE q.supersedes = p.post_id)',
        'NOT EXISTS (SELECT 1 FROM posts q WHERE q.retracts = p.post_id)',
      ];
      if (f.kinds !== undefined) where.push(`p.kind IN (${sql.jsonEach('@kinds')})`);
      if (f.author !== undefined) where.push('p.author = @author');
      return `SELECT ${COLUMNS} ${FROM} WHERE ${where.join(' AND ')} ORDER BY p.seq DESC LIMIT @limit`;
    });
  }

  function mailboxStatement(f: MailboxFilter): ReturnType<Db['prepare']> {
    const key = `mailbox:${f.reasons !== undefined}:${f.kinds !== undefined}:${f.author !== undefined}`;
    return prepared(key, () => {
      const where = ['mb.peer = @peer', 'mb.mailbox_seq > @after'];
      if (f.reasons !== undefined) where.push(`mb.reason IN (${sql.jsonEach('@reasons')})`);
      // Filters on kind and author apply to posts and messages and leave requests, decisions and
      // offers out (spec "Mailbox"). A direct message has no post kind: the kind `message`
      // (relay/routes/mailbox.ts) selects messages, any post kind selects posts of that kind.
      if (f.kinds !== undefined) {
        where.push(`(p.kind IN (${sql.jsonEach('@kinds')})
                     OR (g.message_id IS NOT NULL AND 'message' IN (${sql.jsonEach('@kinds')})))`);
      }
      if (f.author !== undefined) where.push('(p.author = @author OR g.author = @author)');
      return `SELECT mb.peer, mb.mailbox_seq, mb.reason, mb.post_id, mb.request_id, mb.offer_id, mb.message_id, mb.delivered_at
                FROM mailbox mb LEFT JOIN posts p ON p.post_id = mb.post_id LEFT JOIN messages g ON g.message_id = mb.message_id
               WHERE ${where.join(' AND ')} ORDER BY mb.mailbox_seq LIMIT @limit`;
    });
  }

  function bind(f: { kinds?: readonly string[] | undefined; author?: string | undefined }): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    if (f.kinds !== undefined) out.kinds = JSON.stringify(f.kinds);
    if (f.author !== undefined) out.author = f.author;
    return out;
  }

  return {
    head: async (spaceRowId) => (await selectHead.get(spaceRowId))?.head ?? 0,
    async page(spaceRowId, f) {
      const params: Record<string, unknown> = { space: spaceRowId, after: f.after, limit: f.limit, ...bind(f) };
      if (f.before !== undefined) params.before = f.before;
      if (f.replyTo !== undefined) params.replyTo = f.replyTo;
      return (await pageStatement(f).all(params) as Row[]).map(toReadPost);
    },
    async standing(spaceRowId, f) {
      const params = { space: spaceRowId, limit: f.limit, ...bind(f) };
      return (await standingStatement(f).all(params) as Row[]).map(toReadPost);
    },
    async byPostId(postId) {
      const r = await selectById.get(postId);
      return r === undefined ? undefined : toReadPost(r);
    },
    async bySeq(spaceRowId, seq) {
      const r = await selectBySeq.get(spaceRowId, seq);
      return r === undefined ? undefined : toReadPost(r);
    },
    byPostIds: async (ids) => (ids.length === 0 ? [] : (await selectByIds.all(JSON.stringify(ids))).map(toReadPost)),
    byRowIds: async (ids) => (ids.length === 0 ? [] : (await selectByRowIds.all(JSON.stringify(ids))).map(toReadPost)),
    replyCount: async (postId) => (await countReplies.get(postId))?.n ?? 0,
    supersededBy: async (postId) => (await selectSupersededBy.all(postId)).map((r) => r.post_id),
    retractedBy: async (postId) => (await selectRetractedBy.all(postId)).map((r) => r.post_id),
    async seqsIn(spaceRowId, postIds) {
      if (postIds.length === 0) return new Map();
      return new Map((await selectSeqsIn.all(spaceRowId, JSON.stringify(postIds))).map((r) => [r.post_id, Number(r.seq)]));
    },
    async revisionsOf(postIds) {
      const out = new Map<string, { supersededBy: string[]; retractedBy: string[] }>();
      for (const id of postIds) out.set(id, { supersededBy: [], retractedBy: [] });
      if (postIds.length === 0) return out;
      const json = JSON.stringify(postIds);
      for (const r of await selectRevisions.all(json, json)) {
        if (r.supersedes !== null) out.get(r.supersedes)?.supersededBy.push(r.post_id);
        if (r.retracts !== null) out.get(r.retracts)?.retractedBy.push(r.post_id);
      }
      return out;
    },
    async mailboxPage(peer, f) {
      const params: Record<string, unknown> = { peer, after: f.after, limit: f.limit, ...bind(f) };
      if (f.reasons !== undefined) params.reasons = JSON.stringify(f.reasons);
      return (await mailboxStatement(f).all(params) as MailboxDbRow[]).map(toMailboxRow);
    },
    async snapshot<T>(fn: () => Promise<T>): Promise<T> {
      return (await readTx.snapshot(fn)) as T;
    },
  };
}
