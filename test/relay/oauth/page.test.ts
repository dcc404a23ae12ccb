/**
 * The approval page the relay serves, and the OAuth rate limits of the Limits table
 * ("registration" row), against the real relay.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../relay/app.js';
import { networkOf } from '../../../relay/oauth/network.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import { authorize, authorizeParams, exchange, publicApp, register } from '../../helpers/oauth-flow.js';

let relay: RunningRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(async () => {
  await relay.close();
});

describe('the approval page', () => {
  it('is served with a strict CSP, never cached, and holds no app string and no inline script or style', async () => {
    const app = await publicApp(relay, { client_name: '<img src=x onerror=alert(1)> Evil app' });
    const r = await authorize(relay, authorizeParams(app));
    const res = await fetch(r.location!);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    for (const rule of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]) {
      expect(csp).toContain(rule);
    }
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    expect(html).not.toContain('Evil app');
    expect(html).not.toContain(app.clientId);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // every script is a file
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline handlers
    expect(html).not.toContain('style=');
    for (const id of ['app-name', 'app-publisher', 'return-address', 'access', 'sign-in', 'approve', 'decline', 'status']) {
      expect(html).toContain(`id="${id}"`);
    }
    expect(html).toMatch(/<button type="button" id="sign-in">/);
  });

  it('serves its stylesheet and script with the same CSP; the script sets app strings with textContent only', async () => {
    for (const [path, type] of [['/app/authorize.css', /^text\/css/], ['/app/authorize.js', /^text\/javascript/]] as const) {
      const res = await fetch(`${relay.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(type);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
    const js = readFileSync(new URL('../../../relay/web/authorize.js', import.meta.url), 'utf8');
    expect(js).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });
});

describe('OAuth rate limits', () => {
  it('registration: 60 an hour per address, then RATE_LIMITED in the service envelope with Retry-After', async () => {
    const local = await startRelay();
    try {
      for (let i = 0; i < 60; i++) {
        const r = await register(local, { redirect_uris: ['https://a.example/cb'] });
        expect(r.status).toBe(201);
      }
      const r = await register(local, { redirect_uris: ['https://a.example/cb'] });
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await local.close();
    }
  });

  it('registration per network and service-wide buckets refuse with a flat wait', async () => {
    const local = await startRelay();
    try {
      const ctx = contextOf(local.app);
      await ctx.limiter.buckets.oauthRegistrationPerNetwork.spend(networkOf('127.0.0.1'), local.clock.now(), 120);
      const r = await register(local, { redirect_uris: ['https://a.example/cb'] });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('60');
      expect(r.headers.get('ratelimit-limit')).toBeNull();
    } finally {
      await local.close();
    }
  });

  it('authorize past 300 an hour per address goes to the page with error=busy and Retry-After', async () => {
    const local = await startRelay();
    try {
      const app = await publicApp(local);
      await contextOf(local.app).limiter.buckets.oauthAuthorize.spend('127.0.0.1', local.clock.now(), 300);
      const r = await authorize(local, authorizeParams(app));
      expect(r.status).toBe(302);
      expect(r.location).toBe(`${local.url}/app/authorize?error=busy`);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await local.close();
    }
  });

  it('token exchange past 1,200 a minute per address is RATE_LIMITED in the service envelope', async () => {
    const local = await startRelay();
    try {
      // Spent as of a minute ahead: 1,200 a minute refills one every 50 ms, which a spend in the
      // database (PostgreSQL store) and the request after it can take; a bucket last spent in
      // the future refills nothing before then.
      await contextOf(local.app).limiter.buckets.oauthTokenExchange.spend('127.0.0.1', local.clock.now() + 60_000, 1200);
      const r = await exchange(local, { grant_type: 'authorization_code', code: 'x', redirect_uri: 'https://a.example/cb', code_verifier: 'v'.repeat(43), client_id: 'x' });
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe('RATE_LIMITED');
      expect(r.headers.get('retry-after')).not.toBeNull();
    } finally {
      await local.close();
    }
  });
});
