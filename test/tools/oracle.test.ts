/**
 * Oracle spaces end to end through the bridge (spec/1-concepts.md "Oracle document and
 * version", the Oracle proposal state table, "Mailbox" reasons proposal, out_of_date, changed;
 * spec/2-endpoints.md "Oracle spaces"): the real relay in-process, reached through a small real
 * HTTP proxy (test/helpers/proxy.ts, which can hand one read an earlier answer), and three real
 * bridge processes over stdio with the MCP SDK client, one key directory each.
 *
 * Ann owns the oracle space and writes its first version; Ben, a writer, proposes a change to
 * one section and Ann approves it; Cat watches the document, and her own proposal goes out of
 * date when Ben's becomes current. Then: a decline with its reason, the service reviewer's veto
 * seen within propose's wait, the retry after VERSION_CHANGED where the section still reads the
 * same and the refusal where it does not, and the document resource with its subscription.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { call, startRelay, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

const WHO = ['ann', 'ben', 'cat'] as const;
type Who = (typeof WHO)[number];

let proxy: RunningProxy;
let relay: RunningRelay;
const home = Object.fromEntries(WHO.map((w) => [w, tempHome()])) as Record<Who, string>;
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};
const space = freshName('guide');

const V1 = ['Parser guide.', '', '# Intro', 'What the parser does.', '', '## Setup', 'Clone the repository.', '', '# Usage', 'Run parse on a file.', ''].join('\n');
let v1 = '';
let v2 = '';
/** The current version and its text, as the tests move it. */
let current = '';
let currentText = '';

async function tool(who: Who, name: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, name, args);
  return { r, text: textOf(r), data: r.structuredContent as any };
}

async function ok(who: Who, name: string, args: Record<string, unknown>) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBeFalsy();
  return out;
}

async function refused(who: Who, name: string, args: Record<string, unknown>, code: string) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBe(true);
  expect(out.data.error.code, out.text).toBe(code);
  return out;
}

/** The versions of the SPACE, newest first, as the relay lists them. */
async function versions(): Promise<any[]> {
  return (await call(relay, 'GET', `/v1/spaces/${space}/versions?limit=50`)).body.items;
}

function waitFor<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      const v = probe();
      if (v !== undefined) return resolve(v);
      if (Date.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 50);
    };
    tick();
  });
}

beforeAll(async () => {
  proxy = await startProxy();
  // Key age off: the KEYS made for this test create and write to a public oracle space at once.
  relay = await startRelay({ publicUrl: proxy.url, publicSpaceKeyAgeSeconds: 0 });
  proxy.target = relay.url;
  await Promise.all(
    WHO.map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      bridges[who] = await startBridge({ relayUrl: proxy.url, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
      await callTool(bridges[who]!, 'svc_whoami', {});
    }),
  );
  await ok('ann', 'svc_space_control', { action: 'create', name: space, title: 'Parser guide', visibility: 'public', oracle: true, categories: ['general'] });
  await ok('ann', 'svc_space_control', { action: 'set_member', name: space, peer_id: id.ben, role: 'writer' });
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
  await proxy?.close();
});

describe('an oracle document kept by three bridges', () => {
  it("takes the owner's first version as current at once, signed, and reads it back as the owner's own words", async () => {
    const empty = await ok('cat', 'svc_oracle', { action: 'read', space });
    expect(empty.text).toContain('No version yet');
    const first = await ok('ann', 'svc_oracle', { action: 'propose', space, text: V1, summary: 'First version' });
    v1 = first.data.post_id;
    expect(first.data.oracle).toEqual({ state: 'current', current: v1 });
    expect(first.data.bridge).toMatchObject({ signed: true, replaced: { whole: true }, based_on: null, retried: false });
    expect(first.data.bridge.receipt_check.ok).toBe(true);
    expect(first.text).toContain('State: current.');
    const read = await ok('ann', 'svc_oracle', { action: 'read', space });
    expect(read.text).toMatch(/⟦own text [0-9a-f]{8}⟧\nParser guide\./);
    expect(read.text).toMatch(/ {4}2\. ⟦own heading [0-9a-f]{8}⟧Setup⟦\/own [0-9a-f]{8}⟧/);
  }, 60_000);

  it("lets a writer propose one section, the owner approve it, tells the watcher, and puts the overtaken proposal out of date", async () => {
    const watched = await ok('cat', 'svc_oracle', { action: 'watch', space });
    expect(watched.text).toContain('each new current version reaches your mailbox as reason changed');
    expect((await ok('cat', 'svc_oracle', { action: 'watching' })).data.items).toEqual([expect.objectContaining({ space, current: v1 })]);

    const ben = await ok('ben', 'svc_oracle', { action: 'propose', space, section: 'Setup', text: 'Install it with npm.', summary: 'Say how to install', wait: 0 });
    v2 = ben.data.post_id;
    expect(ben.data.oracle).toEqual({ state: 'waiting', current: v1 });
    expect(ben.data.bridge.replaced).toEqual({ whole: false, section: 2, path: 'Intro/Setup' });
    expect(ben.text).toContain('replacing section 2 "Intro/Setup" of version');
    expect(ben.text).toContain('State: waiting for a decider');
    const cat = await ok('cat', 'svc_oracle', { action: 'propose', space, section: 'usage', text: 'Run parse --fast on a file.', summary: 'Faster', wait: 0 });
    const catProposal = cat.data.post_id;
    expect(cat.data.oracle.state).toBe('waiting');

    const told = await ok('ann', 'svc_mailbox', { reason: ['proposal'] });
    expect(told.text).toContain(`svc_oracle action=approve proposal=${v2}`);
    const approved = await ok('ann', 'svc_oracle', { action: 'approve', proposal: v2 });
    expect(approved.data.oracle).toEqual({ decided: v2, state: 'current' });
    expect(approved.text).toContain(`Approved: proposal ${v2} is the current version of ${space} now.`);
    expect(approved.text).toMatch(/summary: +⟦peer summary [0-9a-f]{8}⟧Say how to install⟦/);

    const doc = (await call(relay, 'GET', `/v1/spaces/${space}/document`)).body;
    expect(doc.version.post_id).toBe(v2);
    expect(doc.text).toBe(V1.replace('Clone the repository.', 'Install it with npm.'));
    current = v2;
    currentText = doc.text;
    const history = await ok('cat', 'svc_oracle', { action: 'history', space });
    expect(history.data.items.map((v: any) => [v.post_id, v.state])).toEqual([
      [catProposal, 'out_of_date'],
      [v2, 'current'],
      [v1, 'superseded'],
    ]);
    expect(history.text).toContain('Out of date: another version became current while it waited.');

    const catMail = await ok('cat', 'svc_mailbox', {});
    const reasons = catMail.data.items.map((e: any) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['out_of_date', 'changed']));
    expect(catMail.text).toContain(`The document of ${space} you watch has a new current version: read it with svc_oracle action=read space=${space}.`);
    expect(catMail.text).toContain(`Your proposal ${catProposal} is out of date`);
    const benMail = await ok('ben', 'svc_mailbox', { reason: ['reply'] });
    expect(benMail.data.items.map((e: any) => e.post?.kind)).toContain('go');
  }, 90_000);

  it("declines a proposal with a reason its author reads, and shows the service reviewer's veto within the wait", async () => {
    const cat = await ok('cat', 'svc_oracle', { action: 'propose', space, section: 'Usage', text: 'Run parse --fast on a file.', summary: 'Faster', wait: 0 });
    const declined = await ok('ann', 'svc_oracle', { action: 'decline', space, proposal: cat.data.post_id, reason: 'Keep the usage plain.' });
    expect(declined.data.oracle).toEqual({ decided: cat.data.post_id, state: 'declined' });
    expect(declined.text).toContain('Declined:');
    const history = await ok('cat', 'svc_oracle', { action: 'history', space, limit: 1 });
    expect(history.text).toMatch(new RegExp(`decision: veto by ${id.ann} at .*: ⟦peer reason [0-9a-f]{8}⟧Keep the usage plain\\.⟦`));
    await refused('ann', 'svc_oracle', { action: 'decline', proposal: cat.data.post_id }, 'INVALID_REQUEST');
    await refused('ann', 'svc_oracle', { action: 'approve', proposal: cat.data.post_id }, 'PROPOSAL_DECIDED');

    // A whole text that deletes most of the document breaks a reviewer rule: vetoed by the service.
    const cut = await ok('ben', 'svc_oracle', { action: 'propose', space, text: '# Intro\nShort.\n', summary: 'Shorten' });
    expect(cut.data.oracle).toMatchObject({ state: 'declined', current: v2, reason: expect.any(String) });
    expect(cut.data.bridge.decision).toMatchObject({ kind: 'veto', by: 'service reviewer' });
    expect(cut.text).toMatch(/State: declined at once by the service reviewer: ⟦peer reason [0-9a-f]{8}⟧/);
    const rules = await ok('ben', 'svc_guide', { part: 'reviewer_rules' });
    const rule = /\brule ([a-z_]+)/.exec(cut.data.oracle.reason)?.[1];
    expect(rule).toBeDefined();
    expect(rules.text).toContain(rule);
  }, 60_000);

  it("tells a proposer that waits of the owner's approval within the wait", async () => {
    const head = (await ok('ann', 'svc_mailbox', { limit: 1 })).data.head_seq;
    const proposing = ok('ben', 'svc_oracle', { action: 'propose', space, section: 'Usage', text: 'Run parse on a file; see --help.', summary: 'Point at help', wait: 20 });
    const told = await ok('ann', 'svc_mailbox', { after: head, reason: ['proposal'], wait: 20 });
    const proposal = told.data.items[0].post.post_id;
    await ok('ann', 'svc_oracle', { action: 'approve', space, proposal });
    const out = await proposing;
    expect(out.data.post_id).toBe(proposal);
    expect(out.data.bridge.decision).toMatchObject({ kind: 'go', author: id.ann });
    expect(out.text).toContain(`State: approved by ${id.ann}: it is the current version now.`);
    current = proposal;
    currentText = currentText.replace('Run parse on a file.', 'Run parse on a file; see --help.');
    expect((await call(relay, 'GET', `/v1/spaces/${space}/document`)).body.text).toBe(currentText);
  }, 60_000);

  it('applies a section change to the new current version after VERSION_CHANGED when that section reads the same there', async () => {
    // The first document read is answered with version 1, as if Ann's approval came just after it.
    const stale = (await call(relay, 'GET', `/v1/spaces/${space}/document?version=${v1}`)).text;
    let handed = false;
    proxy.rewrite = (a) => {
      if (handed || a.method !== 'GET' || !a.url.startsWith(`/v1/spaces/${space}/document`)) return undefined;
      handed = true;
      return stale;
    };
    const before = (await versions()).length;
    const out = await ok('ben', 'svc_oracle', { action: 'propose', space, section: 'Intro', text: 'What the parser does, and why.', summary: 'Say why', wait: 0 });
    proxy.rewrite = undefined;
    expect(handed).toBe(true);
    expect(out.data.bridge).toMatchObject({ retried: true, based_on: v1, posted_on: current });
    expect(out.data.oracle.state).toBe('waiting');
    expect(out.text).toContain('Another version became current while posting (VERSION_CHANGED); the section read the same there');
    expect(await versions()).toHaveLength(before + 1);
    const posted = (await call(relay, 'GET', `/v1/posts/${out.data.post_id}?proof=false`)).body;
    expect(posted.supersedes).toBe(current);
    // What changed since version 1 stays: the retry changed the Intro only.
    expect(posted.body).toBe(currentText.replace('What the parser does.', 'What the parser does, and why.'));
  }, 60_000);

  it('posts nothing when the section replaced changed since the version the change is based on', async () => {
    const stale = (await call(relay, 'GET', `/v1/spaces/${space}/document?version=${v1}`)).text;
    let handed = false;
    proxy.rewrite = (a) => {
      if (handed || a.method !== 'GET' || !a.url.startsWith(`/v1/spaces/${space}/document`)) return undefined;
      handed = true;
      return stale;
    };
    const before = (await versions()).length;
    const out = await refused('cat', 'svc_oracle', { action: 'propose', space, section: 'Setup', text: 'Clone it twice.', summary: 'Twice', wait: 0 }, 'DOCUMENT_CHANGED');
    proxy.rewrite = undefined;
    expect(out.text).toContain(`section "Intro/Setup" changed in the current version ${current} since version ${v1}`);
    expect(out.text).toContain('nothing was posted');
    expect(out.text).toContain(`svc_oracle action=read space=${space} section="Intro/Setup"`);
    // Said directly with version=: the same refusal, without a post refused first.
    await refused('cat', 'svc_oracle', { action: 'propose', space, version: v1, section: 'Setup', text: 'Clone it twice.', summary: 'Twice', wait: 0 }, 'DOCUMENT_CHANGED');
    expect(await versions()).toHaveLength(before);
  }, 60_000);

  it('forks the document into a new oracle space the forker owns, finds the links to a SPACE, and stops watching', async () => {
    const fork = freshName('fork');
    const forked = await ok('cat', 'svc_oracle', { action: 'fork', space, name: fork, title: 'Cat\'s guide', categories: ['general'] });
    expect(forked.data.forked_from).toEqual({ space, version: current });
    expect(forked.text).toContain(`Forked ${space} at version ${current} into the new oracle space ${fork}; you own it.`);
    const own = await ok('cat', 'svc_oracle', { action: 'propose', space: fork, text: `# Links\nSee [[${space}|the guide]].\n`, summary: 'Point at the guide' });
    expect(own.data.oracle.state).toBe('current');
    const links = await ok('ben', 'svc_oracle', { action: 'links', space });
    expect(links.data.items).toEqual([expect.objectContaining({ space: fork, version: own.data.post_id })]);
    expect(links.text).toMatch(new RegExp(`- ${fork} \\(its current version ${own.data.post_id}\\) · section 1 · label ⟦peer label [0-9a-f]{8}⟧the guide⟦`));
    const read = await ok('ben', 'svc_oracle', { action: 'read', space: fork, section: 'links' });
    expect(read.text).toMatch(/- space ⟦peer target [0-9a-f]{8}⟧guide-/);

    expect((await ok('cat', 'svc_oracle', { action: 'unwatch', space })).text).toContain(`No longer watching ${space}.`);
    expect((await ok('cat', 'svc_oracle', { action: 'watching' })).data.items).toEqual([]);
  }, 60_000);

  it('reads the document resource, and notifies its subscriber when a version becomes current but not while one waits', async () => {
    const a = bridges.ann!;
    const doc = `svc://spaces/${space}/document`;
    const stream = `svc://spaces/${space}`;
    const resource = ((await a.client.readResource({ uri: doc })).contents[0] as { text: string }).text;
    expect(resource).toContain(`# document of ${space}`);
    expect(resource).toContain(`version ${current}`);

    const seen: string[] = [];
    a.client.setNotificationHandler('notifications/resources/updated', (n) => void seen.push(n.params.uri));
    await a.client.subscribeResource({ uri: doc });
    await a.client.subscribeResource({ uri: stream });
    await new Promise((r) => setTimeout(r, 1500)); // the feed reads the head and the current version first
    const waiting = await ok('cat', 'svc_oracle', { action: 'propose', space, section: 'Usage', text: 'Run parse on one file at a time.', summary: 'One file', wait: 0 });
    // The same read of the SPACE's stream that notified the stream found the document unchanged.
    await waitFor('the stream notification', () => seen.find((u) => u === stream));
    expect(seen).not.toContain(doc);
    await ok('ann', 'svc_oracle', { action: 'approve', space, proposal: waiting.data.post_id });
    await waitFor('the document notification', () => seen.find((u) => u === doc));
    const now = ((await a.client.readResource({ uri: doc })).contents[0] as { text: string }).text;
    expect(now).toContain(`version ${waiting.data.post_id}`);
    await a.client.unsubscribeResource({ uri: doc });
    await a.client.unsubscribeResource({ uri: stream });
  }, 90_000);
});
