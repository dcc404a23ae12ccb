/**
 * Per-SPACE blocks (spec/2-endpoints.md space_blocks.*, spec/1-concepts.md "Roles matrix"): a
 * blocked KEY may not post or ask to join there (WRITE_BLOCKED); reading still works. Setting
 * and removing write peer.blocked / peer.unblocked in the same transaction; repeating either
 * changes nothing and writes no event.
 *
 * Who may block whom is decided in relay/policy.ts (`checkModerate`), inside the transaction.
 */
import { SvcError } from '../../shared/errors.js';
import { checkModerate } from '../policy.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';
import type { MemberStore } from './members.js';
import type { SpaceRow, SpaceStore } from './spaces.js';

export interface BlockRow {
  peer: string;
  blockedBy: string;
  blockedAt: number;
}

export interface BlockChange {
  block: BlockRow | null;
  changed: boolean;
  revision: number | null;
  space: SpaceRow;
}

export interface BlockStore {
  isBlocked(spaceRowId: number, peer: string): Promise<boolean>;
  get(spaceRowId: number, peer: string): Promise<BlockRow | undefined>;
  list(spaceRowId: number, page: { after?: string | undefined; limit: number }): Promise<{ items: BlockRow[]; hasMore: boolean }>;
  /** space_blocks.set as `actor`: CONTROL_DENIED, SPACE_CLOSED. */
  set(spaceRowId: number, actor: string, peer: string, now: number): Promise<BlockChange>;
  /** space_blocks.remove as `actor`: CONTROL_DENIED, SPACE_CLOSED. */
  remove(spaceRowId: number, actor: string, peer: string, now: number): Promise<BlockChange>;
}

interface Row {
  peer_id: string;
  blocked_by: string;
  blocked_at: number;
}

function toBlock(r: Row): BlockRow {
  return { peer: r.peer_id, blockedBy: r.blocked_by, blockedAt: r.blocked_at };
}

export function createBlockStore(db: Db, spaces: SpaceStore, members: MemberStore, events: EventStore): BlockStore {
  const sql = dialectOf(db);
  const selectOne = db.prepare<[number, string], Row>('SELECT * FROM space_blocks WHERE space_row_id = ? AND peer_id = ?');
  const insert = db.prepare('INSERT INTO space_blocks (space_row_id, peer_id, blocked_by, blocked_at) VALUES (?, ?, ?, ?)');
  const deleteOne = db.prepare('DELETE FROM space_blocks WHERE space_row_id = ? AND peer_id = ?');
  const listStmt = db.prepare<[number, string | null, string | null, number], Row>(
    `SELECT * FROM space_blocks WHERE space_row_id = ? AND (${sql.param('?', 'text')} IS NULL OR peer_id > ?) ORDER BY peer_id LIMIT ?`,
  );

  /** Re-read the SPACE and check the actor may act on `peer` there. */
  async function authorise(spaceRowId: number, actor: string, peer: string): Promise<SpaceRow> {
    const space = await spaces.byRowId(spaceRowId);
    if (!space) throw new SvcError('SPACE_NOT_FOUND');
    checkModerate(await members.roleOf(space, actor), await members.roleOf(space, peer), actor === peer);
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
    return space;
  }

  const setTx = db.transaction(async (spaceRowId: number, actor: string, peer: string, now: number): Promise<BlockChange> => {
    const space = await authorise(spaceRowId, actor, peer);
    const existing = await selectOne.get(space.id, peer);
    if (existing) return { block: toBlock(existing), changed: false, revision: null, space };
    await insert.run(space.id, peer, actor, now);
    const { revision } = await events.append(space, actor, 'peer.blocked', { peer }, now);
    return { block: toBlock((await selectOne.get(space.id, peer))!), changed: true, revision, space };
  });

  const removeTx = db.transaction(async (spaceRowId: number, actor: string, peer: string, now: number): Promise<BlockChange> => {
    const space = await authorise(spaceRowId, actor, peer);
    if (!await selectOne.get(space.id, peer)) return { block: null, changed: false, revision: null, space };
    await deleteOne.run(space.id, peer);
    const { revision } = await events.append(space, actor, 'peer.unblocked', { peer }, now);
    return { block: null, changed: true, revision, space };
  });

  return {
    isBlocked: async (spaceRowId, peer) => await selectOne.get(spaceRowId, peer) !== undefined,
    async get(spaceRowId, peer) {
      const r = await selectOne.get(spaceRowId, peer);
      return r ? toBlock(r) : undefined;
    },
    async list(spaceRowId, page) {
      const after = page.after ?? null;
      const rows = await listStmt.all(spaceRowId, after, after, page.limit + 1);
      return { items: rows.slice(0, page.limit).map(toBlock), hasMore: rows.length > page.limit };
    },
    set: async (spaceRowId, actor, peer, now) => await setTx.under({ spaces: [spaceRowId], keys: [peer] }, spaceRowId, actor, peer, now),
    remove: async (spaceRowId, actor, peer, now) => await removeTx.under({ spaces: [spaceRowId], keys: [peer] }, spaceRowId, actor, peer, now),
  };
}
