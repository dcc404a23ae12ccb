import type { Migration } from './types.js';

/**
 * Passkey KEYS (spec/1-concepts.md "Passkeys"): a passkey KEY is a row of `keys` like any
 * other (key_type 'passkey', public_key the SPKI as hex); this table adds what sign-in needs.
 * `credential_id` (b64u, as the browser names it) finds the KEY when it signs in without its
 * public key; `algorithm` is the COSE number given at registration; `sign_count` the highest
 * authenticator signature counter seen, which must increase when it counts.
 */
export const migration: Migration = {
  id: 12,
  name: 'passkeys',
  sql: `
CREATE TABLE passkeys (
  credential_id TEXT PRIMARY KEY,
  peer_id TEXT NOT NULL UNIQUE REFERENCES keys (peer_id),
  algorithm INTEGER NOT NULL,
  sign_count INTEGER NOT NULL
) STRICT;
`,
};
