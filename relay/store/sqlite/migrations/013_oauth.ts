import type { Migration } from './types.js';

/**
 * OAuth app sign-in (spec/1-concepts.md "App sign-in"; spec/2-endpoints.md "App sign-in (OAuth)").
 *
 * - `tokens` gains `client_id` and `scope` ('read' or 'write'; write implies read): a row with a
 *   client_id is an app token, issued at /oauth/token and accepted only through the connector.
 * - `oauth_clients`: apps registered at /oauth/register (`kind` 'registered', secret stored as
 *   its SHA-256 only) and client ID metadata documents fetched and kept (`kind` 'document',
 *   `fresh_until` when the copy must be fetched again). `metadata` is the client's JSON as the
 *   relay answers it (names, redirect URIs, grant and response types, application type).
 * - `oauth_requests`: one authorization request from /oauth/authorize, answerable until
 *   `expires_at` (ten minutes), deleted a day after it was made. Approval stores the code's
 *   SHA-256 (valid once, five minutes); redeeming it records `code_used_at` and the token made,
 *   so a second use can revoke that token.
 */
export const migration: Migration = {
  id: 13,
  name: 'oauth',
  sql: `
ALTER TABLE tokens ADD COLUMN client_id TEXT;
ALTER TABLE tokens ADD COLUMN scope TEXT CHECK (scope IS NULL OR scope IN ('read', 'write'));

CREATE TABLE oauth_clients (
  client_id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('registered', 'document')),
  secret_hash BLOB,
  auth_method TEXT NOT NULL CHECK (auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
  client_name TEXT,
  metadata TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  fresh_until INTEGER
) STRICT;

CREATE TABLE oauth_requests (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
  state TEXT,
  code_challenge TEXT NOT NULL,
  resource TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  decision TEXT CHECK (decision IS NULL OR decision IN ('approved', 'declined')),
  decided_at INTEGER,
  peer_id TEXT,
  code_hash BLOB UNIQUE,
  code_expires_at INTEGER,
  code_used_at INTEGER,
  token_id TEXT
) STRICT;
CREATE INDEX oauth_requests_by_creation ON oauth_requests (created_at);
`,
};
