/**
 * The message aggregate (migration 007; spec/1-concepts.md "Conversation and message"):
 * messages of a conversation by seq, and the idempotency keys a KEY used across all its
 * conversations. A message holds a body or a sealed pair's header and ciphertext, never both.
 *
 * `seq` is assigned by the send pipeline inside its write transaction from the conversation's
 * `last_seq` (relay/store/conversations.ts), so it is gap-free at assignment; retention deletes
 * rows and leaves gaps, and a number is never reissued. Writes MUST run inside the caller's
 * transaction. Bodies are peer-written text, fenced when rendered.
 */
import { plainBytes, type Db } from './database.js';
import { dialectOf } from './dialect.js';

export interface MessageRow {
  messageId: string;
  conversationId: string;
  seq: number;
  author: string;
  sentAt: number;
  replyTo: string | null;
  about: string | null;
  body: string | null;
  sealedHeader: Uint8Array | null;
  sealedCiphertext: Uint8Array | null;
}

export interface IdempotencyRow {
  conversationId: string;
  messageId: string;
  /** Hex SHA-256 of the request it first answered. */
  requestHash: string;
}

export interface MessagePage {
  conversationId: string;
  /** Exclusive lower bound. */
  after: number;
  /** Inclusive upper bound (what the reader may see). */
  upTo: number;
  order: 'asc' | 'desc';
  limit: number;
}

export interface MessageStore {
  byId(messageId: string): Promise<MessageRow | undefined>;
  byIds(messageIds: readonly string[]): Promise<MessageRow[]>;
  page(p: MessagePage): Promise<MessageRow[]>;
  /** The newest message with `from < seq <= upTo`. */
  latest(conversationId: string, from: number, upTo: number): Promise<MessageRow | undefined>;
  /** A message by someone other than `reader` with `from < seq <= upTo`. */
  hasFromOthers(conversationId: string, reader: string, from: number, upTo: number): Promise<boolean>;
  insert(m: MessageRow): Promise<void>;
  idempotency(author: string, key: string): Promise<IdempotencyRow | undefined>;
  recordIdempotency(author: string, key: string, row: IdempotencyRow, now: number): Promise<void>;
}

interface Row {
  message_id: string;
  conversation_id: string;
  seq: number;
  author: string;
  sent_at: number;
  reply_to: string | null;
  about: string | null;
  body: string | null;
  sealed_header: Uint8Array | null;
  sealed_ciphertext: Uint8Array | null;
}

function toMessage(r: Row): MessageRow {
  return {
    messageId: r.message_id,
    conversationId: r.conversation_id,
    seq: r.seq,
    author: r.author,
    sentAt: r.sent_at,
    replyTo: r.reply_to,
    about: r.about,
    body: r.body,
    sealedHeader: r.sealed_header === null ? null : plainBytes(r.sealed_header),
    sealedCiphertext: r.sealed_ciphertext === null ? null : plainBytes(r.sealed_ciphertext),
  };
}

export function createMessageStore(db: Db): MessageStore {
  const sql = dialectOf(db);
  const selectById = db.prepare<[string], Row>('SELECT * FROM messages WHERE message_id = ?');
  const selectByIds = db.prepare<[string], Row>(`SELECT * FROM messages WHERE message_id IN (${sql.jsonEach('?')})`);
  const pageAsc = db.prepare<[string, number, number, number], Row>(
    'SELECT * FROM messages WHERE conversation_id = ? AND seq > ? AND seq <= ? ORDER BY seq ASC LIMIT ?',
  );
  const pageDesc = db.prepare<[string, number, number, number], Row>(
    'SELECT * FROM messages WHERE conversation_id = ? AND seq > ? AND seq <= ? ORDER BY seq DESC LIMIT ?',
  );
  const selectOthers = db.prepare<[string, string, number, number], { one: number }>(
    'SELECT 1 AS one FROM messages WHERE conversation_id = ? AND author <> ? AND seq > ? AND seq <= ? LIMIT 1',
  );
  const insertRow = db.prepare(
    `INSERT INTO messages (message_id, conversation_id, seq, author, sent_at, reply_to, about, body, sealed_header, sealed_ciphertext)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const selectKey = db.prepare<[string, string], { conversation_id: string; message_id: string; request_hash: string }>(
    'SELECT conversation_id, message_id, request_hash FROM message_idempotency WHERE author = ? AND idempotency_key = ?',
  );
  const insertKey = db.prepare(
    `INSERT INTO message_idempotency (author, idempotency_key, conversation_id, message_id, request_hash, created_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );

  return {
    async byId(id) {
      const r = await selectById.get(id);
      return r === undefined ? undefined : toMessage(r);
    },
    byIds: async (ids) => (ids.length === 0 ? [] : (await selectByIds.all(JSON.stringify(ids))).map(toMessage)),
    page: async (p) => (await (p.order === 'asc' ? pageAsc : pageDesc).all(p.conversationId, p.after, p.upTo, p.limit)).map(toMessage),
    async latest(id, from, upTo) {
      const r = await pageDesc.get(id, from, upTo, 1);
      return r === undefined ? undefined : toMessage(r);
    },
    hasFromOthers: async (id, reader, from, upTo) => await selectOthers.get(id, reader, from, upTo) !== undefined,
    async insert(m) {
      await insertRow.run(m.messageId, m.conversationId, m.seq, m.author, m.sentAt, m.replyTo, m.about, m.body, m.sealedHeader, m.sealedCiphertext);
    },
    async idempotency(author, key) {
      const r = await selectKey.get(author, key);
      return r === undefined ? undefined : { conversationId: r.conversation_id, messageId: r.message_id, requestHash: r.request_hash };
    },
    async recordIdempotency(author, key, row, now) {
      await insertKey.run(author, key, row.conversationId, row.messageId, row.requestHash, now);
    },
  };
}
