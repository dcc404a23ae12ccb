/**
 * App sign-in in a real browser (spec/1-concepts.md "App sign-in", "App authorization";
 * spec/2-endpoints.md "App sign-in (OAuth)", "Connector"): the real relay as
 * http://localhost:<port>, headless Chromium with a virtual passkey authenticator, and an app
 * played by the test (a loopback return address, registration, PKCE S256, the code exchange,
 * the connector). The person's part is only what a person does on the web page: press Sign in,
 * then Approve or Decline.
 *
 * The approval page's screenshots go to test/output/app-sign-in-browser/.
 *
 * @module-tag slow
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/client';
import {
  describeWithBrowser,
  launchBrowser,
  openPasskeyPage,
  passkeySignIn,
  startLocalhostRelay,
  testOutputDir,
  type PasskeyPage,
} from '../helpers/browser.js';
import {
  authorizeUrl,
  exchangeCode,
  pkcePair,
  registerApp,
  startReturnAddress,
  type Pkce,
  type RegisteredApp,
  type ReturnAddress,
} from '../helpers/oauth-app.js';
import { call, type RunningRelay } from '../helpers/relay.js';

/** Ten minutes: how long an authorization request is kept (spec "Authorization"). */
const REQUEST_LIFETIME_MS = 10 * 60 * 1000;

describeWithBrowser('app sign-in in a real browser', () => {
  let browser: Browser;
  let relay: RunningRelay;
  let back: ReturnAddress;
  let app: RegisteredApp;
  let output: string;
  const pages: PasskeyPage[] = [];

  beforeAll(async () => {
    output = testOutputDir('app-sign-in-browser');
    [browser, relay, back] = await Promise.all([launchBrowser(), startLocalhostRelay(), startReturnAddress()]);
    app = await registerApp(relay, `${back.origin}/callback`, { client_name: 'Notes for Agents', client_uri: 'https://notes.example' });
  });

  afterEach(async () => {
    await Promise.all(pages.splice(0).map((p) => p.close()));
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([relay?.close(), back?.close()]);
  });

  /** A fresh browser profile with its own authenticator (no passkey yet: the first use makes one). */
  async function person(viewport?: { width: number; height: number }): Promise<PasskeyPage> {
    const p = await openPasskeyPage(browser, viewport ? { viewport } : {});
    pages.push(p);
    return p;
  }

  /**
   * Open the authorize address the app sends the person to and sign in with a passkey (made
   * now, on first use), by mouse or keyboard, until the page offers Approve.
   */
  async function toApproval(page: Page, url: string, by: 'mouse' | 'keyboard' = 'mouse'): Promise<void> {
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/app/authorize');
    if (by === 'keyboard') {
      await tabTo(page, 'sign-in');
      await page.keyboard.press('Enter');
    } else {
      await page.click('#sign-in');
    }
    await page.locator('#approve').waitFor({ state: 'visible' });
  }

  /** Press Tab until the element with `id` has focus (at most 20 presses), as a keyboard user would. */
  async function tabTo(page: Page, id: string): Promise<void> {
    for (let presses = 0; presses < 20; presses++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => (globalThis as any).document.activeElement?.id)) === id) return;
    }
    throw new Error(`#${id} never took the focus from Tab`);
  }

  /**
   * Do what sends the browser back to the app and answer what it came back with, once the page
   * has arrived there (so the test's next navigation does not cut the redirect short).
   */
  async function returnedAfter(page: Page, act: () => Promise<void>): Promise<URLSearchParams> {
    const arrived = page.waitForURL((url) => url.origin === back.origin);
    await act();
    const [returned] = await Promise.all([back.next(), arrived]);
    return returned;
  }

  /** Press Approve or Decline with the mouse; answers what the app was sent back with. */
  function press(page: Page, button: 'approve' | 'decline'): Promise<URLSearchParams> {
    return returnedAfter(page, () => page.click(`#${button}`));
  }

  /** The whole way from the authorize address to a code the app received. */
  async function approvedCode(pkce: Pkce, state: string): Promise<string> {
    const p = await person();
    await toApproval(p.page, authorizeUrl(relay, app, pkce, { state }));
    const returned = await press(p.page, 'approve');
    expect(returned.get('state')).toBe(state);
    return returned.get('code')!;
  }

  it('signs an app in: a passkey made on first use, approval, the code traded with PKCE, a tool called at /mcp/connect, then the token revoked and the next call refused', async () => {
    const p = await person();
    const pkce = pkcePair();
    const state = 'state-of-the-app';
    await toApproval(p.page, authorizeUrl(relay, app, pkce, { state, scope: 'read write' }));

    // The authenticator now holds one passkey for the relay's rp id.
    const held = await p.credentials();
    expect(held).toHaveLength(1);
    expect(held[0]!.rpId).toBe('localhost');

    // What the person is shown before deciding.
    await expect(text(p.page, '#app-name')).resolves.toBe('Notes for Agents');
    await expect(text(p.page, '#app-publisher')).resolves.toContain('notes.example');
    await expect(text(p.page, '#return-address')).resolves.toContain(app.redirectUri);
    await expect(text(p.page, '#access')).resolves.toBe('read and write');
    await p.page.screenshot({ path: join(output, 'approval.png'), fullPage: true });

    const returned = await press(p.page, 'approve');
    expect(returned.get('state')).toBe(state);
    expect(returned.get('iss')).toBe(relay.url);
    const code = returned.get('code');
    expect(code).toBeTruthy();

    const traded = await exchangeCode(relay, { code: code!, redirectUri: app.redirectUri, verifier: pkce.verifier, clientId: app.clientId });
    expect(traded.status).toBe(200);
    expect(traded.body).toMatchObject({ token_type: 'Bearer', scope: 'read write' });
    expect(traded.body.refresh_token).toBeUndefined();
    expect(traded.body.expires_in).toBe(90 * 24 * 60 * 60);
    expect(traded.headers.get('cache-control')).toBe('no-store');
    const appToken: string = traded.body.access_token;
    expect(appToken).toMatch(/^svc_[0-9a-f]{64}$/);

    // The app's token works at the connector, as the KEY of the passkey that approved.
    const { token: keyToken, peerId } = await passkeySignIn(p, relay.url);
    const mcp = new Client({ name: 'browser-test-app', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp/connect`), {
        requestInit: { headers: { authorization: `Bearer ${appToken}` } },
      }),
    );
    try {
      const whoami = await mcp.callTool({ name: 'svc_whoami', arguments: {} });
      expect(whoami.isError).toBeFalsy();
      expect(JSON.stringify(whoami.content)).toContain(peerId);
      const created = await mcp.callTool({ name: 'svc_space_control', arguments: { action: 'create', name: 'app-made-space', title: 'Made by an app' } });
      expect(created.isError).toBeFalsy();
      expect((await call(relay, 'GET', '/v1/spaces/app-made-space', { token: keyToken })).status).toBe(200);

      // The KEY sees the app's token in its list, named by the app, and revokes it by id.
      const list = await call(relay, 'GET', '/v1/tokens', { token: keyToken });
      expect(list.status).toBe(200);
      const appEntry = (list.body.items as any[]).find((t) => t.app?.client_id === app.clientId);
      expect(appEntry).toMatchObject({ app: { client_id: app.clientId, name: 'Notes for Agents' }, scope: 'read write' });
      const revoked = await call(relay, 'DELETE', `/v1/tokens/${appEntry.id}`, { token: keyToken });
      expect(revoked.status).toBe(200);

      // The next call is refused: 401 naming where to sign in again.
      await expect(mcp.callTool({ name: 'svc_whoami', arguments: {} })).rejects.toThrow();
      const after = await connectorCall(appToken, 'tools/call', { name: 'svc_whoami', arguments: {} });
      expect(after.status).toBe(401);
      expect(after.headers.get('www-authenticate')).toContain(
        `resource_metadata="${relay.url}/.well-known/oauth-protected-resource/mcp/connect"`,
      );
      expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    } finally {
      await mcp.close();
    }
  });

  it("lets an MCP client that knows only the connector's address sign in through the SDK's own OAuth: 401, discovery, registration, the browser, the code, then tools", async () => {
    const redirectUrl = `${back.origin}/sdk-callback`;
    const stored: { client?: any; tokens?: any; verifier?: string; state?: string; discovery?: OAuthDiscoveryState } = {};
    let sentTo: URL | undefined;
    const provider: OAuthClientProvider = {
      get redirectUrl() {
        return redirectUrl;
      },
      get clientMetadata() {
        return {
          client_name: 'SDK app',
          redirect_uris: [redirectUrl],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        };
      },
      state: () => (stored.state = randomBytes(16).toString('hex')),
      clientInformation: () => stored.client,
      saveClientInformation: (info) => void (stored.client = info),
      tokens: () => stored.tokens,
      saveTokens: (tokens) => void (stored.tokens = tokens),
      redirectToAuthorization: (url) => void (sentTo = url),
      saveCodeVerifier: (verifier) => void (stored.verifier = verifier),
      codeVerifier: () => stored.verifier!,
      // Kept with the code verifier so that, when the browser comes back, the SDK can check the
      // code is exchanged at the authorization server it was sent to.
      saveDiscoveryState: (state) => void (stored.discovery = state),
      discoveryState: () => stored.discovery,
    };
    const connector = new URL(`${relay.url}/mcp/connect`);

    // Without a token the connector answers 401; the SDK finds the authorization server from
    // the resource metadata it names, registers, and asks for the person's browser.
    const first = new StreamableHTTPClientTransport(connector, { authProvider: provider });
    await expect(new Client({ name: 'sdk-app', version: '1.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    expect(stored.client?.client_id).toBeTruthy();
    expect(sentTo?.origin).toBe(relay.url);
    expect(stored.discovery?.authorizationServerUrl).toMatch(new RegExp(`^${relay.url}/?$`));
    expect(sentTo?.pathname).toBe('/oauth/authorize');
    expect(sentTo?.searchParams.get('code_challenge_method')).toBe('S256');

    const p = await person();
    await toApproval(p.page, sentTo!.href);
    await expect(text(p.page, '#app-name')).resolves.toBe('SDK app');
    const returned = await press(p.page, 'approve');
    expect(returned.get('state')).toBe(stored.state);
    await first.finishAuth(returned);
    expect(stored.tokens?.access_token).toMatch(/^svc_[0-9a-f]{64}$/);

    const mcp = new Client({ name: 'sdk-app', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(connector, { authProvider: provider }));
    try {
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['search', 'fetch', 'svc_whoami']));
      const whoami = await mcp.callTool({ name: 'svc_whoami', arguments: {} });
      expect(whoami.isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
  });

  it('signs a returning person in with the passkey made on the first visit: no second passkey, the same KEY', async () => {
    const p = await person();
    await toApproval(p.page, authorizeUrl(relay, app, pkcePair()));
    await press(p.page, 'approve');
    const { peerId: firstKey } = await passkeySignIn(p, relay.url);

    await toApproval(p.page, authorizeUrl(relay, app, pkcePair(), { state: 'second-visit' }));
    expect(await p.credentials()).toHaveLength(1);
    expect((await press(p.page, 'approve')).get('state')).toBe('second-visit');
    expect((await passkeySignIn(p, relay.url)).peerId).toBe(firstKey);
  });

  // The page signs in with a discoverable credential when the browser remembers none, so a
  // person whose site data was cleared (or another browser sharing synced passkeys) keeps one KEY.
  it('signs a person in with the passkey the authenticator already holds even when the browser forgot it (site data cleared): the same KEY', async () => {
    const p = await person();
    await toApproval(p.page, authorizeUrl(relay, app, pkcePair()));
    await press(p.page, 'approve');
    const { peerId: firstKey } = await passkeySignIn(p, relay.url);
    await p.page.evaluate(() => (globalThis as any).localStorage.clear());

    await toApproval(p.page, authorizeUrl(relay, app, pkcePair(), { state: 'forgotten' }));
    expect((await press(p.page, 'approve')).get('state')).toBe('forgotten');
    expect(await p.credentials()).toHaveLength(1);
    expect((await passkeySignIn(p, relay.url)).peerId).toBe(firstKey);
  });

  it('shows a read-only request as "read only", and its token reads at /mcp/connect while a write is 403 insufficient_scope with nothing written', async () => {
    const p = await person();
    const pkce = pkcePair();
    await toApproval(p.page, authorizeUrl(relay, app, pkce, { scope: 'read', state: 'read-state' }));
    await expect(text(p.page, '#access')).resolves.toBe('read only');
    const code = (await press(p.page, 'approve')).get('code')!;
    const traded = await exchangeCode(relay, { code, redirectUri: app.redirectUri, verifier: pkce.verifier, clientId: app.clientId });
    expect(traded.status).toBe(200);
    expect(traded.body.scope).toBe('read');
    const readOnly: string = traded.body.access_token;

    const read = await connectorCall(readOnly, 'tools/call', { name: 'svc_whoami', arguments: {} });
    expect(read.status).toBe(200);
    const write = await connectorCall(readOnly, 'tools/call', {
      name: 'svc_space_control',
      arguments: { action: 'create', name: 'read-only-app-space', title: 'Should not exist' },
    });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
    const { token: keyToken } = await passkeySignIn(p, relay.url);
    expect((await call(relay, 'GET', '/v1/spaces/read-only-app-space', { token: keyToken })).status).toBe(404);
  });

  it('tells a person whose passkey prompt failed that no passkey was used, and a second press signs in', async () => {
    const p = await person();
    await p.cdp.send('WebAuthn.setUserVerified', { authenticatorId: p.authenticatorId, isUserVerified: false });
    await p.page.goto(authorizeUrl(relay, app, pkcePair(), { state: 'retry-state' }));
    await p.page.click('#sign-in');
    await expect.poll(() => text(p.page, '#status')).toContain('No passkey was used');
    expect(await p.page.locator('#approve').isVisible()).toBe(false);
    expect(await p.page.locator('#sign-in').isEnabled()).toBe(true);

    await p.cdp.send('WebAuthn.setUserVerified', { authenticatorId: p.authenticatorId, isUserVerified: true });
    await p.page.click('#sign-in');
    await p.page.locator('#approve').waitFor({ state: 'visible' });
    expect((await press(p.page, 'approve')).get('state')).toBe('retry-state');
  });

  it('sends the browser back to the app with access_denied when the person declines, and no code', async () => {
    const p = await person();
    const pkce = pkcePair();
    await toApproval(p.page, authorizeUrl(relay, app, pkce, { state: 'declined-state' }));
    const returned = await press(p.page, 'decline');
    expect(returned.get('error')).toBe('access_denied');
    expect(returned.get('state')).toBe('declined-state');
    expect(returned.get('iss')).toBe(relay.url);
    expect(returned.get('code')).toBeNull();
  });

  it('refuses an approval once the request has waited past ten minutes: the page says so and the browser stays', async () => {
    const p = await person();
    await toApproval(p.page, authorizeUrl(relay, app, pkcePair(), { state: 'late-state' }));
    const seen = back.returns.length;
    relay.clock.advance(REQUEST_LIFETIME_MS + 1000);
    try {
      await p.page.click('#approve');
      await expect.poll(() => text(p.page, '#status')).toContain('This app authorization request has expired.');
    } finally {
      relay.clock.advance(-(REQUEST_LIFETIME_MS + 1000));
    }
    expect(new URL(p.page.url()).origin).toBe(relay.url);
    expect(back.returns.length).toBe(seen);
  });

  it('trades a code once: the second exchange is invalid_grant', async () => {
    const pkce = pkcePair();
    const code = await approvedCode(pkce, 'reuse-state');
    const fields = { code, redirectUri: app.redirectUri, verifier: pkce.verifier, clientId: app.clientId };
    expect((await exchangeCode(relay, fields)).status).toBe(200);
    const again = await exchangeCode(relay, fields);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
    expect(again.body.access_token).toBeUndefined();
  });

  it('refuses a code traded with a verifier that is not the one its challenge was made from (invalid_grant)', async () => {
    const pkce = pkcePair();
    const code = await approvedCode(pkce, 'verifier-state');
    const wrong = await exchangeCode(relay, { code, redirectUri: app.redirectUri, verifier: pkcePair().verifier, clientId: app.clientId });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect(wrong.body.access_token).toBeUndefined();
  });

  it('refuses a code traded with another return address than the one it was issued for (invalid_grant)', async () => {
    const pkce = pkcePair();
    const code = await approvedCode(pkce, 'redirect-state');
    const wrong = await exchangeCode(relay, { code, redirectUri: `${back.origin}/elsewhere`, verifier: pkce.verifier, clientId: app.clientId });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect(wrong.body.access_token).toBeUndefined();
  });

  it('never sends the browser to a return address the app did not register: the page shows wrong_return_address', async () => {
    const p = await person();
    const seen = back.returns.length;
    await p.page.goto(authorizeUrl(relay, app, pkcePair(), { redirectUri: `${back.origin}/not-registered` }));
    const landed = new URL(p.page.url());
    expect(landed.origin).toBe(relay.url);
    expect(landed.pathname).toBe('/app/authorize');
    expect(landed.searchParams.get('error')).toBe('wrong_return_address');
    await expect.poll(() => text(p.page, '#status')).toContain('did not register');
    expect(await p.page.locator('#sign-in').isVisible()).toBe(false);
    expect(await p.page.locator('#approve').isVisible()).toBe(false);
    expect(back.returns.length).toBe(seen);
  });

  it('works with the keyboard alone: Tab to Sign in, Enter, Tab to Approve, Enter', async () => {
    const p = await person();
    await toApproval(p.page, authorizeUrl(relay, app, pkcePair(), { state: 'keyboard-state' }), 'keyboard');
    await tabTo(p.page, 'approve');
    const returned = await returnedAfter(p.page, () => p.page.keyboard.press('Enter'));
    expect(returned.get('state')).toBe('keyboard-state');
    expect(returned.get('code')).toBeTruthy();
  });

  it('fits a 360 px wide screen without horizontal scrolling, even with a long name and return address', async () => {
    const longBack = `${back.origin}/callback/${'a-rather-long-path-segment-'.repeat(6)}end`;
    const wide = await registerApp(relay, longBack, { client_name: 'An app with a name long enough to need wrapping on a phone' });
    const p = await person({ width: 360, height: 740 });
    await toApproval(p.page, authorizeUrl(relay, wide, pkcePair()));
    const { scrollWidth, clientWidth } = await p.page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return { scrollWidth: root.scrollWidth as number, clientWidth: root.clientWidth as number };
    });
    expect(clientWidth).toBe(360);
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    await p.page.screenshot({ path: join(output, 'approval-360px.png'), fullPage: true });
  });

  it('shows an app name written as HTML as text: no element made, no script run', async () => {
    const name = '<img src=x onerror=alert(1)>';
    const hostile = await registerApp(relay, `${back.origin}/callback`, { client_name: name });
    const p = await person();
    const dialogs: string[] = [];
    p.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await toApproval(p.page, authorizeUrl(relay, hostile, pkcePair()));
    await expect(text(p.page, '#app-name')).resolves.toBe(name);
    expect(await p.page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  function text(page: Page, selector: string): Promise<string> {
    return page.locator(selector).innerText().then((t) => t.trim());
  }

  /** One JSON-RPC request at /mcp/connect with a bearer token, answering status and headers. */
  async function connectorCall(token: string, method: string, params: unknown): Promise<{ status: number; headers: Headers; text: string }> {
    const res = await fetch(`${relay.url}/mcp/connect`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
});
