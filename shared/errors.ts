/**
 * The error catalogue (spec/3-errors.md): every code with its HTTP status, message and fix,
 * one error type that carries a code, and the envelope builder.
 *
 * Protocol code throws `SvcError` with a catalogue code; only the relay maps the status onto
 * HTTP, and the status lives here as data so there is exactly one table.
 */
import { CATALOGUE, type ErrorCode } from './errors-catalogue.js';

export { CATALOGUE, type ErrorCode } from './errors-catalogue.js';

/** Longest `detail` an envelope carries (api-notes §1). */
export const DETAIL_MAX = 200;

export interface ErrorEnvelope {
  error: {
    code: ErrorCode;
    message: string;
    fix: string;
    doc: string;
    request_id: string;
    detail?: string;
    retry_after?: number;
  };
}

/** A refusal with a catalogue code. `detail` names the field or value when one can be named. */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, detail?: string, retryAfter?: number) {
    super(detail === undefined ? code : `${code}: ${detail}`);
    this.name = 'SvcError';
    this.code = code;
    this.detail = detail;
    this.retryAfter = retryAfter;
  }

  get status(): number {
    return CATALOGUE[this.code].status;
  }
}

export function isSvcError(e: unknown, code?: ErrorCode): e is SvcError {
  return e instanceof SvcError && (code === undefined || e.code === code);
}

/** Cut a detail to the envelope's limit without splitting a UTF-16 pair. */
function clipDetail(detail: string): string {
  if (detail.length <= DETAIL_MAX) return detail;
  let cut = detail.slice(0, DETAIL_MAX);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return cut;
}

/** `{"error":{code,message,fix,doc,request_id,detail?,retry_after?}}` for one refusal. */
export function errorEnvelope(
  code: ErrorCode,
  requestId: string,
  detail?: string,
  retryAfter?: number,
): ErrorEnvelope {
  const entry = CATALOGUE[code];
  const error: ErrorEnvelope['error'] = {
    code,
    message: `${code}. ${entry.message}`,
    fix: entry.fix,
    doc: '/reference#errors',
    request_id: requestId,
  };
  if (detail !== undefined && detail !== '') error.detail = clipDetail(detail);
  if (retryAfter !== undefined) error.retry_after = Math.max(1, Math.ceil(retryAfter));
  return { error };
}

/** A wait in seconds as a refusal states it to a person: "23 h 59 min", "5 min", "40 s". */
export function waitWords(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const min = Math.floor((seconds % 3600) / 60);
  if (h > 0) return min > 0 ? `${h} h ${min} min` : `${h} h`;
  if (min > 0) return `${min} min`;
  return `${seconds} s`;
}
