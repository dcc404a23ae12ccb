/**
 * KEY-level blocks for direct messages (spec/2-endpoints.md blocks.list, blocks.set,
 * blocks.remove; spec/1-concepts.md Limits "10,000 blocks per KEY"): table `message_blocks` of
 * migration 007. Not the per-SPACE blocks of relay/store/blocks.ts.
 *
 * A blocked KEY cannot message the blocker nor start a group that includes it; the send
 * pipeline asks `reach(sender, peers)` for every recipient or member at once (one query, also
 * safe inside its write transaction: a group send would otherwise ask three times per member). Blocking declines, in the same transaction, every message request the blocked
 * KEY has waiting for the blocker (the blocker's state `requested` in a conversation the blocked
 * KEY started); unblocking leaves those declines as they are (blocks.remove: "a declined request
 * stays declined").
 *
 * Setting a block already set, or removing one that is not, changes nothing (`changed: false`).
 */
import { SvcError } from '../../shared/errors.js';
import { BLOCKS_PER_KEY } from '../../shared/limits.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export interface MessageBlockRow {
  blocked: string;
  blockedAt: number;
}

export interface MessageBlockChange {
  /** The block as it now stands (null after a removal). */
  block: MessageBlockRow | null;
  changed: boolean;
  /** Waiting requests from the blocked KEY declined by this block. */
  declined: number;
}

/** What a sender needs to know of one recipient before writing to it. */
export interface PeerReach {
  /** A KEY registered with this peer id and not blocked by the operator. */
  registered: boolean;
  /** The sender blocks it. */
  blockedBySender: boolean;
  /** It blocks the sender. */
  blocksSender: boolean;
}

export interface MessageBlockStore {
  /** Does `blocker` block `blocked`? A read; callers may run it inside their own transaction. */
  blocks(blocker: string, blocked: string): Promise<boolean>;
  /** For each of `peers` (distinct), what `sender` needs to know before writing to it; one query. */
  reach(sender: string, peers: readonly string[]): Promise<Map<string, PeerReach>>;
  /** The KEYS `blocker` blocks, by peer id ascending, after `after` (exclusive). */
  list(blocker: string, page: { after?: string | undefined; limit: number }): Promise<{ items: MessageBlockRow[]; hasMore: boolean }>;
  /** How many KEYS `blocker` blocks. */
  count(blocker: string): Promise<number>;
  /** blocks.set: BLOCK_LIMIT past BLOCKS_PER_KEY; declines the blocked KEY's waiting requests. */
  block(blocker: string, blocked: string, now: number): Promise<MessageBlockChange>;
  /** blocks.remove: declines stay declined. */
  unblock(blocker: string, blocked: string): Promise<MessageBlockChange>;
}

interface Row {
  blocked: string;
  created_at: number;
}

function toBlock(r: Row): MessageBlockRow {
  return { blocked: r.blocked, blockedAt: r.created_at };
}

export function createMessageBlockStore(db: Db): MessageBlockStore {
  const sql = dialectOf(db);
  const selectOne = db.prepare<[string, string], Row>('SELECT blocked, created_at FROM message_blocks WHERE blocker = ? AND blocked = ?');
  const selectPage = db.prepare<[string, string, number], Row>(
    'SELECT blocked, created_at FROM message_blocks WHERE blocker = ? AND blocked > ? ORDER BY blocked LIMIT ?',
  );
  const countOf = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM message_blocks WHERE blocker = ?');
  const insert = db.prepare('INSERT INTO message_blocks (blocker, blocked, created_at) VALUES (?, ?, ?)');
  const remove = db.prepare('DELETE FROM message_blocks WHERE blocker = ? AND blocked = ?');
  // `peers` is a JSON array of peer ids the caller already checked the shape of.
  const selectReach = db.prepare<{ sender: string; peers: string }, { peer: string; registered: number; by_sender: number; blocks_sender: number }>(
    `SELECT j.value AS peer,
            ${sql.bool('k.peer_id IS NOT NULL AND k.blocked_at IS NULL')} AS registered,
            ${sql.bool('EXISTS (SELECT 1 FROM message_blocks b WHERE b.blocker = @sender AND b.blocked = j.value)')} AS by_sender,
            ${sql.bool('EXISTS (SELECT 1 FROM message_blocks b WHERE b.blocker = j.value AND b.blocked = @sender)')} AS blocks_sender
       FROM (${sql.jsonEach('@peers')}) j LEFT JOIN keys k ON k.peer_id = j.value`,
  );
  // The blocker's waiting requests from the blocked KEY: conversations the blocked KEY started
  // where the blocker's own state is still `requested`.
  const declineWaiting = db.prepare<{ blocker: string; blocked: string; now: number }>(
    `UPDATE conversation_members SET state = 'declined', changed_at = @now
      WHERE peer_id = @blocker AND state = 'requested'
        AND conversation_id IN (SELECT conversation_id FROM conversations WHERE started_by = @blocked)`,
  );

  const blockTx = db.transaction(async (blocker: string, blocked: string, now: number): Promise<MessageBlockChange> => {
    const existing = await selectOne.get(blocker, blocked);
    if (existing) return { block: toBlock(existing), changed: false, declined: 0 };
    if (((await countOf.get(blocker))?.n ?? 0) >= BLOCKS_PER_KEY) {
      throw new SvcError('BLOCK_LIMIT', `this KEY already blocks ${BLOCKS_PER_KEY} KEYS; unblock one first`);
    }
    await insert.run(blocker, blocked, now);
    const declined = (await declineWaiting.run({ blocker, blocked, now })).changes;
    return { block: { blocked, blockedAt: now }, changed: true, declined };
  });

  const unblockTx = db.transaction(async (blocker: string, blocked: string): Promise<MessageBlockChange> => {
    const changed = (await remove.run(blocker, blocked)).changes > 0;
    return { block: null, changed, declined: 0 };
  });

  return {
    blocks: async (blocker, blocked) => await selectOne.get(blocker, blocked) !== undefined,
    async reach(sender, peers) {
      const rows = await selectReach.all({ sender, peers: JSON.stringify(peers) });
      return new Map(rows.map((r) => [r.peer, { registered: r.registered === 1, blockedBySender: r.by_sender === 1, blocksSender: r.blocks_sender === 1 }]));
    },
    async list(blocker, page) {
      const rows = await selectPage.all(blocker, page.after ?? '', page.limit + 1);
      return { items: rows.slice(0, page.limit).map(toBlock), hasMore: rows.length > page.limit };
    },
    count: async (blocker) => (await countOf.get(blocker))?.n ?? 0,
    block: async (blocker, blocked, now) => await blockTx.under({ keys: [blocker, blocked] }, blocker, blocked, now),
    unblock: async (blocker, blocked) => await unblockTx.under({ keys: [blocker, blocked] }, blocker, blocked),
  };
}
