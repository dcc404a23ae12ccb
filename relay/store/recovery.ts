/**
 * The recovery aggregate (spec/1-concepts.md "Space status", 2-endpoints.md recovery.list;
 * migration 014): the signed notices a restore publishes, and the one write a restore makes per
 * SPACE whose chain was cut: close it and continue it in a new SPACE.
 *
 * The continuation is a fresh SPACE (new uuid, its chains from its own genesis) with the closed
 * one's settings and categories, the same members with their roles and tags, and the same
 * blocks; invite links, join requests, hand-overs and tasks stay with the closed SPACE, whose
 * reads and export keep working. Its events record it: `space.created` (with `continues`), one
 * `member.granted` per member, one `peer.blocked` per block, all by the service's own peer id;
 * the closed SPACE gets `space.closed` naming the continuation and the new epoch. The per-KEY
 * SPACE limits are not applied: a restore never drops a member from its continuation.
 *
 * Beside a notice, its withheld form when it has one (migration 017; shared/recovery.ts): the
 * notice with the chains an outsider of the SPACE may not read withheld, served to them instead.
 *
 * `continueSpace` and `insert` run inside the restore's one write transaction.
 */
import { readRecoveryBytes, type SignedRecovery } from '../../shared/recovery.js';
import type { ServedSigner } from '../../shared/service-keys.js';
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';
import { spaceParameters, type SpaceRow, type SpaceStore } from './spaces.js';

export interface StoredRecovery extends SignedRecovery {
  /** Row id: the list's order and cursor. */
  rowId: number;
  /** The closed SPACE's row. */
  spaceRowId: number;
  signer: ServedSigner;
  /** The withheld form signed beside it, if any. */
  withheld: (SignedRecovery & { signer: ServedSigner }) | undefined;
}

export interface ContinueInput {
  /** The SPACE to close. */
  closed: SpaceRow;
  /** The continuation's uuid and name (free: the caller checked). */
  spaceId: string;
  name: string;
  /** Who the events name: the service's own peer id. */
  actor: string;
  serviceEpoch: string;
  now: number;
}

export interface RecoveryStore {
  /** Notices with row id > after, oldest first, at most `limit`; only one SPACE's when `spaceRowId` is given. */
  list(opts: { after: number; limit: number; spaceRowId?: number | undefined }): Promise<StoredRecovery[]>;
  /** Close `closed` and make its continuation; answers the continuation. */
  continueSpace(input: ContinueInput): Promise<SpaceRow>;
  /** Store a signed notice about the SPACE row `spaceRowId`, with its withheld form when it has one. */
  insert(spaceRowId: number, notice: SignedRecovery, signer: ServedSigner, createdAt: number, withheld?: SignedRecovery): Promise<void>;
  /** Store the withheld form of the notice at row `rowId` unless it has one already; answers whether it was stored. */
  insertWithheld(rowId: number, withheld: SignedRecovery, signer: ServedSigner, createdAt: number): Promise<boolean>;
}

interface NoticeRow {
  id: number;
  space_row_id: number;
  recovery_id: Uint8Array;
  canonical: Uint8Array;
  signature: Uint8Array;
  rendering: string;
  withheld_id: Uint8Array | null;
  withheld_canonical: Uint8Array | null;
  withheld_signature: Uint8Array | null;
  withheld_rendering: string | null;
}

/** Our own bytes, read strictly anyway: a stored notice that no longer reads is a fault to surface. */
function storedNotice(id: Uint8Array, canonical: Uint8Array, signature: Uint8Array, rendering: string, what: string) {
  const bytes = plainBytes(canonical);
  return {
    fields: readRecoveryBytes(bytes, what),
    canonical: bytes,
    id: plainBytes(id),
    signature: plainBytes(signature),
    signer: JSON.parse(rendering) as ServedSigner,
  };
}

export function createRecoveryStore(db: Db, spaces: SpaceStore, events: EventStore): RecoveryStore {
  const sql = dialectOf(db);
  const selectPage = db.prepare<[number, number | null, number | null, number], NoticeRow>(
    `SELECT n.id, n.space_row_id, n.recovery_id, n.canonical, n.signature, s.rendering,
            w.recovery_id AS withheld_id, w.canonical AS withheld_canonical, w.signature AS withheld_signature,
            ws.rendering AS withheld_rendering
       FROM recovery_notices n JOIN checkpoint_signers s ON s.id = n.signer_row
       LEFT JOIN recovery_withheld w ON w.notice_row_id = n.id
       LEFT JOIN checkpoint_signers ws ON ws.id = w.signer_row
      WHERE n.id > ? AND (${sql.param('?', 'bigint')} IS NULL OR n.space_row_id = ?) ORDER BY n.id LIMIT ?`,
  );
  const insertSpace = db.prepare(
    `INSERT INTO spaces (space_id, name, owner, title, description, visibility, oracle, join_policy, signed_only,
       status, replaced_by, categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours,
       member_count, created_at, updated_at)
     SELECT ?, ?, owner, title, description, visibility, oracle, join_policy, signed_only,
       'active', NULL, categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours,
       member_count, ?, ? FROM spaces WHERE id = ?
     RETURNING id`,
  );
  const copyCategories = db.prepare(
    'INSERT INTO space_categories (space_row_id, category, position) SELECT ?, category, position FROM space_categories WHERE space_row_id = ?',
  );
  const copyMembers = db.prepare(
    `INSERT INTO members (space_row_id, peer_id, role, tags_json, brought_in_by, link_id, direct, admitted_at, changed_at, changed_by_governor_at)
     SELECT ?, peer_id, role, tags_json, brought_in_by, NULL, direct, ?, ?, changed_by_governor_at FROM members WHERE space_row_id = ?`,
  );
  const copyBlocks = db.prepare(
    'INSERT INTO space_blocks (space_row_id, peer_id, blocked_by, blocked_at) SELECT ?, peer_id, blocked_by, blocked_at FROM space_blocks WHERE space_row_id = ?',
  );
  const membersOf = db.prepare<[number], { peer_id: string; role: string; tags_json: string; brought_in_by: string }>(
    'SELECT peer_id, role, tags_json, brought_in_by FROM members WHERE space_row_id = ? ORDER BY peer_id',
  );
  const blocksOf = db.prepare<[number], { peer_id: string }>('SELECT peer_id FROM space_blocks WHERE space_row_id = ? ORDER BY peer_id');
  const selectSigner = db.prepare<[string], { id: number }>('SELECT id FROM checkpoint_signers WHERE rendering = ?');
  const insertSigner = db.prepare<[string, string], { id: number }>('INSERT INTO checkpoint_signers (key_id, rendering) VALUES (?, ?) RETURNING id');
  const insertNotice = db.prepare<[Uint8Array, number, Uint8Array, Uint8Array, number, number], { id: number }>(
    'INSERT INTO recovery_notices (recovery_id, space_row_id, canonical, signature, signer_row, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id',
  );
  const insertWithheldRow = db.prepare(
    `INSERT INTO recovery_withheld (notice_row_id, recovery_id, canonical, signature, signer_row, created_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (notice_row_id) DO NOTHING`,
  );

  async function signerRow(signer: ServedSigner): Promise<number> {
    const rendering = JSON.stringify(signer);
    return (await selectSigner.get(rendering))?.id ?? (await insertSigner.get(signer.key_id, rendering))!.id;
  }

  return {
    async list({ after, limit, spaceRowId }) {
      const scope = spaceRowId ?? null;
      return (await selectPage.all(after, scope, scope, limit)).map((r) => ({
        rowId: Number(r.id),
        spaceRowId: Number(r.space_row_id),
        ...storedNotice(r.recovery_id, r.canonical, r.signature, r.rendering, 'stored recovery notice'),
        withheld:
          r.withheld_id === null
            ? undefined
            : storedNotice(r.withheld_id, r.withheld_canonical!, r.withheld_signature!, r.withheld_rendering!, 'stored withheld recovery notice'),
      }));
    },

    async continueSpace({ closed, spaceId, name, actor, serviceEpoch, now }) {
      const rowId = ((await insertSpace.get(spaceId, name, now, now, closed.id)) as { id: number }).id;
      await copyCategories.run(rowId, closed.id);
      await copyMembers.run(rowId, now, now, closed.id);
      await copyBlocks.run(rowId, closed.id);
      const next = (await spaces.byRowId(rowId))!;
      await events.append(next, actor, 'space.created', { ...spaceParameters(next), continues: closed.name }, now);
      for (const m of await membersOf.all(rowId)) {
        const payload = { peer: m.peer_id, role: m.role, tags: JSON.parse(m.tags_json) as string[], brought_in_by: m.brought_in_by, link_id: null };
        await events.append(next, actor, 'member.granted', payload, now);
      }
      for (const b of await blocksOf.all(rowId)) await events.append(next, actor, 'peer.blocked', { peer: b.peer_id }, now);
      spaces.close(closed.id, name, now);
      await events.append(closed, actor, 'space.closed', { replaced_by: name, service_epoch: serviceEpoch }, now);
      return next;
    },

    async insert(spaceRowId, notice, signer, createdAt, withheld) {
      const signerId = await signerRow(signer);
      const rowId = (await insertNotice.get(notice.id, spaceRowId, notice.canonical, notice.signature, signerId, createdAt))!.id;
      if (withheld !== undefined) await insertWithheldRow.run(rowId, withheld.id, withheld.canonical, withheld.signature, signerId, createdAt);
    },

    async insertWithheld(rowId, withheld, signer, createdAt) {
      const r = await insertWithheldRow.run(rowId, withheld.id, withheld.canonical, withheld.signature, await signerRow(signer), createdAt);
      return r.changes > 0;
    },
  };
}
