import type { Migration } from './types.js';

/**
 * Posts: one row per position of a SPACE's post chain (spec/1-concepts.md "Post", "Chains,
 * checkpoints and proofs"; protocol/objects.md §2-§10).
 *
 * - `(space_row_id, seq)` is the position: `seq` from 1, gap-free, assigned inside the writing
 *   transaction as head + 1 (DESIGN.md "Storage"). `id` (rowid) is storage order only.
 * - `space_row_id` is the SPACES row id without a foreign key, like migration 003, so this
 *   table does not depend on the column names of 002 (SPACES are never deleted).
 * - Hashes are BLOBs of 32 bytes: `object_id`, `admission`, `previous_hash` (the genesis for
 *   seq 1, else the link before), `chain_hash`, `admitted_control_hash` (the control link of
 *   `admitted_revision`, or the control genesis at revision 0).
 * - `canonical` holds the object's exact bytes; `private` the private part's bytes (objects.md
 *   §3); `signature` the Ed25519 signature, NULL for an unsigned (origin-attested) post.
 * - The content columns (`kind`, `title`, `body`, `to_json`, `fingerprints_json`, ...) repeat
 *   what the object and the private part hold, for reads and filters; `body` NULL is absent.
 * - `input_digest`: SHA-256 of the canonical normalised input of an unsigned post (idempotency
 *   key left out), compared on a replay; NULL for a signed post, whose replay compares
 *   `object_id`.
 * - The receipt is stored as issued (its signature, signer key id and epoch), so a replay
 *   answers the first receipt even after the online key changed.
 * - `no_role` 1 when the author held no role in the SPACE (open or oracle posting); the two
 *   partial indexes count roleless posts per KEY and per SPACE for the daily limits.
 * - `hidden_at`/`hidden_by`: hidden by the owner or an admin; the position and link stay.
 * - Times are Unix ms; `posted_at` is rendered as ISO with milliseconds and `Z`.
 */
export const migration: Migration = {
  id: 4,
  name: 'posts',
  sql: `
CREATE TABLE posts (
  id INTEGER PRIMARY KEY,
  space_row_id INTEGER NOT NULL,
  seq INTEGER NOT NULL CHECK (seq >= 1),
  post_id TEXT NOT NULL UNIQUE,
  author TEXT NOT NULL REFERENCES keys (peer_id),
  kind TEXT NOT NULL,
  title TEXT,
  body TEXT,
  to_json TEXT,
  reply_to TEXT,
  supersedes TEXT,
  retracts TEXT,
  fingerprints_json TEXT,
  data_json TEXT,
  budget_json TEXT,
  run_id TEXT,
  idempotency_key TEXT,
  input_digest BLOB,
  canonical BLOB NOT NULL,
  private BLOB,
  signature BLOB,
  signed INTEGER NOT NULL CHECK (signed IN (0, 1)),
  sealed INTEGER NOT NULL DEFAULT 0 CHECK (sealed IN (0, 1)),
  object_id BLOB NOT NULL,
  admitted_revision INTEGER NOT NULL CHECK (admitted_revision >= 0),
  admitted_control_hash BLOB NOT NULL,
  admission BLOB NOT NULL,
  previous_hash BLOB NOT NULL,
  chain_hash BLOB NOT NULL,
  posted_at INTEGER NOT NULL,
  no_role INTEGER NOT NULL DEFAULT 0 CHECK (no_role IN (0, 1)),
  receipt_signature BLOB NOT NULL,
  receipt_signer_key_id TEXT NOT NULL,
  receipt_service_epoch TEXT,
  hidden_at INTEGER,
  hidden_by TEXT,
  CHECK ((signed = 1) = (signature IS NOT NULL)),
  CHECK (supersedes IS NULL OR retracts IS NULL),
  UNIQUE (space_row_id, seq)
) STRICT;
CREATE UNIQUE INDEX posts_by_idempotency_key ON posts (space_row_id, author, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX posts_by_reply_to ON posts (reply_to) WHERE reply_to IS NOT NULL;
CREATE INDEX posts_by_supersedes ON posts (supersedes) WHERE supersedes IS NOT NULL;
CREATE INDEX posts_by_retracts ON posts (retracts) WHERE retracts IS NOT NULL;
CREATE INDEX posts_roleless_by_author ON posts (author, posted_at) WHERE no_role = 1;
CREATE INDEX posts_roleless_by_space ON posts (space_row_id, posted_at) WHERE no_role = 1;
`,
};
