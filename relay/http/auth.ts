/**
 * Bearer tokens (spec/1-concepts.md "Tokens"). Input is attacker-controlled.
 *
 * `Authorization: Bearer svc_<64 lowercase hex>`; the token is looked up by SHA-256 of its
 * whole UTF-8 text. Refusals, in order: TOKEN_MISSING (no header on a `req` route),
 * TOKEN_INVALID (not a bearer, malformed, unknown), TOKEN_REVOKED, TOKEN_EXPIRED, KEY_BLOCKED.
 * An address that keeps presenting unknown tokens gets RATE_LIMITED instead of TOKEN_INVALID.
 *
 * Routes choose with `config: { auth: 'none' | 'opt' | 'req' }` (default `req`, so a route that
 * forgets is closed, not open). A handler reads the caller with `identityOf(req)` (req routes)
 * or `req.identity` (null when anonymous, on opt routes).
 */
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SvcError } from '../../shared/errors.js';
import type { TokenRecord, TokenStore } from '../store/tokens.js';
import type { RateLimiter } from './rate-limit.js';

export type AuthMode = 'none' | 'opt' | 'req';

export interface Identity {
  /** The caller's KEY, 64 lowercase hex. */
  readonly peerId: string;
  /** The id of the token in use (tokens.list id). */
  readonly tokenId: string;
  /** When the token in use expires (ms). */
  readonly tokenExpiresAt: number;
  /** The app an app token was issued to (OAuth), with whether it may write; null for a KEY's own token. */
  readonly app: { readonly clientId: string; readonly write: boolean } | null;
}

/**
 * The header the connector sets, with `RelayContext.connectorSecret` as its value, on the
 * requests it makes in process: an app token is accepted only on a request that carries it.
 */
export const CONNECTOR_HEADER = 'x-svc-connector';

const TOKEN_RE = /^svc_[0-9a-f]{64}$/;

/** The token text in an Authorization header value, or TOKEN_INVALID. */
export function bearerToken(header: string): string {
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw new SvcError('TOKEN_INVALID', 'authorization: expected "Bearer svc_<64 lowercase hex>"');
  return m[1]!;
}

/**
 * SHA-256 of the token's UTF-8 text, hashed from the string itself in one call (no encoded copy
 * first, no Hash object: every request pays it, a tool call at the connector twice; measured,
 * 2.2 µs against createHash's 3.4).
 */
export function tokenHash(token: string): Uint8Array {
  return new Uint8Array(hash('sha256', token, 'buffer'));
}

/**
 * A bearer token's hash the connector computed for its own request (connector/caller.ts), handed
 * to the routes its tools call in process for the same request (`FastifyRequest.bearer`): the
 * SHA-256 is a function of the token's text alone, so a route whose Authorization header carries
 * that same text need not compute it again. The record is still looked up, so a revocation, an
 * expiry or a block is judged by the route as ever.
 */
export interface BearerHash {
  readonly token: string;
  readonly hash: Uint8Array;
}

/** The hash of `token`: the one the request carries for exactly that text, else computed. */
function hashOf(req: FastifyRequest, token: string): Uint8Array {
  const known = req.bearer;
  return known !== undefined && known.token === token ? known.hash : tokenHash(token);
}

/** What `authenticate` needs to judge an app token (spec/1-concepts.md "App sign-in"). */
export interface AppTokenRule {
  /** RelayContext.connectorSecret: the value of CONNECTOR_HEADER on the connector's own requests. */
  readonly connectorSecret: string;
  /** Whether the route writes (a read-only app token is refused it: INSUFFICIENT_SCOPE). */
  readonly write: boolean;
}

/** The detail of TOKEN_INVALID for an app token presented anywhere but the connector. */
export const APP_TOKEN_ELSEWHERE = 'token: an app token works at /mcp/connect only';

/** Whether the request carries the connector's secret (compared in constant time). */
export function fromConnector(req: FastifyRequest, connectorSecret: string): boolean {
  const sent = req.headers[CONNECTOR_HEADER];
  if (typeof sent !== 'string' || sent.length !== connectorSecret.length) return false;
  return timingSafeEqual(Buffer.from(sent), Buffer.from(connectorSecret));
}

/**
 * Authenticate a request: undefined when it carries no Authorization header, else the
 * identity or a refusal. An app token (OAuth) is accepted only on the connector's in-process
 * requests (`rule`; without a rule, never), and a read-only one never on a write.
 */
export async function authenticate(
  req: FastifyRequest,
  tokens: TokenStore,
  limiter: RateLimiter,
  now: number,
  rule?: AppTokenRule,
): Promise<Identity | undefined> {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const unknown = async (detail: string): Promise<never> => {
    await limiter.take('unknownTokens', req.ip);
    throw new SvcError('TOKEN_INVALID', detail);
  };
  const token = typeof header === 'string' ? bearerToken(header) : await unknown('authorization: sent twice');
  if (!TOKEN_RE.test(token)) await unknown('token: expected svc_ and 64 lowercase hex');
  const record = await tokens.byHash(hashOf(req, token));
  if (!record) return await unknown('token: not known here');
  refuseDead(record, now);
  let app: Identity['app'] = null;
  if (record.clientId !== null) {
    if (rule === undefined || !fromConnector(req, rule.connectorSecret)) throw new SvcError('TOKEN_INVALID', APP_TOKEN_ELSEWHERE);
    app = { clientId: record.clientId, write: record.scope === 'write' };
    if (rule.write && !app.write) throw new SvcError('INSUFFICIENT_SCOPE', 'token: this app was allowed to read only');
  }
  return { peerId: record.peerId, tokenId: record.id, tokenExpiresAt: record.expiresAt, app };
}

function refuseDead(record: TokenRecord, now: number): void {
  if (record.revokedAt !== null) throw new SvcError('TOKEN_REVOKED');
  if (record.expiresAt <= now) throw new SvcError('TOKEN_EXPIRED');
  if (record.keyBlockedAt !== null) throw new SvcError('KEY_BLOCKED');
}

/**
 * Check again, later in the same request, that the token it was authenticated with still holds:
 * a long poll waits up to 25 s, and a token revoked or a KEY blocked meanwhile must not receive
 * what lands after (TOKEN_REVOKED, TOKEN_EXPIRED, KEY_BLOCKED). No-op for an anonymous request.
 */
export async function recheckToken(req: FastifyRequest, tokens: TokenStore, now: number): Promise<void> {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return;
  // Straight from the database: the point of the recheck is a change made since the request began.
  const record = await tokens.byHashFresh(tokenHash(bearerToken(header)));
  if (!record) throw new SvcError('TOKEN_INVALID', 'token: not known here');
  refuseDead(record, now);
}

/** The caller of a `req` route (authentication has already run). */
export function identityOf(req: FastifyRequest): Identity {
  if (!req.identity) throw new SvcError('TOKEN_MISSING');
  return req.identity;
}
