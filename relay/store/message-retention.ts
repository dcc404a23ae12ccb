/**
 * Message retention (spec/1-concepts.md item 9 "Retention", Limits "retention 1 to 720 days";
 * spec/2-endpoints.md messages.set_retention): each KEY's retention in days, table
 * `message_retention` of migration 007, where no row means the default (720 days).
 *
 * A message is deleted once older than its sender's current retention, so a shortened
 * retention reaches messages sent before the change. The job (relay/jobs/message-retention.ts)
 * finds them in bounded batches through two indexes instead of scanning every message:
 * messages older than the longest retention are expired whoever sent them (`messages_by_time`);
 * younger ones can be expired only for a KEY with a shorter retention (`messages_by_author_time`).
 *
 * Deleting a message removes its row and the idempotency keys that answered with it, and
 * nothing else: the conversation's `last_seq` stays (the seq is never reissued, readers see a
 * gap) and mailbox rows naming it stay in place, served as unavailable.
 */
import { MESSAGE_RETENTION_DAYS } from '../../shared/limits.js';
import type { Db } from './database.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface ShortRetention {
  peerId: string;
  days: number;
}

export interface MessageRetentionStore {
  /** The KEY's retention in days (the default when it never set one). */
  daysOf(peer: string): Promise<number>;
  /** Set the KEY's retention (1 to 720 days, checked at the edge). */
  set(peer: string, days: number): Promise<void>;
  /** Up to `limit` ids of messages sent before `cutoff` (ms), whoever sent them, oldest first. */
  sentBefore(cutoff: number, limit: number): Promise<string[]>;
  /** KEYS whose retention is shorter than the default, by peer id after `after`, at most `limit`. */
  shortRetentions(after: string, limit: number): Promise<ShortRetention[]>;
  /** Up to `limit` ids of messages `author` sent before `cutoff` (ms), oldest first. */
  sentByBefore(author: string, cutoff: number, limit: number): Promise<string[]>;
  /** Delete these messages and their idempotency keys in one transaction; answers how many were deleted. */
  remove(messageIds: readonly string[]): Promise<number>;
}

export function createMessageRetentionStore(db: Db): MessageRetentionStore {
  const selectDays = db.prepare<[string], { days: number }>('SELECT days FROM message_retention WHERE peer_id = ?');
  const upsert = db.prepare(
    'INSERT INTO message_retention (peer_id, days) VALUES (?, ?) ON CONFLICT (peer_id) DO UPDATE SET days = excluded.days',
  );
  const selectBefore = db.prepare<[number, number], { message_id: string }>(
    'SELECT message_id FROM messages WHERE sent_at < ? ORDER BY sent_at LIMIT ?',
  );
  const selectShort = db.prepare<[number, string, number], { peer_id: string; days: number }>(
    'SELECT peer_id, days FROM message_retention WHERE days < ? AND peer_id > ? ORDER BY peer_id LIMIT ?',
  );
  const selectByBefore = db.prepare<[string, number, number], { message_id: string }>(
    'SELECT message_id FROM messages WHERE author = ? AND sent_at < ? ORDER BY sent_at LIMIT ?',
  );
  const deleteKeys = db.prepare('DELETE FROM message_idempotency WHERE message_id = ?');
  const deleteMessage = db.prepare('DELETE FROM messages WHERE message_id = ?');

  const removeTx = db.transaction(async (ids: readonly string[]): Promise<number> => {
    let deleted = 0;
    for (const id of ids) {
      await deleteKeys.run(id);
      deleted += (await deleteMessage.run(id)).changes;
    }
    return deleted;
  });

  return {
    daysOf: async (peer) => (await selectDays.get(peer))?.days ?? MESSAGE_RETENTION_DAYS.default,
    set: async (peer, days) => void (await upsert.run(peer, days)),
    sentBefore: async (cutoff, limit) => (await selectBefore.all(cutoff, limit)).map((r) => r.message_id),
    shortRetentions: async (after, limit) =>
      (await selectShort.all(MESSAGE_RETENTION_DAYS.default, after, limit)).map((r) => ({ peerId: r.peer_id, days: r.days })),
    sentByBefore: async (author, cutoff, limit) => (await selectByBefore.all(author, cutoff, limit)).map((r) => r.message_id),
    remove: async (ids) => (ids.length === 0 ? 0 : await removeTx.immediate(ids)),
  };
}
