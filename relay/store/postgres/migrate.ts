/**
 * Applying the PostgreSQL migrations (relay/store/postgres/migrations/): every migration not
 * yet recorded in `schema_migrations`, in id order, each in its own transaction with its
 * record, as relay/store/sqlite/open.ts does for SQLite.
 *
 * Several relay processes may start at once against one database; a session-level advisory
 * lock held for the whole run makes them migrate one after another, so the second finds every
 * migration recorded and applies nothing (DDL inside a transaction is itself transactional on
 * PostgreSQL: a migration that fails leaves no half of itself behind).
 */
import type pg from 'pg';
import { MIGRATE_LOCK } from './locks.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** Apply, in id order, every migration whose id is not yet in `schema_migrations`; answers the ids applied. */
export async function migrate(client: pg.ClientBase, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const ids = migrations.map((m) => m.id);
  for (let i = 1; i < ids.length; i++) {
    if (ids[i]! <= ids[i - 1]!) throw new Error(`migrations out of order at id ${ids[i]}`);
  }
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK.toString()]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id BIGINT PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at BIGINT NOT NULL
    )`);
    const done = new Set((await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => Number(r.id)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [m.id, m.name, Date.now()]);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK');
        throw e;
      }
      applied.push(m.id);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK.toString()]);
  }
}
