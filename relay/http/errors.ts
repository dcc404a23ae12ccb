/**
 * The one place where a failure becomes an HTTP answer (spec/3-errors.md "Envelope",
 * api-notes §1).
 *
 * - `SvcError(code, detail?, retryAfter?)` → the catalogue status and the envelope.
 * - `RelayRefusal` is an SvcError with extra headers (RateLimit-*) for the rate limiter.
 * - Fastify's own failures (body too large, malformed address, unsupported media type, no
 *   route) are mapped here too; anything else is INTERNAL, logged to stderr with the request
 *   id, and nothing of it reaches the client, except a full or read-only disk
 *   (storage-faults.ts: BUSY, SERVICE_READ_ONLY). The router's own refusals (percent-encoding
 *   that does not decode, a path segment over the parameter length) come through Fastify's
 *   `frameworkErrors` (`answerFrameworkError`); the same in the query (relay/http/query.ts) is
 *   an SvcError from the request hook; what Node's HTTP parser refuses before Fastify
 *   (headers, or the address in them, too large; malformed HTTP) comes through the server's
 *   clientError (`answerClientError`): the same envelopes, catalogue statuses and headers.
 *
 * Headers on every answer: X-Request-Id (= request_id). 401 adds `WWW-Authenticate: Bearer`;
 * a wait adds `Retry-After`. /v1 answers carry Cache-Control no-store, Vary and X-Robots-Tag,
 * except a 200 GET without an Authorization header, which is publicly cacheable with an ETag.
 */
import { maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CATALOGUE, SvcError, errorEnvelope, type ErrorCode } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import { storageAnswer } from './storage-faults.js';

/** A refusal carrying extra response headers (e.g. RateLimit-* from the caller's own bucket). */
export class RelayRefusal extends SvcError {
  readonly headers: Readonly<Record<string, string>>;
  constructor(code: ErrorCode, detail: string | undefined, retryAfter: number | undefined, headers: Record<string, string>) {
    super(code, detail, retryAfter);
    this.headers = headers;
  }
}

/** The longest path segment (a SPACE name, an id) the router reads; longer is INVALID_REQUEST. */
export const PATH_PARAM_MAX = 1000;

/** What an unknown path answers (api-notes §1). */
const NO_OPERATION_MESSAGE = 'INVALID_REQUEST. There is no operation at that path.';

interface Answer {
  status: number;
  code: ErrorCode;
  detail?: string | undefined;
  retryAfter?: number | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
}

/** Map Fastify's own error codes; undefined when the error is not one of them. */
function fastifyAnswer(error: FastifyError): Answer | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: 'TOO_LARGE', detail: 'body: over 262144 bytes' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'content-type: send application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'body: empty' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'content-length: does not match the body' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'body: not valid JSON' };
    case 'FST_ERR_BAD_URL':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'address: percent-encoding that does not decode to UTF-8' };
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { status: 400, code: 'INVALID_REQUEST', detail: `address: a path segment over ${PATH_PARAM_MAX} characters` };
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return { status: 400, code: 'INVALID_REQUEST', detail: 'address: malformed' };
    case 'FST_ERR_VALIDATION':
      return { status: 400, code: 'INVALID_REQUEST', detail: error.message };
    default:
      break;
  }
  // Other client errors raised by Fastify or Node's HTTP parser.
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    if (error.statusCode === 413) return { status: 413, code: 'TOO_LARGE' };
    return { status: 400, code: 'INVALID_REQUEST' };
  }
  return undefined;
}

function answerFor(error: unknown, req: FastifyRequest): Answer {
  if (error instanceof SvcError) {
    return {
      status: error.status,
      code: error.code,
      detail: error.detail,
      retryAfter: error.retryAfter,
      headers: error instanceof RelayRefusal ? error.headers : undefined,
    };
  }
  const mapped = error && typeof error === 'object' ? fastifyAnswer(error as FastifyError) : undefined;
  if (mapped) return mapped;
  const storage = storageAnswer(error);
  if (storage) {
    if (storage.log !== undefined) process.stderr.write(`svc-relay: request ${req.id} ${req.method} ${req.routeOptions.url ?? '?'}: ${storage.log}\n`);
    return storage;
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`svc-relay: INTERNAL request ${req.id} ${req.method} ${req.routeOptions.url ?? '?'}: ${text}\n`);
  return { status: 500, code: 'INTERNAL' };
}

/** A refusal as it is answered: status, envelope and the headers it adds. */
export interface Refusal {
  status: number;
  body: ReturnType<typeof errorEnvelope>;
  headers: Record<string, string>;
}

/** What a request answers for an error its hooks or handler threw. */
export function refusalOf(error: unknown, req: FastifyRequest): Refusal {
  const a = answerFor(error, req);
  const body = errorEnvelope(a.code, String(req.id), a.detail, a.retryAfter);
  const headers: Record<string, string> = { ...a.headers };
  if (body.error.retry_after !== undefined) headers['retry-after'] = String(body.error.retry_after);
  return { status: a.status, body, headers };
}

/** Send the envelope for a refusal (also usable from hooks). */
export function sendRefusal(reply: FastifyReply, error: unknown): FastifyReply {
  const r = refusalOf(error, reply.request);
  for (const [k, v] of Object.entries(r.headers)) reply.header(k, v);
  return reply.code(r.status).type('application/json; charset=utf-8').send(r.body);
}

function isV1(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
}

/** The headers every /v1 refusal carries (api-notes §1): never cached, never indexed. */
const V1_REFUSAL_HEADERS = { 'cache-control': 'no-store', vary: 'Accept, Authorization', 'x-robots-tag': 'noindex' } as const;

/**
 * Fastify's `frameworkErrors`: the router refused the address before any route or hook ran
 * (FST_ERR_BAD_URL, FST_ERR_MAX_PARAM_LENGTH). The reply has no route context here, so the
 * envelope is written on the raw response, with the headers the onSend hook gives others.
 */
export function answerFrameworkError(error: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const a = fastifyAnswer(error) ?? { status: 400, code: 'INVALID_REQUEST' as const };
  const requestId = String(req.id);
  const body = JSON.stringify(errorEnvelope(a.code, requestId, a.detail));
  reply.raw.writeHead(a.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    ...(isV1(req.raw.url ?? '') ? V1_REFUSAL_HEADERS : {}),
  });
  reply.raw.end(body);
}

/** Install the error handler, the 404 answer and the header rules on an app. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, req, reply) => sendRefusal(reply, error));

  app.setNotFoundHandler((req, reply) => {
    const body = errorEnvelope('INVALID_REQUEST', String(req.id));
    body.error.message = NO_OPERATION_MESSAGE;
    body.error.doc = '/reference#operations';
    return reply.code(404).type('application/json; charset=utf-8').send(body);
  });

  // A callback hook, not an async one: nothing here waits, and every answer passes through it.
  app.addHook('onSend', function answerHeaders(req, reply, payload, done) {
    reply.header('x-request-id', String(req.id));
    const status = reply.statusCode;
    if (status === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', 'Bearer');
    if (isV1(req.url)) {
      const anonymousOk = req.method === 'GET' && status === 200 && req.headers.authorization === undefined;
      if (anonymousOk && (typeof payload === 'string' || Buffer.isBuffer(payload))) {
        const bytes = typeof payload === 'string' ? utf8(payload) : new Uint8Array(payload);
        reply.header('cache-control', 'public, max-age=60');
        reply.header('etag', `"${toHex(sha256(bytes)).slice(0, 32)}"`);
        reply.header('access-control-allow-origin', '*');
      } else {
        reply.header('cache-control', 'no-store');
      }
      reply.header('vary', 'Accept, Authorization');
      reply.header('x-robots-tag', 'noindex');
    }
    done(null, payload);
  });
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (malformed request line,
 * headers too large, which includes an address or query past the header limit): still
 * answered with the envelope, the catalogue's status (TOO_LARGE is 413, not the parser's
 * 431) and an X-Request-Id, then closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket, requestId: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const code: ErrorCode = tooLarge ? 'TOO_LARGE' : 'INVALID_REQUEST';
  const status = CATALOGUE[code].status;
  const reason = tooLarge ? 'Content Too Large' : 'Bad Request';
  const body = JSON.stringify(errorEnvelope(code, requestId, tooLarge ? `headers: the address and headers together take at most ${maxHeaderSize} bytes` : 'request: malformed HTTP'));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}
