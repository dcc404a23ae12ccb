/**
 * The mirrors aggregate (migration 015): SPACES of another relay kept here read-only. What is
 * stored was verified before (relay/mirrors/verify.ts); this module only keeps it and reads it
 * back. `applySync` stores one sync in one immediate transaction and re-checks, under the write
 * lock, that the new lines continue the stored head and the new checkpoints the stored last
 * one, so two syncs racing never interleave (the loser stores nothing and is told so).
 */
import type { PasskeyPolicy } from '../../shared/passkey.js';
import { plainBytes, type Db } from './database.js';

export interface MirrorRow {
  id: number;
  spaceId: string;
  name: string;
  /** The origin relay's base address (an origin, no path). */
  origin: string;
  visibility: string;
  /** The origin's owner peer id, as last read from its profile. */
  owner: string;
  /** The origin's service root key, hex, pinned at creation. */
  rootKey: string;
  /** The origin's published passkey policy, null when it publishes none. */
  passkeys: PasskeyPolicy | null;
  createdAt: number;
  syncedAt: number | null;
}

export interface MirrorLeaf {
  seq: number;
  objectId: Uint8Array;
  chainHash: Uint8Array;
}

export interface MirrorLine extends MirrorLeaf {
  /** The export line exactly as the origin wrote it. */
  line: string;
}

export interface MirrorCheckpoint {
  first: number;
  last: number;
  checkpointId: Uint8Array;
  /** The served checkpoint as the origin served it (JSON text). */
  served: string;
}

export interface NewMirror {
  spaceId: string;
  name: string;
  origin: string;
  visibility: string;
  owner: string;
  rootKey: string;
  passkeys: PasskeyPolicy | null;
  now: number;
}

export interface MirrorStore {
  /** Create the mirror of `spaceId`, or answer the one that exists (unchanged). */
  create(input: NewMirror): Promise<MirrorRow>;
  bySpaceId(spaceId: string): Promise<MirrorRow | undefined>;
  /** The newest stored line's position and link, undefined for none. */
  head(mirrorId: number): Promise<MirrorLeaf | undefined>;
  leaf(mirrorId: number, seq: number): Promise<MirrorLeaf | undefined>;
  /** Leaves first..last in order (fewer when some are missing). */
  leaves(mirrorId: number, first: number, last: number): Promise<MirrorLeaf[]>;
  /** Lines with seq > after, oldest first, at most `limit`. */
  lines(mirrorId: number, after: number, limit: number): Promise<{ seq: number; line: string }[]>;
  lastCheckpoint(mirrorId: number): Promise<MirrorCheckpoint | undefined>;
  checkpointAt(mirrorId: number, last: number): Promise<MirrorCheckpoint | undefined>;
  /** The checkpoint whose range holds `seq`, if one is stored. */
  covering(mirrorId: number, seq: number): Promise<MirrorCheckpoint | undefined>;
  /** Checkpoints with last > after, oldest first, at most `limit`. */
  checkpoints(mirrorId: number, after: number, limit: number): Promise<MirrorCheckpoint[]>;
  countCheckpoints(mirrorId: number): Promise<number>;
  /**
   * Store one verified sync: lines continuing the head, checkpoints continuing the last one,
   * the owner as just read, the time. Answers false, storing nothing, when another sync moved
   * the head or the last checkpoint since the caller read them.
   */
  applySync(
    mirrorId: number,
    sync: { expectHead: number; expectLast: number; lines: readonly MirrorLine[]; checkpoints: readonly MirrorCheckpoint[]; owner: string; now: number },
  ): Promise<boolean>;
}

interface Row {
  id: number;
  space_id: string;
  name: string;
  origin: string;
  visibility: string;
  owner: string;
  root_key: string;
  passkeys: string | null;
  created_at: number;
  synced_at: number | null;
}

interface LeafRow {
  seq: number;
  object_id: Uint8Array;
  chain_hash: Uint8Array;
}

interface CheckpointRow {
  first: number;
  last: number;
  checkpoint_id: Uint8Array;
  served: string;
}

function toMirror(r: Row): MirrorRow {
  return {
    id: r.id,
    spaceId: r.space_id,
    name: r.name,
    origin: r.origin,
    visibility: r.visibility,
    owner: r.owner,
    rootKey: r.root_key,
    passkeys: r.passkeys === null ? null : (JSON.parse(r.passkeys) as PasskeyPolicy),
    createdAt: r.created_at,
    syncedAt: r.synced_at,
  };
}

function toLeaf(r: LeafRow): MirrorLeaf {
  return { seq: r.seq, objectId: plainBytes(r.object_id), chainHash: plainBytes(r.chain_hash) };
}

function toCheckpoint(r: CheckpointRow): MirrorCheckpoint {
  return { first: r.first, last: r.last, checkpointId: plainBytes(r.checkpoint_id), served: r.served };
}

export function createMirrorStore(db: Db): MirrorStore {
  const insertMirror = db.prepare(
    `INSERT INTO mirrors (space_id, name, origin, visibility, owner, root_key, passkeys, created_at)
     VALUES (@spaceId, @name, @origin, @visibility, @owner, @rootKey, @passkeys, @now)
     ON CONFLICT (space_id) DO NOTHING`,
  );
  const selectMirror = db.prepare<[string], Row>('SELECT * FROM mirrors WHERE space_id = ?');
  const selectHead = db.prepare<[number], LeafRow>(
    'SELECT seq, object_id, chain_hash FROM mirror_posts WHERE mirror_id = ? ORDER BY seq DESC LIMIT 1',
  );
  const selectLeaf = db.prepare<[number, number], LeafRow>('SELECT seq, object_id, chain_hash FROM mirror_posts WHERE mirror_id = ? AND seq = ?');
  const selectLeaves = db.prepare<[number, number, number], LeafRow>(
    'SELECT seq, object_id, chain_hash FROM mirror_posts WHERE mirror_id = ? AND seq BETWEEN ? AND ? ORDER BY seq',
  );
  const selectLines = db.prepare<[number, number, number], { seq: number; line: string }>(
    'SELECT seq, line FROM mirror_posts WHERE mirror_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  );
  const selectLastCheckpoint = db.prepare<[number], CheckpointRow>(
    'SELECT first, last, checkpoint_id, served FROM mirror_checkpoints WHERE mirror_id = ? ORDER BY last DESC LIMIT 1',
  );
  const selectCheckpointAt = db.prepare<[number, number], CheckpointRow>(
    'SELECT first, last, checkpoint_id, served FROM mirror_checkpoints WHERE mirror_id = ? AND last = ?',
  );
  const selectCovering = db.prepare<[number, number], CheckpointRow>(
    'SELECT first, last, checkpoint_id, served FROM mirror_checkpoints WHERE mirror_id = ? AND last >= ? ORDER BY last LIMIT 1',
  );
  const selectCheckpoints = db.prepare<[number, number, number], CheckpointRow>(
    'SELECT first, last, checkpoint_id, served FROM mirror_checkpoints WHERE mirror_id = ? AND last > ? ORDER BY last LIMIT ?',
  );
  const countCheckpoints = db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM mirror_checkpoints WHERE mirror_id = ?');
  const insertLine = db.prepare(
    'INSERT INTO mirror_posts (mirror_id, seq, object_id, chain_hash, line) VALUES (?, ?, ?, ?, ?)',
  );
  const insertCheckpoint = db.prepare(
    'INSERT INTO mirror_checkpoints (mirror_id, last, first, checkpoint_id, served) VALUES (?, ?, ?, ?, ?)',
  );
  const updateMirror = db.prepare('UPDATE mirrors SET owner = ?, synced_at = ? WHERE id = ?');

  const syncTx = db.transaction(async (mirrorId: number, sync: Parameters<MirrorStore['applySync']>[1]): Promise<boolean> => {
    if (((await selectHead.get(mirrorId))?.seq ?? 0) !== sync.expectHead) return false;
    if (((await selectLastCheckpoint.get(mirrorId))?.last ?? 0) !== sync.expectLast) return false;
    for (const l of sync.lines) await insertLine.run(mirrorId, l.seq, l.objectId, l.chainHash, l.line);
    for (const c of sync.checkpoints) await insertCheckpoint.run(mirrorId, c.last, c.first, c.checkpointId, c.served);
    await updateMirror.run(sync.owner, sync.now, mirrorId);
    return true;
  });

  return {
    async create(input) {
      await insertMirror.run({ ...input, passkeys: input.passkeys === null ? null : JSON.stringify(input.passkeys) });
      return toMirror((await selectMirror.get(input.spaceId))!);
    },
    async bySpaceId(spaceId) {
      const r = await selectMirror.get(spaceId);
      return r === undefined ? undefined : toMirror(r);
    },
    async head(mirrorId) {
      const r = await selectHead.get(mirrorId);
      return r === undefined ? undefined : toLeaf(r);
    },
    async leaf(mirrorId, seq) {
      const r = await selectLeaf.get(mirrorId, seq);
      return r === undefined ? undefined : toLeaf(r);
    },
    async leaves(mirrorId, first, last) {
      return (await selectLeaves.all(mirrorId, first, last)).map(toLeaf);
    },
    async lines(mirrorId, after, limit) {
      return await selectLines.all(mirrorId, after, limit);
    },
    async lastCheckpoint(mirrorId) {
      const r = await selectLastCheckpoint.get(mirrorId);
      return r === undefined ? undefined : toCheckpoint(r);
    },
    async checkpointAt(mirrorId, last) {
      const r = await selectCheckpointAt.get(mirrorId, last);
      return r === undefined ? undefined : toCheckpoint(r);
    },
    async covering(mirrorId, seq) {
      const r = await selectCovering.get(mirrorId, seq);
      if (r === undefined || r.first > seq) return undefined;
      return toCheckpoint(r);
    },
    async checkpoints(mirrorId, after, limit) {
      return (await selectCheckpoints.all(mirrorId, after, limit)).map(toCheckpoint);
    },
    async countCheckpoints(mirrorId) {
      return (await countCheckpoints.get(mirrorId))!.n;
    },
    async applySync(mirrorId, sync) {
      return await syncTx.immediate(mirrorId, sync);
    },
  };
}
