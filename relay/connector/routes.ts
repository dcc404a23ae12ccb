/**
 * The connector's HTTP entry (spec/1-concepts.md "Connector", "App sign-in"; spec/2-endpoints.md
 * "Connector"): `/mcp` and `/mcp/connect` over Streamable HTTP, both protocol revisions
 * (2026-07-28 per request, 2025-11-25 through the SDK's stateless fallback), served by the
 * SDK's `createMcpHandler` with one factory (server.ts) for every request, except the plain tool
 * calls the direct lane answers itself with the same bytes (direct.ts).
 *
 * - `/mcp` takes a KEY's own token as a bearer, or none. It never answers 401: a token problem
 *   is ordinary tool output, because each tool calls a relay route with the bearer as sent and
 *   that route's refusal comes back with its code and fix. An app token is such a problem
 *   there (TOKEN_INVALID: it works at /mcp/connect only).
 * - `/mcp/connect` takes only a live app token (OAuth app sign-in). Without one: 401 with
 *   `WWW-Authenticate: Bearer resource_metadata="<base>/.well-known/oauth-protected-resource/mcp/connect"`
 *   (RFC 9728 §5.1; `error="invalid_token"` when a token was sent, RFC 6750 §3.1). A tool call
 *   that a route refused as a write by a read-only token: 403 with
 *   `error="insufficient_scope", scope="read write"` (RFC 6750 §3.1), the answer replaced whole,
 *   since nothing was written.
 *
 * `?tools=` narrows the tools listed to toolsets (tools/toolsets.ts), as the bridge's SVC_TOOLS
 * does; a name no set has is refused 400 INVALID_REQUEST with the envelope, before MCP, so the
 * person who wrote the address sees which sets there are when the client connects.
 *
 * A browser page of a foreign origin, or a rebound DNS name at a loopback relay, is answered
 * 403 before anything else (origin.ts).
 *
 * The body reaches the SDK as the bytes sent (this plugin's own content-type parser, so a
 * malformed body is the SDK's JSON-RPC parse error, not the relay's envelope), bounded by the
 * relay's request limit (TOO_LARGE, 413). A client's mistake is never answered -32603 Internal
 * error: params a method does not take are -32602 (params.ts), a token problem reading a
 * resource is the read's ordinary text (tools/resources/errors.ts). The routes take no rate limit of their own: every
 * tool's call of a route is limited as that route is, for the caller's KEY or address.
 */
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorEnvelope, SvcError } from '../../shared/errors.js';
import { REQUEST_MAX_BYTES } from '../../shared/limits.js';
import { packageVersion } from '../../launch/package-version.js';
import type { RelayContext } from '../context.js';
import { createKeyCaches } from './caches.js';
import { createPublicReads } from './public-reads.js';
import { CONNECT_METADATA_PATH, CONNECT_PATH, MCP_PATH } from './paths.js';
import { callerOf, connectRefusal, sentBearer, type Caller } from './caller.js';
import { foreignRequest } from './origin.js';
import { invalidParams, relabel, type InvalidParams } from './params.js';
import { CONNECTOR_NAME, callerScope, connectorServerInfo, connectorServers, connectorToolTables, type ConnectorBase, type ConnectorHooks } from './server.js';
import { directAnswer, directCall, runDirect, type ServerInfo } from './direct.js';
import { inScope } from './scope.js';
import { wantsStructuredOnly } from './structured.js';
import { liveUpdates, type LiveUpdates } from './live/index.js';
import { parseToolsets, unknownSetsText, type Toolset } from '../../tools/toolsets.js';


export interface ConnectorRoutesOptions {
  readonly ctx: RelayContext;
  /** Later parts of the connector (live updates) hook in here. */
  readonly hooks?: ConnectorHooks;
}

/** Where this relay's app-token holders are told to look for how to get one. */
function metadataUrl(ctx: RelayContext): string {
  return `${ctx.baseUrl()}${CONNECT_METADATA_PATH}`;
}

/**
 * The Fastify request as the web-standard Request the SDK takes; aborted when the client goes
 * away. `withBody` false: the SDK is given the body parsed (a body that is not JSON it reads
 * itself, to answer its own parse error).
 */
function webRequest(req: FastifyRequest, reply: FastifyReply, base: string, withBody: boolean): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const abort = new AbortController();
  // Aborted only when the client left before the answer was sent (an abort makes an error with a stack).
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const body = withBody && Buffer.isBuffer(req.body) ? req.body : undefined;
  return new Request(`${base}${req.url}`, { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body, signal: abort.signal });
}

/** The toolsets `?tools=` names (comma-separated, or the parameter given more than once); an unknown one is INVALID_REQUEST. */
/** The toolsets of `?tools=` texts already read (a few, in practice: the default and what clients were configured with). */
const toolsets = new Map<string, Toolset>();
const TOOLSET_TEXTS_KEPT = 64;

function askedToolset(req: FastifyRequest): Toolset {
  const asked = (req.query as Record<string, string | string[] | undefined>).tools;
  const text = Array.isArray(asked) ? asked.join(',') : (asked ?? '');
  const known = toolsets.get(text);
  if (known !== undefined) return known;
  const parsed = parseToolsets(text);
  if ('unknown' in parsed) throw new SvcError('INVALID_REQUEST', `tools: ${unknownSetsText(parsed.unknown)}`);
  if (toolsets.size < TOOLSET_TEXTS_KEPT) toolsets.set(text, parsed.toolset);
  return parsed.toolset;
}

/** The body as JSON, or undefined when there is none or it is not JSON (the SDK answers those). */
function jsonBody(body: unknown): unknown {
  if (!Buffer.isBuffer(body)) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether the message is a tools/call (its answer is read whole before it is sent: see 403). */
function isToolCall(msg: unknown): boolean {
  return typeof msg === 'object' && msg !== null && (msg as { method?: unknown }).method === 'tools/call';
}

/** Whether the body is or holds an `initialize` (its server instance serves it alone: server.ts). */
function isInitialize(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'initialize');
}

/** What every request of the connector is served with. */
interface Serving {
  readonly handler: McpHttpHandler;
  readonly live: LiveUpdates;
  readonly base: ConnectorBase;
  readonly tools: ReturnType<typeof connectorToolTables>;
  readonly serverInfo: ServerInfo;
  /** Whether plain tool calls take the direct lane (RelayDeps.connectorDirect). */
  readonly direct: boolean;
}

/** The scope check every tool answer passes at `/mcp/connect`: a write refused to a read-only app token is 403, the answer replaced. */
function refuseDeniedScope(base: ConnectorBase, reply: FastifyReply, caller: Caller): void {
  if (caller.connect && caller.scopeDenied) {
    reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="read write", resource_metadata="${metadataUrl(base.ctx)}"`);
    throw new SvcError('INSUFFICIENT_SCOPE', 'token: this app was allowed to read only; nothing was written');
  }
}

/**
 * Whether the request was a tools/call the direct lane (direct.ts) answered: false when
 * it is not one the lane takes, or its arguments are refused (the SDK answers those).
 */
async function servedDirect(serving: Serving, req: FastifyRequest, reply: FastifyReply, caller: Caller, body: unknown, invalid: InvalidParams | undefined): Promise<boolean> {
  if (!serving.direct || invalid !== undefined) return false;
  const call = directCall(req, body);
  if (call === undefined) return false;
  const tool = serving.tools(caller.connect, caller.toolset).get(call.name);
  if (tool === undefined) return false;
  const result = await inScope(callerScope(serving.base, caller, wantsStructuredOnly(body)), () => runDirect(tool, call));
  if (result === undefined) return false;
  const answer = directAnswer(call, result, serving.serverInfo);
  refuseDeniedScope(serving.base, reply, caller);
  reply.code(200).headers(answer.headers).send(answer.body);
  return true;
}

async function serve(serving: Serving, req: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<FastifyReply> {
  const { handler, live, base } = serving;
  const { ctx } = base;
  const body = jsonBody(req.body);
  const invalid = invalidParams(body);
  if (await servedDirect(serving, req, reply, caller, body, invalid)) return reply;
  const web = webRequest(req, reply, ctx.baseUrl(), body === undefined);
  // A 2026-07-28 subscriptions/listen is a live stream of the caller's KEY (live/), not the SDK's.
  // Anything else: the SDK's handler, in this caller's scope (the reused servers' tools read it there),
  // given the body parsed here so that it does not read and parse it again.
  const answered =
    await live.answer(req, body, caller, web.signal) ??
    (await inScope(callerScope(base, caller, wantsStructuredOnly(body)), () =>
      handler.fetch(web, {
        authInfo: { token: '', clientId: caller.identity?.app?.clientId ?? '', scopes: [], extra: { caller, alone: isInitialize(body) } },
        ...(body === undefined ? {} : { parsedBody: body }),
      }),
    ));
  // Params a method does not take: the SDK's -32603 for them is -32602 (params.ts).
  const res = invalid === undefined ? answered : await relabel(answered, invalid);
  const whole = isToolCall(body);
  const text = whole && res.body !== null ? await res.text() : undefined;
  refuseDeniedScope(base, reply, caller);
  reply.code(res.status);
  res.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') reply.header(name, value);
  });
  if (text !== undefined) return reply.send(text);
  if (res.body === null) return reply.send();
  return reply.send(Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>));
}

export async function connectorRoutes(app: FastifyInstance, opts: ConnectorRoutesOptions): Promise<void> {
  const { ctx } = opts;
  const root = app;
  const base: ConnectorBase = {
    app: root,
    ctx,
    caches: createKeyCaches(),
    publicReads: createPublicReads(ctx),
    version: packageVersion(),
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const live = liveUpdates(app, ctx, { name: CONNECTOR_NAME, version: base.version });
  const hooks: ConnectorHooks = {
    onServer(server, era) {
      live.onServer(server, era);
      opts.hooks?.onServer?.(server, era);
    },
  };
  const handler = createMcpHandler(connectorServers(base, hooks), {
    maxRequestBodySize: REQUEST_MAX_BYTES,
  });
  app.addHook('onClose', async () => handler.close());
  const serving: Serving = { handler, live, base, tools: connectorToolTables(base), serverInfo: connectorServerInfo(base), direct: ctx.connectorDirect !== false };

  // The SDK reads the body itself: bytes, whatever the media type (it answers 415 and parse errors).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // 403 with the envelope (no catalogue code is 403 for this: INVALID_REQUEST names the header).
  app.addHook('onRequest', async (req, reply) => {
    const foreign = foreignRequest(req, ctx);
    if (foreign !== undefined) return reply.code(403).type('application/json; charset=utf-8').send(errorEnvelope('INVALID_REQUEST', String(req.id), foreign));
  });

  // The tools' calls of the relay's routes are authenticated, limited and judged as writes each on its own.
  const config = { auth: 'none' as const, limit: 'none' as const, writes: false };
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    config,
    handler: async (req, reply) => {
      const toolset = askedToolset(req);
      return serve(serving, req, reply, { ...(await callerOf(req, ctx.store.tokens, ctx.clock(), false)), toolset });
    },
  });
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: CONNECT_PATH,
    config,
    handler: async (req, reply) => {
      const bearer = sentBearer(req);
      const refused = await connectRefusal(req, ctx.store.tokens, ctx.clock(), bearer);
      if (refused !== undefined) {
        if (refused.code === 'TOKEN_INVALID' && refused.detail !== undefined && /not known here/.test(refused.detail)) await ctx.limiter.take('unknownTokens', req.ip);
        const invalid = req.headers.authorization !== undefined ? ', error="invalid_token"' : '';
        reply.header('www-authenticate', `Bearer resource_metadata="${metadataUrl(ctx)}"${invalid}`);
        throw new SvcError(refused.code, refused.detail);
      }
      const toolset = askedToolset(req);
      return serve(serving, req, reply, { ...(await callerOf(req, ctx.store.tokens, ctx.clock(), true, bearer)), toolset });
    },
  });
}
