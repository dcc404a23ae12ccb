/**
 * The app's side of OAuth app sign-in, as a test plays it (spec/1-concepts.md "App sign-in";
 * spec/2-endpoints.md "App sign-in (OAuth)"): a return address the app listens on (a loopback
 * page that records where the browser came back with), registration, a PKCE pair (RFC 7636
 * S256), the authorize address, and the code exchange.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postJson, type RunningRelay } from './relay.js';

/** The query a browser came back to the return address with. */
export type Returned = URLSearchParams;

export interface ReturnAddress {
  /** http://127.0.0.1:<port> (RFC 8252 §7.3: a loopback literal, not localhost). */
  origin: string;
  /** Every return so far, oldest first. */
  returns: Returned[];
  /** The next return after the ones already seen (waits up to `timeoutMs`). */
  next(timeoutMs?: number): Promise<Returned>;
  close(): Promise<void>;
}

/** A loopback server standing in for the app: any GET is a return, answered with a small page. */
export async function startReturnAddress(): Promise<ReturnAddress> {
  const returns: Returned[] = [];
  const waiting: Array<(r: Returned) => void> = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    returns.push(url.searchParams);
    for (const wake of waiting.splice(0)) wake(url.searchParams);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>app</title><p id="returned">back at the app</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let seen = 0;
  return {
    origin,
    returns,
    next(timeoutMs = 10_000) {
      if (returns.length > seen) return Promise.resolve(returns[seen++]!);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the browser did not come back to the app')), timeoutMs);
        waiting.push((r) => {
          clearTimeout(timer);
          seen++;
          resolve(r);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface RegisteredApp {
  clientId: string;
  redirectUri: string;
  /** The whole 201 answer. */
  answer: Record<string, any>;
}

/** Register a public app (no secret, PKCE only) at /oauth/register; throws on any refusal. */
export async function registerApp(
  relay: RunningRelay,
  redirectUri: string,
  extra: Record<string, unknown> = {},
): Promise<RegisteredApp> {
  const res = await postJson(`${relay.url}/oauth/register`, {
    redirect_uris: [redirectUri],
    token_endpoint_auth_method: 'none',
    client_name: 'Test app',
    ...extra,
  });
  if (res.status !== 201) throw new Error(`register refused (${res.status}): ${JSON.stringify(res.body)}`);
  return { clientId: res.body.client_id, redirectUri, answer: res.body };
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

/** RFC 7636 §4.1–4.2: a 43-character verifier of 32 random bytes and its S256 challenge. */
export function pkcePair(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The /oauth/authorize address an app sends the person's browser to. */
export function authorizeUrl(
  relay: RunningRelay,
  app: { clientId: string; redirectUri: string },
  pkce: Pkce,
  opts: { state?: string; scope?: string; redirectUri?: string } = {},
): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: opts.redirectUri ?? app.redirectUri,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    state: opts.state ?? randomBytes(16).toString('hex'),
    scope: opts.scope ?? 'read write',
    resource: `${relay.url}/mcp/connect`,
  });
  return `${relay.url}/oauth/authorize?${q}`;
}

/** POST /oauth/token as a form (RFC 6749 §4.1.3), answering status and the parsed JSON. */
export async function exchangeCode(
  relay: RunningRelay,
  fields: { code: string; redirectUri: string; verifier: string; clientId: string },
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${relay.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: fields.code,
      redirect_uri: fields.redirectUri,
      code_verifier: fields.verifier,
      client_id: fields.clientId,
    }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
