/**
 * OAuth app sign-in over real HTTP for the relay's own tests: registration, the authorize
 * redirect read without following it, approval with a KEY token, and the code exchange as a
 * form or JSON body. Every step answers what the relay said; nothing is mocked.
 */
import { createHash, randomBytes } from 'node:crypto';
import { call, mintToken, type Answer, type RunningRelay } from './relay.js';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkcePair(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'https://app.example/callback';

/** POST /oauth/register with a JSON body (or raw text with `raw`). */
export async function register(relay: RunningRelay, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call(relay, 'POST', '/oauth/register', { body, headers });
}

export interface Redirect {
  status: number;
  location: string | null;
  url: URL | null;
  headers: Headers;
  text: string;
}

/** GET /oauth/authorize without following the redirect. */
export async function authorize(relay: RunningRelay, params: Record<string, string> | string): Promise<Redirect> {
  const query = typeof params === 'string' ? params : new URLSearchParams(params).toString();
  const res = await fetch(`${relay.url}/oauth/authorize?${query}`, { redirect: 'manual' });
  const location = res.headers.get('location');
  return { status: res.status, location, url: location ? new URL(location) : null, headers: res.headers, text: await res.text() };
}

export interface AppUnderTest {
  clientId: string;
  secret?: string;
  pkce: Pkce;
  redirectUri: string;
}

/** Register a public app (auth method none) with one redirect URI. */
export async function publicApp(relay: RunningRelay, extra: Record<string, unknown> = {}): Promise<AppUnderTest> {
  const r = await register(relay, { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test app', ...extra });
  if (r.status !== 201) throw new Error(`register refused: ${r.text}`);
  return { clientId: r.body.client_id, secret: r.body.client_secret, pkce: pkcePair(), redirectUri: (r.body.redirect_uris as string[])[0]! };
}

/** The authorize parameters a well-behaved app sends. */
export function authorizeParams(app: AppUnderTest, extra: Record<string, string> = {}): Record<string, string> {
  return {
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    code_challenge: app.pkce.challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    ...extra,
  };
}

/** Start an authorization and answer the request id the relay's page was sent. */
export async function startAuthorization(relay: RunningRelay, app: AppUnderTest, extra: Record<string, string> = {}): Promise<string> {
  const r = await authorize(relay, authorizeParams(app, extra));
  const id = r.url?.searchParams.get('request');
  if (r.status !== 302 || !id) throw new Error(`authorize did not reach the page with a request: ${r.status} ${r.location}`);
  return id;
}

/** Approve with a KEY token; answers the code the browser would carry back. */
export async function approveCode(relay: RunningRelay, token: string, id: string): Promise<string> {
  const r = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token });
  if (r.status !== 200) throw new Error(`approve refused: ${r.text}`);
  const code = new URL(r.body.redirect_to).searchParams.get('code');
  if (!code) throw new Error('no code in redirect_to');
  return code;
}

/** POST /oauth/token as a form (default) or JSON. */
export async function exchange(
  relay: RunningRelay,
  params: Record<string, string>,
  opts: { json?: boolean; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  headers['content-type'] = opts.json ? 'application/json' : 'application/x-www-form-urlencoded';
  const res = await fetch(`${relay.url}/oauth/token`, {
    method: 'POST',
    headers,
    body: opts.json ? JSON.stringify(params) : new URLSearchParams(params).toString(),
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text, headers: res.headers };
}

/** The exchange parameters for a code of `app`. */
export function exchangeParams(app: AppUnderTest, code: string, extra: Record<string, string> = {}): Record<string, string> {
  return { grant_type: 'authorization_code', code, redirect_uri: app.redirectUri, code_verifier: app.pkce.verifier, client_id: app.clientId, ...extra };
}

/** The whole flow for a public app: a KEY approves, the app gets its token. */
export async function appToken(
  relay: RunningRelay,
  opts: { scope?: string; keyToken?: string } = {},
): Promise<{ app: AppUnderTest; keyToken: string; accessToken: string; answer: Answer }> {
  const app = await publicApp(relay);
  const keyToken = opts.keyToken ?? (await mintToken(relay.url)).token;
  const id = await startAuthorization(relay, app, opts.scope !== undefined ? { scope: opts.scope } : {});
  const code = await approveCode(relay, keyToken, id);
  const answer = await exchange(relay, exchangeParams(app, code));
  if (answer.status !== 200) throw new Error(`exchange refused: ${answer.text}`);
  return { app, keyToken, accessToken: answer.body.access_token, answer };
}
