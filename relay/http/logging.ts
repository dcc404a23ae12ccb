/**
 * The relay's request log: Fastify's own logger (pino), JSON lines on stdout, one line per
 * answered request with its method, route pattern, operation, status, time and request id (the
 * `request_id` of every line a request logs, equal to its X-Request-Id).
 *
 * What never reaches the log: the address as asked for (a route's pattern stands in for it, so
 * no name, id, query string or code in a path or query is written: /oauth/authorize carries the
 * PKCE challenge and state, the approval page its request), bodies (tokens, invite and hand-over
 * codes, passkey assertions, client secrets, authorization codes, sealed bytes), and headers.
 * Fastify's own lines that name a request (a client error, a reply sent twice) go through the
 * `req` serializer below, which keeps the method and the path without its query, and pino's
 * redaction removes the Authorization and Cookie headers from anything that still carries them.
 */
import { writeSync } from 'node:fs';
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { LogLevel } from '../config.js';

/** Headers no line may show, wherever a logged object holds them. */
const REDACTED = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  'res.headers["set-cookie"]',
];

/** A request's address without its query string: what Fastify's own lines may show of it. */
export function pathOnly(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Fastify's `logger` and `logController` options for a level: the logger off when the level
 * is undefined (tests, in-process apps) or `silent` (no line at all: no logger is made for
 * each request only to write nothing).
 */
export function loggerOptions(level: LogLevel | undefined): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  if (level === undefined || level === 'silent') return { logger: false };
  return {
    logController: new RequestLog(),
    logger: {
      level,
      stream: stdoutLines,
      redact: { paths: REDACTED, censor: '[redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string }) => ({ method: req.method, path: pathOnly(req.url) }),
        res: (res: { statusCode?: number }) => ({ status: res.statusCode }),
      },
    },
  };
}

/** The fields of the request log's line for one answered request (a route called in process writes the same). */
export function requestLine(method: string, route: string | null, operation: string | null, status: number, elapsedMs: number) {
  return { method, route, operation, status, ms: Math.round(elapsedMs * 100) / 100 };
}

/**
 * Fastify's log lines about a request's life, as the relay writes them: one line when the
 * answer is sent (`requestCompleted`, at error level with the error when the response failed)
 * and nothing on arrival; the other lines Fastify keeps show no address (its "not found" line
 * would show the query string).
 */
export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const config = req.routeOptions.config as { url?: string; operation?: string };
    const line = requestLine(req.method, req.is404 ? null : (config.url ?? null), config.operation ?? null, reply.statusCode, reply.elapsedTime);
    if (error) req.log.error({ ...line, err: error }, 'request failed');
    else req.log.info(line, 'request');
  }

  override routeNotFound(): void {}

  override defaultErrorLog(error: Error, req: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) req.log.error({ err: error, status: reply.statusCode }, error.message);
  }
}

/**
 * Where the lines go: standard output, the lines of one turn of the event loop written together
 * on the next (one write for all the requests a turn answered, instead of one each). Written
 * synchronously, as pino's own destination writes them, so the lines still waiting when the
 * process exits are written on its way out. A reader gone (EPIPE) ends the log, as with pino;
 * a pipe that is full for now (EAGAIN) takes the rest, and every later line, through Node's own
 * buffered stdout.
 */
export const stdoutLines = {
  pending: [] as string[],
  scheduled: false,
  closed: false,
  /** Once a write met a full pipe, every later line goes the same way, so none overtakes another. */
  buffered: false,
  write(line: string): void {
    if (this.closed) return;
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  },
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const text = Buffer.from(this.pending.join(''));
    this.pending = [];
    if (this.buffered) {
      process.stdout.write(text);
      return;
    }
    let at = 0;
    try {
      while (at < text.length) at += writeSync(1, text, at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        this.buffered = true;
        process.stdout.write(text.subarray(at));
      } else this.closed = true;
    }
  },
};
process.on('exit', () => stdoutLines.flush());
