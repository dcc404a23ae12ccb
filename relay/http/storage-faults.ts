/**
 * Failures of the machine under the relay, answered as what they mean to a client rather than
 * as a fault of the service (spec/3-errors.md):
 *
 * - the disk is full (SQLite's SQLITE_FULL, or ENOSPC / EDQUOT from a file the relay writes):
 *   BUSY, "service full", with Retry-After. SQLite rolled the transaction back, so nothing of the
 *   request was written and resending it later is safe;
 * - the database cannot be written (SQLITE_READONLY: opened read-only; SQLITE_IOERR_WRITE: the
 *   file refuses writes, as when it is made immutable; EROFS): SERVICE_READ_ONLY, since reads
 *   still work and the write may be resent later. A failed write leaves the transaction
 *   uncommitted. Other I/O errors (a failed fsync) stay INTERNAL: what they left is not known.
 *
 * - the database was closed under the request: the relay is stopping, and a request still
 *   running (one whose client already left, say) reached the store after it closed: BUSY, to
 *   be retried, with no line in the log, since nothing failed but the timing.
 *
 * The first two are written to stderr with the request id, so the operator sees why writes fail.
 */
import type { ErrorCode } from '../../shared/errors.js';

/** Seconds a client is told to wait before resending a write the disk refused. */
export const STORAGE_RETRY_AFTER_SECONDS = 60;

export interface StorageAnswer {
  status: number;
  code: ErrorCode;
  detail: string;
  retryAfter: number;
  /** The line for the operator's log; none where nothing went wrong. */
  log: string | undefined;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** The answer for a storage failure, or undefined when `error` is not one. */
export function storageAnswer(error: unknown): StorageAnswer | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'STORE_CLOSED' || (error instanceof TypeError && message === 'The database connection is not open')) {
    return { status: 503, code: 'BUSY', detail: 'the relay is stopping; resend in a moment', retryAfter: 1, log: undefined };
  }
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') {
    return {
      status: 503,
      code: 'BUSY',
      detail: 'storage: the service has no disk space left; nothing of this request was written',
      retryAfter: STORAGE_RETRY_AFTER_SECONDS,
      log: `the disk is full (${code}: ${message})`,
    };
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_IOERR_WRITE' || code === 'EROFS') {
    return {
      status: 503,
      code: 'SERVICE_READ_ONLY',
      detail: 'storage: the database cannot be written at the moment; reads work; nothing of this request was written',
      retryAfter: STORAGE_RETRY_AFTER_SECONDS,
      log: `the database cannot be written (${code}: ${message})`,
    };
  }
  return undefined;
}
