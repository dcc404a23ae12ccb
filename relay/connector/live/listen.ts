/**
 * `subscriptions/listen` at the connector (protocol revision 2026-07-28; spec/1-concepts.md
 * "Connector live updates"): one SSE stream per listen request, answered here rather than by
 * the SDK's listen router, because a stream belongs to a KEY: the acknowledgement lists only the
 * addresses that KEY may read, a KEY has at most four streams, and a stream ends on what ends
 * the KEY's access (streams.ts).
 *
 * The wire is the SDK's (the client's `listen()` reads it as it reads the SDK's own router):
 * `notifications/subscriptions/acknowledged` first, then `notifications/resources/updated` with
 * the address only (never content), each stamped with the subscription id (the listen request's
 * id) in `_meta`; a graceful end is the empty `subscriptions/listen` result, which tells the client
 * to listen again; `_meta["svc/ended"]` says why (time, expired, revoked, left, stopped, nothing). Refusals
 * come before any acknowledgement as a JSON-RPC error (HTTP 200) whose `data` is the relay's
 * error envelope: a token problem (a KEY's token is needed) and BUSY (the KEY's streams are open).
 * Both are -32600 Invalid Request: the request cannot be served as sent, and the envelope says
 * why and what to do. Neither is -32603 Internal error, which would tell the client the relay
 * failed (a KEY holding its four streams is its client's doing, not a fault).
 */
import { SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, type JSONRPCRequest } from '@modelcontextprotocol/server';
import { errorEnvelope, type ErrorCode } from '../../../shared/errors.js';
import { LIVE_STREAMS_PER_KEY } from '../../../shared/limits.js';
import type { RelayContext } from '../../context.js';
import { tokenHash } from '../../http/auth.js';
import type { SpaceRow } from '../../store/spaces.js';
import type { Caller } from '../caller.js';
import { followable, type Followed } from './addresses.js';
import { followMailbox, followSpace, type SpaceFollow } from './follow.js';
import { readableBy, STREAM_LIFETIME_MS, type EndReason, type LiveStreams } from './streams.js';

/** SSE comment frames keep idle proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

export interface ListenRequest {
  /** The classified 2026-07-28 `subscriptions/listen` request. */
  readonly message: JSONRPCRequest;
  readonly caller: Caller;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  /** The relay's id of the HTTP request, for the error envelope. */
  readonly requestId: string;
  readonly serverInfo: { name: string; version: string };
}

function rpcError(id: JSONRPCRequest['id'], rpcCode: number, code: ErrorCode, requestId: string, detail: string): Response {
  const envelope = errorEnvelope(code, requestId, detail).error;
  return Response.json({ jsonrpc: '2.0', id, error: { code: rpcCode, message: `${code}: ${detail}`, data: envelope } }, { status: 200 });
}

/** Why the caller holds no KEY identity here: the refusal a route would give its token. */
async function tokenProblem(ctx: RelayContext, caller: Caller): Promise<{ code: ErrorCode; detail: string }> {
  const header = caller.authorization;
  if (header === undefined) return { code: 'TOKEN_MISSING', detail: 'authorization: live updates follow a KEY; send its token as a bearer' };
  const m = /^Bearer +(svc_[0-9a-f]{64}) *$/i.exec(header);
  const record = m === null ? undefined : await ctx.store.tokens.byHash(tokenHash(m[1]!));
  if (record === undefined) return { code: 'TOKEN_INVALID', detail: 'token: not known here' };
  if (record.revokedAt !== null) return { code: 'TOKEN_REVOKED', detail: 'token: revoked' };
  if (record.expiresAt <= ctx.clock()) return { code: 'TOKEN_EXPIRED', detail: 'token: expired' };
  if (record.keyBlockedAt !== null) return { code: 'KEY_BLOCKED', detail: 'key: blocked' };
  return caller.connect
    ? { code: 'TOKEN_INVALID', detail: "token: /mcp/connect takes a token an app was given by app sign-in; a KEY's own token works at /mcp" }
    : { code: 'TOKEN_INVALID', detail: 'token: an app token works at /mcp/connect only' };
}

/** The addresses asked for, as a list of strings or nothing. */
function requested(message: JSONRPCRequest): readonly unknown[] {
  const n = (message.params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications;
  return Array.isArray(n?.resourceSubscriptions) ? n.resourceSubscriptions : [];
}

/**
 * Which followable addresses the KEY may read now, grouped by what follows them, and which of
 * the SPACES followed not everyone reads (private or sealed: a loss of access ends the stream).
 */
async function readable(
  ctx: RelayContext,
  peerId: string,
  asked: readonly Followed[],
): Promise<{ kept: Followed[]; mailbox: boolean; spaces: Map<number, SpaceFollow>; guarded: Set<number> }> {
  const { store } = ctx;
  const kept: Followed[] = [];
  const spaces = new Map<number, { spaceRowId: number; addresses: Extract<Followed, { on: 'space' }>[]; posts: Extract<Followed, { on: 'post' }>[] }>();
  const guarded = new Set<number>();
  const group = (space: SpaceRow) => {
    if (space.visibility !== 'public') guarded.add(space.id);
    let g = spaces.get(space.id);
    if (g === undefined) spaces.set(space.id, (g = { spaceRowId: space.id, addresses: [], posts: [] }));
    return g;
  };
  let mailbox = false;
  for (const f of asked) {
    if (f.on === 'mailbox') {
      mailbox = true;
      kept.push(f);
    } else if (f.on === 'space') {
      const row = await store.spaces.byName(f.space);
      const space = row === undefined ? undefined : await readableBy(ctx, row.id, peerId);
      if (space === undefined || (f.view === 'document' && !space.oracle)) continue;
      group(space).addresses.push(f);
      kept.push(f);
    } else {
      const post = await store.posts.byPostId(f.postId);
      const space = post === undefined ? undefined : await readableBy(ctx, post.spaceRowId, peerId);
      if (space === undefined) continue;
      group(space).posts.push(f);
      kept.push(f);
    }
  }
  return { kept, mailbox, spaces, guarded };
}

/** Answer one `subscriptions/listen`: the refusal, or the stream (an SSE response). */
export async function listen(ctx: RelayContext, live: LiveStreams, req: ListenRequest): Promise<Response> {
  const { message, caller } = req;
  const id = message.id;
  const identity = caller.identity;
  if (identity === undefined) {
    const p = await tokenProblem(ctx, caller);
    return rpcError(id, -32600, p.code, req.requestId, p.detail);
  }
  if (!live.hasRoom(identity.peerId)) {
    return rpcError(id, -32600, 'BUSY', req.requestId, `live streams: at most ${LIVE_STREAMS_PER_KEY} per KEY are open; end one (cancel its subscriptions/listen) and listen again`);
  }
  const { kept, mailbox, spaces, guarded } = await readable(ctx, identity.peerId, followable(requested(message)));

  const encoder = new TextEncoder();
  const followers = new AbortController();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let open = true;
  const frame = (text: string) => {
    if (!open) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      // The client is gone; the abort below ends the stream.
    }
  };
  const send = (payload: object) => frame(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...payload })}\n\n`);
  const stamp = { [SUBSCRIPTION_ID_META_KEY]: id };
  const finish = (reason: EndReason) => {
    if (!open) return;
    followers.abort();
    if (keepAlive !== undefined) clearInterval(keepAlive);
    if (reason !== 'closed') send({ id, result: { resultType: 'complete', _meta: { ...stamp, [SERVER_INFO_META_KEY]: req.serverInfo, 'svc/ended': reason } } });
    open = false;
    try {
      controller.close();
    } catch {
      // Already closed by the client.
    }
  };

  let end: (reason: EndReason) => void = finish;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      const honored = kept.length === 0 ? {} : { resourceSubscriptions: kept.map((f) => f.uri) };
      send({ method: 'notifications/subscriptions/acknowledged', params: { notifications: honored, _meta: stamp } });
      if (kept.length === 0) {
        finish('nothing');
        return;
      }
      const stream = live.add({ peerId: identity.peerId, tokenId: identity.tokenId, tokenExpiresAt: identity.tokenExpiresAt }, new Set(spaces.keys()), finish);
      if (stream === undefined) {
        finish('stopped');
        return;
      }
      end = stream.end;
      const notify = (uri: string) => send({ method: 'notifications/resources/updated', params: { uri, _meta: stamp } });
      const failed = () => end('closed');
      if (mailbox) followMailbox(ctx, identity.peerId, notify, followers.signal).catch(failed);
      for (const f of spaces.values()) {
        const mayTell = guarded.has(f.spaceRowId) ? () => live.keeps(stream, f.spaceRowId) : undefined;
        followSpace(ctx, f, identity.peerId, notify, followers.signal, mayTell).catch(failed);
      }
      // A loss of access committed after the addresses were judged above and before the stream
      // was registered reached no judgement: judged once more now that the registry holds it.
      for (const id of guarded) void live.keeps(stream, id);
      keepAlive = setInterval(() => frame(': keepalive\n\n'), Math.min(KEEP_ALIVE_MS, STREAM_LIFETIME_MS));
      keepAlive.unref?.();
      // The token may already be at its end, or the clock past it: the registry's sweep ends it.
      live.due();
    },
    cancel() {
      end('closed');
    },
  });
  if (req.signal.aborted) end('closed');
  else req.signal.addEventListener('abort', () => end('closed'), { once: true });

  return new Response(body, {
    status: 200,
    // connection: close: the connection ends with its stream, so a stopping relay (which closes
    // only the connections idle when it starts to stop) does not wait for the client to drop it.
    headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no', connection: 'close' },
  });
}
