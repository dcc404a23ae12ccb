import type { Migration } from './types.js';

/**
 * Direct messages (spec/1-concepts.md "Conversation and message", "States: Conversation",
 * Limits; 2-endpoints.md "Mailbox, messages, blocks"; protocol/sealed.md §3, §4, §9 for sealed
 * pairs).
 *
 * - `conversations`: a pair or a group (3 to 16 members, fixed at the start). `pair_key` is the
 *   two peer ids in ascending order, for pairs only: a pair is unique per two KEYS, and a sealed
 *   pair may stand beside the ordinary one (UNIQUE over key and `sealed`). `last_seq` is the seq
 *   of the newest message ever assigned: retention deletes messages and leaves gaps, never
 *   reissues a number. A sealed pair keeps its generation-1 `commitment`.
 * - `conversation_members`: each member's own state (`accepted requested declined left`), its
 *   read position, the seq at which it cleared the conversation (hidden from it until a later
 *   message), and in a sealed pair the lock the starter made for it.
 * - `messages`: body or sealed header and ciphertext, never both.
 * - `message_idempotency`: keys scoped to the sending KEY across all its conversations, with the
 *   hash of the request they first answered.
 * - `message_requests_sent`: when each message request left, for the per-day limit.
 * - `message_blocks`: KEY-level blocks (not the per-SPACE blocks of migration 002).
 * - `message_retention`: a KEY's retention in days; no row is the default (720).
 * - Times are Unix ms.
 */
export const migration: Migration = {
  id: 7,
  name: 'messages',
  sql: `
CREATE TABLE conversations (
  conversation_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('pair', 'group')),
  started_by TEXT NOT NULL REFERENCES keys (peer_id),
  pair_key TEXT,
  sealed INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1)),
  commitment TEXT,
  about TEXT,
  created_at INTEGER NOT NULL,
  last_seq INTEGER NOT NULL DEFAULT 0,
  last_message_at INTEGER NOT NULL,
  CHECK ((kind = 'pair') = (pair_key IS NOT NULL)),
  CHECK (sealed = 0 OR (kind = 'pair' AND commitment IS NOT NULL))
) STRICT;
CREATE UNIQUE INDEX conversations_pair ON conversations (pair_key, sealed) WHERE pair_key IS NOT NULL;

CREATE TABLE conversation_members (
  conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id),
  peer_id TEXT NOT NULL REFERENCES keys (peer_id),
  state TEXT NOT NULL CHECK (state IN ('accepted', 'requested', 'declined', 'left')),
  read_seq INTEGER NOT NULL DEFAULT 0,
  cleared_seq INTEGER NOT NULL DEFAULT 0,
  left_seq INTEGER,
  changed_at INTEGER NOT NULL,
  lock TEXT,
  lock_sender TEXT,
  PRIMARY KEY (conversation_id, peer_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX conversation_members_by_peer ON conversation_members (peer_id, state);

CREATE TABLE messages (
  message_id TEXT PRIMARY KEY,
  conversation_id TEXT NOT NULL REFERENCES conversations (conversation_id),
  seq INTEGER NOT NULL,
  author TEXT NOT NULL REFERENCES keys (peer_id),
  sent_at INTEGER NOT NULL,
  reply_to TEXT,
  about TEXT,
  body TEXT,
  sealed_header BLOB,
  sealed_ciphertext BLOB,
  UNIQUE (conversation_id, seq),
  CHECK ((body IS NULL) <> (sealed_ciphertext IS NULL)),
  CHECK ((sealed_header IS NULL) = (sealed_ciphertext IS NULL))
) STRICT;
CREATE INDEX messages_by_author_time ON messages (author, sent_at);
CREATE INDEX messages_by_time ON messages (sent_at);

CREATE TABLE message_idempotency (
  author TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (author, idempotency_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX message_idempotency_by_message ON message_idempotency (message_id);

CREATE TABLE message_requests_sent (
  sender TEXT NOT NULL,
  recipient TEXT NOT NULL,
  conversation_id TEXT NOT NULL,
  sent_at INTEGER NOT NULL
) STRICT;
CREATE INDEX message_requests_by_sender ON message_requests_sent (sender, sent_at);

CREATE TABLE message_blocks (
  blocker TEXT NOT NULL REFERENCES keys (peer_id),
  blocked TEXT NOT NULL REFERENCES keys (peer_id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (blocker, blocked)
) STRICT, WITHOUT ROWID;
CREATE INDEX message_blocks_by_blocked ON message_blocks (blocked, blocker);

CREATE TABLE message_retention (
  peer_id TEXT PRIMARY KEY REFERENCES keys (peer_id),
  days INTEGER NOT NULL CHECK (days BETWEEN 1 AND 720)
) STRICT;
`,
};
