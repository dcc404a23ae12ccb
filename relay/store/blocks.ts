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
  isBlocked(spaceRowId: number, peer: string): boolean;
  get(spaceRowId: number, peer: string): BlockRow | undefined;
  list(spaceRowId: number, page: { after?: string | undefined; limit: number }): { items: BlockRow[]; hasMore: boolean };
  /** space_blocks.set as `actor`: CONTROL_DENIED, SPACE_CLOSED. */
  set(spaceRowId: number, actor: string, peer: string, now: number): BlockChange;
  /** space_blocks.remove as `actor`: CONTROL_DENIED, SPACE_CLOSED. */
  remove(spaceRowId: number, actor: string, peer: string, now: number): BlockChange;
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
  const selectOne = db.prepare<[number, string], Row>('SELECT * FROM space_blocks WHERE space_row_id = ? AND peer_id = ?');
  const insert = db.prepare('INSERT INTO space_blocks (space_row_id, peer_id, blocked_by, blocked_at) VALUES (?, ?, ?, ?)');
  const deleteOne = db.prepare('DELETE FROM space_blocks WHERE space_row_id = ? AND peer_id = ?');
  const listStmt = db.prepare<[number, string | null, string | null, number], Row>(
    'SELECT * FROM space_blocks WHERE space_row_id = ? AND (? IS NULL OR peer_id > ?) ORDER BY peer_id LIMIT ?',
  );

  /** Re-read the SPACE and check the actor may act on `peer` there. */
  function authorise(spaceRowId: number, actor: string, peer: string): SpaceRow {
    const space = spaces.byRowId(spaceRowId);
    if (!space) throw new SvcError('SPACE_NOT_FOUND');
    checkModerate(members.roleOf(space, actor), members.roleOf(space, peer), actor === peer);
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
    return space;
  }

  const setTx = db.transaction((spaceRowId: number, actor: string, peer: string, now: number): BlockChange => {
    const space = authorise(spaceRowId, actor, peer);
    const existing = selectOne.get(space.id, peer);
    if (existing) return { block: toBlock(existing), changed: false, revision: null, space };
    insert.run(space.id, peer, actor, now);
    const { revision } = events.append(space, actor, 'peer.blocked', { peer }, now);
    return { block: toBlock(selectOne.get(space.id, peer)!), changed: true, revision, space };
  });

  const removeTx = db.transaction((spaceRowId: number, actor: string, peer: string, now: number): BlockChange => {
    const space = authorise(spaceRowId, actor, peer);
    if (!selectOne.get(space.id, peer)) return { block: null, changed: false, revision: null, space };
    deleteOne.run(space.id, peer);
    const { revision } = events.append(space, actor, 'peer.unblocked', { peer }, now);
    return { block: null, changed: true, revision, space };
  });

  return {
    isBlocked: (spaceRowId, peer) => selectOne.get(spaceRowId, peer) !== undefined,
    get(spaceRowId, peer) {
      const r = selectOne.get(spaceRowId, peer);
      return r ? toBlock(r) : undefined;
    },
    list(spaceRowId, page) {
      const after = page.after ?? null;
      const rows = listStmt.all(spaceRowId, after, after, page.limit + 1);
      return { items: rows.slice(0, page.limit).map(toBlock), hasMore: rows.length > page.limit };
    },
    set: (spaceRowId, actor, peer, now) => setTx.immediate(spaceRowId, actor, peer, now),
    remove: (spaceRowId, actor, peer, now) => removeTx.immediate(spaceRowId, actor, peer, now),
  };
}
