/**
 * Client metadata: what /oauth/register accepts (spec/2-endpoints.md oauth.register; RFC 7591
 * §2) and what a client ID metadata document may say. Input is attacker-controlled; every
 * string of it reaches a person only through the web page's textContent.
 */
import { OAUTH_LIMITS } from '../../shared/limits.js';
import { utf8 } from '../../shared/encoding.js';
import { OAuthError } from './errors.js';
import { redirectUrisProblem } from './redirect-uris.js';

export type AuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
export const AUTH_METHODS: readonly AuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];

/** A client as the relay keeps and answers it. */
export interface ClientMetadata {
  client_name?: string;
  client_uri?: string;
  redirect_uris: string[];
  grant_types: ['authorization_code'];
  response_types: ['code'];
  token_endpoint_auth_method: AuthMethod;
  application_type: 'web' | 'native';
}

/** A client name cut to 128 bytes of UTF-8 at a character boundary (Limits: "client name cut to 128 bytes"). */
export function cutName(name: string): string {
  const bytes = utf8(name);
  if (bytes.length <= OAUTH_LIMITS.clientNameMaxBytes) return name;
  let end = OAUTH_LIMITS.clientNameMaxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back to the start of a character
  return new TextDecoder().decode(bytes.subarray(0, end));
}

function httpsUri(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > OAUTH_LIMITS.redirectUriMaxBytes) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
  } catch {
    return false;
  }
}

/**
 * Read registration metadata (RFC 7591 §2, with the rules of 2-endpoints.md); other fields are
 * ignored. `document`: read for a client ID metadata document, where the client authenticates
 * with nothing (it holds no secret the relay issued): any other method is refused.
 */
export function readClientMetadata(body: unknown, opts: { document?: boolean } = {}): ClientMetadata {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new OAuthError('invalid_request', 'body: a JSON object of client metadata');
  }
  const b = body as Record<string, unknown>;
  const uris = redirectUrisProblem(b.redirect_uris);
  if (uris !== undefined) throw new OAuthError('invalid_redirect_uri', uris);

  const method = b.token_endpoint_auth_method ?? (opts.document ? 'none' : 'client_secret_basic');
  if (typeof method !== 'string' || !(AUTH_METHODS as readonly string[]).includes(method)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method: one of ${AUTH_METHODS.join(', ')}`);
  }
  if (opts.document && method !== 'none') {
    throw new OAuthError('invalid_client_metadata', 'token_endpoint_auth_method: a client document authenticates with none');
  }
  if (b.client_name !== undefined && typeof b.client_name !== 'string') {
    throw new OAuthError('invalid_client_metadata', 'client_name: a string');
  }
  if (b.client_uri !== undefined && !httpsUri(b.client_uri)) {
    throw new OAuthError('invalid_client_metadata', 'client_uri: an https URI');
  }
  if (b.grant_types !== undefined && (!Array.isArray(b.grant_types) || !b.grant_types.includes('authorization_code'))) {
    throw new OAuthError('invalid_client_metadata', 'grant_types: a list that includes authorization_code');
  }
  if (b.response_types !== undefined && (!Array.isArray(b.response_types) || b.response_types.length === 0 || b.response_types.some((t) => t !== 'code'))) {
    throw new OAuthError('invalid_client_metadata', 'response_types: ["code"]');
  }
  const appType = b.application_type ?? 'web';
  if (appType !== 'web' && appType !== 'native') {
    throw new OAuthError('invalid_client_metadata', 'application_type: web or native');
  }
  const name = typeof b.client_name === 'string' ? cutName(b.client_name) : undefined;
  return {
    ...(name !== undefined && name !== '' ? { client_name: name } : {}),
    ...(typeof b.client_uri === 'string' ? { client_uri: b.client_uri } : {}),
    redirect_uris: [...(b.redirect_uris as string[])],
    // Only the code grant is served, whatever else was asked for (no refresh tokens here).
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: method as AuthMethod,
    application_type: appType,
  };
}

/** Who publishes a client, as the web page shows it: client_uri's host, else a document's own host. */
export function publisherOf(clientId: string, meta: Pick<ClientMetadata, 'client_uri'>, document: boolean): string | null {
  const from = meta.client_uri ?? (document ? clientId : undefined);
  if (from === undefined) return null;
  try {
    return new URL(from).host;
  } catch {
    return null;
  }
}
