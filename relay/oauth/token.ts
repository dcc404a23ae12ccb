/**
 * The token endpoint's checks (spec/2-endpoints.md oauth.token; RFC 6749 §3.2.1, §4.1.3, §5.2;
 * RFC 7636 §4.6; RFC 8707 §2.2). The body and the Authorization header are attacker-controlled.
 */
import { timingSafeEqual } from 'node:crypto';
import { sha256 } from '../../shared/hash.js';
import { utf8 } from '../../shared/encoding.js';
import type { AuthorizationRecord } from '../store/oauth.js';
import type { Client, ClientFinder } from './clients.js';
import { OAuthError } from './errors.js';
import { CODE_VERIFIER_RE, verifierMatches } from './pkce.js';

export interface TokenParams {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  client_id?: string;
  client_secret?: string;
  client_assertion?: string;
  client_assertion_type?: string;
  resource?: string;
}

const NAMES = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'client_id', 'client_secret', 'client_assertion', 'client_assertion_type', 'resource'] as const;

/** The body's parameters: each a string sent at most once (RFC 6749 §3.2); others ignored. */
export function readTokenParams(body: unknown): TokenParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'body: form parameters (application/x-www-form-urlencoded) or a JSON object');
  }
  const b = body as Record<string, unknown>;
  const out: TokenParams = {};
  for (const name of NAMES) {
    const v = b[name];
    if (v === undefined) continue;
    if (Array.isArray(v)) throw new OAuthError('invalid_request', `${name}: sent more than once`);
    if (typeof v !== 'string') throw new OAuthError('invalid_request', `${name}: a string`);
    if (v.length > 4096) throw new OAuthError('invalid_request', `${name}: too long`);
    out[name] = v;
  }
  return out;
}

/** HTTP Basic client credentials (RFC 6749 §2.3.1: each part form-urlencoded, then base64). */
export function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header);
  if (!m) throw new OAuthError('invalid_client', 'authorization: expected HTTP Basic with the client id and secret');
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'authorization: Basic credentials need id:secret');
  try {
    const decode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
    return { id: decode(text.slice(0, colon)), secret: decode(text.slice(colon + 1)) };
  } catch {
    throw new OAuthError('invalid_client', 'authorization: Basic credentials do not decode');
  }
}

function secretMatches(secret: string, hash: Uint8Array | null): boolean {
  if (hash === null) return false;
  const sent = sha256(utf8(secret));
  return sent.length === hash.length && timingSafeEqual(sent, hash);
}

/**
 * Authenticate the client by its registered method: none (public clients and client documents:
 * PKCE is their proof), client_secret_basic or client_secret_post. A client that sends the
 * wrong kind of credential, or two kinds, is refused (RFC 6749 §2.3: one method per request).
 */
export async function authenticateClient(p: TokenParams, basic: { id: string; secret: string } | undefined, clients: ClientFinder): Promise<Client> {
  if (p.client_assertion !== undefined || p.client_assertion_type !== undefined) {
    throw new OAuthError('invalid_client', 'client_assertion: not taken here; authenticate with none, client_secret_basic or client_secret_post');
  }
  if (basic !== undefined && p.client_secret !== undefined) throw new OAuthError('invalid_request', 'client_secret: send the secret one way only');
  if (basic !== undefined && p.client_id !== undefined && p.client_id !== basic.id) {
    throw new OAuthError('invalid_client', 'client_id: not the app HTTP Basic names');
  }
  const clientId = basic?.id ?? p.client_id;
  if (clientId === undefined) throw new OAuthError('invalid_client', 'client_id: required (or HTTP Basic)');
  const client = await clients.stored(clientId);
  if (client === undefined) throw new OAuthError('invalid_client', 'client_id: no app has that id');
  const method = client.record.authMethod;
  if (method === 'none') {
    if (basic !== undefined || p.client_secret !== undefined) throw new OAuthError('invalid_client', 'client_secret: this app registered with no secret');
    return client;
  }
  const secret = method === 'client_secret_basic' ? basic?.secret : p.client_secret;
  if (secret === undefined) throw new OAuthError('invalid_client', `client_secret: this app authenticates with ${method}`);
  if (!secretMatches(secret, client.record.secretHash)) throw new OAuthError('invalid_client', 'client_secret: wrong');
  return client;
}

/** The checks on a code's request, inside the redeeming transaction; undefined when it holds. */
export function codeProblem(r: AuthorizationRecord, client: Client, p: Required<Pick<TokenParams, 'redirect_uri' | 'code_verifier'>>, resource: string | undefined): OAuthError | undefined {
  if (r.clientId !== client.record.clientId) return new OAuthError('invalid_grant', 'code: issued to another app');
  if (r.redirectUri !== p.redirect_uri) return new OAuthError('invalid_grant', 'redirect_uri: not the one the code was requested with');
  if (!verifierMatches(p.code_verifier, r.codeChallenge)) return new OAuthError('invalid_grant', 'code_verifier: does not match the code_challenge');
  if (resource !== undefined && r.resource !== null && resource !== r.resource) return new OAuthError('invalid_target', 'resource: not the one the code was requested for');
  return undefined;
}

/** The parameters the authorization_code grant requires, present and well formed. */
export function requireGrantParams(p: TokenParams): { code: string; redirect_uri: string; code_verifier: string } {
  if (p.grant_type === undefined) throw new OAuthError('invalid_request', 'grant_type: required (authorization_code)');
  if (p.grant_type !== 'authorization_code') throw new OAuthError('unsupported_grant_type', 'grant_type: authorization_code only (no refresh tokens here)');
  if (!p.code) throw new OAuthError('invalid_request', 'code: required');
  if (!p.redirect_uri) throw new OAuthError('invalid_request', 'redirect_uri: required');
  if (!p.code_verifier) throw new OAuthError('invalid_request', 'code_verifier: required (PKCE)');
  if (!CODE_VERIFIER_RE.test(p.code_verifier)) throw new OAuthError('invalid_request', 'code_verifier: 43 to 128 of A-Z a-z 0-9 . _ ~ -');
  return { code: p.code, redirect_uri: p.redirect_uri, code_verifier: p.code_verifier };
}
