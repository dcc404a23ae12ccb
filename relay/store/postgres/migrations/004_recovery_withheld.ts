import type { Migration } from './types.js';

/**
 * The withheld forms of recovery notices, as relay/store/sqlite/migrations/017_recovery_withheld.ts
 * made them on SQLite (its comment says what the table holds): the same table and columns,
 * PostgreSQL types.
 */
export const migration: Migration = {
  id: 4,
  name: 'recovery_withheld',
  sql: `
CREATE TABLE recovery_withheld (
  notice_row_id BIGINT PRIMARY KEY REFERENCES recovery_notices (id),
  recovery_id BYTEA NOT NULL UNIQUE,
  canonical BYTEA NOT NULL,
  signature BYTEA NOT NULL,
  signer_row BIGINT NOT NULL REFERENCES checkpoint_signers (id),
  created_at BIGINT NOT NULL
);
`,
};
