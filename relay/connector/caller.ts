/**
 * Who calls the connector, judged once per HTTP request (spec/1-concepts.md "Connector",
 * "App sign-in"). Input is attacker-controlled.
 *
 * The connector does not refuse a token itself at `/mcp`: every tool calls a relay route in
 * process with the caller's bearer (relay/connector/api.ts), and that route's authentication
 * answers TOKEN_MISSING, TOKEN_INVALID, TOKEN_REVOKED, TOKEN_EXPIRED or KEY_BLOCKED as tool
 * output. What is judged here is only what the connector needs before any tool runs: the
 * caller's peer id (a post's author, the caller's own words marked as its own), and at
 * `/mcp/connect` whether the bearer is a live app token at all (else 401). The lookup here
 * counts nothing against the address's unknown-token bucket: the route each tool calls does.
 */
import type { FastifyRequest } from 'fastify';
import { bearerToken, tokenHash, type BearerHash, type Identity } from '../http/auth.js';
import { SvcError } from '../../shared/errors.js';
import type { TokenRecord, TokenStore } from '../store/tokens.js';
import type { Toolset } from '../../tools/toolsets.js';

const TOKEN_RE = /^svc_[0-9a-f]{64}$/;

export interface Caller {
  /** The Authorization header as sent; the in-process requests carry it unchanged, so a route's refusal names what is wrong with it. */
  readonly authorization: string | undefined;
  /** The live token's identity, or undefined (none sent, or not live: the tools' routes say why). */
  readonly identity: Identity | undefined;
  /** The address the request came from; the in-process requests carry it. */
  readonly remoteAddress: string;
  /** At `/mcp/connect`: the in-process requests carry the connector header (app tokens count). */
  readonly connect: boolean;
  /** Set when a route refused this request's token a write (INSUFFICIENT_SCOPE): 403 at `/mcp/connect`. */
  scopeDenied: boolean;
  /** The toolsets `?tools=` named (tools/toolsets.ts); every tool when absent. */
  readonly toolset?: Toolset | undefined;
  /** The bearer's hash computed here, which the routes the tools call in process reuse for the same token text. */
  readonly bearer?: BearerHash | undefined;
}

/** The bearer token text of a request, undefined when absent or not of the token's shape. */
function sentToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return undefined;
  try {
    const token = bearerToken(header);
    return TOKEN_RE.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
}

/** The request's bearer token with its hash, computed once for the request: undefined when absent or not of the token's shape. */
export function sentBearer(req: FastifyRequest): BearerHash | undefined {
  const token = sentToken(req);
  return token === undefined ? undefined : { token, hash: tokenHash(token) };
}

/**
 * The caller of one connector request; `identity` only for a live token (an app token only at
 * `/mcp/connect`). `bearer`: the request's `sentBearer`, when the entry has already read it.
 */
export async function callerOf(req: FastifyRequest, tokens: TokenStore, now: number, connect: boolean, bearer = sentBearer(req)): Promise<Caller> {
  const record = bearer === undefined ? undefined : await tokens.byHash(bearer.hash);
  let identity: Identity | undefined;
  if (record !== undefined && liveProblem(record, now) === undefined) {
    const app = appOf(record);
    // An app token stands for its KEY only at /mcp/connect; a KEY's own token only at /mcp.
    if ((app !== null) === connect) identity = { peerId: record.peerId, tokenId: record.id, tokenExpiresAt: record.expiresAt, app };
  }
  const authorization = typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined;
  return { authorization, identity, remoteAddress: req.ip, connect, scopeDenied: false, bearer };
}

/** The app an app token was issued to (its OAuth client and whether it may write); null for a KEY's own token. */
function appOf(record: TokenRecord): Identity['app'] {
  return record.clientId === null ? null : { clientId: record.clientId, write: record.scope === 'write' };
}

function liveProblem(record: TokenRecord, now: number): SvcError | undefined {
  if (record.revokedAt !== null) return new SvcError('TOKEN_REVOKED');
  if (record.expiresAt <= now) return new SvcError('TOKEN_EXPIRED');
  if (record.keyBlockedAt !== null) return new SvcError('KEY_BLOCKED');
  return undefined;
}

/** The detail of TOKEN_INVALID for a KEY's own token at `/mcp/connect`. */
export const KEY_TOKEN_AT_CONNECT = "token: /mcp/connect takes a token an app was given by app sign-in; a KEY's own token works at /mcp";

/**
 * Why `/mcp/connect` refuses this request (answered 401), or undefined when it carries a live
 * app token: no token, not a token, unknown, revoked, expired, blocked, or a KEY's own token.
 * `bearer`: the request's `sentBearer` (its hash then serves `callerOf` too).
 */
export async function connectRefusal(req: FastifyRequest, tokens: TokenStore, now: number, bearer: BearerHash | undefined): Promise<SvcError | undefined> {
  const header = req.headers.authorization;
  if (header === undefined) return new SvcError('TOKEN_MISSING');
  if (bearer === undefined) return new SvcError('TOKEN_INVALID', 'authorization: expected "Bearer svc_<64 lowercase hex>"');
  const record = await tokens.byHash(bearer.hash);
  if (record === undefined) return new SvcError('TOKEN_INVALID', 'token: not known here');
  const dead = liveProblem(record, now);
  if (dead !== undefined) return dead;
  if (appOf(record) === null) return new SvcError('TOKEN_INVALID', KEY_TOKEN_AT_CONNECT);
  return undefined;
}
