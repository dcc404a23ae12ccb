import type { Migration } from './types.js';

/**
 * SPACES, their category filings, members, per-SPACE blocks and the governance log
 * (spec/1-concepts.md "Space", "Member", "Audit log events"; protocol/objects.md §8).
 *
 * - A SPACE row is never deleted, so `name` UNIQUE keeps every name taken for good.
 * - `member_count` is kept in the same transaction as every admission and removal, so the
 *   10,000,000-member limit is checked without counting rows.
 * - The owner is never a member row (spec "Member").
 * - `space_events` is the control chain: one row per revision, gap-free from 1, with the event's
 *   canonical bytes, command id and links; never rewritten. Payload is read back from the bytes.
 * - `members.link_id` names the invite link a member came in by; the invites table arrives in a
 *   later migration, so there is no foreign key.
 */
export const migration: Migration = {
  id: 2,
  name: 'spaces',
  sql: `
CREATE TABLE spaces (
  id INTEGER PRIMARY KEY,
  space_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL REFERENCES keys (peer_id),
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  visibility TEXT NOT NULL CHECK (visibility IN ('private', 'public', 'sealed')),
  oracle INTEGER NOT NULL CHECK (oracle IN (0, 1)),
  join_policy TEXT NOT NULL CHECK (join_policy IN ('request', 'invite', 'open')),
  signed_only INTEGER NOT NULL CHECK (signed_only IN (0, 1)),
  status TEXT NOT NULL CHECK (status IN ('active', 'closed')),
  replaced_by TEXT,
  categories_json TEXT NOT NULL,
  service_reviewer INTEGER NOT NULL CHECK (service_reviewer IN (0, 1)),
  task_confirmations INTEGER NOT NULL,
  task_confirmers TEXT NOT NULL CHECK (task_confirmers IN ('members', 'coordinators')),
  task_claim_hours INTEGER NOT NULL,
  member_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX spaces_by_owner ON spaces (owner, name);

CREATE TABLE space_categories (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  category TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, category)
) STRICT, WITHOUT ROWID;
CREATE INDEX space_categories_by_category ON space_categories (category, space_row_id);

CREATE TABLE members (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  peer_id TEXT NOT NULL REFERENCES keys (peer_id),
  role TEXT NOT NULL CHECK (role IN ('admin', 'coordinator', 'writer', 'reader')),
  tags_json TEXT NOT NULL,
  brought_in_by TEXT NOT NULL,
  link_id TEXT,
  direct INTEGER NOT NULL CHECK (direct IN (0, 1)),
  admitted_at INTEGER NOT NULL,
  changed_at INTEGER NOT NULL,
  changed_by_governor_at INTEGER,
  PRIMARY KEY (space_row_id, peer_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX members_by_peer ON members (peer_id, direct);
CREATE INDEX members_by_role ON members (space_row_id, role, peer_id);
CREATE INDEX members_by_brought_in ON members (space_row_id, brought_in_by);
CREATE INDEX members_by_link ON members (link_id) WHERE link_id IS NOT NULL;

CREATE TABLE space_blocks (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  peer_id TEXT NOT NULL REFERENCES keys (peer_id),
  blocked_by TEXT NOT NULL,
  blocked_at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, peer_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE space_events (
  space_row_id INTEGER NOT NULL REFERENCES spaces (id),
  revision INTEGER NOT NULL CHECK (revision >= 1),
  event TEXT NOT NULL,
  actor TEXT NOT NULL,
  canonical BLOB NOT NULL,
  command_id BLOB NOT NULL,
  previous_hash BLOB NOT NULL,
  chain_hash BLOB NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (space_row_id, revision)
) STRICT, WITHOUT ROWID;
`,
};
