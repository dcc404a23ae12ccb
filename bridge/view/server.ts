/**
 * The HTTP server of `svc-bridge view`: the people's view of what this KEY may read, served on
 * this machine only, with the sealed items opened here (bridge/view/forward.ts).
 *
 * What keeps other programs and web sites out:
 * - It listens on 127.0.0.1 only, and answers a request only when its Host header is exactly
 *   `127.0.0.1:<port>`: a site that points its own name at 127.0.0.1 (DNS rebinding) sends its
 *   own name as Host and is refused before anything is read.
 * - The link it prints carries a one-time secret in its fragment (`/view/#secret=…`): a fragment is
 *   never sent in a request, kept in a server log or passed on as a Referer. The page sends it
 *   once, `POST /view/session {"secret"}` from this origin (Origin must be this origin), and gets
 *   a session bearer it keeps in memory; the secret works once and only once. Every `/v1/` read
 *   needs `Authorization: Bearer <session>`, which no other site's page can send here (no CORS
 *   is answered, so a cross-origin request with that header never leaves its preflight).
 * - Reads only: `GET /v1/...` goes on to the relay; any other method there is INSUFFICIENT_SCOPE.
 * - Every answer carries a strict Content-Security-Policy (nothing inline, everything from this
 *   origin, `frame-ancestors 'none'`), `X-Frame-Options: DENY`, `nosniff`, `no-referrer`, and
 *   `Cache-Control: no-store`: opened words are never kept by the browser's cache.
 *
 * Without a session: the page's own files (`/view/…` from the view's folder,
 * bridge/view/page-files.ts) and `GET /view/host.json` (`{host: "bridge", peer_id,
 * service_root_key, passkeys, relay: {url, service_root_key}}`), which the page reads first to
 * know it is served by a bridge and which relay root key its proofs chain to.
 *
 * Every refusal is a catalogue code in the error envelope (spec/3-errors.md) and changes nothing.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toBase64url } from '../../shared/encoding.js';
import { pageHeaders, VIEW_CSP } from '../../shared/page-headers.js';
import { CATALOGUE, errorEnvelope, type ErrorCode } from '../../shared/errors.js';
import type { Forwarded } from './forward.js';
import { pageFile } from './page-files.js';

const SECURITY_HEADERS: Readonly<Record<string, string>> = { ...pageHeaders(VIEW_CSP), 'cache-control': 'no-store' };

const JSON_TYPE = 'application/json; charset=utf-8';
/** A session request is `{"secret": "<43 characters>"}`. */
const SESSION_BODY_MAX = 1024;
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;
const BEARER_RE = /^Bearer ([A-Za-z0-9_-]{43})$/;

export interface ViewServerOptions {
  /** The port on 127.0.0.1; 0 takes a free one. */
  readonly port: number;
  /** The folder of the page's files (bridge/view/page-files.ts `findPageDir`). */
  readonly pageDir: string;
  /** What `GET /view/host.json` answers. */
  readonly hostInfo: () => Record<string, unknown>;
  /** One read of the page (`path` starts with /v1/). */
  readonly read: (path: string, search: URLSearchParams) => Promise<Forwarded>;
  readonly log: (line: string) => void;
  /** Called once, when the link's secret has started the session. */
  readonly onSession?: () => void;
}

export interface ViewServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The link to open: the page with the one-time secret in its fragment. */
  readonly link: string;
  close(): Promise<void>;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function sameDigest(text: string, want: Buffer): boolean {
  return timingSafeEqual(digest(text), want);
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

function refuse(res: ServerResponse, code: ErrorCode, detail: string, status: number = CATALOGUE[code].status): void {
  send(res, status, JSON_TYPE, JSON.stringify(errorEnvelope(code, randomUUID(), detail)), status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

/** The body of a small request, or undefined when it is larger than `max` bytes. */
function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A path the relay reads: /v1/ and segments that are not empty, `.` or `..`, spelt plainly or escaped. */
function readPath(pathname: string): string | undefined {
  if (!pathname.startsWith('/v1/')) return undefined;
  for (const segment of pathname.slice(1).split('/')) {
    let plain: string;
    try {
      plain = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    if (plain === '' || plain === '.' || plain === '..' || plain.includes('/') || plain.includes('\\')) return undefined;
  }
  return pathname;
}

export async function startViewServer(opts: ViewServerOptions): Promise<ViewServer> {
  const secret = toBase64url(new Uint8Array(randomBytes(32)));
  const secretDigest = digest(secret);
  let secretUsed = false;
  let sessionDigest: Buffer | undefined;
  let host = '';
  let origin = '';

  /** Cross-origin requests carry Origin (and Sec-Fetch-Site in today's browsers): only this origin's page reads. */
  function fromThisOrigin(req: IncomingMessage): boolean {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return false;
    return req.headers.origin === undefined || req.headers.origin === origin;
  }

  async function startSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A session is asked for only by this origin's page: Origin is required, not merely allowed.
    if (req.headers.origin !== origin || !fromThisOrigin(req)) return refuse(res, 'INVALID_REQUEST', `Origin: a session is started only by the page at ${origin}`);
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return refuse(res, 'INVALID_REQUEST', 'Content-Type: application/json');
    const text = await readBody(req, SESSION_BODY_MAX);
    if (text === undefined) return refuse(res, 'TOO_LARGE', `body: at most ${SESSION_BODY_MAX} bytes`);
    let given: unknown;
    try {
      given = (JSON.parse(text) as { secret?: unknown })?.secret;
    } catch {
      return refuse(res, 'INVALID_REQUEST', 'body: JSON {"secret": "<the secret of the link>"}');
    }
    if (typeof given !== 'string' || !SECRET_RE.test(given)) return refuse(res, 'INVALID_REQUEST', 'secret: the 43 characters after #secret= in the link');
    if (!sameDigest(given, secretDigest)) return refuse(res, 'TOKEN_INVALID', "secret: not this view's; open the link svc-bridge view printed");
    if (secretUsed) return refuse(res, 'TOKEN_INVALID', 'secret: the link works once and was used; stop svc-bridge view and start it again for a new link');
    secretUsed = true;
    const session = toBase64url(new Uint8Array(randomBytes(32)));
    sessionDigest = digest(session);
    opts.log('the link was opened: a page holds the session now (the link works no more)');
    opts.onSession?.();
    send(res, 200, JSON_TYPE, JSON.stringify({ session }));
  }

  async function read(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (!fromThisOrigin(req)) return refuse(res, 'INVALID_REQUEST', `Origin: only the page at ${origin} reads here`);
    const auth = req.headers.authorization;
    if (auth === undefined || auth === '') return refuse(res, 'TOKEN_MISSING', 'Authorization: Bearer <the session the page started>');
    const bearer = BEARER_RE.exec(auth)?.[1];
    if (bearer === undefined || sessionDigest === undefined || !sameDigest(bearer, sessionDigest)) {
      return refuse(res, 'TOKEN_INVALID', "Authorization: not this view's session");
    }
    if (req.method !== 'GET') return refuse(res, 'INSUFFICIENT_SCOPE', 'method: the view only reads (GET)');
    const path = readPath(url.pathname);
    if (path === undefined) return refuse(res, 'INVALID_REQUEST', 'path: /v1/ and the path of a read, without empty or dot segments');
    const answer = await opts.read(path, url.searchParams);
    send(res, answer.status, answer.type, answer.body, answer.headers);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: another site's name pointed at this address still names itself in Host.
    if (req.headers.host !== host) return refuse(res, 'INVALID_REQUEST', `Host: this view answers only as ${host}`);
    // An origin-form target only: `//name/...` would be read as another host's address.
    if (req.url === undefined || !req.url.startsWith('/') || req.url.startsWith('//')) return refuse(res, 'INVALID_REQUEST', 'path: an absolute path');
    const url = new URL(req.url, origin);
    if (url.pathname.startsWith('/v1/')) return read(req, res, url);
    if (url.pathname === '/view/session') {
      if (req.method !== 'POST') return refuse(res, 'INVALID_REQUEST', 'method: POST starts a session');
      return startSession(req, res);
    }
    if (req.method !== 'GET') return refuse(res, 'INVALID_REQUEST', 'method: the page is read with GET');
    if (url.pathname === '/' || url.pathname === '/view') return send(res, 308, 'text/plain; charset=utf-8', 'The view is at /view/\n', { location: '/view/' });
    if (url.pathname === '/view/host.json') return send(res, 200, JSON_TYPE, JSON.stringify(opts.hostInfo()));
    if (url.pathname.startsWith('/view/')) {
      const file = pageFile(opts.pageDir, url.pathname.slice('/view/'.length));
      if (file !== undefined) return send(res, 200, file.type, file.bytes);
    }
    // As the relay answers a path it has no operation for: 404 with INVALID_REQUEST.
    return refuse(res, 'INVALID_REQUEST', `path: no page or read at ${url.pathname.slice(0, 100)}`, 404);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      opts.log(`view: ${(e as Error)?.stack ?? String(e)}`);
      if (!res.headersSent) refuse(res, 'INTERNAL', 'the bridge failed while answering; see its log');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  host = `127.0.0.1:${port}`;
  origin = `http://${host}`;
  return {
    origin,
    link: `${origin}/view/#secret=${secret}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
