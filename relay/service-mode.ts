/**
 * What the serving relay reads from the database on every write and every signature: the
 * service epoch (spec/1-concepts.md "Versioning" 6) and whether a restore is running
 * (SERVICE_READ_ONLY: reads work, writes wait).
 *
 * A restore (relay/backup/restore.ts) runs in another process on the same database: it places
 * the restored file with the read-only flag set, works, then in its last transaction writes the
 * new epoch and clears the flag. SQLite's `data_version` changes when another connection
 * commits, so the values are read again only then: a write pays at most one pragma, not a query.
 */
import type { ServiceStateStore } from './store/service-state.js';

/** The service_state key the restore sets while it runs; its value says which restore. */
export const READ_ONLY_KEY = 'read_only';
export const EPOCH_KEY = 'service_epoch';
/** What a write refused while a restore runs is told to wait (Retry-After): a restore's last steps take seconds. */
export const READ_ONLY_RETRY_SECONDS = 30;
/** Where the restored relay keeps appending its checkpoint log (absolute path). */
export const CHECKPOINT_LOG_KEY = 'checkpoint_log';

export interface ServiceMode {
  /** The current service epoch (uuid); made on first start. */
  epoch(): Promise<string>;
  /** Why writes are refused (a restore is running), or undefined when they are taken. */
  readOnly(): Promise<string | undefined>;
}

export function createServiceMode(state: ServiceStateStore, newEpoch: () => string): ServiceMode {
  let seen = Number.NaN;
  let epoch = '';
  let readOnly: string | undefined;
  const refresh = async (version: number): Promise<void> => {
    // Read before remembering the version: a commit in between only means one more read.
    epoch = await state.get(EPOCH_KEY) ?? await state.getOrCreate(EPOCH_KEY, newEpoch);
    readOnly = await state.get(READ_ONLY_KEY);
    seen = version;
  };
  // Nearly every call finds the version unchanged and reads nothing.
  const current = async (): Promise<void> => {
    const version = state.dataVersion();
    if (version !== seen) await refresh(version);
  };
  return {
    async epoch() {
      await current();
      return epoch;
    },
    async readOnly() {
      await current();
      return readOnly;
    },
  };
}
