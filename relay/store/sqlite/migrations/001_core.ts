import type { Migration } from './types.js';

/**
 * Service state, KEYS, tokens and spent challenge nonces.
 *
 * Peer ids and public keys are lowercase hex text; times are Unix milliseconds.
 * A token is stored only as SHA-256 of its whole text (protocol/labels.md "token").
 */
export const migration: Migration = {
  id: 1,
  name: 'core',
  sql: `
CREATE TABLE service_state (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE keys (
  peer_id TEXT PRIMARY KEY,
  key_type TEXT NOT NULL CHECK (key_type IN ('ed25519', 'passkey')),
  public_key TEXT NOT NULL,
  registered_at INTEGER NOT NULL,
  blocked_at INTEGER
) STRICT;

CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  token_hash BLOB NOT NULL UNIQUE,
  peer_id TEXT NOT NULL REFERENCES keys (peer_id),
  label TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;
CREATE INDEX tokens_by_peer ON tokens (peer_id, created_at);

CREATE TABLE spent_challenges (
  nonce BLOB PRIMARY KEY,
  expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX spent_challenges_by_expiry ON spent_challenges (expires_at);
`,
};
