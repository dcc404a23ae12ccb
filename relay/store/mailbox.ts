/**
 * Mailbox rows (spec/1-concepts.md "Mailbox"): one gap-free stream per KEY, numbered from one;
 * a position is never skipped. Each row names one subject: a post, a join request, a hand-over
 * offer or a direct message; the envelope shapes are rendered by the mailbox read route
 * (protocol/api-notes.md §5).
 *
 * `deliver` is called INSIDE the caller's write transaction (the post append, the join
 * request, the decision, the offer), so a refused write leaves no row and the position is
 * assigned in the same commit as its subject. It also works on its own: better-sqlite3 turns a
 * nested transaction into a savepoint. Each delivery wakes the KEY's long-polling mailbox reads
 * (relay/posts/notify.ts), after the commit.
 */
import type { Db } from './db.js';
import type { MailboxReason } from '../../shared/vocabulary.js';
import { notifierFor } from '../posts/notify.js';

export type { MailboxReason } from '../../shared/vocabulary.js';

/** What a mailbox row points at: exactly one of these. */
export interface MailboxSubject {
  postId?: string;
  requestId?: string;
  offerId?: string;
  messageId?: string;
}

export interface MailboxRow {
  peer: string;
  mailboxSeq: number;
  reason: MailboxReason;
  postId: string | null;
  requestId: string | null;
  offerId: string | null;
  messageId: string | null;
  deliveredAt: number;
}

export interface MailboxStore {
  /** Append one row to `peer`'s stream; answers its `mailbox_seq`. Call inside a write transaction. */
  deliver(peer: string, reason: MailboxReason, subject: MailboxSubject, now: number): number;
  /** The newest position of `peer`'s stream (0 when empty). */
  head(peer: string): number;
  /** Rows after `after` (exclusive), ascending, at most `limit`; optionally only some reasons. */
  list(peer: string, after: number, limit: number, reasons?: readonly MailboxReason[]): MailboxRow[];
}

/** A mailbox row as the database holds it (also read by relay/store/post-reads.ts). */
export interface MailboxDbRow {
  peer: string;
  mailbox_seq: number;
  reason: string;
  post_id: string | null;
  request_id: string | null;
  offer_id: string | null;
  message_id: string | null;
  delivered_at: number;
}

export function toMailboxRow(r: MailboxDbRow): MailboxRow {
  return {
    peer: r.peer,
    mailboxSeq: r.mailbox_seq,
    reason: r.reason as MailboxReason,
    postId: r.post_id,
    requestId: r.request_id,
    offerId: r.offer_id,
    messageId: r.message_id,
    deliveredAt: r.delivered_at,
  };
}

export function createMailboxStore(db: Db): MailboxStore {
  const selectHead = db.prepare<[string], { head: number }>(
    'SELECT COALESCE(MAX(mailbox_seq), 0) AS head FROM mailbox WHERE peer = ?',
  );
  const insert = db.prepare(
    `INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, request_id, offer_id, message_id, delivered_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectAfter = db.prepare<[string, number, number], MailboxDbRow>(
    'SELECT * FROM mailbox WHERE peer = ? AND mailbox_seq > ? ORDER BY mailbox_seq LIMIT ?',
  );
  const head = (peer: string): number => selectHead.get(peer)?.head ?? 0;
  const notifier = notifierFor(db);

  const deliverTx = db.transaction((peer: string, reason: MailboxReason, s: MailboxSubject, now: number): number => {
    const given = [s.postId, s.requestId, s.offerId, s.messageId].filter((v) => v !== undefined).length;
    if (given !== 1) throw new Error('mailbox.deliver: exactly one subject');
    const seq = head(peer) + 1;
    insert.run(peer, seq, reason, s.postId ?? null, s.requestId ?? null, s.offerId ?? null, s.messageId ?? null, now);
    // Wakes long-polling mailbox reads on a later turn, so only after the commit.
    notifier.mailbox(peer);
    return seq;
  });

  return {
    deliver: (peer, reason, subject, now) => deliverTx(peer, reason, subject, now),
    head,
    list(peer, after, limit, reasons) {
      if (!reasons || reasons.length === 0) return selectAfter.all(peer, after, limit).map(toMailboxRow);
      // A filtered read: the reasons list is ours (a closed vocabulary), bound as parameters.
      const marks = reasons.map(() => '?').join(', ');
      const stmt = db.prepare<unknown[], MailboxDbRow>(
        `SELECT * FROM mailbox WHERE peer = ? AND mailbox_seq > ? AND reason IN (${marks}) ORDER BY mailbox_seq LIMIT ?`,
      );
      return stmt.all(peer, after, ...reasons, limit).map(toMailboxRow);
    },
  };
}
