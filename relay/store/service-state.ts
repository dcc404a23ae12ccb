/**
 * Service-wide values kept in the database: the service epoch (spec/1-concepts.md
 * "Versioning" 6), when the service first started, and what a restore leaves for the serving
 * relay (the read-only flag while it runs, where the checkpoint log lives).
 */
import type { Db } from './database.js';

export interface ServiceStateStore {
  /** Read a value, or undefined. */
  get(key: string): Promise<string | undefined>;
  /** Return the stored value, storing `make()` first when there is none (one transaction). */
  getOrCreate(key: string, make: () => string): Promise<string>;
  /** Store a value (inside the caller's transaction when there is one). */
  set(key: string, value: string): Promise<void>;
  /** Remove a value (inside the caller's transaction when there is one). */
  remove(key: string): Promise<void>;
  /**
   * A number that changes when another connection (a restore in another process) commits, so
   * a cached value needs reading again only then (Db.externalVersion). PostgreSQL has no such
   * counter: a value that moves every second, so what is read through it (the service epoch,
   * the read-only flag) is at most a second old.
   */
  dataVersion(): number;
}

export function createServiceStateStore(db: Db): ServiceStateStore {
  const select = db.prepare<[string], { value: string }>('SELECT value FROM service_state WHERE key = ?');
  const insert = db.prepare('INSERT INTO service_state (key, value) VALUES (?, ?)');
  const upsert = db.prepare('INSERT INTO service_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const remove = db.prepare('DELETE FROM service_state WHERE key = ?');
  const getOrCreateTx = db.transaction(async (key: string, make: () => string): Promise<string> => {
    const row = await select.get(key);
    if (row) return row.value;
    const value = make();
    await insert.run(key, value);
    return value;
  });
  return {
    get: async (key) => (await select.get(key))?.value,
    getOrCreate: async (key, make) => await getOrCreateTx.immediate(key, make),
    set: async (key, value) => void (await upsert.run(key, value)),
    remove: async (key) => void (await remove.run(key)),
    dataVersion: () => db.externalVersion() ?? Math.floor(Date.now() / 1000),
  };
}
