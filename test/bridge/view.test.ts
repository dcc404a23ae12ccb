/**
 * `svc-bridge view` (bridge/commands/view.ts, bridge/view/): the people's view served by the bridge
 * on 127.0.0.1, as its own process, against the real relay on loopback. The owner's bridge (over
 * MCP) creates a sealed SPACE and posts sealed words in it, and starts a sealed pair with another
 * KEY; then the owner's `svc-bridge view` is started on the same key directory and everything is
 * asked of it over HTTP, as the page and as anyone else on the machine would ask:
 *
 * - the link's secret starts one session, once, and only from the view's own origin;
 * - reads need that session; a Host other than the view's own address is refused (DNS rebinding);
 *   anything but GET under /v1/ is refused and reaches nothing (the relay stands behind a real
 *   proxy that shows every request it was sent);
 * - the answers carrying the sealed post and the sealed messages add `opened` with their words,
 *   and every member the relay served is as the relay served it (the proof checks the same bytes);
 *   an `opened` member the relay puts in its own answer (the proxy playing that relay) is taken out;
 * - SEEK finds the sealed post in the bridge's local index, its words in `opened` only;
 * - a long poll is held at the relay and the sealed post that ends it comes back opened;
 * - the relay's database holds none of those words;
 * - `--open` hands the browser a private page that moves on to the link, never the secret on a
 *   command line; a bridge alone, without the page's folder, says how to name it.
 *
 * The page's files are a folder of this test's own (the view serves whatever is in it);
 * test/e2e/bridge-view-browser.test.ts opens the view in a real browser.
 *
 * @module-tag slow
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bundleAlone } from '../helpers/bundle.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { send, startView as startViewProcess, until, type Reply, type RunningView } from '../helpers/bridge-view.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { storedContent } from '../helpers/test-store.js';

let relay: RunningRelay;
let proxy: RunningProxy;
/** SVC_API: the proxy in front of the relay. */
let api = '';
const stamp = Date.now().toString(36);
const name = `view-sealed-${stamp}`;
const home = { owner: tempHome(), peer: tempHome() };
const id = { owner: '', peer: '' };
const bridges: Partial<Record<keyof typeof home, RunningBridge>> = {};

/** Words only sealed items carry: the view shows them, the relay's database must not hold them. */
const TITLE = `Sealed title ${stamp} amaranth`;
const BODY = `Sealed body ${stamp}: the heron flies at dawn`;
const PAIR_WORDS = `Sealed pair words ${stamp}: marigold and cobalt`;
const LATER = `Later sealed words ${stamp}: the kettle sings twice`;
const REPLY = `Sealed reply ${stamp}: saffron under the bridge`;

let pageDir: string;
let view: RunningView;
let sealedPairId = '';

/** The owner's `svc-bridge view`. */
function startView(args: string[], env: Record<string, string> = {}): Promise<RunningView> {
  return startViewProcess(api, home.owner, args, env);
}

/** A session from the link's secret, as the page starts it. */
async function session(v: RunningView): Promise<string> {
  const r = await send(v.origin, 'POST', '/view/session', { origin: v.origin, 'content-type': 'application/json' }, JSON.stringify({ secret: v.secret }));
  expect(r.status, r.text).toBe(200);
  return r.json.session as string;
}

let bearer = '';

function read(path: string, token = bearer): Promise<Reply> {
  return send(view.origin, 'GET', path, { authorization: `Bearer ${token}` });
}

async function tool(who: keyof typeof home, tool: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, tool, args);
  const text = textOf(r);
  expect(r.isError, text).toBeFalsy();
  return { text, data: r.structuredContent as any };
}

beforeAll(async () => {
  // The relay behind a real proxy: it shows every request the relay was sent, and can play a relay that adds to its answers.
  proxy = await startProxy();
  relay = await startRelay({ publicUrl: proxy.url });
  proxy.target = relay.url;
  api = proxy.url;
  for (const who of ['owner', 'peer'] as const) {
    id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
    bridges[who] = await startBridge({ relayUrl: api, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
  }
  await tool('owner', 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed for the view' });
  const posted = await tool('owner', 'svc_post', { space: name, kind: 'obs', title: TITLE, body: BODY });
  expect(posted.text).toMatch(/sealed:\s+yes, on this machine/);
  // Two KEYS that know each other (a plain pair accepted) start a sealed pair; the peer registers at its first call.
  await tool('peer', 'svc_whoami', {});
  const plain = await tool('owner', 'svc_message', { action: 'start', to: [id.peer], body: 'Hello in plain words.' });
  await tool('peer', 'svc_message', { action: 'accept', conversation_id: plain.data.conversation.conversation_id });
  const sealed = await tool('owner', 'svc_message', { action: 'start', to: [id.peer], sealed: true, body: PAIR_WORDS });
  sealedPairId = sealed.data.conversation.conversation_id;
  expect(sealed.data.conversation).toMatchObject({ sealed: true });

  pageDir = mkdtempSync(join(tmpdir(), 'svc-view-page-'));
  writeFileSync(join(pageDir, 'index.html'), '<!doctype html><title>view</title><script type="module" src="app.js"></script>\n');
  writeFileSync(join(pageDir, 'app.js'), 'export {};\n');
  writeFileSync(join(pageDir, '.hidden.js'), 'secret\n');
  view = await startView(['--page-dir', pageDir]);
}, 120_000);

afterAll(async () => {
  await view?.stop();
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await proxy?.close();
  await relay?.close();
});

describe('svc-bridge view on 127.0.0.1', () => {
  it('prints a link to the page on 127.0.0.1 with the one-time secret in its fragment', () => {
    expect(view.link).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+\/view\/#secret=[A-Za-z0-9_-]{43}$/);
    expect(view.stderr()).toContain(`serving the view of KEY ${id.owner}`);
  });

  it('serves the page files with a strict Content-Security-Policy, and host.json names the KEY and the relay it pinned', async () => {
    const page = await send(view.origin, 'GET', '/view/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<title>view</title>');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // The page builds every node from text, at the bridge as at the relay: no HTML sink runs.
    expect(csp).toContain("trusted-types 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cross-origin-resource-policy']).toBe('same-origin');
    expect(page.headers['cache-control']).toBe('no-store');
    expect((await send(view.origin, 'GET', '/view/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await send(view.origin, 'GET', '/view/.hidden.js')).status).toBe(404);
    expect((await send(view.origin, 'GET', '/view/%2e%2e/%2e%2e/etc/passwd')).status).toBe(404);

    const caps = (await (await fetch(`${api}/v1/capabilities`)).json()) as any;
    const host = await send(view.origin, 'GET', '/view/host.json');
    const root = caps.protocol.service_root_key;
    expect(root).toMatch(/^[0-9a-f]{64}$/);
    const passkeys = caps.protocol.passkeys.status === 'available' ? { rp_id: caps.protocol.passkeys.rp_id, origins: caps.protocol.passkeys.origins } : null;
    expect(host.json).toEqual({ host: 'bridge', peer_id: id.owner, service_root_key: root, passkeys, relay: { url: new URL(api).origin, service_root_key: root } });
  });

  it('refuses a request naming another host than its own loopback address (DNS rebinding), whatever it asks', async () => {
    const port = new URL(view.origin).port;
    for (const host of [`rebind.example:${port}`, `localhost:${port}`, '127.0.0.1']) {
      for (const path of ['/view/', '/view/host.json', '/v1/me']) {
        const r = await send(view.origin, 'GET', path, { host });
        expect(r.status, `${host} ${path}`).toBe(400);
        expect(r.json.error.code).toBe('INVALID_REQUEST');
        expect(r.json.error.detail).toContain('Host');
      }
    }
    const asked = await send(view.origin, 'POST', '/view/session', { host: `rebind.example:${port}`, origin: `http://rebind.example:${port}`, 'content-type': 'application/json' }, JSON.stringify({ secret: view.secret }));
    expect(asked.status).toBe(400);
  });

  it('starts a session from the secret once and only once, only for its own origin', async () => {
    const post = (headers: Record<string, string>, secret = view.secret) =>
      send(view.origin, 'POST', '/view/session', { 'content-type': 'application/json', ...headers }, JSON.stringify({ secret }));
    // Another site, or no page at all: refused, and the secret still works afterwards.
    const foreign = await post({ origin: 'http://rebind.example' });
    expect([foreign.status, foreign.json.error.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(foreign.json.error.detail).toContain('Origin');
    expect((await post({})).json.error.code).toBe('INVALID_REQUEST');
    expect((await post({ origin: view.origin, 'sec-fetch-site': 'cross-site' })).status).toBe(400);
    const wrong = await post({ origin: view.origin }, 'A'.repeat(43));
    expect([wrong.status, wrong.json.error.code]).toEqual([401, 'TOKEN_INVALID']);

    bearer = await session(view);
    expect(bearer).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await until(() => view.stderr().includes('the link was opened'), 'the log line of the session');
    const again = await post({ origin: view.origin });
    expect([again.status, again.json.error.code]).toEqual([401, 'TOKEN_INVALID']);
    expect(again.json.error.detail).toContain('works once');
    // The session started first stays the only one.
    expect((await read('/v1/me')).status).toBe(200);
  });

  it('refuses every read without the session, or with anything else as its bearer', async () => {
    const none = await send(view.origin, 'GET', '/v1/me');
    expect([none.status, none.json.error.code]).toEqual([401, 'TOKEN_MISSING']);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const secretAsBearer = await read('/v1/me', view.secret);
    expect([secretAsBearer.status, secretAsBearer.json.error.code]).toEqual([401, 'TOKEN_INVALID']);
    // The relay's own token for this KEY is not the view's session either.
    const token = (await runBridge(['token'], { relayUrl: api, home: home.owner })).stdout.trim();
    expect((await send(view.origin, 'GET', '/v1/me', { authorization: `Bearer ${token}` })).json.error.code).toBe('TOKEN_INVALID');
    const me = await read('/v1/me');
    expect(me.status).toBe(200);
    expect(me.json.peer_id).toBe(id.owner);
    // A page of another site sends its Origin: refused even with the session.
    expect((await send(view.origin, 'GET', '/v1/me', { authorization: `Bearer ${bearer}`, origin: 'http://rebind.example' })).status).toBe(400);
  });

  it('only reads: POST, PUT, PATCH and DELETE under /v1/ are refused and change nothing at the relay', async () => {
    const before = await read(`/v1/spaces/${name}/posts?detail=ids`);
    const profile = await read(`/v1/spaces/${name}`);
    const headers = { authorization: `Bearer ${bearer}`, origin: view.origin, 'content-type': 'application/json' };
    const writes: [string, string, unknown][] = [
      ['POST', `/v1/spaces/${name}/posts`, { kind: 'obs', title: 'plain words through the view', body: 'never' }],
      ['PUT', '/v1/me/encryption-key', {}],
      ['PATCH', `/v1/spaces/${name}`, { title: 'renamed' }],
      ['DELETE', `/v1/spaces/${name}/members/${id.owner}`, undefined],
    ];
    const sent = proxy.seen.length;
    for (const [method, path, body] of writes) {
      const r = await send(view.origin, method, path, headers, body === undefined ? undefined : JSON.stringify(body));
      expect([r.status, r.json.error.code], `${method} ${path}`).toEqual([403, 'INSUFFICIENT_SCOPE']);
    }
    // Nothing of them reached the relay.
    expect(proxy.seen.slice(sent)).toEqual([]);
    const after = await read(`/v1/spaces/${name}/posts?detail=ids`);
    expect(after.json.items).toEqual(before.json.items);
    expect((await read(`/v1/spaces/${name}`)).json).toEqual(profile.json);
    // A path that would climb out of /v1/ once the relay's address is put before it.
    const climb = await read('/v1/..%2f..%2fhealthz');
    expect([climb.status, climb.json.error.code]).toEqual([400, 'INVALID_REQUEST']);
    const elsewhere = await read('//rebind.example/v1/me');
    expect([elsewhere.status, elsewhere.json.error.code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it("answers the sealed post with its words opened here in `opened`, every member the relay served left as it served it", async () => {
    const token = (await runBridge(['token'], { relayUrl: api, home: home.owner })).stdout.trim();
    const path = `/v1/spaces/${name}/posts?detail=full&proof=true`;
    const direct = (await (await fetch(`${api}${path}`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
    const viewed = await read(path);
    expect(viewed.status).toBe(200);
    const item = viewed.json.items[0];
    expect(item.opened).toMatchObject({ ok: true, title: TITLE, body: BODY });
    // The relay's own members: no words, the ciphertext and the signed object as the relay holds them.
    expect(item.title).toBeNull();
    expect(item.body).toBeNull();
    expect(typeof item.sealed.ciphertext).toBe('string');
    const { opened: _, ...served } = item;
    expect(served).toEqual(direct.items[0]);
    expect({ ...viewed.json, items: [served] }).toEqual(direct);

    // One post, its proof, and a page at snippets: the same words, wherever the post sits in the answer.
    const one = await read(`/v1/posts/${item.post_id}`);
    expect(one.json.opened).toMatchObject({ ok: true, title: TITLE, body: BODY });
    const proof = await read(`/v1/spaces/${name}/posts/${item.seq}/proof`);
    expect(proof.json.post.opened).toMatchObject({ ok: true, title: TITLE, body: BODY });
    expect(proof.json.leaf).toMatch(/^[0-9a-f]{64}$/);
    const snippets = await read(`/v1/spaces/${name}/posts?detail=snippets`);
    expect(snippets.json.items[0].opened).toMatchObject({ ok: true, title: TITLE, snippet: BODY });
    expect(snippets.json.items[0].snippet).toBeNull();
  });

  it('answers the sealed pair with its messages opened here, in the conversation, the list of conversations and the mailbox', async () => {
    // The peer's reply, sealed by its own bridge, reaches the owner's mailbox.
    await tool('peer', 'svc_message', { action: 'send', conversation_id: sealedPairId, body: REPLY });
    const messages = await read(`/v1/conversations/${sealedPairId}/messages?detail=full`);
    expect(messages.status, messages.text).toBe(200);
    expect(messages.json.items[0].body).toBeNull();
    expect(messages.json.items[0].opened).toEqual({ ok: true, body: PAIR_WORDS });
    const list = await read('/v1/conversations');
    const pair = list.json.items.find((c: any) => c.conversation_id === sealedPairId);
    expect(pair.latest.opened).toMatchObject({ ok: true, snippet: REPLY });
    expect(messages.json.items[1].opened).toEqual({ ok: true, body: REPLY });
    const mailbox = await read('/v1/mailbox?detail=full');
    expect(mailbox.status, mailbox.text).toBe(200);
    const envelope = mailbox.json.items.find((e: any) => e.message?.conversation_id === sealedPairId);
    expect(envelope.message.body).toBeNull();
    expect(envelope.message.opened).toEqual({ ok: true, body: REPLY });
  });

  it('finds sealed posts with SEEK on this machine, ranked with the relay\'s hits, their words only in `opened`', async () => {
    const token = (await runBridge(['token'], { relayUrl: api, home: home.owner })).stdout.trim();
    const direct = (await (await fetch(`${api}/v1/seek?q=heron`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
    expect(direct.items).toEqual([]);
    const seek = await read('/v1/seek?q=heron');
    expect(seek.status, seek.text).toBe(200);
    expect(seek.json.items).toHaveLength(1);
    const hit = seek.json.items[0];
    expect(hit).toMatchObject({ space: name, local: true, title: null, snippet: null, match: 'text' });
    expect(hit.opened).toMatchObject({ ok: true, title: TITLE, snippet: BODY });
    expect((await read('/v1/seek?q=nowhere-at-all')).json.items).toEqual([]);
    expect((await read('/v1/seek?q=heron&oracle=true')).json.items).toEqual([]);
  });

  it('holds a long poll open at the relay and opens the sealed post that ends it', async () => {
    const page = await read(`/v1/spaces/${name}/posts?detail=ids`);
    const waiting = read(`/v1/spaces/${name}/posts?after=${page.json.head_seq}&wait=25&detail=full`);
    await tool('owner', 'svc_post', { space: name, kind: 'obs', title: 'Later', body: LATER });
    const woken = await waiting;
    expect(woken.status, woken.text).toBe(200);
    expect(woken.json.items.map((p: any) => p.opened?.body)).toEqual([LATER]);
  }, 60_000);

  it("takes out an `opened` member the relay put in its answer: only this bridge says what it opened", async () => {
    const forged = { ok: true, title: 'forged by the relay', body: 'words this machine never opened' };
    proxy.rewrite = (a) => {
      if (a.method !== 'GET' || !a.contentType.startsWith('application/json')) return undefined;
      const body = JSON.parse(a.body);
      if (a.url.startsWith(`/v1/spaces/${name}/posts`)) for (const item of body.items) item.opened = forged;
      else if (a.url.startsWith('/v1/me')) body.opened = forged;
      else return undefined;
      return JSON.stringify(body);
    };
    try {
      const posts = await read(`/v1/spaces/${name}/posts?detail=full`);
      expect(posts.json.items[0].opened).toMatchObject({ ok: true, title: TITLE, body: BODY });
      expect(posts.text).not.toContain('forged by the relay');
      const me = await read('/v1/me');
      expect(me.json.peer_id).toBe(id.owner);
      expect(me.json).not.toHaveProperty('opened');
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('passes an answer without sealed items on byte for byte, and a refusal of the relay with its envelope', async () => {
    const token = (await runBridge(['token'], { relayUrl: api, home: home.owner })).stdout.trim();
    const direct = await (await fetch(`${api}/v1/categories`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect((await read('/v1/categories')).text).toBe(direct);
    const missing = await read('/v1/spaces/no-such-space-here');
    expect([missing.status, missing.json.error.code]).toEqual([404, 'SPACE_NOT_FOUND']);
  });

  it("leaves none of the sealed words in the relay's database", async () => {
    const holds = await storedContent(relay);
    expect(holds(name)).toBe(true);
    for (const words of [TITLE, BODY, PAIR_WORDS, LATER, REPLY, 'saffron under', 'the heron flies', 'marigold and cobalt', 'kettle sings']) expect(holds(words), words).toBe(false);
  });
});

describe('svc-bridge view: --open, its help, and a bridge without the page', () => {
  it('hands the browser a private page that moves on to the link, never the secret on a command line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-view-browser-'));
    const seen = join(dir, 'seen');
    const browser = join(dir, 'browser.sh');
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$*" > "${seen}.args"\ncat "$1" > "${seen}.tmp" && mv "${seen}.tmp" "${seen}"\n`);
    chmodSync(browser, 0o700);
    const opened = await startView(['--page-dir', pageDir, '--open'], { BROWSER: browser });
    try {
      const end = Date.now() + 30_000;
      while (!existsSync(seen) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const args = readFileSync(`${seen}.args`, 'utf8');
      expect(args).not.toContain(opened.secret);
      expect(args).toMatch(/open\.html$/);
      const handed = readFileSync(seen, 'utf8');
      expect(handed).toContain(`url=${opened.link}`);
      expect(existsSync(args)).toBe(true);
      // Once the page has its session, the private page is gone.
      await session(opened);
      expect(existsSync(dirname(args))).toBe(false);
    } finally {
      expect(await opened.stop()).toBe(0);
    }
  }, 60_000);

  it('--help and help view explain the command and its options; a wrong option is a usage error with that help', async () => {
    const help = await runBridge(['view', '--help'], { home: home.owner });
    expect(help.code).toBe(0);
    for (const option of ['--port N', '--open', '--page-dir DIR', 'SVC_API']) expect(help.stdout).toContain(option);
    expect((await runBridge(['help', 'view'], { home: home.owner })).stdout).toBe(help.stdout);
    expect((await runBridge(['--help'], { home: home.owner })).stdout).toMatch(/^\s+svc-bridge view\s/m);
    for (const words of [['--port', '70000'], ['--frobnicate'], ['some-space']]) {
      // Read before the relay is asked anything: no relay answers at this address.
      const bad = await runBridge(['view', ...words], { relayUrl: 'http://127.0.0.1:9', home: home.owner });
      expect(bad.code, words.join(' ')).toBe(2);
      expect(bad.stderr).toContain('svc-bridge view [--port N]');
      expect(bad.stdout).toBe('');
    }
  }, 60_000);

  it('a bridge alone, with no page beside it, says how to name the page and exits 2', async () => {
    const alone = bundleAlone();
    try {
      const r = await runBridge(['view'], { relayUrl: 'http://127.0.0.1:9', home: home.owner, bundle: alone.file });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--page-dir');
      expect(r.stdout).toBe('');
    } finally {
      alone.remove();
    }
  }, 60_000);
});
