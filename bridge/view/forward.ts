/**
 * The people's view reads through the bridge (`svc-bridge view`): a `GET /v1/...` of the page is
 * sent on to the relay as this KEY, with the bridge's own token (bridge/relay-client.ts mints and
 * renews it; the page never holds it), and the answer comes back as the relay gave it, except that
 * the sealed items in it are opened here (bridge/view/sealed-answers.ts). Reads only: the server
 * (bridge/view/server.ts) sends nothing else this way, and a read carries only the page's path and
 * query, never anything opened here.
 *
 * A refusal of the relay comes back with its status and error envelope; a failure of the bridge
 * itself (the relay unreachable, an answer the protocol does not allow, another relay at the
 * address) as 502 with the bridge's code in the same envelope shape.
 */
import { randomUUID } from 'node:crypto';
import { WAIT_SECONDS_MAX } from '../../shared/limits.js';
import type { RelayApi } from '../../tools/api.js';
import { BridgeError, RelayRefusal } from '../../tools/errors.js';
import { addLocalHits, type LocalSearch } from './local-hits.js';
import { openAnswer, type Openers } from './sealed-answers.js';

export interface Forwarded {
  readonly status: number;
  /** The Content-Type of `body`. */
  readonly type: string;
  readonly body: string;
  /** Headers of the relay's answer to pass on (Retry-After). */
  readonly headers: Readonly<Record<string, string>>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function envelope(status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): Forwarded {
  return { status, type: JSON_TYPE, body: JSON.stringify({ error }), headers };
}

/** The query of the page's request as the relay client takes it: a name given twice stays a list. */
function queryOf(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(search.keys())) {
    const all = search.getAll(name);
    out[name] = all.length === 1 ? all[0]! : all;
  }
  return out;
}

/** A long poll (`wait`) holds the answer for up to its seconds: give the relay that much more time. */
function timeoutFor(search: URLSearchParams): number {
  const wait = Number(search.get('wait') ?? '0');
  return 30_000 + (Number.isFinite(wait) && wait > 0 ? Math.min(wait, WAIT_SECONDS_MAX) : 0) * 1000;
}

/**
 * One read of the page: `path` starts with /v1/ and holds no dot segment (the server checked).
 * A SEEK also searches `local`, the index of the sealed SPACES this bridge opened, when there is one.
 */
export async function forwardRead(api: RelayApi, openers: Openers, path: string, search: URLSearchParams, local?: LocalSearch): Promise<Forwarded> {
  try {
    const res = await api.request({ path, query: queryOf(search), accept: 'application/json', timeoutMs: timeoutFor(search) });
    const type = res.headers.get('content-type') ?? JSON_TYPE;
    if (typeof res.body !== 'object' || res.body === null) return { status: res.status, type, body: res.text, headers: {} };
    const found = path === '/v1/seek' && local !== undefined && (await addLocalHits(res.body, search, local));
    // An answer without sealed items goes on byte for byte; one with them gets `opened` members.
    if (!(await openAnswer(res.body, openers)) && !found) return { status: res.status, type, body: res.text, headers: {} };
    return { status: res.status, type: JSON_TYPE, body: JSON.stringify(res.body), headers: {} };
  } catch (e) {
    if (e instanceof RelayRefusal) {
      const error: Record<string, unknown> = { code: e.code, message: e.message, fix: e.fix, request_id: e.requestId ?? randomUUID() };
      if (e.detail !== undefined) error.detail = e.detail;
      if (e.retryAfter !== undefined) error.retry_after = e.retryAfter;
      return envelope(e.status, error, e.retryAfter !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(e.retryAfter))) } : {});
    }
    if (e instanceof BridgeError) {
      const error: Record<string, unknown> = { code: e.code, message: e.message, fix: e.fix, request_id: randomUUID() };
      if (e.detail !== undefined) error.detail = e.detail;
      return envelope(502, error);
    }
    throw e;
  }
}
