/**
 * Mailbox rows (spec/1-concepts.md "Mailbox"): one gap-free stream per KEY, numbered from one;
 * a position is never skipped. Each row names one subject: a post, a join request, a hand-over
 * offer or a direct message; the envelope shapes are rendered by the mailbox read route
 * (protocol/api-notes.md §5).
 *
 * `deliver` is called INSIDE the caller's write transaction (the post append, the join
 * request, the decision, the offer, the direct message), so a refused write leaves no row and
 * the position is assigned in the same commit as its subject. Inside a transaction it opens no
 * savepoint of its own: a failure throws, and the caller's transaction or savepoint rolls back
 * everything it wrote, so a nested savepoint would only cost two more statements per row (a
 * group message delivers to 15 KEYS: `deliverEach`, one statement). Called outside any
 * transaction it opens its own. Each delivery wakes the KEY's long-polling mailbox
 * reads (relay/posts/notify.ts), after the commit.
 *
 * On PostgreSQL a position is counted under its mailbox's lock (relay/store/postgres/locks.ts), not
 * under the SPACE's the post holds: a transaction's deliveries (a group commit's, from many
 * SPACES) are gathered and written just before its COMMIT (`Db.atCommit`), after the locks of
 * every mailbox they go to, taken together in the global order after everything else the
 * transaction locked, so no two writers wait for each other in a circle; then one statement
 * writes them all. SQLite, one writer, writes each at once.
 */
import type { AtCommit, Db } from './database.js';
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
  /**
   * Append one row to `peer`'s stream; answers its `mailbox_seq`, except on PostgreSQL inside a
   * transaction, where the position is counted just before COMMIT (undefined).
   */
  deliver(peer: string, reason: MailboxReason, subject: MailboxSubject, now: number): Promise<number | undefined>;
  /**
   * One row for each of `deliveries` (distinct KEYS), all with the same subject, in one
   * statement: a group message fans out to up to 15 streams. Call inside a write transaction.
   */
  deliverEach(deliveries: readonly { peer: string; reason: MailboxReason }[], subject: MailboxSubject, now: number): Promise<void>;
  /** The newest position of `peer`'s stream (0 when empty). */
  head(peer: string): Promise<number>;
  /** Rows after `after` (exclusive), ascending, at most `limit`; optionally only some reasons. */
  list(peer: string, after: number, limit: number, reasons?: readonly MailboxReason[]): Promise<MailboxRow[]>;
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
  // Every stream's next position is read before any row is written (SQLite runs a SELECT from
  // the table it inserts into to its end first), so KEYS must be distinct; a repeat would take
  // the same position twice and fail on the primary key, never leave a gap.
  // PostgreSQL likewise reads the whole SELECT in the statement's snapshot, before its inserts.
  const insertEach = db.prepare<{ deliveries: string; post: string | null; request: string | null; offer: string | null; message: string | null; now: number }>(
    db.dialect === 'sqlite'
      ? `INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, request_id, offer_id, message_id, delivered_at)
     SELECT json_extract(d.value, '$[0]'),
            COALESCE((SELECT m.mailbox_seq FROM mailbox m WHERE m.peer = json_extract(d.value, '$[0]') ORDER BY m.mailbox_seq DESC LIMIT 1), 0) + 1,
            json_extract(d.value, '$[1]'), @post, @request, @offer, @message, @now
       FROM json_each(@deliveries) d`
      : `INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, request_id, offer_id, message_id, delivered_at)
     SELECT d.value->>0,
            COALESCE((SELECT m.mailbox_seq FROM mailbox m WHERE m.peer = d.value->>0 ORDER BY m.mailbox_seq DESC LIMIT 1), 0) + 1,
            d.value->>1, @post::text, @request::text, @offer::text, @message::text, @now::bigint
       FROM json_array_elements(@deliveries::json) d`,
  );
  // PostgreSQL: every delivery gathered by a transaction in one statement, numbered per KEY in
  // the order delivered after the KEY's head, which the KEY's lock keeps still until COMMIT.
  const gather = db.dialect === 'postgres';
  const insertGathered = !gather ? undefined : db.prepare<{ rows: string }>(
    `INSERT INTO mailbox (peer, mailbox_seq, reason, post_id, request_id, offer_id, message_id, delivered_at)
     SELECT d.peer,
            COALESCE((SELECT m.mailbox_seq FROM mailbox m WHERE m.peer = d.peer ORDER BY m.mailbox_seq DESC LIMIT 1), 0)
              + row_number() OVER (PARTITION BY d.peer ORDER BY d.n),
            d.reason, d.post_id, d.request_id, d.offer_id, d.message_id, d.delivered_at
       FROM json_to_recordset(@rows::json)
         AS d(n int, peer text, reason text, post_id text, request_id text, offer_id text, message_id text, delivered_at bigint)`,
  );
  const head = async (peer: string): Promise<number> => (await selectHead.get(peer))?.head ?? 0;
  const notifier = notifierFor(db);
  type Gathered = { peer: string; reason: MailboxReason; s: MailboxSubject; now: number };
  const gathered: AtCommit<Gathered> = {
    async flush(items) {
      if (items.length === 0) return;
      await db.lock({ mailboxes: items.map((d) => d.peer) });
      const rows = items.map((d, n) => ({
        n,
        peer: d.peer,
        reason: d.reason,
        post_id: d.s.postId ?? null,
        request_id: d.s.requestId ?? null,
        offer_id: d.s.offerId ?? null,
        message_id: d.s.messageId ?? null,
        delivered_at: d.now,
      }));
      await insertGathered!.run({ rows: JSON.stringify(rows) });
      for (const d of items) notifier.mailbox(d.peer);
    },
  };

  const oneSubject = (s: MailboxSubject): void => {
    const given = (s.postId !== undefined ? 1 : 0) + (s.requestId !== undefined ? 1 : 0) + (s.offerId !== undefined ? 1 : 0) + (s.messageId !== undefined ? 1 : 0);
    if (given !== 1) throw new Error('mailbox.deliver: exactly one subject');
  };
  const deliverNow = async (peer: string, reason: MailboxReason, s: MailboxSubject, now: number): Promise<number> => {
    // SQLite: the position read and written at once, the transaction being the one writer.
    oneSubject(s);
    const seq = await head(peer) + 1;
    await insert.run(peer, seq, reason, s.postId ?? null, s.requestId ?? null, s.offerId ?? null, s.messageId ?? null, now);
    // Wakes long-polling mailbox reads on a later turn, so only after the commit.
    notifier.mailbox(peer);
    return seq;
  };
  const deliverEachNow = async (deliveries: readonly { peer: string; reason: MailboxReason }[], s: MailboxSubject, now: number): Promise<void> => {
    oneSubject(s);
    if (deliveries.length === 0) return;
    if (new Set(deliveries.map((d) => d.peer)).size !== deliveries.length) throw new Error('mailbox.deliverEach: one row per KEY');
    await insertEach.run({
      deliveries: JSON.stringify(deliveries.map((d) => [d.peer, d.reason])),
      post: s.postId ?? null,
      request: s.requestId ?? null,
      offer: s.offerId ?? null,
      message: s.messageId ?? null,
      now,
    });
    for (const d of deliveries) notifier.mailbox(d.peer);
  };
  const deliverTx = db.transaction(deliverNow);
  const deliverEachTx = db.transaction(deliverEachNow);

  return {
    async deliver(peer, reason, subject, now) {
      // Alone: its own transaction under the mailbox's lock.
      if (!db.inTransaction) return await deliverTx.under({ mailboxes: [peer] }, peer, reason, subject, now);
      if (!gather) return await deliverNow(peer, reason, subject, now);
      oneSubject(subject);
      await db.atCommit(gathered, { peer, reason, s: subject, now });
      return undefined;
    },
    async deliverEach(deliveries, subject, now) {
      if (!db.inTransaction) return await deliverEachTx.under({ mailboxes: deliveries.map((d) => d.peer) }, deliveries, subject, now);
      if (!gather) return await deliverEachNow(deliveries, subject, now);
      oneSubject(subject);
      if (new Set(deliveries.map((d) => d.peer)).size !== deliveries.length) throw new Error('mailbox.deliverEach: one row per KEY');
      for (const d of deliveries) await db.atCommit(gathered, { peer: d.peer, reason: d.reason, s: subject, now });
    },
    head,
    async list(peer, after, limit, reasons) {
      if (!reasons || reasons.length === 0) return (await selectAfter.all(peer, after, limit)).map(toMailboxRow);
      // A filtered read: the reasons list is ours (a closed vocabulary), bound as parameters.
      const marks = reasons.map(() => '?').join(', ');
      const stmt = db.prepare<unknown[], MailboxDbRow>(
        `SELECT * FROM mailbox WHERE peer = ? AND mailbox_seq > ? AND reason IN (${marks}) ORDER BY mailbox_seq LIMIT ?`,
      );
      return (await stmt.all(peer, after, ...reasons, limit)).map(toMailboxRow);
    },
  };
}
