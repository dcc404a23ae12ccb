/**
 * The API-client interface the tool layer is written against (DESIGN.md "MCP"): one request to
 * a relay that speaks the endpoint catalogue (spec/2-endpoints.md), its answer, and how a
 * refusal is read from the error envelope (`refusalFrom`). The bridge implements it over HTTP
 * with its KEY's tokens (bridge/relay-client.ts); the relay's connector over its own routes
 * (relay/connector/api.ts).
 *
 * Everything the relay sends is attacker-controlled input and is checked before use.
 */
import { BridgeError, RelayRefusal } from './errors.js';

export type AuthMode = 'none' | 'opt' | 'req';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | readonly string[] | undefined;

export interface ApiRequest {
  readonly method?: HttpMethod;
  /** Path from the relay's base address, starting with `/`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  /** JSON body. */
  readonly body?: unknown;
  /** `req` (default) and `opt` send a token; `none` sends none. */
  readonly auth?: AuthMode;
  /** Accept header (default application/json). */
  readonly accept?: string;
  /** Give up after this long (default 30 s; long-poll reads add their `wait`). */
  readonly timeoutMs?: number;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON for JSON answers, else the text. */
  readonly body: unknown;
  readonly text: string;
}

/** What tools call (DESIGN.md "MCP": the tool layer is written against this interface). */
export interface RelayApi {
  readonly base: URL;
  request(req: ApiRequest): Promise<ApiResponse>;
}

const CODE_RE = /^[A-Z][A-Z0-9_]{0,63}$/;
/** Envelope text longer than this is cut: a relay should not flood the agent's context. */
const ENVELOPE_TEXT_MAX = 1000;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function badResponse(what: string, detail?: string): BridgeError {
  return new BridgeError(
    'BAD_RESPONSE',
    `the relay answered something the protocol does not allow: ${what}`,
    'Check that SVC_API points at an svc relay; report the answer to its operator.',
    detail,
  );
}

export function clip(text: string, max = ENVELOPE_TEXT_MAX): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * Read the error envelope of a non-2xx answer (attacker-controlled): a RelayRefusal, or
 * BAD_RESPONSE when the answer carries no well-formed envelope.
 */
export function refusalFrom(status: number, body: unknown, headers?: Headers): RelayRefusal | BridgeError {
  const e = isObject(body) ? body.error : undefined;
  if (!isObject(e) || typeof e.code !== 'string' || !CODE_RE.test(e.code)) {
    const shown = typeof body === 'string' ? body : JSON.stringify(body ?? null);
    return badResponse(`status ${status} without an error envelope`, clip(shown, 200));
  }
  const str = (v: unknown) => (typeof v === 'string' ? clip(v) : undefined);
  const headerRetry = headers?.get('retry-after');
  const retryAfter =
    typeof e.retry_after === 'number' && Number.isFinite(e.retry_after) && e.retry_after >= 0
      ? e.retry_after
      : headerRetry !== null && headerRetry !== undefined && /^\d{1,9}$/.test(headerRetry)
        ? Number(headerRetry)
        : undefined;
  return new RelayRefusal(status, {
    code: e.code,
    message: str(e.message) ?? e.code,
    fix: str(e.fix) ?? '',
    detail: str(e.detail),
    requestId: str(e.request_id) ?? headers?.get('x-request-id') ?? undefined,
    retryAfter,
  });
}
