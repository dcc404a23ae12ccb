/**
 * OAuth app sign-in from the authorize redirect to the app token (spec/2-endpoints.md "App
 * sign-in (OAuth)"; RFC 6749, RFC 7636, RFC 9207), against the real relay over HTTP. The person's
 * approval is made with an ordinary KEY token, as the page does after its passkey sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../relay/app.js';
import { CONNECTOR_HEADER } from '../../../relay/http/auth.js';
import { call, mintToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import {
  appToken,
  approveCode,
  authorize,
  authorizeParams,
  exchange,
  exchangeParams,
  pkcePair,
  publicApp,
  register,
  REDIRECT,
  startAuthorization,
} from '../../helpers/oauth-flow.js';

let relay: RunningRelay;
let key: string;
beforeAll(async () => {
  relay = await startRelay();
  key = (await mintToken(relay.url)).token;
});
afterAll(async () => {
  await relay.close();
});

const requestCount = async () => (await relay.store.db.prepare('SELECT count(*) AS n FROM oauth_requests').get() as { n: number }).n;

describe('authorize', () => {
  it('keeps the request and sends the browser to the page with its id', async () => {
    const app = await publicApp(relay);
    const r = await authorize(relay, authorizeParams(app));
    expect(r.status).toBe(302);
    expect(r.url!.origin + r.url!.pathname).toBe(`${relay.url}/app/authorize`);
    const id = r.url!.searchParams.get('request')!;
    const row = (await relay.store.oauth.request(id))!;
    expect(row.expiresAt - row.createdAt).toBe(10 * 60 * 1000);
    expect(row.scope).toBe('write'); // the default is read write
  });

  const pageCases: [string, (app: Awaited<ReturnType<typeof publicApp>>) => Record<string, string> | string, string][] = [
    ['an unknown app', (app) => authorizeParams(app, { client_id: 'svc_app_00000000000000000000000000000000' }), 'unknown_app'],
    ['no client_id', (app) => { const p = authorizeParams(app); delete (p as Record<string, string>).client_id; return p; }, 'malformed'],
    ['a redirect URI the app did not register', (app) => authorizeParams(app, { redirect_uri: 'https://evil.example/cb' }), 'wrong_return_address'],
    ['no redirect URI', (app) => { const p = authorizeParams(app); delete (p as Record<string, string>).redirect_uri; return p; }, 'malformed'],
    ['a parameter sent twice', (app) => `${new URLSearchParams(authorizeParams(app)).toString()}&client_id=${app.clientId}`, 'malformed'],
    ['a state over 2,048 bytes', (app) => authorizeParams(app, { state: 's'.repeat(2049) }), 'malformed'],
    ['a query that does not decode', (app) => `${new URLSearchParams(authorizeParams(app)).toString()}&x=%ZZ`, 'malformed'],
  ];
  for (const [what, params, error] of pageCases) {
    it(`sends ${what} to the page with error=${error}, never to the app, and keeps nothing`, async () => {
      const app = await publicApp(relay);
      const before = await requestCount();
      const r = await authorize(relay, params(app));
      expect(r.status).toBe(302);
      expect(r.location).toBe(`${relay.url}/app/authorize?error=${error}`);
      expect(await requestCount()).toBe(before);
    });
  }

  const appCases: [string, Record<string, string>, string][] = [
    ['an unsupported response type', { response_type: 'token' }, 'unsupported_response_type'],
    ['a scope other than read and write', { scope: 'read admin' }, 'invalid_scope'],
    ['no code challenge', { code_challenge: '' }, 'invalid_request'],
    ['the plain PKCE method', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a resource that is not the connector', { resource: 'https://other.example/mcp' }, 'invalid_target'],
  ];
  for (const [what, extra, error] of appCases) {
    it(`sends ${what} back to the app with error=${error}, its state and iss`, async () => {
      const app = await publicApp(relay);
      const params = authorizeParams(app, extra);
      if (extra.code_challenge === '') delete (params as Record<string, string>).code_challenge;
      const before = await requestCount();
      const r = await authorize(relay, params);
      expect(r.status).toBe(302);
      expect(r.url!.origin + r.url!.pathname).toBe(REDIRECT);
      expect(r.url!.searchParams.get('error')).toBe(error);
      expect(r.url!.searchParams.get('state')).toBe('st-123');
      expect(r.url!.searchParams.get('iss')).toBe(relay.url);
      expect(await requestCount()).toBe(before);
    });
  }

  it('a loopback redirect URI may come back on another port (RFC 8252 §7.3)', async () => {
    const r = await register(relay, { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' });
    const app = { clientId: r.body.client_id, pkce: pkcePair(), redirectUri: 'http://127.0.0.1:49152/cb' };
    const id = await startAuthorization(relay, app);
    const code = await approveCode(relay, key, id);
    const t = await exchange(relay, exchangeParams(app, code));
    expect(t.status).toBe(200);
  });
});

describe('authorizations.get, approve and decline', () => {
  it('get shows the app, its publisher, the return address and whether it may write', async () => {
    const app = await publicApp(relay, { client_uri: 'https://notes.example/about' });
    const id = await startAuthorization(relay, app, { scope: 'read' });
    const r = await call(relay, 'GET', `/v1/authorizations/${id}`, { token: key });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id,
      app: { client_id: app.clientId, name: 'Test app', publisher: 'notes.example' },
      return_address: REDIRECT,
      scope: 'read',
      write: false,
      status: 'waiting',
    });
  });

  it('approve answers the redirect with a code, the state and iss', async () => {
    const app = await publicApp(relay);
    const id = await startAuthorization(relay, app);
    const r = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token: key });
    expect(r.status).toBe(200);
    const back = new URL(r.body.redirect_to);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('code')).toMatch(/^svc_code_[0-9a-f]{64}$/);
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(relay.url);
  });

  it('decline answers the redirect with access_denied, and the request is then decided', async () => {
    const app = await publicApp(relay);
    const id = await startAuthorization(relay, app);
    const r = await call(relay, 'POST', `/v1/authorizations/${id}/decline`, { token: key });
    expect(r.status).toBe(200);
    const back = new URL(r.body.redirect_to);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('iss')).toBe(relay.url);
    expect(back.searchParams.get('code')).toBeNull();
    const again = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token: key });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('AUTHORIZATION_DECIDED');
  });

  it('a request answered twice is AUTHORIZATION_DECIDED and its first code stands', async () => {
    const app = await publicApp(relay);
    const id = await startAuthorization(relay, app);
    const code = await approveCode(relay, key, id);
    const again = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token: key });
    expect(again.body.error.code).toBe('AUTHORIZATION_DECIDED');
    expect((await exchange(relay, exchangeParams(app, code))).status).toBe(200);
  });

  it('after ten minutes the request is AUTHORIZATION_EXPIRED, and get shows it expired', async () => {
    const app = await publicApp(relay);
    const id = await startAuthorization(relay, app);
    relay.clock.advance(10 * 60 * 1000);
    try {
      const r = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token: key });
      expect(r.status).toBe(410);
      expect(r.body.error.code).toBe('AUTHORIZATION_EXPIRED');
      const get = await call(relay, 'GET', `/v1/authorizations/${id}`, { token: key });
      expect(get.body.status).toBe('expired');
    } finally {
      relay.clock.advance(-10 * 60 * 1000);
    }
  });

  it('an unknown id is AUTHORIZATION_NOT_FOUND, and the routes need a KEY token', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const r = await call(relay, 'POST', `/v1/authorizations/${id}/approve`, { token: key });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('AUTHORIZATION_NOT_FOUND');
    }
    const anon = await call(relay, 'GET', '/v1/authorizations/00000000-0000-4000-8000-000000000000');
    expect(anon.body.error.code).toBe('TOKEN_MISSING');
  });

  it('a request is deleted a day after it was made (the next request clears it)', async () => {
    const app = await publicApp(relay);
    const id = await startAuthorization(relay, app);
    relay.clock.advance(24 * 60 * 60 * 1000 + 1);
    try {
      await startAuthorization(relay, app);
      expect(await relay.store.oauth.request(id)).toBeUndefined();
      const r = await call(relay, 'GET', `/v1/authorizations/${id}`, { token: key });
      expect(r.body.error.code).toBe('AUTHORIZATION_NOT_FOUND');
    } finally {
      relay.clock.advance(-(24 * 60 * 60 * 1000 + 1));
    }
  });
});

describe('token exchange', () => {
  it('trades a code for a 90-day bearer token, not to be cached, as a form or as JSON', async () => {
    for (const json of [false, true]) {
      const app = await publicApp(relay);
      const code = await approveCode(relay, key, await startAuthorization(relay, app, { scope: 'read', resource: `${relay.url}/mcp/connect` }));
      const r = await exchange(relay, exchangeParams(app, code, { resource: `${relay.url}/mcp/connect` }), { json });
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.body).toEqual({ access_token: expect.stringMatching(/^svc_[0-9a-f]{64}$/), token_type: 'Bearer', expires_in: 7776000, scope: 'read' });
    }
  });

  it('a code used twice is invalid_grant, and the token made from it is revoked', async () => {
    const app = await publicApp(relay);
    const code = await approveCode(relay, key, await startAuthorization(relay, app));
    const first = await exchange(relay, exchangeParams(app, code));
    expect(first.status).toBe(200);
    const events: unknown[] = [];
    const stop = contextOf(relay.app).tokenEvents.on((e) => events.push(e));
    const second = await exchange(relay, exchangeParams(app, code));
    stop();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const row = await relay.store.db.prepare('SELECT id, revoked_at FROM tokens WHERE client_id = ? ').get(app.clientId) as { id: string; revoked_at: number | null };
    expect(row.revoked_at).not.toBeNull();
    expect(events).toEqual([{ peerId: expect.any(String), tokenId: row.id }]);
  });

  const refusals: [string, (app: Awaited<ReturnType<typeof publicApp>>, code: string) => Record<string, string>, string, number][] = [
    ['a wrong verifier', (app, code) => exchangeParams(app, code, { code_verifier: pkcePair().verifier }), 'invalid_grant', 400],
    ['a malformed verifier', (app, code) => exchangeParams(app, code, { code_verifier: 'short' }), 'invalid_request', 400],
    ['another redirect URI', (app, code) => exchangeParams(app, code, { redirect_uri: 'https://app.example/other' }), 'invalid_grant', 400],
    ['an unknown code', (app) => exchangeParams(app, 'svc_code_nope'), 'invalid_grant', 400],
    ['another grant type', (app, code) => exchangeParams(app, code, { grant_type: 'refresh_token' }), 'unsupported_grant_type', 400],
    ['no code', (app, code) => { const p = exchangeParams(app, code); delete (p as Record<string, string>).code; return p; }, 'invalid_request', 400],
    ['a resource that is not the connector', (app, code) => exchangeParams(app, code, { resource: 'https://other.example/mcp' }), 'invalid_target', 400],
    ['an unknown client', (app, code) => exchangeParams(app, code, { client_id: 'svc_app_ffffffffffffffffffffffffffffffff' }), 'invalid_client', 401],
    ['a secret from a public client', (app, code) => exchangeParams(app, code, { client_secret: 'x' }), 'invalid_client', 401],
    ['a client assertion', (app, code) => exchangeParams(app, code, { client_assertion: 'x.y.z', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' }), 'invalid_client', 401],
  ];
  for (const [what, params, error, status] of refusals) {
    it(`refuses ${what} with ${error} (${status}), makes no token, and the code still works`, async () => {
      const app = await publicApp(relay);
      const code = await approveCode(relay, key, await startAuthorization(relay, app));
      const r = await exchange(relay, params(app, code));
      expect(r.status).toBe(status);
      expect(r.body).toEqual({ error, error_description: expect.any(String) });
      const made = await relay.store.db.prepare('SELECT count(*) AS n FROM tokens WHERE client_id = ?').get(app.clientId) as { n: number };
      expect(made.n).toBe(0);
      expect((await exchange(relay, exchangeParams(app, code))).status).toBe(200);
    });
  }

  it('a code past five minutes is invalid_grant', async () => {
    const app = await publicApp(relay);
    const code = await approveCode(relay, key, await startAuthorization(relay, app));
    relay.clock.advance(5 * 60 * 1000);
    try {
      const r = await exchange(relay, exchangeParams(app, code));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('invalid_grant');
    } finally {
      relay.clock.advance(-5 * 60 * 1000);
    }
  });

  it('a confidential app authenticates by its registered method; a wrong secret is invalid_client with 401', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post'] as const) {
      const reg = await register(relay, { redirect_uris: [REDIRECT], token_endpoint_auth_method: method });
      const app = { clientId: reg.body.client_id, secret: reg.body.client_secret as string, pkce: pkcePair(), redirectUri: REDIRECT };
      const send = (code: string, secret: string) =>
        method === 'client_secret_basic'
          ? exchange(relay, exchangeParams(app, code), { headers: { authorization: `Basic ${Buffer.from(`${app.clientId}:${secret}`).toString('base64')}` } })
          : exchange(relay, exchangeParams(app, code, { client_secret: secret }));
      const code = await approveCode(relay, key, await startAuthorization(relay, app));
      const wrong = await send(code, 'svc_secret_wrong');
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toBe('invalid_client');
      // The other method is not this app's way to authenticate.
      const other = method === 'client_secret_basic'
        ? await exchange(relay, exchangeParams(app, code, { client_secret: app.secret }))
        : await exchange(relay, exchangeParams(app, code), { headers: { authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString('base64')}` } });
      expect(other.body.error).toBe('invalid_client');
      const right = await send(code, app.secret);
      expect(right.status).toBe(200);
    }
  });
});

describe('app tokens in authentication', () => {
  it('an app token is refused at every /v1 route without the connector header', async () => {
    const { accessToken } = await appToken(relay);
    for (const [method, path] of [['GET', '/v1/me'], ['GET', '/v1/tokens'], ['GET', '/v1/spaces'], ['DELETE', '/v1/tokens/current']] as const) {
      const r = await call(relay, method, path, { token: accessToken });
      expect(r.status, path).toBe(401);
      expect(r.body.error.code).toBe('TOKEN_INVALID');
      expect(r.body.error.detail).toBe('token: an app token works at /mcp/connect only');
    }
    const wrongSecret = await call(relay, 'GET', '/v1/me', { token: accessToken, headers: { [CONNECTOR_HEADER]: 'f'.repeat(64) } });
    expect(wrongSecret.body.error.code).toBe('TOKEN_INVALID');
  });

  it('through the connector header an app token reads; a read-only one is INSUFFICIENT_SCOPE on a write and changes nothing', async () => {
    const secret = contextOf(relay.app).connectorSecret;
    const reader = await appToken(relay, { scope: 'read' });
    const headers = { [CONNECTOR_HEADER]: secret };
    const me = await relay.app.inject({ method: 'GET', url: '/v1/me', headers: { ...headers, authorization: `Bearer ${reader.accessToken}` } });
    expect(me.statusCode).toBe(200);
    const create = { name: `o-scope-${Date.now()}`, visibility: 'private' };
    const refused = await relay.app.inject({ method: 'POST', url: '/v1/spaces', headers: { ...headers, authorization: `Bearer ${reader.accessToken}`, 'content-type': 'application/json' }, payload: JSON.stringify(create) });
    expect(refused.statusCode).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe('INSUFFICIENT_SCOPE');
    const spaces = await relay.store.db.prepare('SELECT count(*) AS n FROM spaces WHERE name = ?').get(create.name) as { n: number };
    expect(spaces.n).toBe(0);
    // A read sent as POST is still a read.
    const look = await relay.app.inject({ method: 'POST', url: '/v1/invites/look', headers: { ...headers, authorization: `Bearer ${reader.accessToken}`, 'content-type': 'application/json' }, payload: JSON.stringify({ link: 'svc_inv_00000000000000000000000000000000' }) });
    expect(JSON.parse(look.body).error?.code).not.toBe('INSUFFICIENT_SCOPE');
    const writer = await appToken(relay, { scope: 'read write' });
    const made = await relay.app.inject({ method: 'POST', url: '/v1/spaces', headers: { ...headers, authorization: `Bearer ${writer.accessToken}`, 'content-type': 'application/json' }, payload: JSON.stringify(create) });
    expect(JSON.parse(made.body).error?.code).not.toBe('INSUFFICIENT_SCOPE');
  });

  it('tokens.list shows an app token with its app and scope; revoking it by id ends it and tells the token events', async () => {
    const keyToken = (await mintToken(relay.url)).token;
    const { app, accessToken } = await appToken(relay, { scope: 'read', keyToken });
    const list = await call(relay, 'GET', '/v1/tokens', { token: keyToken });
    const listed = list.body.items.find((t: { app?: unknown }) => t.app !== undefined);
    expect(listed).toMatchObject({ app: { client_id: app.clientId, name: 'Test app' }, scope: 'read', current: false });
    const events: unknown[] = [];
    const ctx = contextOf(relay.app);
    const stop = ctx.tokenEvents.on((e) => events.push(e));
    const revoked = await call(relay, 'DELETE', `/v1/tokens/${listed.id}`, { token: keyToken });
    stop();
    expect(revoked.body.revoked).toBe(1);
    expect(events).toEqual([{ peerId: expect.any(String), tokenId: listed.id }]);
    const after = await relay.app.inject({ method: 'GET', url: '/v1/me', headers: { [CONNECTOR_HEADER]: ctx.connectorSecret, authorization: `Bearer ${accessToken}` } });
    expect(JSON.parse(after.body).error.code).toBe('TOKEN_REVOKED');
  });

  it('revoking every token of the KEY tells the token events with no token id', async () => {
    const keyToken = (await mintToken(relay.url)).token;
    await appToken(relay, { keyToken });
    const events: unknown[] = [];
    const stop = contextOf(relay.app).tokenEvents.on((e) => events.push(e));
    await call(relay, 'DELETE', '/v1/tokens', { token: keyToken });
    stop();
    expect(events).toEqual([{ peerId: expect.any(String), tokenId: null }]);
  });
});
