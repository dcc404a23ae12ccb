/**
 * The witness aggregate (migration 016), both sides of a cosignature:
 *
 * - as an origin: the cosignature lines accepted witnesses posted for a SPACE's tree heads;
 * - as a witness: the newest verified head per log origin, and every split view seen.
 *
 * Bytes and formats are shared/signed-note.ts and shared/tlog-checkpoint.ts; this module stores
 * text and numbers. Each write is one short transaction.
 */
import { plainBytes, type Db } from './database.js';

export interface StoredCosignature {
  keyName: string;
  keyId: Uint8Array;
  line: string;
  cosignedAt: number;
}

export interface WitnessedLog {
  origin: string;
  /** The address the newest head was read from. */
  source: string;
  /** The origin's note key, pinned on first sight (verifier key text). */
  verifierKey: string;
  size: number;
  root: Uint8Array;
  note: string;
  checkedAt: number;
}

export interface SplitView {
  id: number;
  origin: string;
  source: string;
  reason: string;
  keptSize: number;
  keptNote: string;
  seenSize: number;
  seenNote: string;
  at: number;
}

export interface WitnessStore {
  /** Cosignature lines of a SPACE's head at `size`, by key name. */
  cosignatures(spaceRowId: number, size: number): Promise<StoredCosignature[]>;
  /** Keep a witness's cosignature of a head, replacing an older one by the same key. */
  putCosignature(spaceRowId: number, size: number, c: StoredCosignature, now: number): Promise<void>;
  /** The newest head this relay witnessed for an origin. */
  log(origin: string): Promise<WitnessedLog | undefined>;
  logs(): Promise<WitnessedLog[]>;
  /** Keep a newly verified head (the first, or one consistent with the kept one). */
  putLog(log: WitnessedLog): Promise<void>;
  /** Record a split view; answers its row id. */
  addSplitView(v: Omit<SplitView, 'id'>): Promise<number>;
  /** Split views, oldest first, after row `after`, at most `limit`. */
  splitViews(after: number, limit: number): Promise<SplitView[]>;
  splitViewCount(): Promise<number>;
}

export function createWitnessStore(db: Db): WitnessStore {
  const selectCosignatures = db.prepare<[number, number], { key_name: string; key_id: Uint8Array; line: string; cosigned_at: number }>(
    'SELECT key_name, key_id, line, cosigned_at FROM tlog_cosignatures WHERE space_row_id = ? AND size = ? ORDER BY key_name, key_id',
  );
  const upsertCosignature = db.prepare(
    `INSERT INTO tlog_cosignatures (space_row_id, size, key_name, key_id, line, cosigned_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (space_row_id, size, key_name, key_id) DO UPDATE SET line = excluded.line, cosigned_at = excluded.cosigned_at,
       received_at = excluded.received_at WHERE excluded.cosigned_at >= tlog_cosignatures.cosigned_at`,
  );
  type LogRow = { origin: string; source: string; verifier_key: string; size: number; root: Uint8Array; note: string; checked_at: number };
  const selectLog = db.prepare<[string], LogRow>('SELECT * FROM witness_logs WHERE origin = ?');
  const selectLogs = db.prepare<[], LogRow>('SELECT * FROM witness_logs ORDER BY origin');
  const upsertLog = db.prepare(
    `INSERT INTO witness_logs (origin, source, verifier_key, size, root, note, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (origin) DO UPDATE SET source = excluded.source, verifier_key = excluded.verifier_key, size = excluded.size,
       root = excluded.root, note = excluded.note, checked_at = excluded.checked_at`,
  );
  const insertSplit = db.prepare(
    `INSERT INTO witness_split_views (origin, source, reason, kept_size, kept_note, seen_size, seen_note, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
  );
  type SplitRow = { id: number; origin: string; source: string; reason: string; kept_size: number; kept_note: string; seen_size: number; seen_note: string; at: number };
  const selectSplits = db.prepare<[number, number], SplitRow>('SELECT * FROM witness_split_views WHERE id > ? ORDER BY id LIMIT ?');
  const countSplits = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM witness_split_views');

  const toLog = (r: LogRow): WitnessedLog => ({
    origin: r.origin,
    source: r.source,
    verifierKey: r.verifier_key,
    size: r.size,
    root: plainBytes(r.root),
    note: r.note,
    checkedAt: r.checked_at,
  });

  return {
    async cosignatures(spaceRowId, size) {
      return (await selectCosignatures.all(spaceRowId, size)).map((r) => ({ keyName: r.key_name, keyId: plainBytes(r.key_id), line: r.line, cosignedAt: r.cosigned_at }));
    },
    async putCosignature(spaceRowId, size, c, now) {
      await upsertCosignature.run(spaceRowId, size, c.keyName, c.keyId, c.line, c.cosignedAt, now);
    },
    async log(origin) {
      const r = await selectLog.get(origin);
      return r === undefined ? undefined : toLog(r);
    },
    async logs() {
      return (await selectLogs.all()).map(toLog);
    },
    async putLog(l) {
      await upsertLog.run(l.origin, l.source, l.verifierKey, l.size, l.root, l.note, l.checkedAt);
    },
    async addSplitView(v) {
      return ((await insertSplit.get(v.origin, v.source, v.reason, v.keptSize, v.keptNote, v.seenSize, v.seenNote, v.at)) as { id: number }).id;
    },
    async splitViews(after, limit) {
      return (await selectSplits.all(after, limit)).map((r) => ({
        id: r.id,
        origin: r.origin,
        source: r.source,
        reason: r.reason,
        keptSize: r.kept_size,
        keptNote: r.kept_note,
        seenSize: r.seen_size,
        seenNote: r.seen_note,
        at: r.at,
      }));
    },
    async splitViewCount() {
      return (await countSplits.get())?.n ?? 0;
    },
  };
}
