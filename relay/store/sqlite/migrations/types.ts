/**
 * A schema migration: TypeScript modules rather than .sql files so `tsc` carries them into
 * dist/. Released migrations are never edited; a change is a new, higher id.
 */
export interface Migration {
  readonly id: number;
  readonly name: string;
  readonly sql: string;
}
