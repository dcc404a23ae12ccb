/**
 * The view for people at /view/, in a real browser (headless Chromium with a virtual passkey
 * authenticator) against the real relay as http://localhost:<port>, with an agent writing
 * through the real bridge (its one-file bundle over stdio). What the person does is only what
 * a person does on the page: press Sign in, follow links, read.
 *
 * Screenshots of each view, desktop and 360 px wide, go to test/output/view-browser/.
 *
 * @module-tag slow
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { describeWithBrowser, launchBrowser, openPasskeyPage, startLocalhostRelay, testOutputDir, type PasskeyPage } from '../helpers/browser.js';
import { callTool, runBridge, startBridge, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { call, mintToken, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

const MINUTE = 60_000;
const DESKTOP = { width: 1200, height: 900 };
const PHONE = { width: 360, height: 780 };
const XSS = '<img src=x onerror="window.__owned = 1; document.title = \'owned\'">';

describeWithBrowser('the view in a real browser', () => {
  let browser: Browser;
  let relay: RunningRelay;
  let agent: RunningBridge;
  let output: string;
  const pages: PasskeyPage[] = [];
  const proxies: RunningProxy[] = [];

  beforeAll(async () => {
    output = testOutputDir('view-browser');
    [browser, relay] = await Promise.all([launchBrowser(), startLocalhostRelay({ publicSpaceKeyAgeSeconds: 0 })]);
    agent = await startBridge({ relayUrl: relay.url });
  });

  afterEach(async () => {
    await Promise.all(pages.splice(0).map((p) => p.close()));
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });

  afterAll(async () => {
    await agent?.close();
    await browser?.close();
    await relay?.close();
  });

  async function person(viewport = DESKTOP): Promise<PasskeyPage> {
    const p = await openPasskeyPage(browser, { viewport });
    pages.push(p);
    return p;
  }

  /** Tool calls of the agent that must succeed. */
  async function agentDoes(tool: string, args: Record<string, unknown>): Promise<Record<string, any>> {
    return toolOk(await callTool(agent, tool, args));
  }

  /** Sign every uncovered position: the checkpointer's pass, ten minutes later on the relay's clock. */
  async function checkpoint(): Promise<void> {
    relay.clock.advance(11 * MINUTE);
    await relay.app.checkpointer.runOnce(relay.clock.now());
  }

  async function shoot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: join(output, `${name}-desktop.png`), fullPage: true });
    const size = page.viewportSize();
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: join(output, `${name}-360.png`), fullPage: true });
    // Nothing wider than the screen: the page reads at 360 px without scrolling sideways.
    const overflow = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    expect(overflow, `${name} at 360 px`).toBeLessThanOrEqual(PHONE.width);
    if (size) await page.setViewportSize(size);
  }

  /** Every proof check on the page, by id: 'true', 'false' or 'null'. */
  async function checksOn(page: Page): Promise<Record<string, string>> {
    await page.locator('#proof-summary').waitFor();
    const rows = await page.locator('#checks li').evaluateAll((lis) => lis.map((li: any) => [li.dataset.check, li.dataset.ok]));
    return Object.fromEntries(rows);
  }

  /** A public work SPACE the agent made (visible without signing in). */
  async function publicSpace(extra: Record<string, unknown> = {}): Promise<string> {
    const name = freshName('pv');
    await agentDoes('svc_space_control', { action: 'create', name, title: `Public ${name}`, description: 'What the agents found.', visibility: 'public', categories: ['general'], ...extra });
    return name;
  }

  it('signs in with a passkey, reads a private SPACE the agent wrote to through the bridge, sees a new post arrive, and every proof check passes', async () => {
    const p = await person();
    await p.page.goto(`${relay.url}/view/`);
    await p.page.click('#sign-in');
    await p.page.locator('#sign-out').waitFor();
    const peerId = (await p.page.locator('#my-peer-id').textContent())!;
    expect(peerId).toMatch(/^[0-9a-f]{64}$/);
    // The token lives in the tab, never in a cookie.
    expect(await p.context.cookies()).toEqual([]);

    const space = freshName('lab');
    await agentDoes('svc_space_control', { action: 'create', name: space, title: 'Parser lab', description: 'Private notes of the parser agents.' });
    await agentDoes('svc_space_control', { action: 'set_member', name: space, peer_id: peerId, role: 'reader' });
    const first = await agentDoes('svc_post', { space, kind: 'result', title: 'Tabs in keys parse', body: 'Fixed in the tokenizer.\nSecond line stays a line.', fingerprints: [{ scheme: 'git.commit', value: 'b'.repeat(40) }] });
    await agentDoes('svc_post', { space, kind: 'question', title: 'Unicode keys?', body: 'Does NFC matter here?', reply_to: first.post_id });

    await p.page.reload();
    await p.page.locator('#my-spaces').getByRole('link', { name: space }).click();
    await p.page.locator('article.post[data-seq="2"]').waitFor();
    expect(await p.page.locator('#posts article.post').count()).toBe(2);
    expect(await p.page.locator('article.post[data-seq="1"] .body').textContent()).toBe('Fixed in the tokenizer.\nSecond line stays a line.');
    expect(await p.page.locator('article.post[data-seq="1"] .peer').first().textContent()).toContain('…');

    // A post written while the page is open appears without a reload (the long poll).
    await agentDoes('svc_post', { space, kind: 'progress', title: 'Unicode handled', body: 'NFC applied before hashing.' });
    await p.page.locator('article.post[data-seq="3"]').waitFor();
    expect(await p.page.locator('#posts article.post').first().getAttribute('data-seq')).toBe('3');
    await shoot(p.page, 'stream');

    await checkpoint();
    await p.page.click('article.post[data-seq="1"] h3 a');
    const checks = await checksOn(p.page);
    expect(checks).toEqual({ 'object-id': 'true', object: 'true', private: 'true', signature: 'true', chain: 'true', receipt: 'null', checkpoint: 'true', merkle: 'true', root: 'true' });
    expect(await p.page.locator('#proof-summary').textContent()).toContain('Every check that could run passed');
    await shoot(p.page, 'post');

    // Its reply is listed under it; from the reply, "reply to" leads back by the post's id.
    expect(await p.page.locator('#replies').textContent()).toContain('Unicode keys?');
    await p.page.locator('#replies article.post[data-seq="2"] h3 a').click();
    await p.page.waitForURL(/\/post\/2$/);
    await p.page.locator('#proof-summary').waitFor();
    await p.page.locator('main article.post .links a').first().click();
    await p.page.waitForURL(/\/post\/1$/);
    await p.page.locator('#replies').waitFor();

    // Members and the audit log of the SPACE, as a member reads them.
    await p.page.getByRole('link', { name: 'Members' }).click();
    await p.page.locator('#members').waitFor();
    expect(await p.page.locator('#members tbody').textContent()).toContain('(you)');
    await p.page.getByRole('link', { name: 'Audit log' }).click();
    await p.page.locator('#audit').waitFor();
    expect(await p.page.locator('#audit').textContent()).toContain('space.created');

    // How far behind this browser is: up to date after reading, one post behind after another is written.
    await p.page.getByRole('link', { name: 'SPACES', exact: true }).first().click();
    const row = p.page.locator('#my-spaces tr', { hasText: space });
    await row.waitFor();
    expect(await row.textContent()).toContain('up to date');
    await agentDoes('svc_post', { space, kind: 'obs', title: 'One more', body: 'Written while the person looked elsewhere.' });
    await p.page.reload();
    await p.page.locator('#my-spaces').waitFor();
    expect(await p.page.locator('#my-spaces tr', { hasText: space }).textContent()).toContain('1 new post since you last looked');

    // SEEK finds the SPACE's post for this reader.
    await p.page.fill('#seek-q', 'tokenizer');
    await p.page.keyboard.press('Enter');
    await p.page.locator('#hits').waitFor();
    expect(await p.page.locator('#hits').textContent()).toContain('Tabs in keys parse');

    // The passkey KEY's mailbox and conversations: a post naming it and a message to it.
    await agentDoes('svc_post', { space, kind: 'question', title: 'For the person', body: 'Can you check the NFC choice?', to: [peerId] });
    await agentDoes('svc_message', { action: 'start', to: [peerId], body: 'Hello from the parser agent.' });
    await p.page.getByRole('link', { name: 'Mailbox' }).click();
    await p.page.locator('#mailbox').waitFor();
    const mailbox = await p.page.locator('#mailbox').textContent();
    expect(mailbox).toContain('Can you check the NFC choice?');
    expect(mailbox).toContain('Hello from the parser agent.');
    await shoot(p.page, 'mailbox');
    await p.page.getByRole('link', { name: 'Conversations' }).click();
    await p.page.locator('#conversations').waitFor();
    await p.page.locator('#conversations h3 a').first().click();
    await p.page.locator('#messages').waitFor();
    expect(await p.page.locator('#messages').textContent()).toContain('Hello from the parser agent.');

    // Signing out revokes the token: the relay refuses it from then on.
    const token = await p.page.evaluate(() => (globalThis as any).sessionStorage.getItem('svc.view.token'));
    await p.page.click('#sign-out');
    await p.page.locator('#sign-in').waitFor();
    expect((await call(relay, 'GET', '/v1/me', { token })).status).toBe(401);
  });

  it("a sealed SPACE read at the relay shows who wrote what kind when, says where its words open, and shows none of them", async () => {
    const space = freshName('sealed');
    await agentDoes('svc_space_control', { action: 'create', name: space, visibility: 'sealed', title: 'Incident notes' });
    const words = 'The staging key leaked in build 41.';
    await agentDoes('svc_post', { space, kind: 'warn', title: 'Key leak', body: words });
    await checkpoint();
    // The agent's own KEY token (svc-bridge token), read by the page as a member would.
    const minted = await runBridge(['token'], { relayUrl: relay.url, home: agent.home });
    expect(minted.code, minted.stderr).toBe(0);
    const p = await person();
    await p.page.goto(`${relay.url}/view/`);
    const agentPeer = (await runBridge(['id'], { relayUrl: relay.url, home: agent.home })).stdout.trim();
    await p.page.evaluate(({ token, peer }) => {
      const g = globalThis as any;
      g.sessionStorage.setItem('svc.view.token', token);
      g.sessionStorage.setItem('svc.view.peer', peer);
    }, { token: minted.stdout.trim(), peer: agentPeer });
    await p.page.goto(`${relay.url}/view/#/space/${space}`);
    await p.page.reload();
    const card = p.page.locator('article.post[data-seq="1"]');
    await card.waitFor();
    expect(await card.locator('.kind').first().textContent()).toBe('warn');
    expect(await card.textContent()).toContain('(you)');
    expect(await card.textContent()).toContain('svc-bridge view');
    expect(await p.page.locator('#sealed-note').textContent()).toContain('svc-bridge view');
    expect(await p.page.content()).not.toContain('staging key');
    await shoot(p.page, 'sealed');
    // Its proof still checks: the object names the header and ciphertext digests the relay holds.
    await card.locator('a[href$="/post/1"]').first().click();
    const checks = await checksOn(p.page);
    expect(Object.values(checks)).not.toContain('false');
    expect(checks).toMatchObject({ object: 'true', signature: 'true', chain: 'true', merkle: 'true', root: 'true' });
  });

  it('a post whose body is HTML shows as its characters: no element is made and no script runs', async () => {
    const space = await publicSpace();
    await agentDoes('svc_post', { space, kind: 'obs', title: '<b>bold?</b>', body: XSS });
    const p = await person();
    await p.page.goto(`${relay.url}/view/#/space/${space}`);
    const card = p.page.locator('article.post[data-seq="1"]');
    await card.waitFor();
    expect(await card.locator('.body').textContent()).toBe(XSS);
    expect(await card.locator('h3').textContent()).toBe('<b>bold?</b>');
    expect(await p.page.locator('main img, main b').count()).toBe(0);
    expect(await p.page.evaluate(() => (globalThis as any).__owned)).toBeUndefined();
    expect(await p.page.title()).not.toBe('owned');
  });

  it('a relay answer with one byte of the post changed shows the check that fails', async () => {
    const space = await publicSpace();
    const body = 'The cache holds 128 entries.';
    await agentDoes('svc_post', { space, kind: 'result', title: 'Cache size', body });
    await checkpoint();
    const proxy = await startProxy();
    proxies.push(proxy);
    proxy.target = relay.url;
    proxy.rewrite = (a) => (a.url.includes(`/v1/spaces/${space}/posts/1/proof`) ? a.body.replace('128 entries', '129 entries') : undefined);
    const p = await person();
    await p.page.goto(`${proxy.url}/view/#/space/${space}/post/1`);
    const checks = await checksOn(p.page);
    // At another host than the passkeys' rp id the page offers no sign-in, and says where to.
    expect(await p.page.locator('#sign-in').count()).toBe(0);
    expect(await p.page.locator('#no-sign-in').textContent()).toContain(`sign in at ${relay.url}/view/`);
    expect(checks.object).toBe('false');
    expect(await p.page.locator('#checks li[data-check="object"] .detail').textContent()).toContain('body differs');
    expect(await p.page.locator('#proof-summary').textContent()).toContain('FAILED');
    await shoot(p.page, 'tampered');
    // The same in a dark colour scheme.
    await p.page.emulateMedia({ colorScheme: 'dark' });
    expect(await p.page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.documentElement).backgroundColor)).toBe('rgb(22, 22, 21)');
    await shoot(p.page, 'tampered-dark');
    await p.page.emulateMedia({ colorScheme: 'light' });

    // One hex digit of the checkpoint's signature changed: the checkpoint check fails instead.
    proxy.rewrite = (a) => {
      if (!a.url.includes(`/v1/spaces/${space}/posts/1/proof`)) return undefined;
      const answer = JSON.parse(a.body);
      const sig: string = answer.checkpoint.signature;
      answer.checkpoint.signature = (sig[0] === '0' ? '1' : '0') + sig.slice(1);
      return JSON.stringify(answer);
    };
    await p.page.reload();
    const again = await checksOn(p.page);
    expect(again).toMatchObject({ object: 'true', checkpoint: 'false' });
  });

  it('pins the root key on first sight: a root that changed is shown, checks fail against the pinned one until the person trusts the new one', async () => {
    const space = await publicSpace();
    await agentDoes('svc_post', { space, kind: 'obs', title: 'Pinned', body: 'Checked against the pinned root.' });
    await checkpoint();
    const p = await person();
    await p.page.goto(`${relay.url}/view/`);
    const served = (await call(relay, 'GET', '/view/host.json')).body.service_root_key as string;
    // The page pins the key once its own read of host.json has come back, after goto returns.
    await expect.poll(async () => await p.page.evaluate(() => (globalThis as any).localStorage.getItem('svc.view.root'))).toBe(served);
    // As if this browser had pinned another relay's root at this address before.
    await p.page.evaluate(() => (globalThis as any).localStorage.setItem('svc.view.root', '07'.repeat(32)));
    await p.page.goto(`${relay.url}/view/#/space/${space}/post/1`);
    await p.page.reload();
    await p.page.locator('#banner').waitFor();
    expect(await p.page.locator('#banner').textContent()).toContain('another root key');
    expect((await checksOn(p.page)).root).toBe('false');
    await p.page.getByRole('button', { name: 'Trust the new root key' }).click();
    await p.page.locator('#banner').waitFor({ state: 'hidden' });
    await p.page.locator('#checks li[data-check="root"][data-ok="true"]').waitFor();
    // The page pins the key once its own read of host.json has come back, after goto returns.
    await expect.poll(async () => await p.page.evaluate(() => (globalThis as any).localStorage.getItem('svc.view.root'))).toBe(served);
  });

  it('shows a task board by state', async () => {
    const space = await publicSpace();
    for (const title of ['Parse tabs', 'Parse unicode', 'Write the docs']) await agentDoes('svc_task', { action: 'add', space, title, body: `${title}, with tests.` });
    const held = await agentDoes('svc_task', { action: 'next', space });
    const result = await agentDoes('svc_post', { space, kind: 'result', title: 'Tabs parse', body: 'Done with tests.' });
    await agentDoes('svc_task', { action: 'done', space, number: held.task.number, post_id: result.post_id });
    await agentDoes('svc_task', { action: 'next', space });
    const tasks = await call(relay, 'GET', `/v1/spaces/${space}/tasks`);
    expect(tasks.status).toBe(200);

    const p = await person();
    await p.page.goto(`${relay.url}/view/#/space/${space}/tasks`);
    await p.page.locator('#board').waitFor();
    for (const t of tasks.body.items as any[]) {
      expect(await p.page.locator(`[data-column="${t.state}"] [data-task="${t.number}"]`).count(), `task ${t.number} ${t.state}`).toBe(1);
    }
    expect(new Set((tasks.body.items as any[]).map((t) => t.state))).toEqual(new Set(['open', 'held', expect.stringMatching(/^(done|accepted)$/)]));
    expect(await p.page.locator('[data-column="held"] .task').textContent()).toContain('held by');
    await shoot(p.page, 'tasks');
  });

  it('renders an oracle document by its grammar, with its versions', async () => {
    const target = await publicSpace();
    await agentDoes('svc_post', { space: target, kind: 'result', title: 'A finding', body: 'Linked from the document.' });
    const space = freshName('or');
    await agentDoes('svc_space_control', { action: 'create', name: space, title: 'Parser handbook', visibility: 'public', categories: ['general'], oracle: true, service_reviewer: false });
    const text = [
      '# Parser handbook',
      'What the agents agreed on. See [[' + target + '|the findings]] and [[' + target + '/1]].',
      '## Keys',
      '- Tabs in keys parse.',
      '- Unicode is NFC first: `normalize("NFC")`.',
      '```',
      '[[not-a-link]] <b>in a fence</b>',
      '```',
    ].join('\n');
    const v1 = await agentDoes('svc_post', { space, kind: 'version', title: 'First version', body: '# Parser handbook\nDraft.' });
    const v2 = await agentDoes('svc_post', { space, kind: 'version', title: 'Keys section', body: text, supersedes: v1.post_id });
    // Another KEY proposes a change: it waits for the owner's decision.
    const stranger = await mintToken(relay.url);
    const proposed = await call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: stranger.token, body: { kind: 'version', title: 'Add values', body: `${text}\n## Values\n- Numbers stay numbers.`, supersedes: v2.post_id } });
    expect(proposed.status, proposed.text).toBe(201);

    const p = await person();
    await p.page.goto(`${relay.url}/view/#/space/${space}/document`);
    const doc = p.page.locator('#document');
    await doc.waitFor();
    expect(await doc.locator('h2').textContent()).toBe('Parser handbook');
    expect(await doc.locator('h3').textContent()).toBe('Keys');
    expect(await doc.locator('li').count()).toBe(2);
    expect(await doc.locator('li code').textContent()).toBe('normalize("NFC")');
    expect(await doc.locator('a[data-ref="space"]').getAttribute('href')).toBe(`#/space/${target}`);
    expect(await doc.locator('a[data-ref="space"]').textContent()).toBe('the findings');
    expect(await doc.locator('a[data-ref="post"]').getAttribute('href')).toBe(`#/space/${target}/post/1`);
    expect(await doc.locator('pre').textContent()).toBe('[[not-a-link]] <b>in a fence</b>');
    expect(await doc.locator('b').count()).toBe(0);
    expect(await p.page.locator('#versions li').count()).toBe(2);
    expect(await p.page.locator('#waiting li').count()).toBe(1);
    expect(await p.page.locator('#waiting').textContent()).toContain('Add values');
    await shoot(p.page, 'document');
    await doc.locator('a[data-ref="post"]').click();
    await p.page.locator('#proof-summary').waitFor();
  });

  it('lists public SPACES without signing in, and is usable by keyboard alone', async () => {
    const space = await publicSpace();
    const p = await person();
    await p.page.goto(`${relay.url}/view/`);
    await p.page.locator('#public-spaces').getByRole('link', { name: `Public ${space}` }).waitFor();
    // Filtered by its category, it is still listed; by words it does not have, it is not.
    await p.page.selectOption('#space-category', 'general');
    await p.page.click('#space-filter button');
    await p.page.locator('#public-spaces').getByRole('link', { name: `Public ${space}` }).waitFor();
    await p.page.fill('#space-q', 'no-such-words-anywhere');
    await p.page.click('#space-filter button');
    await p.page.getByText('No SPACE matches.').waitFor();
    await p.page.goto(`${relay.url}/view/`);
    await p.page.locator('#public-spaces').getByRole('link', { name: `Public ${space}` }).waitFor();
    // Tab from the top: the skip link, then the header's links and controls, reach the SPACE's link.
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await p.page.keyboard.press('Tab');
      reached = (await p.page.evaluate(() => (globalThis as any).document.activeElement?.textContent ?? '')) === `Public ${space}`;
    }
    expect(reached).toBe(true);
    await p.page.keyboard.press('Enter');
    await p.page.locator('#posts').waitFor();
    await shoot(p.page, 'home-public');
  });
});
