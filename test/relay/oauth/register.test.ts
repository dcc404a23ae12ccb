/**
 * OAuth app sign-in, discovery and registration (spec/2-endpoints.md "App sign-in (OAuth)",
 * spec/3-errors.md "Exceptions"), against the real relay over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startRelay, type RunningRelay } from '../../helpers/relay.js';
import { register } from '../../helpers/oauth-flow.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

const ok = { redirect_uris: ['https://app.example/cb'] };

describe('discovery documents', () => {
  it('protected-resource metadata names the connector and this relay as its authorization server', async () => {
    const r = await call(relay, 'GET', '/.well-known/oauth-protected-resource/mcp/connect');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      resource: `${relay.url}/mcp/connect`,
      authorization_servers: [relay.url],
      scopes_supported: ['read', 'write'],
      bearer_methods_supported: ['header'],
      resource_name: expect.any(String),
      resource_documentation: `${relay.url}/reference`,
    });
  });

  it('authorization-server metadata lists every field, PKCE S256 only, iss on responses and client documents', async () => {
    const r = await call(relay, 'GET', '/.well-known/oauth-authorization-server');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      issuer: relay.url,
      authorization_endpoint: `${relay.url}/oauth/authorize`,
      token_endpoint: `${relay.url}/oauth/token`,
      registration_endpoint: `${relay.url}/oauth/register`,
      scopes_supported: ['read', 'write'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
      code_challenge_methods_supported: ['S256'],
      response_modes_supported: ['query'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${relay.url}/reference`,
    });
    expect(Array.isArray(r.body.token_endpoint_auth_signing_alg_values_supported)).toBe(true);
  });
});

describe('registration (RFC 7591)', () => {
  it('registers a confidential app by default: client_secret_basic, a secret shown once, web, the code grant', async () => {
    const r = await register(relay, { ...ok, client_name: 'Notes app', client_uri: 'https://notes.example', extra_field: 1 });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({
      client_id: expect.stringMatching(/^svc_app_[0-9a-f]{32}$/),
      client_secret: expect.stringMatching(/^svc_secret_[0-9a-f]{64}$/),
      client_secret_expires_at: 0,
      client_id_issued_at: expect.any(Number),
      client_name: 'Notes app',
      client_uri: 'https://notes.example',
      redirect_uris: ['https://app.example/cb'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      application_type: 'web',
    });
    expect(r.body.extra_field).toBeUndefined();
    // The secret is stored only as its hash.
    const row = await relay.store.db.prepare('SELECT secret_hash, metadata FROM oauth_clients WHERE client_id = ?').get(r.body.client_id) as { secret_hash: Buffer; metadata: string };
    expect(row.secret_hash.length).toBe(32);
    expect(row.metadata).not.toContain(r.body.client_secret);
  });

  it('a public app (none) gets no secret; native apps and client_secret_post are taken', async () => {
    const none = await register(relay, { ...ok, token_endpoint_auth_method: 'none', application_type: 'native' });
    expect(none.status).toBe(201);
    expect(none.body.client_secret).toBeUndefined();
    expect(none.body.application_type).toBe('native');
    const post = await register(relay, { ...ok, token_endpoint_auth_method: 'client_secret_post' });
    expect(post.status).toBe(201);
    expect(post.body.client_secret).toMatch(/^svc_secret_/);
  });

  it('takes https, http to a loopback address, and reverse-domain app schemes as redirect URIs', async () => {
    const uris = ['https://a.example/cb?x=1', 'http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'http://localhost:3000/cb', 'com.example.app:/oauth'];
    const r = await register(relay, { redirect_uris: uris });
    expect(r.status).toBe(201);
    expect(r.body.redirect_uris).toEqual(uris);
  });

  it('cuts a client name to 128 bytes at a character boundary', async () => {
    const r = await register(relay, { ...ok, client_name: 'é'.repeat(100) });
    expect(r.status).toBe(201);
    expect(r.body.client_name).toBe('é'.repeat(64));
    expect(Buffer.byteLength(r.body.client_name)).toBe(128);
  });

  it('asking for refresh tokens too still registers the code grant alone', async () => {
    const r = await register(relay, { ...ok, grant_types: ['authorization_code', 'refresh_token'] });
    expect(r.status).toBe(201);
    expect(r.body.grant_types).toEqual(['authorization_code']);
  });

  const refusals: [string, unknown, string][] = [
    ['redirect_uris missing', {}, 'invalid_redirect_uri'],
    ['redirect_uris empty', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['eleven redirect_uris', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, 'invalid_redirect_uri'],
    ['a redirect URI over 2,048 bytes', { redirect_uris: [`https://a.example/${'x'.repeat(2040)}`] }, 'invalid_redirect_uri'],
    ['a redirect URI with a fragment', { redirect_uris: ['https://a.example/cb#frag'] }, 'invalid_redirect_uri'],
    ['http to a host that is not loopback', { redirect_uris: ['http://a.example/cb'] }, 'invalid_redirect_uri'],
    ['a scheme that is not reverse-domain', { redirect_uris: ['myapp:/cb'] }, 'invalid_redirect_uri'],
    ['javascript: as a redirect URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['a relative redirect URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
    ['a redirect URI that is not a string', { redirect_uris: [7] }, 'invalid_redirect_uri'],
    ['an unknown auth method', { ...ok, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
    ['client_uri over http', { ...ok, client_uri: 'http://a.example' }, 'invalid_client_metadata'],
    ['client_name not a string', { ...ok, client_name: 5 }, 'invalid_client_metadata'],
    ['grant_types without authorization_code', { ...ok, grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    ['response_types other than code', { ...ok, response_types: ['token'] }, 'invalid_client_metadata'],
    ['an unknown application_type', { ...ok, application_type: 'desktop' }, 'invalid_client_metadata'],
    ['a body that is not an object', [ok], 'invalid_request'],
  ];
  for (const [what, body, error] of refusals) {
    it(`refuses ${what} with ${error} in OAuth form and registers nothing`, async () => {
      const before = await relay.store.db.prepare('SELECT count(*) AS n FROM oauth_clients').get() as { n: number };
      const r = await register(relay, body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error, error_description: expect.any(String) });
      const after = await relay.store.db.prepare('SELECT count(*) AS n FROM oauth_clients').get() as { n: number };
      expect(after.n).toBe(before.n);
    });
  }

  it('refuses a body that is not JSON in OAuth form (invalid_request)', async () => {
    const res = await fetch(`${relay.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"redirect_uris": [' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('app sign-in turned off', () => {
  it('answers OAUTH_UNAVAILABLE on metadata, register, token and authorizations, and a plain-text 404 at authorize and the page', async () => {
    for (const settings of [{ appSignIn: false }, { passkeys: false as const }]) {
      const off = await startRelay(settings);
      try {
        for (const [method, path] of [
          ['GET', '/.well-known/oauth-protected-resource/mcp/connect'],
          ['GET', '/.well-known/oauth-authorization-server'],
          ['POST', '/oauth/register'],
          ['POST', '/oauth/token'],
        ] as const) {
          const r = await call(off, method, path, method === 'POST' ? { body: ok } : {});
          expect(r.status, path).toBe(404);
          expect(r.body.error.code, path).toBe('OAUTH_UNAVAILABLE');
        }
        const { mintToken } = await import('../../helpers/relay.js');
        const key = await mintToken(off.url);
        const get = await call(off, 'GET', '/v1/authorizations/00000000-0000-4000-8000-000000000000', { token: key.token });
        expect(get.body.error.code).toBe('OAUTH_UNAVAILABLE');
        for (const path of ['/oauth/authorize?client_id=x', '/app/authorize?request=x']) {
          const res = await fetch(`${off.url}${path}`, { redirect: 'manual' });
          expect(res.status).toBe(404);
          expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        }
      } finally {
        await off.close();
      }
    }
  });
});

describe('capabilities', () => {
  it('name the oauth module available with its metadata address, and unavailable when app sign-in is off', async () => {
    const on = await call(relay, 'GET', '/v1/capabilities');
    expect(on.body.modules.oauth).toEqual({ status: 'available', metadata: `${relay.url}/.well-known/oauth-authorization-server` });
    const off = await startRelay({ appSignIn: false });
    try {
      const r = await call(off, 'GET', '/v1/capabilities');
      expect(r.body.modules.oauth).toEqual({ status: 'unavailable' });
    } finally {
      await off.close();
    }
  });
});
