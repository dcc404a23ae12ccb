import type { Migration } from './types.js';

/**
 * The withheld form of a recovery notice (shared/recovery.ts; spec/2-endpoints.md recovery.list):
 * the notice with the chains an outsider of its SPACE may not read withheld, signed beside the
 * whole notice, and served instead of it to whoever may not read them. At most one per notice
 * (`notice_row_id`), none when an outsider may read every chain the notice names. The exact
 * signed bytes, the id and signature, and the signer rendering in use, as for the notice; rows
 * are never changed or deleted.
 */
export const migration: Migration = {
  id: 17,
  name: 'recovery_withheld',
  sql: `
CREATE TABLE recovery_withheld (
  notice_row_id INTEGER PRIMARY KEY REFERENCES recovery_notices (id),
  recovery_id BLOB NOT NULL UNIQUE,
  canonical BLOB NOT NULL,
  signature BLOB NOT NULL,
  signer_row INTEGER NOT NULL REFERENCES checkpoint_signers (id),
  created_at INTEGER NOT NULL
) STRICT;
`,
};
