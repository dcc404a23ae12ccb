/**
 * `svc-bridge view` in a real browser (headless Chromium): what the browser itself sends (Host,
 * Origin, Sec-Fetch-Site, the bearer of a same-origin fetch) is what the view's checks let
 * through, the fragment's secret starts the session once, the Content-Security-Policy keeps an
 * inline script from running, and the sealed post's words appear in the page while the relay's
 * database holds none of them.
 *
 * Two pages: one of this test's own (a few lines of HTML and one module) that does what any page
 * the view serves does with the bridge (host.json, the session, one read) and nothing else, which
 * tests the bridge's side alone; and the people's view itself (relay/web/view/), which takes the
 * link's secret, reads the sealed SPACE's stream and checks a post's proof. Screenshots go to
 * test/output/bridge-view-browser/.
 *
 * @module-tag slow
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { callTool, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startView, type RunningView } from '../helpers/bridge-view.js';
import { describeWithBrowser, launchBrowser, testOutputDir } from '../helpers/browser.js';
import { REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';
import { storedContent } from '../helpers/test-store.js';

const stamp = Date.now().toString(36);
const name = `view-browser-${stamp}`;
const TITLE = `Browser sealed title ${stamp}`;
const BODY = `Only this machine reads it ${stamp}: lanterns over the quarry`;

const PAGE = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<title>bridge view test page</title>
<script>document.documentElement.dataset.inline = 'ran';</script>
<script type="module" src="page.js"></script>
<body><p id="state">loading</p><ul id="posts"></ul></body>
</html>
`;

const SCRIPT = `const state = document.getElementById('state');
const secret = new URLSearchParams(location.hash.slice(1)).get('secret');
history.replaceState(null, '', location.pathname + location.search);
const space = new URLSearchParams(location.search).get('space');
try {
  const host = await (await fetch('host.json')).json();
  const started = await fetch('session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ secret }) });
  const answer = await started.json();
  if (!started.ok) {
    state.textContent = 'refused: ' + answer.error.code;
  } else {
    const res = await fetch('../v1/spaces/' + encodeURIComponent(space) + '/posts?detail=full', { headers: { authorization: 'Bearer ' + answer.session } });
    const page = await res.json();
    for (const p of page.items) {
      const li = document.createElement('li');
      li.textContent = p.opened && p.opened.ok ? p.opened.title + ' / ' + p.opened.body : 'shut: ' + (p.opened ? p.opened.why : 'no opened member');
      document.getElementById('posts').append(li);
    }
    state.textContent = 'read as ' + host.peer_id;
  }
} catch (e) {
  state.textContent = 'failed: ' + e.message;
}
`;

describeWithBrowser('svc-bridge view in a real browser', () => {
  let relay: RunningRelay;
  let owner: RunningBridge;
  let view: RunningView;
  let browser: Browser;
  let ownerId = '';
  let output = '';

  beforeAll(async () => {
    output = testOutputDir('bridge-view-browser');
    [browser, relay] = await Promise.all([launchBrowser(), startRelay()]);
    owner = await startBridge({ relayUrl: relay.url, home: tempHome(), env: { SVC_KEEPER_INTERVAL: '0' } });
    for (const [tool, args] of [
      ['svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed, seen in a browser' }],
      ['svc_post', { space: name, kind: 'obs', title: TITLE, body: BODY }],
    ] as const) {
      const r = await callTool(owner, tool, args);
      expect(r.isError, textOf(r)).toBeFalsy();
    }
    ownerId = ((await callTool(owner, 'svc_whoami', {})).structuredContent as any).peer_id;
    const pageDir = mkdtempSync(join(tmpdir(), 'svc-view-page-'));
    writeFileSync(join(pageDir, 'index.html'), PAGE);
    writeFileSync(join(pageDir, 'page.js'), SCRIPT);
    view = await startView(relay.url, owner.home, ['--page-dir', pageDir]);
  }, 120_000);

  afterAll(async () => {
    await view?.stop();
    await browser?.close();
    await owner?.close();
    await relay?.close();
  });

  it("shows the sealed post's words opened on this machine, which the relay's database does not hold", async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 640 } });
    const page = await context.newPage();
    const link = new URL(view.link);
    link.search = `?space=${encodeURIComponent(name)}`;
    await page.goto(link.href);
    await expect.poll(() => page.locator('#state').textContent(), { timeout: 30_000 }).toBe(`read as ${ownerId}`);
    expect(await page.locator('#posts li').allTextContents()).toEqual([`${TITLE} / ${BODY}`]);
    // The secret left the address bar; the inline script never ran under the view's CSP.
    expect(new URL(page.url()).hash).toBe('');
    expect(await page.locator('html').getAttribute('data-inline')).toBeNull();
    await page.screenshot({ path: join(output, 'bridge-view.png'), fullPage: true });
    await context.close();

    const holds = await storedContent(relay);
    expect(holds(name)).toBe(true);
    expect(holds(TITLE)).toBe(false);
    expect(holds(BODY)).toBe(false);
  });

  it("opens the link in the people's view itself: the sealed post's words in the SPACE's stream, and its proof checked in the browser", async () => {
    // A view of its own: the first one's link has been used.
    const real = await startView(relay.url, owner.home, ['--page-dir', join(REPO_ROOT, 'relay', 'web', 'view')]);
    const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
    try {
      const page = await context.newPage();
      await page.goto(real.link);
      await page.locator('#who').getByText(/Reading as this bridge/).waitFor({ timeout: 30_000 });
      expect(new URL(page.url()).hash).toBe('');
      await page.evaluate((space) => void ((globalThis as any).location.hash = `#/space/${encodeURIComponent(space)}`), name);
      const post = page.locator('article.post[data-seq="1"]');
      await post.waitFor({ timeout: 30_000 });
      expect(await post.textContent()).toContain(TITLE);
      expect(await post.locator('.body').textContent()).toBe(BODY);
      await page.evaluate((space) => void ((globalThis as any).location.hash = `#/space/${encodeURIComponent(space)}/post/1`), name);
      await page.locator('#proof-summary').waitFor({ timeout: 30_000 });
      const checks = await page.locator('#checks li').evaluateAll((lis) => lis.map((li: any) => [li.dataset.check, li.dataset.ok]));
      expect(checks.length).toBeGreaterThan(3);
      expect(checks.filter(([, ok]) => ok === 'false')).toEqual([]);
      await page.screenshot({ path: join(output, 'bridge-view-real-page.png'), fullPage: true });
    } finally {
      await context.close();
      await real.stop();
    }
  });

  it('refuses a second page the same link: the secret started one session only', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(view.link);
    await expect.poll(() => page.locator('#state').textContent(), { timeout: 30_000 }).toBe('refused: TOKEN_INVALID');
    expect(await page.locator('#posts li').count()).toBe(0);
    await context.close();
  });
});
