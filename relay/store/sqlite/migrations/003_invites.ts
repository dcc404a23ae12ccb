import type { Migration } from './types.js';

/**
 * Invite links, join requests, hand-over offers and mailbox rows
 * (spec/1-concepts.md "Invite link", "Join request", "Hand-over", "Mailbox").
 *
 * - A link's code (`svc_inv_` / `svc_hand_` + 32 hex) is never stored: only SHA-256 of its
 *   whole text (protocol/labels.md "invite code", "hand-over code").
 * - `space_row_id` is the SPACES row id; it carries no foreign key so this migration does not
 *   depend on the column names of 002 (SPACES are never deleted, names are never released).
 * - Times are Unix ms; "expired" and "exhausted" are computed from `expires_at` / `uses`,
 *   never stored, so a clock move needs no sweep.
 * - `mailbox_seq` is gap-free per KEY from 1: the next one is MAX + 1 read inside the writing
 *   transaction (DESIGN.md "Storage").
 */
export const migration: Migration = {
  id: 3,
  name: 'invites',
  sql: `
CREATE TABLE invites (
  id TEXT PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  code_hash BLOB NOT NULL UNIQUE,
  maker TEXT NOT NULL REFERENCES keys (peer_id),
  role TEXT NOT NULL CHECK (role IN ('coordinator', 'writer', 'reader')),
  tags_json TEXT NOT NULL,
  label TEXT,
  max_uses INTEGER CHECK (max_uses IS NULL OR max_uses >= 1),
  uses INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  revoked_at INTEGER,
  revoked_by TEXT
) STRICT;
CREATE INDEX invites_by_space_maker ON invites (space_row_id, maker, created_at);
CREATE INDEX invites_by_maker_time ON invites (maker, created_at);

CREATE TABLE invite_uses (
  invite_id TEXT NOT NULL REFERENCES invites (id),
  peer TEXT NOT NULL REFERENCES keys (peer_id),
  used_at INTEGER NOT NULL,
  PRIMARY KEY (invite_id, peer)
) STRICT, WITHOUT ROWID;

CREATE TABLE join_requests (
  id TEXT PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  requester TEXT NOT NULL REFERENCES keys (peer_id),
  message TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'declined', 'withdrawn', 'expired')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decided_at INTEGER,
  decided_by TEXT,
  role TEXT,
  tags_json TEXT
) STRICT;
CREATE INDEX join_requests_by_space ON join_requests (space_row_id, state, created_at);
CREATE INDEX join_requests_by_requester ON join_requests (requester, created_at);
CREATE INDEX join_requests_by_space_time ON join_requests (space_row_id, created_at);
CREATE UNIQUE INDEX join_requests_one_pending ON join_requests (space_row_id, requester) WHERE state = 'pending';

CREATE TABLE hand_overs (
  id TEXT PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  giver TEXT NOT NULL REFERENCES keys (peer_id),
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'coordinator', 'writer', 'reader')),
  to_peer TEXT REFERENCES keys (peer_id),
  code_hash BLOB UNIQUE,
  label TEXT,
  state TEXT NOT NULL CHECK (state IN ('waiting', 'accepted', 'declined', 'revoked')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  ended_at INTEGER,
  taker TEXT,
  CHECK ((to_peer IS NULL) <> (code_hash IS NULL))
) STRICT;
CREATE INDEX hand_overs_by_giver ON hand_overs (space_row_id, giver, state);
CREATE INDEX hand_overs_by_maker_time ON hand_overs (giver, created_at);

CREATE TABLE mailbox (
  peer TEXT NOT NULL REFERENCES keys (peer_id),
  mailbox_seq INTEGER NOT NULL,
  reason TEXT NOT NULL,
  post_id TEXT,
  request_id TEXT,
  offer_id TEXT,
  message_id TEXT,
  delivered_at INTEGER NOT NULL,
  PRIMARY KEY (peer, mailbox_seq),
  CHECK ((post_id IS NOT NULL) + (request_id IS NOT NULL) + (offer_id IS NOT NULL) + (message_id IS NOT NULL) = 1)
) STRICT, WITHOUT ROWID;
CREATE INDEX mailbox_by_request ON mailbox (request_id) WHERE request_id IS NOT NULL;
CREATE INDEX mailbox_by_offer ON mailbox (offer_id) WHERE offer_id IS NOT NULL;
`,
};
