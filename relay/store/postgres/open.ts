/**
 * Opening the PostgreSQL store: a pool on the database the URL names, every migration not yet
 * applied (./migrate.ts, under a session advisory lock so relay processes starting together
 * migrate once), then the PostgresDb the stores are built on. Only relay/store/ imports the
 * driver.
 *
 * Text compares bytewise on both stores because every text column of the schema is declared
 * COLLATE "C", so any database works whatever its default collation (managed offerings rarely
 * let one choose). Its encoding must be UTF8: any other would refuse or alter the text the
 * relay stores, so such a database is refused at open with what to do.
 */
import { PostgresDb, type PostgresOptions } from './connection.js';
import { migrate } from './migrate.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export interface OpenPostgresOptions extends PostgresOptions {
  /** The migrations to apply (default: every one in ./migrations/). */
  migrations?: readonly Migration[];
}

/** True for a `postgres://` or `postgresql://` URL (what `--database` takes for this store). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

export async function openPostgres(url: string, options: OpenPostgresOptions = {}): Promise<PostgresDb> {
  const db = new PostgresDb(url, options);
  try {
    const client = await db.pool.connect();
    try {
      const encoding = (await client.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]?.server_encoding;
      if (encoding !== 'UTF8') {
        throw new Error(`database ${db.name} is encoded ${encoding}; the relay needs UTF8: create it with CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0`);
      }
      await migrate(client, options.migrations ?? MIGRATIONS);
    } finally {
      client.release();
    }
  } catch (e) {
    await db.close().catch(() => undefined);
    throw e;
  }
  return db;
}
