/**
 * The checkpoint aggregate (migration 005; protocol/objects.md §11-§13): signed ranges of each
 * SPACE's two streams, and the leaves they cover.
 *
 * Sequencing (the chains), integration (the Merkle tree) and publishing (the signed checkpoint)
 * are separate steps: posts and events are appended by their own stores; the checkpointer job
 * (relay/jobs/checkpointer.ts) reads ranges here, builds and signs outside any transaction, and
 * `insert` stores the result in a short write transaction that re-checks continuity.
 *
 * Every hash and byte format is shared/ (checkpoint.ts, merkle.ts); this module stores bytes.
 */
import { readCheckpointBytes, type CheckpointFields, type SignedCheckpoint, type Stream } from '../../shared/checkpoint.js';
import { toHex } from '../../shared/encoding.js';
import type { ServedSigner } from '../../shared/service-keys.js';
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';

/** One position of a stream as a leaf needs it: position, object_id/command_id, link. */
export interface StreamLink {
  position: number;
  id: Uint8Array;
  /** The link before this position (the genesis at position 1). */
  previousHash: Uint8Array;
  chainHash: Uint8Array;
}

/** A stored checkpoint, read back. */
export interface StoredCheckpoint extends SignedCheckpoint {
  spaceRowId: number;
  signer: ServedSigner;
}

export interface CheckpointStore {
  /** The newest checkpoint of a stream, if any. */
  latest(spaceRowId: number, stream: Stream): Promise<StoredCheckpoint | undefined>;
  /** The checkpoint covering `position`, if one does. */
  covering(spaceRowId: number, stream: Stream, position: number): Promise<StoredCheckpoint | undefined>;
  /** Checkpoints with last > after (asc) or last < before (desc), at most `limit`. */
  page(spaceRowId: number, stream: Stream, opts: { after?: number; before?: number; order: 'asc' | 'desc'; limit: number }): Promise<StoredCheckpoint[]>;
  /** Links of positions first..last in order (fewer when some are missing). */
  links(spaceRowId: number, stream: Stream, first: number, last: number): Promise<StreamLink[]>;
  /** The newest position of a stream (0 when empty) and the posted_at/at of `position`. */
  streamHead(spaceRowId: number, stream: Stream): Promise<number>;
  timeAt(spaceRowId: number, stream: Stream, position: number): Promise<number | undefined>;
  /** SPACES (row ids) with posts whose storage row id is above `afterRowId`, and the highest row id seen. */
  spacesWithNewPosts(afterRowId: number): Promise<{ spaces: number[]; upto: number }>;
  /** Every SPACE with at least one event and its newest revision. */
  eventHeads(): Promise<{ spaceRowId: number; head: number }[]>;
  /** The SPACE's uuid (`space_id`), if the row exists. */
  spaceIdOf(spaceRowId: number): Promise<string | undefined>;
  /**
   * Store a signed checkpoint in one write transaction. Answers false (storing nothing) when
   * the stream's newest checkpoint is no longer the one it extends (continuity re-checked
   * under the lock).
   */
  insert(spaceRowId: number, checkpoint: SignedCheckpoint, signer: ServedSigner, createdAt: number): Promise<boolean>;
}

interface CheckpointRow {
  space_row_id: number;
  canonical: Uint8Array;
  checkpoint_id: Uint8Array;
  signature: Uint8Array;
  rendering: string;
}

function toStored(r: CheckpointRow): StoredCheckpoint {
  const canonical = plainBytes(r.canonical);
  // Our own bytes, read strictly anyway: a stored row that no longer reads is a fault to surface.
  const fields: CheckpointFields = readCheckpointBytes(canonical, 'stored checkpoint');
  return {
    spaceRowId: r.space_row_id,
    fields,
    canonical,
    id: plainBytes(r.checkpoint_id),
    signature: plainBytes(r.signature),
    signer: JSON.parse(r.rendering) as ServedSigner,
  };
}

const SELECT_CHECKPOINT = `SELECT c.space_row_id, c.canonical, c.checkpoint_id, c.signature, s.rendering
  FROM checkpoints c JOIN checkpoint_signers s ON s.id = c.signer_row`;

export function createCheckpointStore(db: Db): CheckpointStore {
  // Heads: parameters fixed so SQLite does not plan the statement again on each call (dialect.ts).
  const sql = dialectOf(db);
  const selectLatest = db.prepare<[number, string], CheckpointRow>(
    `${SELECT_CHECKPOINT} WHERE c.space_row_id = ${sql.fixed('?')} AND c.stream = ${sql.fixed('?')} ORDER BY c.last DESC LIMIT 1`,
  );
  const selectCovering = db.prepare<[number, string, number], CheckpointRow & { first: number }>(
    `SELECT c.space_row_id, c.canonical, c.checkpoint_id, c.signature, s.rendering, c.first
       FROM checkpoints c JOIN checkpoint_signers s ON s.id = c.signer_row
      WHERE c.space_row_id = ? AND c.stream = ? AND c.last >= ? ORDER BY c.last LIMIT 1`,
  );
  const selectAsc = db.prepare<[number, string, number, number], CheckpointRow>(
    `${SELECT_CHECKPOINT} WHERE c.space_row_id = ? AND c.stream = ? AND c.last > ? ORDER BY c.last LIMIT ?`,
  );
  const selectDesc = db.prepare<[number, string, number, number], CheckpointRow>(
    `${SELECT_CHECKPOINT} WHERE c.space_row_id = ? AND c.stream = ? AND c.last < ? ORDER BY c.last DESC LIMIT ?`,
  );
  const selectLatestLast = db.prepare<[number, string], { last: number; checkpoint_id: Uint8Array }>(
    `SELECT last, checkpoint_id FROM checkpoints WHERE space_row_id = ${sql.fixed('?')} AND stream = ${sql.fixed('?')} ORDER BY last DESC LIMIT 1`,
  );
  const selectSigner = db.prepare<[string], { id: number }>('SELECT id FROM checkpoint_signers WHERE rendering = ?');
  const insertSigner = db.prepare<[string, string], { id: number }>('INSERT INTO checkpoint_signers (key_id, rendering) VALUES (?, ?) RETURNING id');
  const insertCheckpoint = db.prepare(
    `INSERT INTO checkpoints (space_row_id, stream, last, first, checkpoint_id, canonical, signature, signer_row, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  type LinkRow = { position: number; id: Uint8Array; previous_hash: Uint8Array; chain_hash: Uint8Array };
  const postLinks = db.prepare<[number, number, number], LinkRow>(
    `SELECT seq AS position, object_id AS id, previous_hash, chain_hash FROM posts
      WHERE space_row_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`,
  );
  const eventLinks = db.prepare<[number, number, number], LinkRow>(
    `SELECT revision AS position, command_id AS id, previous_hash, chain_hash FROM space_events
      WHERE space_row_id = ? AND revision BETWEEN ? AND ? ORDER BY revision`,
  );
  const postHead = db.prepare<[number], { head: number | null }>(`SELECT MAX(seq) AS head FROM posts WHERE space_row_id = ${sql.fixed('?')}`);
  const eventHead = db.prepare<[number], { head: number | null }>(
    `SELECT MAX(revision) AS head FROM space_events WHERE space_row_id = ${sql.fixed('?')}`,
  );
  const postTime = db.prepare<[number, number], { t: number }>('SELECT posted_at AS t FROM posts WHERE space_row_id = ? AND seq = ?');
  const eventTime = db.prepare<[number, number], { t: number }>(
    'SELECT at AS t FROM space_events WHERE space_row_id = ? AND revision = ?',
  );
  const newPostSpaces = db.prepare<[number], { space_row_id: number; upto: number }>(
    'SELECT space_row_id, MAX(id) AS upto FROM posts WHERE id > ? GROUP BY space_row_id',
  );
  const allEventHeads = db.prepare<[], { space_row_id: number; head: number }>(
    'SELECT space_row_id, MAX(revision) AS head FROM space_events GROUP BY space_row_id',
  );

  const selectSpaceId = db.prepare<[number], { space_id: string }>('SELECT space_id FROM spaces WHERE id = ?');

  const signerIds = new Map<string, number>();
  async function signerRow(signer: ServedSigner): Promise<number> {
    const rendering = JSON.stringify(signer);
    const known = signerIds.get(rendering);
    if (known !== undefined) return known;
    const found = await selectSigner.get(rendering);
    const id = found ? found.id : (await insertSigner.get(signer.key_id, rendering))!.id;
    signerIds.set(rendering, id);
    return id;
  }

  const insertTx = db.transaction(
    async (spaceRowId: number, c: SignedCheckpoint, signer: ServedSigner, createdAt: number): Promise<boolean> => {
      const f = c.fields;
      const previous = await selectLatestLast.get(spaceRowId, f.stream);
      const first = Number(f.first);
      const last = Number(f.last);
      if (previous === undefined) {
        if (first !== 1 || f.previous_checkpoint_id !== null) return false;
      } else {
        if (first !== previous.last + 1) return false;
        if (f.previous_checkpoint_id !== toHex(plainBytes(previous.checkpoint_id))) return false;
      }
      await insertCheckpoint.run(spaceRowId, f.stream, last, first, c.id, c.canonical, c.signature, await signerRow(signer), createdAt);
      return true;
    },
  );

  return {
    async latest(spaceRowId, stream) {
      const r = await selectLatest.get(spaceRowId, stream);
      return r === undefined ? undefined : toStored(r);
    },
    async covering(spaceRowId, stream, position) {
      const r = await selectCovering.get(spaceRowId, stream, position);
      if (r === undefined || r.first > position) return undefined;
      return toStored(r);
    },
    async page(spaceRowId, stream, opts) {
      const rows =
        opts.order === 'asc'
          ? await selectAsc.all(spaceRowId, stream, opts.after ?? 0, opts.limit)
          : await selectDesc.all(spaceRowId, stream, opts.before ?? Number.MAX_SAFE_INTEGER, opts.limit);
      return rows.map(toStored);
    },
    async links(spaceRowId, stream, first, last) {
      const rows = await (stream === 'posts' ? postLinks : eventLinks).all(spaceRowId, first, last);
      return rows.map((r) => ({
        position: r.position,
        id: plainBytes(r.id),
        previousHash: plainBytes(r.previous_hash),
        chainHash: plainBytes(r.chain_hash),
      }));
    },
    async streamHead(spaceRowId, stream) {
      return (await (stream === 'posts' ? postHead : eventHead).get(spaceRowId))?.head ?? 0;
    },
    async timeAt(spaceRowId, stream, position) {
      return (await (stream === 'posts' ? postTime : eventTime).get(spaceRowId, position))?.t;
    },
    async spacesWithNewPosts(afterRowId) {
      const rows = await newPostSpaces.all(afterRowId);
      let upto = afterRowId;
      for (const r of rows) if (r.upto > upto) upto = r.upto;
      return { spaces: rows.map((r) => r.space_row_id), upto };
    },
    async eventHeads() {
      return (await allEventHeads.all()).map((r) => ({ spaceRowId: r.space_row_id, head: r.head }));
    },
    async spaceIdOf(spaceRowId) {
      return (await selectSpaceId.get(spaceRowId))?.space_id;
    },
    async insert(spaceRowId, checkpoint, signer, createdAt) {
      return await insertTx.under({ spaces: [spaceRowId] }, spaceRowId, checkpoint, signer, createdAt);
    },
  };
}
