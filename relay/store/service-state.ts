/**
 * Service-wide values kept in the database: the service epoch (spec/1-concepts.md
 * "Versioning" 6) and when the service first started.
 */
import type { Db } from './db.js';

export interface ServiceStateStore {
  /** Read a value, or undefined. */
  get(key: string): string | undefined;
  /** Return the stored value, storing `make()` first when there is none (one transaction). */
  getOrCreate(key: string, make: () => string): string;
}

export function createServiceStateStore(db: Db): ServiceStateStore {
  const select = db.prepare<[string], { value: string }>('SELECT value FROM service_state WHERE key = ?');
  const insert = db.prepare('INSERT INTO service_state (key, value) VALUES (?, ?)');
  const getOrCreateTx = db.transaction((key: string, make: () => string): string => {
    const row = select.get(key);
    if (row) return row.value;
    const value = make();
    insert.run(key, value);
    return value;
  });
  return {
    get: (key) => select.get(key)?.value,
    getOrCreate: (key, make) => getOrCreateTx.immediate(key, make),
  };
}
