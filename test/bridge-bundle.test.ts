/**
 * `/bridge.mjs`, the bridge as one file (scripts/bundle-bridge.mjs), run as a person would run
 * the file they downloaded: `node bridge.mjs` in a directory holding nothing else (no
 * node_modules, no package.json, nothing of the checkout), over stdio with the MCP SDK client,
 * against the real relay. The same run as the other bridge tests, in brief: tools/list,
 * svc_whoami, a SPACE made, a signed post checked by its receipt, read back with its proof and
 * checkpoint, and a sealed SPACE with a second bundled bridge admitted and reading what the
 * owner sealed. The whole suite can also run on the bundle: SVC_TEST_BRIDGE=bundle.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, toolOk, type RunningBridge } from './helpers/bridge.js';
import { bundleAlone, type LoneBundle } from './helpers/bundle.js';
import { REPO_ROOT, startRelay, type RunningRelay } from './helpers/relay.js';
import { freshName } from './helpers/spaces.js';
import { EXIT_NODE_TOO_OLD, nodeIsRecentEnough, nodeTooOldLine } from '../launch/node-version.js';

/** A `node` on PATH or in the usual places older than the programs need, if this machine has one. */
function olderNode(): { path: string; version: string } | undefined {
  for (const path of [...(process.env.PATH ?? '').split(delimiter).map((d) => join(d, 'node')), '/usr/bin/node', '/usr/local/bin/node']) {
    const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const version = r.status === 0 ? r.stdout.trim() : '';
    if (version !== '' && !nodeIsRecentEnough(version)) return { path, version };
  }
  return undefined;
}
const older = olderNode();

let relay: RunningRelay;
let lone: LoneBundle;
const open: RunningBridge[] = [];

beforeAll(async () => {
  relay = await startRelay();
  lone = bundleAlone();
}, 60_000);

afterAll(async () => {
  await Promise.all(open.map((b) => b.close()));
  await relay?.close();
  lone?.remove();
});

async function bridge(home = tempHome(), env: Record<string, string> = {}): Promise<RunningBridge> {
  const b = await startBridge({ relayUrl: relay.url, home, env, bundle: lone.file });
  open.push(b);
  return b;
}

describe('node bridge.mjs, alone in a directory', () => {
  it('answers --version with the version of the package it was built from', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runBridge(['--version'], { home: tempHome(), bundle: lone.file });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it.skipIf(older === undefined)(
    `on an older Node (${older?.version ?? 'none on this machine: skipped'}) prints the one line of the version check and exits 1, loading nothing it lacks`,
    () => {
      const r = spawnSync(older!.path, [lone.file, 'serve'], { cwd: lone.dir, encoding: 'utf8', timeout: 30_000 });
      expect(r.status).toBe(EXIT_NODE_TOO_OLD);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`${nodeTooOldLine('svc-bridge', older!.version, lone.file, ['serve'])}\n`);
    },
  );

  it('serves tools/list and svc_whoami over stdio, having made its KEY', async () => {
    const a = await bridge();
    const tools = (await a.client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['svc_whoami', 'svc_guide', 'svc_spaces', 'svc_space_control', 'svc_post', 'svc_read_space', 'svc_get', 'svc_mailbox', 'svc_seek']));
    const me = toolOk(await callTool(a, 'svc_whoami', {}));
    expect(me.peer_id).toMatch(/^[0-9a-f]{64}$/);
    expect(a.stderr()).not.toMatch(/ExperimentalWarning|Cannot find (module|package)/);
  });

  it('makes a SPACE, posts signed with the receipt checked, and reads it back with its proof and checkpoint', async () => {
    const a = await bridge();
    const space = freshName('bundle');
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: space, title: 'From the bundle' }));
    const posted = toolOk(await callTool(a, 'svc_post', { space, kind: 'result', title: 'One file', body: 'Posted by bridge.mjs.' }));
    expect(posted.bridge).toMatchObject({ signed: true, receipt_check: { ok: true } });

    relay.clock.advance(11 * 60_000);
    await (relay.app as any).checkpointer.runOnce(relay.clock.now());
    const read = toolOk(await callTool(a, 'svc_read_space', { space, after: '0', proof: true, detail: 'full' }));
    expect(read.items).toHaveLength(1);
    expect(read.items[0]).toMatchObject({ post_id: posted.post_id, title: 'One file', body: 'Posted by bridge.mjs.' });
    expect(read.bridge.checks[0].proof.ok).toBe(true);
    expect(read.bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '1', last: '1' } });
    expect(read.bridge.changed_history).toBe(false);
  });

  it('keeps a sealed SPACE: the owner seals, a second bundled bridge is admitted, opens the lock and reads it', async () => {
    const owner = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const member = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const name = freshName('sealed-bundle');
    toolOk(await callTool(owner, 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed by bridge.mjs' }));
    const sealed = await callTool(owner, 'svc_post', { space: name, kind: 'obs', title: 'Sealed here', body: 'Only members open this.' });
    expect(textOf(sealed)).toMatch(/sealed:\s+yes, on this machine under generation 1/);

    const asked = toolOk(await callTool(member, 'svc_join', { action: 'join', name, message: 'let me in' }));
    const approved = toolOk(await callTool(owner, 'svc_space_control', { action: 'approve', request_id: asked.request_id }));
    expect(approved.sealed_key).toEqual({ state: 'locked', generation: 1, stamped: true });

    const read = await callTool(member, 'svc_read_space', { space: name, after: '0', detail: 'full' });
    expect(textOf(read)).not.toContain('COULD NOT BE OPENED');
    expect(toolOk(read).items.map((p: any) => [p.title, p.body])).toEqual([['Sealed here', 'Only members open this.']]);
  }, 60_000);
});
