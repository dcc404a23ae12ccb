/**
 * How the connector's tools call the relay's routes in process (api.ts), so that every check,
 * limit and refusal of a route is the route's own and its answer comes back as the value the
 * route made, never serialised and parsed again.
 *
 * A route under `/v1/` (unless its `config.inProcess` says not) is called without any HTTP
 * request of its own: `callRoute` runs for it what the app would (app.ts): the request's
 * admission (http/admission.ts: the address, authentication with the caller's bearer, the
 * read-only mode, the rate limit), the strict JSON body, the route's zod validators in Fastify's
 * order (params, body, query), the handler, the metrics and the log line of an answered request;
 * a throw anywhere is answered as the app's error handler answers it (http/errors.ts
 * `refusalOf`). Which route a path is, and its parameters, are Fastify's router's own answer
 * (`findRoute`), so a route not called in process (and every path the router does not know) is
 * never mistaken for one that is. The request it hands the handler carries what such a route may
 * read (fastify-types.ts `inProcess`), its reply what it may call; `reply.raw` closes when the
 * call ends, which releases a read's concurrency gate and ends a long poll's wait as a closed
 * connection does.
 *
 * Any other route is called with `app.inject`. The in-process request names a slot in
 * IN_PROCESS_HEADER: a random id of 128 bits that lives only while its request runs. The app's
 * preSerialization hook (`keepAnswer`) puts the answer (a JSON value: an answer or an error
 * envelope) in that slot and lets an empty body through; status and headers are the route's as
 * ever. A request from outside naming no live slot is served as any other.
 *
 * The value is the route's own: the tool layer reads answers and never changes them (it
 * copies what it adds to), as it always treated the answers it shares (public-reads.ts).
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { REQUEST_MAX_BYTES } from '../../shared/limits.js';
import type { InProcessRoute, RelayContext } from '../context.js';
import { admit } from '../http/admission.js';
import type { BearerHash } from '../http/auth.js';
import { refusalOf } from '../http/errors.js';
import { requestLine } from '../http/logging.js';
import { parseJsonBody } from '../http/json-body.js';
import { parseQuery } from '../http/query.js';
import { zodValidatorCompiler } from '../http/validation.js';
import { newUuid } from '../ids.js';

export const IN_PROCESS_HEADER = 'x-svc-in-process';

/** A JSON answer's media type: `application/json` or any `application/…+json`, parameters or not. */
export function isJsonMediaType(type: string): boolean {
  return /^application\/([\w.+-]*\+)?json\b/i.test(type);
}

interface Slot {
  taken: boolean;
  value: unknown;
}

const slots = new Map<string, Slot>();

/** A slot for one in-process request: its id for the header, what the route answered, and its release. */
export function openSlot(): { id: string; slot: Slot; close(): void } {
  const id = randomUUID();
  const slot: Slot = { taken: false, value: undefined };
  slots.set(id, slot);
  return { id, slot, close: () => slots.delete(id) };
}

/** The app's preSerialization hook: an in-process request's JSON answer goes to its slot unserialised. */
export function keepAnswer(req: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const id = req.headers[IN_PROCESS_HEADER];
  const slot = typeof id === 'string' ? slots.get(id) : undefined;
  if (slot === undefined) return done(null, payload);
  slot.taken = true;
  slot.value = payload;
  done(null, '');
}

/** Hooks a route may declare itself; a route called in process must declare none. */
const ROUTE_HOOKS = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'] as const;

/** The app's onRoute hook: a route called in process, kept for `callRoute` by method and number of segments. */
export function addInProcessRoute(table: Map<string, InProcessRoute[]>, route: RouteOptions, methods: readonly string[]): void {
  // The HEAD route Fastify adds beside a GET (with hooks of its own) is not called in process.
  if (methods.length === 0) return;
  const own = ROUTE_HOOKS.filter((h) => route[h] !== undefined);
  if (own.length > 0) throw new Error(`${route.url}: a route called in process has no hooks of its own (${own.join(', ')})`);
  const parts = route.url.slice(1).split('/');
  if (parts.some((s) => /[*:(]/.test(s) && !/^:[A-Za-z0-9_]+$/.test(s))) throw new Error(`${route.url}: a route called in process has plain segments and whole-segment parameters`);
  const segments = parts.map((s) => (s.startsWith(':') ? null : s));
  const params = parts.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  const validate: { -readonly [part in keyof InProcessRoute['validate']]: InProcessRoute['validate'][part] } = {};
  const schema = route.schema as Record<string, unknown> | undefined;
  for (const part of ['params', 'body', 'querystring'] as const) {
    if (schema?.[part] === undefined) continue;
    validate[part] = zodValidatorCompiler({ schema: schema[part], method: String(route.method), url: route.url, httpPart: part }) as InProcessRoute['validate'][typeof part];
  }
  for (const method of methods) {
    const entry: InProcessRoute = { method, url: route.url, segments, params, config: { ...route.config, url: route.url, method } as InProcessRoute['config'], validate, handler: route.handler };
    const key = `${method} ${segments.length}`;
    table.set(key, [...(table.get(key) ?? []), entry]);
  }
}

/** The route called in process at `path` (no query) as Fastify's router finds it, with its decoded parameters. */
function routeAt(app: FastifyInstance, table: Map<string, InProcessRoute[]>, method: string, path: string): { route: InProcessRoute; params: Record<string, string> } | undefined {
  const parts = path.slice(1).split('/');
  const candidates = table.get(`${method} ${parts.length}`);
  if (candidates === undefined) return undefined;
  const found = app.findRoute({ method, url: path });
  if (found === null) return undefined;
  const params = found.params as Record<string, string>;
  const names = Object.keys(params);
  for (const route of candidates) {
    // The router's route has these literals where the path has them and these parameters: a
    // path another route (a literal one) answers has other parameters than this one.
    if (route.params.length !== names.length || !route.params.every((p, i) => p === names[i])) continue;
    if (route.segments.every((s, i) => s === null || s === parts[i])) return { route, params };
  }
  return undefined;
}

/** One in-process call of a route: what the tool asked for. */
export interface RouteCall {
  readonly method: string;
  readonly path: string;
  /** The query as its encoded text (no "?"), parsed here by the app's one parser. */
  readonly query: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  readonly remoteAddress: string;
  /** The caller's bearer hash, already computed for the connector's request (http/auth.ts `BearerHash`). */
  readonly bearer?: BearerHash | undefined;
}

/** What a route answered: status, headers as the route set them, and the value (JSON) or text it sent. */
export interface RouteAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly value: unknown;
  /** Whether `value` is a JSON value (else the text or bytes of another media type). */
  readonly json: boolean;
}

/** The reply handed to a route called in process: what such a route calls, recorded. */
class InProcessReply {
  statusCode = 200;
  sent = false;
  payload: unknown = undefined;
  readonly headers: Record<string, string> = {};
  private closing: (EventEmitter & { destroyed: boolean }) | undefined;
  /** What a read's concurrency gate and a long poll listen to for the end of the call; made when first read. */
  get raw(): EventEmitter & { destroyed: boolean } {
    return (this.closing ??= Object.assign(new EventEmitter(), { destroyed: false }));
  }
  /** The call ended: `raw` closes, if anything listens. */
  close(): void {
    if (this.closing === undefined) return;
    this.closing.destroyed = true;
    this.closing.emit('close');
  }
  private readonly started = performance.now();
  constructor(readonly request: FastifyRequest) {}
  code(status: number): this {
    this.statusCode = status;
    return this;
  }
  status(status: number): this {
    return this.code(status);
  }
  header(name: string, value: unknown): this {
    this.headers[name.toLowerCase()] = String(value);
    return this;
  }
  hasHeader(name: string): boolean {
    return this.headers[name.toLowerCase()] !== undefined;
  }
  getHeader(name: string): string | undefined {
    return this.headers[name.toLowerCase()];
  }
  type(contentType: string): this {
    return this.header('content-type', contentType);
  }
  send(payload?: unknown): this {
    this.sent = true;
    this.payload = payload;
    return this;
  }
  get elapsedTime(): number {
    return performance.now() - this.started;
  }
}

/**
 * Call the route at `call.path` in process; undefined when no route called in process is there
 * (the caller then uses `app.inject`), or when the body is one the app's parser refuses by size.
 */
export async function callRoute(app: FastifyInstance, ctx: RelayContext, call: RouteCall): Promise<RouteAnswer | undefined> {
  const at = routeAt(app, ctx.inProcessRoutes, call.method, call.path);
  if (at === undefined) return undefined;
  const bodyText = call.body === undefined ? undefined : JSON.stringify(call.body);
  if (bodyText !== undefined && Buffer.byteLength(bodyText) > REQUEST_MAX_BYTES) return undefined;
  const { route, params } = at;
  const url = call.query === '' ? call.path : `${call.path}?${call.query}`;
  const req = {
    id: newUuid(ctx.random),
    method: call.method,
    url,
    headers: call.headers,
    ip: call.remoteAddress,
    query: parseQuery(call.query),
    params,
    body: undefined as unknown,
    identity: null,
    bearer: call.bearer,
    is404: false,
    routeOptions: { config: route.config, url: route.url, method: call.method },
    raw: { url, method: call.method, headers: call.headers, socket: undefined },
  } as unknown as FastifyRequest;
  const reply = new InProcessReply(req);
  const fastifyReply = reply as unknown as FastifyReply;
  let answer: RouteAnswer;
  try {
    await admit(ctx, req, fastifyReply);
    if (bodyText !== undefined) req.body = parseJsonBody(bodyText);
    for (const part of ['params', 'body', 'querystring'] as const) {
      const check = route.validate[part];
      if (check === undefined) continue;
      const field = part === 'querystring' ? 'query' : part;
      const result = check((req as unknown as Record<string, unknown>)[field] ?? null);
      if (result.error !== undefined) throw result.error;
      if ('value' in result) (req as unknown as Record<string, unknown>)[field] = result.value;
    }
    const returned = await route.handler.call(app, req, fastifyReply);
    const payload = reply.sent ? reply.payload : returned;
    if (payload === undefined) throw new Error(`${route.url}: the handler answered nothing`);
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const text = String(payload);
      const json = isJsonMediaType(reply.headers['content-type'] ?? '');
      answer = { status: reply.statusCode, headers: reply.headers, value: json && text !== '' ? JSON.parse(text) : text, json };
    } else {
      answer = { status: reply.statusCode, headers: reply.headers, value: payload, json: true };
    }
  } catch (error) {
    const refusal = refusalOf(error, req);
    reply.statusCode = refusal.status;
    Object.assign(reply.headers, refusal.headers);
    answer = { status: refusal.status, headers: reply.headers, value: refusal.body, json: true };
  } finally {
    reply.close();
  }
  reply.headers['x-request-id'] = String(req.id);
  if (answer.json && reply.headers['content-type'] === undefined) reply.headers['content-type'] = 'application/json; charset=utf-8';
  if (answer.status === 401 && reply.headers['www-authenticate'] === undefined) reply.headers['www-authenticate'] = 'Bearer';
  app.metrics?.answered(req, fastifyReply);
  // The request log's line for it, as the app writes one for every request it answers (http/logging.ts).
  app.log.info({ request_id: String(req.id), ...requestLine(call.method, route.url, route.config.operation ?? null, answer.status, reply.elapsedTime) }, 'request');
  return answer;
}
