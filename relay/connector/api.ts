/**
 * The relay's own `RelayApi` for the tool layer (tools/api.ts interface; DESIGN.md "MCP"):
 * each tool calls the same route an HTTP client would, in process, so every check, limit and
 * refusal of that route applies unchanged. A route under `/v1/` is called with no HTTP request
 * of its own (in-process.ts `callRoute`: the app's admission, validation and the route's
 * handler); any other through `app.inject`. Either way a JSON answer (or error envelope) comes back
 * as the value the route made, never serialised and parsed again. The request carries the
 * caller's Authorization header as sent and the caller's address (rate limits by address stay the
 * caller's); at `/mcp/connect` it also carries CONNECTOR_HEADER with the relay's secret, the only
 * way a route accepts an app token (relay/http/auth.ts). `RelayDeps.connectorDirect: false` sends
 * every call through `app.inject` (tests compare the two ways).
 *
 * A non-2xx answer becomes the same RelayRefusal the bridge's HTTP client makes of it
 * (`refusalFrom`), so tools render refusals identically in both programs. INSUFFICIENT_SCOPE is
 * also noted on the caller: `/mcp/connect` answers that request with HTTP 403.
 *
 * The public capabilities document is read through `publicReads` (public-reads.ts), shared by
 * every caller for a moment.
 */
import type { FastifyInstance } from 'fastify';
import { refusalFrom, type ApiRequest, type ApiResponse, type RelayApi } from '../../tools/api.js';
import { isRelayRefusal } from '../../tools/errors.js';
import { CONNECTOR_HEADER } from '../http/auth.js';
import type { RelayContext } from '../context.js';
import type { Caller } from './caller.js';
import type { PublicReads } from './public-reads.js';
import { IN_PROCESS_HEADER, callRoute, isJsonMediaType, openSlot } from './in-process.js';

/** The request's query as encoded text, without "?". */
function queryText(req: ApiRequest): string {
  if (!req.path.startsWith('/') || req.path.startsWith('//')) throw new TypeError(`path must start with one "/": ${req.path}`);
  const query = req.query;
  if (query === undefined) return '';
  let params: URLSearchParams | undefined;
  for (const name of Object.keys(query)) {
    const value = query[name];
    if (value === undefined) continue;
    params ??= new URLSearchParams();
    if (Array.isArray(value)) for (const v of value) params.append(name, v);
    else params.set(name, String(value));
  }
  return params === undefined ? '' : params.toString();
}

function headersOf(raw: Record<string, string | string[] | number | undefined>): Headers {
  const h = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) h.append(name, v);
    else h.set(name, String(value));
  }
  return h;
}

/**
 * The relay's base URL as a URL, parsed once per text: every tool call builds its caller's API,
 * and every request passes the origin check (origin.ts); both only read it (its origin and host).
 */
let baseText: string | undefined;
let baseUrl: URL | undefined;
export function baseOf(ctx: RelayContext): URL {
  const text = ctx.baseUrl();
  if (text !== baseText || baseUrl === undefined) {
    baseUrl = new URL(text);
    baseText = text;
  }
  return baseUrl;
}

export function connectorApi(app: FastifyInstance, ctx: RelayContext, caller: Caller, publicReads?: PublicReads): RelayApi {
  const direct = ctx.connectorDirect !== false;
  const api: RelayApi = {
    base: baseOf(ctx),
    async request(req: ApiRequest): Promise<ApiResponse> {
      const headers: Record<string, string> = { accept: req.accept ?? 'application/json' };
      if ((req.auth ?? 'req') !== 'none' && caller.authorization !== undefined) headers.authorization = caller.authorization;
      if (caller.connect) headers[CONNECTOR_HEADER] = ctx.connectorSecret;
      if (req.body !== undefined) headers['content-type'] = 'application/json';
      const method = req.method ?? 'GET';
      const query = queryText(req);
      if (direct) {
        // A route under /v1/ runs in process with no request of its own (in-process.ts).
        const called = await callRoute(app, ctx, { method, path: req.path, query, headers, body: req.body, remoteAddress: caller.remoteAddress, bearer: caller.bearer });
        if (called !== undefined) return answerOf(called.status, called.headers, called.value, called.json, caller);
      }
      const answer = openSlot();
      headers[IN_PROCESS_HEADER] = answer.id;
      let res;
      try {
        res = await app.inject({
          method,
          url: query === '' ? req.path : `${req.path}?${query}`,
          headers,
          payload: req.body === undefined ? undefined : JSON.stringify(req.body),
          remoteAddress: caller.remoteAddress,
        });
      } finally {
        answer.close();
      }
      const raw = res.headers;
      if (answer.slot.taken) return answerOf(res.statusCode, raw, answer.slot.value, true, caller);
      const responseHeaders = headersOf(raw);
      const type = responseHeaders.get('content-type') ?? '';
      const text = res.body;
      let body: unknown = text;
      if (isJsonMediaType(type) && text !== '') body = JSON.parse(text);
      if (res.statusCode < 200 || res.statusCode >= 300) refuse(res.statusCode, body, responseHeaders, caller);
      return { status: res.statusCode, headers: responseHeaders, body, text };
    },
  };
  if (publicReads === undefined) return api;
  return { base: api.base, request: (req) => publicReads.through(req, () => api.request(req)) };
}

/**
 * A route's answer as the tool layer reads it. A JSON answer is the value the route made; its
 * text, and its headers as a Headers (read by few: a refusal's retry-after and request id), are
 * made only if a tool reads them.
 */
function answerOf(status: number, raw: Record<string, string | string[] | number | undefined>, value: unknown, json: boolean, caller: Caller): ApiResponse {
  if (!json) {
    const headers = headersOf(raw);
    if (status < 200 || status >= 300) refuse(status, value, headers, caller);
    return { status, headers, body: value, text: String(value) };
  }
  if (status < 200 || status >= 300) refuse(status, value, headersOf(raw), caller);
  const response = { status, body: value } as ApiResponse;
  Object.defineProperty(response, MADE, { value: { raw, value, headers: undefined, text: undefined } satisfies Made });
  Object.defineProperty(response, 'headers', { enumerable: true, get: madeHeaders });
  Object.defineProperty(response, 'text', { enumerable: true, get: madeText });
  return response;
}

/** Where a JSON answer keeps what its `headers` and `text` are made from, and them once made. */
const MADE = Symbol('made');

interface Made {
  readonly raw: Record<string, string | string[] | number | undefined>;
  readonly value: unknown;
  headers: Headers | undefined;
  text: string | undefined;
}

// One getter each for every answer, reading the answer's own slot: an accessor made of a new
// closure per answer would keep that closure and the route's whole answer alive through the next
// young-generation collection (tools/answer.ts says how).
function madeHeaders(this: { [MADE]: Made }): Headers {
  const made = this[MADE];
  return (made.headers ??= headersOf(made.raw));
}

function madeText(this: { [MADE]: Made }): string {
  const made = this[MADE];
  return (made.text ??= JSON.stringify(made.value));
}

/** A non-2xx answer: the refusal the bridge's HTTP client would make of it (INSUFFICIENT_SCOPE noted on the caller). */
function refuse(status: number, body: unknown, headers: Headers, caller: Caller): never {
  const refusal = refusalFrom(status, body, headers);
  if (isRelayRefusal(refusal, 'INSUFFICIENT_SCOPE')) caller.scopeDenied = true;
  throw refusal;
}
