/**
 * The post aggregate (migration 004): rows of each SPACE's post chain, read by position, id or
 * idempotency key, written only by the append pipeline (relay/posts/append.ts) inside one
 * immediate transaction, and the hidden marker set by posts.hide / posts.unhide.
 *
 * Row values come from the database the relay wrote; the content columns are still
 * peer-written text, to be fenced when rendered.
 */
import { plainBytes, type Db, type WriteLocks } from './database.js';
import { dialectOf } from './dialect.js';

/**
 * The columns of a post row that both sides show: the append pipeline (PostRow, below) and the
 * read routes (ReadPost, relay/store/post-reads.ts). JSON columns stay text (readers parse what
 * they show).
 */
export interface PostColumns {
  /** Storage row id (not a position). */
  rowId: number;
  spaceRowId: number;
  seq: number;
  postId: string;
  author: string;
  kind: string;
  title: string | null;
  body: string | null;
  /** JSON array of peer ids, ascending, or null when the post has no `to`. */
  toJson: string | null;
  replyTo: string | null;
  supersedes: string | null;
  retracts: string | null;
  /** JSON array of `{scheme, value}` in object order, or null. */
  fingerprintsJson: string | null;
  dataJson: string | null;
  budgetJson: string | null;
  runId: string | null;
  canonical: Uint8Array;
  private: Uint8Array | null;
  signature: Uint8Array | null;
  signed: boolean;
  sealed: boolean;
  objectId: Uint8Array;
  admittedRevision: number;
  admittedControlHash: Uint8Array;
  admission: Uint8Array;
  previousHash: Uint8Array;
  chainHash: Uint8Array;
  /** Unix ms. */
  postedAt: number;
  noRole: boolean;
  hiddenAt: number | null;
}

/** One stored post, columns as written. */
export interface PostRow extends PostColumns {
  idempotencyKey: string | null;
  /** Unsigned posts: SHA-256 of the normalised input, compared on a replay. */
  inputDigest: Uint8Array | null;
  receiptSignature: Uint8Array;
  receiptSignerKeyId: string;
  receiptServiceEpoch: string | null;
  hiddenBy: string | null;
}

/** What the append pipeline inserts: every column but the row id and the hidden marker. */
export type NewPost = Omit<PostRow, 'rowId' | 'hiddenAt' | 'hiddenBy'>;

/** The newest position of a SPACE's chain; `chainHash` null while empty (previous = genesis). */
export interface PostHead {
  seq: number;
  chainHash: Uint8Array | null;
  /** What the head's link was computed from, so an append can re-check it (CHAIN_BROKEN). */
  link: { objectId: Uint8Array; admission: Uint8Array; previous: Uint8Array } | null;
}

export interface RolelessCount {
  count: number;
  /** posted_at of the oldest counted post, or null when none. */
  oldest: number | null;
}

export interface PostStore {
  head(spaceRowId: number): Promise<PostHead>;
  byPostId(postId: string): Promise<PostRow | undefined>;
  bySeq(spaceRowId: number, seq: number): Promise<PostRow | undefined>;
  /** The post of (SPACE, author, idempotency key), if any (objects.md §5 "A replay"). */
  byIdempotencyKey(spaceRowId: number, author: string, key: string): Promise<PostRow | undefined>;
  /** Posts with seq > `after` in ascending order, at most `limit`. */
  list(spaceRowId: number, after: number, limit: number): Promise<PostRow[]>;
  /** Roleless posts by a KEY since `since` (ms), across SPACES. */
  rolelessByAuthor(author: string, since: number): Promise<RolelessCount>;
  /** Roleless posts into one SPACE since `since` (ms). */
  rolelessInSpace(spaceRowId: number, since: number): Promise<RolelessCount>;
  /** Insert a post row. MUST run inside the caller's write transaction; returns the row id. */
  insert(post: NewPost): Promise<number>;
  /** Set or clear the hidden marker (inside the caller's transaction); false if no such row. */
  setHidden(rowId: number, hiddenAt: number | null, hiddenBy: string | null): Promise<boolean>;
  /**
   * Run `fn` in one write transaction under the locks of what it touches (`locks`; none: the
   * wide lock); throwing rolls everything back.
   */
  transaction<T>(fn: () => Promise<T>, locks?: WriteLocks): Promise<T>;
}

/** The database columns behind PostColumns (snake case, integers for booleans). */
export interface PostColumnsRow {
  id: number;
  space_row_id: number;
  seq: number;
  post_id: string;
  author: string;
  kind: string;
  title: string | null;
  body: string | null;
  to_json: string | null;
  reply_to: string | null;
  supersedes: string | null;
  retracts: string | null;
  fingerprints_json: string | null;
  data_json: string | null;
  budget_json: string | null;
  run_id: string | null;
  canonical: Uint8Array;
  private: Uint8Array | null;
  signature: Uint8Array | null;
  signed: number;
  sealed: number;
  object_id: Uint8Array;
  admitted_revision: number;
  admitted_control_hash: Uint8Array;
  admission: Uint8Array;
  previous_hash: Uint8Array;
  chain_hash: Uint8Array;
  posted_at: number;
  no_role: number;
  hidden_at: number | null;
}

interface Row extends PostColumnsRow {
  idempotency_key: string | null;
  input_digest: Uint8Array | null;
  receipt_signature: Uint8Array;
  receipt_signer_key_id: string;
  receipt_service_epoch: string | null;
  hidden_by: string | null;
}

function nullableBytes(b: Uint8Array | null): Uint8Array | null {
  return b === null ? null : plainBytes(b);
}

/** Map the shared columns; byte columns come out as plain Uint8Array views. */
export function toPostColumns(r: PostColumnsRow): PostColumns {
  return {
    rowId: r.id,
    spaceRowId: r.space_row_id,
    seq: r.seq,
    postId: r.post_id,
    author: r.author,
    kind: r.kind,
    title: r.title,
    body: r.body,
    toJson: r.to_json,
    replyTo: r.reply_to,
    supersedes: r.supersedes,
    retracts: r.retracts,
    fingerprintsJson: r.fingerprints_json,
    dataJson: r.data_json,
    budgetJson: r.budget_json,
    runId: r.run_id,
    canonical: plainBytes(r.canonical),
    private: nullableBytes(r.private),
    signature: nullableBytes(r.signature),
    signed: r.signed === 1,
    sealed: r.sealed === 1,
    objectId: plainBytes(r.object_id),
    admittedRevision: r.admitted_revision,
    admittedControlHash: plainBytes(r.admitted_control_hash),
    admission: plainBytes(r.admission),
    previousHash: plainBytes(r.previous_hash),
    chainHash: plainBytes(r.chain_hash),
    postedAt: r.posted_at,
    noRole: r.no_role === 1,
    hiddenAt: r.hidden_at,
  };
}

function toPostRow(r: Row): PostRow {
  return {
    ...toPostColumns(r),
    idempotencyKey: r.idempotency_key,
    inputDigest: nullableBytes(r.input_digest),
    receiptSignature: plainBytes(r.receipt_signature),
    receiptSignerKeyId: r.receipt_signer_key_id,
    receiptServiceEpoch: r.receipt_service_epoch,
    hiddenBy: r.hidden_by,
  };
}

export function createPostStore(db: Db): PostStore {
  // The head is read on every append: its parameter fixed so SQLite does not plan it again each call (dialect.ts).
  const sql = dialectOf(db);
  const selectHead = db.prepare<
    [number],
    { seq: number; chain_hash: Uint8Array; object_id: Uint8Array; admission: Uint8Array; previous_hash: Uint8Array }
  >(
    `SELECT seq, chain_hash, object_id, admission, previous_hash FROM posts WHERE space_row_id = ${sql.fixed('?')} ORDER BY seq DESC LIMIT 1`,
  );
  const selectById = db.prepare<[string], Row>('SELECT * FROM posts WHERE post_id = ?');
  const selectBySeq = db.prepare<[number, number], Row>('SELECT * FROM posts WHERE space_row_id = ? AND seq = ?');
  const selectByKey = db.prepare<[number, string, string], Row>(
    'SELECT * FROM posts WHERE space_row_id = ? AND author = ? AND idempotency_key = ?',
  );
  const selectAfter = db.prepare<[number, number, number], Row>(
    'SELECT * FROM posts WHERE space_row_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  );
  const countRolelessAuthor = db.prepare<[string, number], { n: number; oldest: number | null }>(
    'SELECT count(*) AS n, min(posted_at) AS oldest FROM posts WHERE no_role = 1 AND author = ? AND posted_at > ?',
  );
  const countRolelessSpace = db.prepare<[number, number], { n: number; oldest: number | null }>(
    'SELECT count(*) AS n, min(posted_at) AS oldest FROM posts WHERE no_role = 1 AND space_row_id = ? AND posted_at > ?',
  );
  const insertRow = db.prepare(`
    INSERT INTO posts (
      space_row_id, seq, post_id, author, kind, title, body, to_json, reply_to, supersedes, retracts,
      fingerprints_json, data_json, budget_json, run_id, idempotency_key, input_digest, canonical, private,
      signature, signed, sealed, object_id, admitted_revision, admitted_control_hash, admission,
      previous_hash, chain_hash, posted_at, no_role, receipt_signature, receipt_signer_key_id,
      receipt_service_epoch
    ) VALUES (
      @spaceRowId, @seq, @postId, @author, @kind, @title, @body, @toJson, @replyTo, @supersedes, @retracts,
      @fingerprintsJson, @dataJson, @budgetJson, @runId, @idempotencyKey, @inputDigest, @canonical, @private,
      @signature, @signed, @sealed, @objectId, @admittedRevision, @admittedControlHash, @admission,
      @previousHash, @chainHash, @postedAt, @noRole, @receiptSignature, @receiptSignerKeyId,
      @receiptServiceEpoch
    ) RETURNING id`);
  const updateHidden = db.prepare('UPDATE posts SET hidden_at = ?, hidden_by = ? WHERE id = ?');
  const runInTransaction = db.transaction(async (fn: () => Promise<unknown>) => await fn());

  const counted = (r: { n: number; oldest: number | null } | undefined): RolelessCount => ({
    count: r?.n ?? 0,
    oldest: r?.oldest ?? null,
  });

  return {
    async head(spaceRowId) {
      const r = await selectHead.get(spaceRowId);
      if (r === undefined) return { seq: 0, chainHash: null, link: null };
      return {
        seq: r.seq,
        chainHash: plainBytes(r.chain_hash),
        link: { objectId: plainBytes(r.object_id), admission: plainBytes(r.admission), previous: plainBytes(r.previous_hash) },
      };
    },
    async byPostId(postId) {
      const r = await selectById.get(postId);
      return r === undefined ? undefined : toPostRow(r);
    },
    async bySeq(spaceRowId, seq) {
      const r = await selectBySeq.get(spaceRowId, seq);
      return r === undefined ? undefined : toPostRow(r);
    },
    async byIdempotencyKey(spaceRowId, author, key) {
      const r = await selectByKey.get(spaceRowId, author, key);
      return r === undefined ? undefined : toPostRow(r);
    },
    async list(spaceRowId, after, limit) {
      return (await selectAfter.all(spaceRowId, after, limit)).map(toPostRow);
    },
    rolelessByAuthor: async (author, since) => counted(await countRolelessAuthor.get(author, since)),
    rolelessInSpace: async (spaceRowId, since) => counted(await countRolelessSpace.get(spaceRowId, since)),
    async insert(p) {
      const info = await insertRow.get({
        ...p,
        signed: p.signed ? 1 : 0,
        sealed: p.sealed ? 1 : 0,
        noRole: p.noRole ? 1 : 0,
      });
      return (info as { id: number }).id;
    },
    async setHidden(rowId, hiddenAt, hiddenBy) {
      return (await updateHidden.run(hiddenAt, hiddenBy, rowId)).changes === 1;
    },
    async transaction<T>(fn: () => Promise<T>, locks?: WriteLocks): Promise<T> {
      return (await (locks === undefined ? runInTransaction.immediate(fn) : runInTransaction.under(locks, fn))) as T;
    },
  };
}
