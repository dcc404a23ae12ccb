/**
 * Client ID metadata documents: an https `client_id` naming the app's own JSON document,
 * fetched by the relay (here from a real loopback HTTP server, allowed only because the test
 * relay runs with allowLoopbackClientDocuments), and never from a private address otherwise.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressAllowed, keepSecondsOf } from '../../../relay/oauth/client-documents.js';
import { networkOf } from '../../../relay/oauth/network.js';
import { call, mintToken, startRelay, type RunningRelay } from '../../helpers/relay.js';
import { approveCode, authorize, exchange, exchangeParams, pkcePair, startAuthorization } from '../../helpers/oauth-flow.js';

interface Served {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

let server: Server;
let origin: string;
const documents = new Map<string, Served>();
const hits = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const doc = documents.get(path);
    const answer = () => {
      if (!doc) return void res.writeHead(404).end();
      const text = typeof doc.body === 'string' ? doc.body : JSON.stringify(doc.body);
      res.writeHead(doc.status ?? 200, { 'content-type': 'application/json', ...doc.headers });
      res.end(text);
    };
    if (doc?.delayMs) setTimeout(answer, doc.delayMs);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function serve(path: string, doc: Partial<Served> & { body?: unknown } = {}): string {
  const clientId = `${origin}${path}`;
  documents.set(path, { body: { client_id: clientId, client_name: 'Doc app', redirect_uris: ['https://doc.example/cb'], ...(doc.body as object) }, ...doc, ...(doc.body === undefined ? {} : { body: { client_id: clientId, client_name: 'Doc app', redirect_uris: ['https://doc.example/cb'], ...(doc.body as object) } }) });
  return clientId;
}

describe('with loopback documents allowed (a test relay)', () => {
  let relay: RunningRelay;
  let key: string;
  beforeAll(async () => {
    relay = await startRelay({ allowLoopbackClientDocuments: true });
    key = (await mintToken(relay.url)).token;
  });
  afterAll(async () => {
    await relay.close();
  });

  it('an app known only by its document signs in: its name, publisher (the document host) and a token for a public client', async () => {
    const clientId = serve('/apps/doc.json');
    const app = { clientId, pkce: pkcePair(), redirectUri: 'https://doc.example/cb' };
    const id = await startAuthorization(relay, app);
    const get = await call(relay, 'GET', `/v1/authorizations/${id}`, { token: key });
    expect(get.body.app).toMatchObject({ client_id: clientId, name: 'Doc app', publisher: new URL(origin).host });
    const code = await approveCode(relay, key, id);
    const t = await exchange(relay, exchangeParams(app, code));
    expect(t.status).toBe(200);
  });

  it('keeps a document for its max-age and fetches it again after', async () => {
    const clientId = serve('/apps/cached.json', { headers: { 'cache-control': 'max-age=120' } });
    const app = { clientId, pkce: pkcePair(), redirectUri: 'https://doc.example/cb' };
    await startAuthorization(relay, app);
    await startAuthorization(relay, app);
    expect(hits.get('/apps/cached.json')).toBe(1);
    relay.clock.advance(121_000);
    try {
      await startAuthorization(relay, app);
      expect(hits.get('/apps/cached.json')).toBe(2);
    } finally {
      relay.clock.advance(-121_000);
    }
  });

  const unusable: [string, () => string][] = [
    ['names another client_id', () => serve('/apps/other.json', { body: { client_id: 'https://elsewhere.example/doc.json' } })],
    ['answers 404', () => `${origin}/apps/missing.json`],
    ['is not JSON', () => { documents.set('/apps/text.json', { body: 'not json' }); return `${origin}/apps/text.json`; }],
    ['is over 64 KiB', () => serve('/apps/big.json', { body: { client_name: 'x'.repeat(70 * 1024) } })],
    ['holds a client secret', () => serve('/apps/secret.json', { body: { client_secret: 's' } })],
    ['asks for a secret method', () => serve('/apps/method.json', { body: { token_endpoint_auth_method: 'client_secret_basic' } })],
    ['has no redirect URIs', () => serve('/apps/noredirect.json', { body: { redirect_uris: [] } })],
  ];
  for (const [what, make] of unusable) {
    it(`a document that ${what} is unknown_app on the page`, async () => {
      const clientId = make();
      const r = await authorize(relay, { response_type: 'code', client_id: clientId, redirect_uri: 'https://doc.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      expect(r.location).toBe(`${relay.url}/app/authorize?error=unknown_app`);
    });
  }

  it('a redirect URI the document does not list is wrong_return_address', async () => {
    const clientId = serve('/apps/doc2.json');
    const r = await authorize(relay, { response_type: 'code', client_id: clientId, redirect_uri: 'https://evil.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    expect(r.location).toBe(`${relay.url}/app/authorize?error=wrong_return_address`);
  });
});

describe('without loopback documents (any real relay)', () => {
  it('never fetches a document from a loopback address', async () => {
    const relay = await startRelay();
    try {
      const before = hits.get('/apps/private.json') ?? 0;
      serve('/apps/private.json');
      // As https (the only scheme a real relay takes), the loopback host is refused before any connection.
      const clientId = `https://127.0.0.1:${new URL(origin).port}/apps/private.json`;
      const r = await authorize(relay, { response_type: 'code', client_id: clientId, redirect_uri: 'https://doc.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      expect(r.location).toBe(`${relay.url}/app/authorize?error=unknown_app`);
      // An http document address is not a document at all here: an unknown app.
      const http = await authorize(relay, { response_type: 'code', client_id: `${origin}/apps/private.json`, redirect_uri: 'https://doc.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      expect(http.location).toBe(`${relay.url}/app/authorize?error=unknown_app`);
      expect(hits.get('/apps/private.json') ?? 0).toBe(before);
    } finally {
      await relay.close();
    }
  });

  it('refuses IPv6 forms that carry a loopback or link-local IPv4 address as unknown_app, before any connection', async () => {
    const relay = await startRelay();
    try {
      serve('/apps/inside.json');
      const port = new URL(origin).port;
      const before = hits.get('/apps/inside.json') ?? 0;
      // IPv4-compatible, IPv4-mapped (which would reach the loopback server) and IPv4-translated forms of 127.0.0.1, and 169.254.169.254.
      for (const host of ['[::7f00:1]', '[::ffff:7f00:1]', '[::ffff:0:7f00:1]', '[::a9fe:a9fe]', '[64:ff9b::7f00:1]', '[2002:7f00:1::1]']) {
        const clientId = `https://${host}:${port}/apps/inside.json`;
        const r = await authorize(relay, { response_type: 'code', client_id: clientId, redirect_uri: 'https://doc.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
        // A fetch that was tried and failed would answer unavailable.
        expect(r.location, clientId).toBe(`${relay.url}/app/authorize?error=unknown_app`);
      }
      expect(hits.get('/apps/inside.json') ?? 0).toBe(before);
    } finally {
      await relay.close();
    }
  });

  it('refuses every special-purpose IPv4 and IPv6 address and every IPv6 form with an IPv4 address inside, and allows public ones', () => {
    const refused = [
      // IPv4 (IANA IPv4 Special-Purpose Address Registry, multicast, reserved, broadcast)
      '0.0.0.0', '0.1.2.3', '10.1.2.3', '100.64.0.1', '100.127.255.254', '127.0.0.1', '127.8.9.10', '169.254.169.254', '172.16.0.1',
      '172.31.255.254', '192.0.0.8', '192.0.2.1', '192.88.99.1', '192.168.1.1', '198.18.0.1', '198.19.255.254', '198.51.100.7',
      '203.0.113.9', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
      // IPv4-mapped, checked as the IPv4 address
      '::ffff:10.0.0.1', '::ffff:127.0.0.1', '::ffff:a00:1', '::ffff:a9fe:a9fe', '::ffff:192.168.0.1',
      // IPv4 inside, whatever the inner address: compatible, translated, NAT64 (both prefixes), 6to4, Teredo
      '::7f00:1', '::a9fe:a9fe', '::5db8:d822', '::ffff:0:7f00:1', '::ffff:0:5db8:d822', '64:ff9b::a00:1', '64:ff9b::5db8:d822',
      '64:ff9b:1::a00:1', '2002:a00:1::1', '2002:5db8:d822::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      // IPv6 (IANA IPv6 Special-Purpose Address Registry), and what is not global unicast
      '::', '::1', '::2', '100::1', '100:0:0:1::1', '2001:2::1', '2001:10::1', '2001:20::1', '2001:1ff::1', '2001:db8::1',
      '2001:db8:1:2::1', '3fff::1', '3fff:fff::1', '5f00::1', 'fc00::1', 'fd12::1', 'fe80::1', 'febf::1', 'fec0::1', 'ff02::1',
      'fe80::1%eth0', '4000::1', '1::1',
      // not an address
      'not-an-address', '',
    ];
    for (const a of refused) expect(addressAllowed(a, false), a).toBe(false);
    const allowed = [
      '1.1.1.1', '8.8.8.8', '93.184.216.34', '::ffff:93.184.216.34', '::ffff:1.1.1.1', '2606:4700::1', '2606:2800:220:1:248:1893:25c8:1946',
      '2001:4860:4860::8888', '2001:200::1', '3fff:1000::1',
    ];
    for (const a of allowed) expect(addressAllowed(a, false), a).toBe(true);
    // A test relay allows loopback, and nothing else more.
    for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(addressAllowed(a, true), a).toBe(true);
    for (const a of ['10.0.0.1', '::7f00:1', '::ffff:0:7f00:1', '64:ff9b::7f00:1']) expect(addressAllowed(a, true), a).toBe(false);
  });

  it('keeps a document between a minute and a day by its Cache-Control, an hour when it says nothing', () => {
    expect(keepSecondsOf(undefined)).toBe(3600);
    expect(keepSecondsOf('max-age=5')).toBe(60);
    expect(keepSecondsOf('public, max-age=600')).toBe(600);
    expect(keepSecondsOf('max-age=99999999')).toBe(86400);
    expect(keepSecondsOf('no-store')).toBe(60);
  });

  it('counts networks as the /24 of IPv4 and the /48 of IPv6', () => {
    expect(networkOf('203.0.113.7')).toBe(networkOf('203.0.113.200'));
    expect(networkOf('203.0.113.7')).not.toBe(networkOf('203.0.114.7'));
    expect(networkOf('::ffff:203.0.113.7')).toBe(networkOf('203.0.113.9'));
    expect(networkOf('2001:db8:1:2::1')).toBe(networkOf('2001:db8:1:ffff::9'));
    expect(networkOf('2001:db8:1::1')).not.toBe(networkOf('2001:db8:2::1'));
  });
});
