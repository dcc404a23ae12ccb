import type { Migration } from './types.js';

/**
 * Recovery notices (spec/2-endpoints.md recovery.list; shared/recovery.ts): one row per SPACE a
 * restore closed because its chain was cut, with the exact signed bytes (every served member
 * is read back from them), the notice id and signature, and the signer rendering in use
 * (`checkpoint_signers`, shared with checkpoints). Rows are never changed or deleted; the row
 * id orders the list. `space_row_id` is the closed SPACE, without a foreign key like 003-005.
 */
export const migration: Migration = {
  id: 14,
  name: 'recovery',
  sql: `
CREATE TABLE recovery_notices (
  id INTEGER PRIMARY KEY,
  recovery_id BLOB NOT NULL UNIQUE,
  space_row_id INTEGER NOT NULL,
  canonical BLOB NOT NULL,
  signature BLOB NOT NULL,
  signer_row INTEGER NOT NULL REFERENCES checkpoint_signers (id),
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX recovery_notices_by_space ON recovery_notices (space_row_id, id);
`,
};
