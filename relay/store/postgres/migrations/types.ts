/**
 * A PostgreSQL schema migration, the same shape as the SQLite store's (TypeScript modules
 * rather than .sql files so `tsc` carries them into dist/). Released migrations are never
 * edited; a change is a new, higher id. `sql` may hold several statements: it runs as one
 * simple-protocol batch inside the migration's own transaction.
 */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}
