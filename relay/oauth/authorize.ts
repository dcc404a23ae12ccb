/**
 * Reading an authorization request (spec/2-endpoints.md oauth.authorize; RFC 6749 §4.1.1,
 * §4.1.2.1; RFC 7636; RFC 9207; RFC 8707). The query is attacker-controlled.
 *
 * RFC 6749 §4.1.2.1: while the client or the redirect URI cannot be trusted (missing, unknown,
 * not registered), the browser must never be sent to the redirect URI; it goes to the relay's
 * own page with `error` (unknown_app, wrong_return_address, malformed, busy, unavailable).
 * Once both hold, other problems go back to the app: `error`, `state` when one was sent, and
 * `iss` (RFC 9207).
 */
import { OAUTH_LIMITS } from '../../shared/limits.js';
import { utf8Length } from '../../shared/encoding.js';
import type { ParsedQuery } from '../http/query.js';
import type { Client, ClientFinder } from './clients.js';
import { DocumentRefusal } from './client-documents.js';
import { CODE_CHALLENGE_RE } from './pkce.js';
import { redirectUriRegistered } from './redirect-uris.js';

export type PageError = 'unknown_app' | 'wrong_return_address' | 'malformed' | 'busy' | 'unavailable';

export interface ReadRequest {
  client: Client;
  redirectUri: string;
  scope: 'read' | 'write';
  state: string | null;
  codeChallenge: string;
  resource: string | null;
}

export type AuthorizeOutcome =
  | { kind: 'page'; error: PageError; detail: string }
  | { kind: 'app'; error: string; description: string; redirectUri: string; state: string | null }
  | { kind: 'request'; request: ReadRequest };

const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource'];

/** `read` or `read write` (write implies read); undefined when the scope names anything else. */
export function readScope(text: string | undefined): 'read' | 'write' | undefined {
  if (text === undefined || text.trim() === '') return 'write'; // the default is "read write"
  const words = new Set(text.split(' ').filter((w) => w !== ''));
  for (const w of words) if (w !== 'read' && w !== 'write') return undefined;
  return words.has('write') ? 'write' : 'read';
}

/** How a scope is written on the wire. */
export function scopeText(scope: 'read' | 'write'): string {
  return scope === 'write' ? 'read write' : 'read';
}

export async function readAuthorizeRequest(query: ParsedQuery, clients: ClientFinder, resource: string): Promise<AuthorizeOutcome> {
  const page = (error: PageError, detail: string): AuthorizeOutcome => ({ kind: 'page', error, detail });
  // RFC 6749 §3.1: a parameter sent more than once makes the request malformed.
  for (const p of PARAMS) if (Array.isArray(query[p])) return page('malformed', `${p}: sent more than once`);
  const q = query as Record<string, string | undefined>;
  const clientId = q.client_id;
  if (!clientId || clientId.length > OAUTH_LIMITS.redirectUriMaxBytes) return page('malformed', 'client_id: required');
  let client: Client | undefined;
  try {
    client = await clients.find(clientId);
  } catch (e) {
    if (e instanceof DocumentRefusal) return page(e.kind, e.message);
    return page('unavailable', 'client_id: the app could not be looked up');
  }
  if (client === undefined) return page('unknown_app', 'client_id: no app has that id');
  const redirectUri = q.redirect_uri;
  if (!redirectUri) return page('malformed', 'redirect_uri: required');
  if (!redirectUriRegistered(redirectUri, client.metadata.redirect_uris)) {
    return page('wrong_return_address', 'redirect_uri: not one the app registered');
  }
  const state = q.state ?? null;
  // A state too long to keep is not sent back either: the request is malformed.
  if (state !== null && utf8Length(state) > OAUTH_LIMITS.stateMaxBytes) return page('malformed', `state: at most ${OAUTH_LIMITS.stateMaxBytes} bytes`);

  const toApp = (error: string, description: string): AuthorizeOutcome => ({ kind: 'app', error, description, redirectUri, state });
  if (q.response_type === undefined) return toApp('invalid_request', 'response_type: required (code)');
  if (q.response_type !== 'code') return toApp('unsupported_response_type', 'response_type: only code');
  if (q.code_challenge === undefined) return toApp('invalid_request', 'code_challenge: required (PKCE S256)');
  if (!CODE_CHALLENGE_RE.test(q.code_challenge)) return toApp('invalid_request', 'code_challenge: 43 characters of base64url');
  if (q.code_challenge_method !== 'S256') return toApp('invalid_request', 'code_challenge_method: S256 only');
  const scope = readScope(q.scope);
  if (scope === undefined) return toApp('invalid_scope', 'scope: read, or read write');
  if (q.resource !== undefined && q.resource !== resource) return toApp('invalid_target', `resource: ${resource} only`);
  return {
    kind: 'request',
    request: { client, redirectUri, scope, state, codeChallenge: q.code_challenge, resource: q.resource ?? null },
  };
}

/** The redirect URI with parameters added to its query (RFC 6749 §4.1.2: retained query kept). */
export function redirectWith(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.append(k, v);
  return url.href;
}
