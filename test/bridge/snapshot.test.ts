/**
 * The bridge started from a startup snapshot (bridge/snapshot-main.ts, built by
 * scripts/bundle-bridge.mjs --snapshot for the Node.js running the tests):
 * `node --snapshot-blob FILE BUNDLE_URL serve`, from a directory holding only the bundle and
 * the snapshot. It must serve as the bundle does (the same run as test/bridge/bundle.test.ts:
 * tools/list, svc_whoami, a signed post read back with its proof and checkpoint, a sealed
 * SPACE's round trip between two bridges), and nothing of the machine or the moment the
 * snapshot was built may be shared by the starts made from it: each run makes its own run id.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { buildBridgeSnapshot, bundleAlone, type LoneBundle } from '../helpers/bundle.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

let relay: RunningRelay;
let lone: LoneBundle;
let blob: string;
const open: RunningBridge[] = [];

beforeAll(async () => {
  relay = await startRelay();
  lone = bundleAlone();
  blob = join(lone.dir, 'bridge.blob');
  buildBridgeSnapshot(blob);
}, 120_000);

afterAll(async () => {
  await Promise.all(open.map((b) => b.close()));
  await relay?.close();
  lone?.remove();
});

async function bridge(home = tempHome(), env: Record<string, string> = {}): Promise<RunningBridge> {
  const b = await startBridge({ relayUrl: relay.url, home, env, bundle: lone.file, snapshot: blob });
  open.push(b);
  return b;
}

describe('the bridge started from its startup snapshot', () => {
  it('names the bundle it stands for in its help, with the PATH of this start', async () => {
    const r = await runBridge(['--help'], { home: tempHome(), bundle: lone.file, snapshot: blob });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`"command": "node", "args": [${JSON.stringify(lone.file)}]`);
  });

  it('refuses, with the command it needs, a start that does not name its bundle', () => {
    const r = spawnSync(process.execPath, ['--snapshot-blob', blob, 'serve'], { cwd: lone.dir, encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/names its bundle first: node --snapshot-blob FILE file:/);
  });

  it('serves tools/list and svc_whoami over stdio, having made its KEY', async () => {
    const a = await bridge();
    const tools = (await a.client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['svc_whoami', 'svc_guide', 'svc_spaces', 'svc_space_control', 'svc_post', 'svc_read_space', 'svc_get', 'svc_mailbox', 'svc_seek']));
    const me = toolOk(await callTool(a, 'svc_whoami', {}));
    expect(me.peer_id).toMatch(/^[0-9a-f]{64}$/);
  });

  it('serves tools/list at protocol revision 2026-07-28 too', async () => {
    const b = await startBridge({ relayUrl: relay.url, bundle: lone.file, snapshot: blob, revision: '2026-07-28' });
    open.push(b);
    expect((await b.client.listTools()).tools.map((t) => t.name)).toContain('svc_post');
  });

  it('makes a SPACE, posts signed with the receipt checked, and reads it back with its proof and checkpoint', async () => {
    const a = await bridge();
    const space = freshName('snapshot');
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: space, title: 'From the snapshot' }));
    const posted = toolOk(await callTool(a, 'svc_post', { space, kind: 'result', title: 'Snapshot', body: 'Posted from a snapshot.' }));
    expect(posted.bridge).toMatchObject({ signed: true, receipt_check: { ok: true } });

    relay.clock.advance(11 * 60_000);
    await (relay.app as any).checkpointer.runOnce(relay.clock.now());
    const read = toolOk(await callTool(a, 'svc_read_space', { space, after: '0', proof: true, detail: 'full' }));
    expect(read.items).toHaveLength(1);
    expect(read.items[0]).toMatchObject({ post_id: posted.post_id, title: 'Snapshot', body: 'Posted from a snapshot.' });
    expect(read.bridge.checks[0].proof.ok).toBe(true);
    expect(read.bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '1', last: '1' } });
  });

  it('gives each start its own run id: two bridges from one snapshot attach different ones to their posts', async () => {
    const home = tempHome();
    const space = freshName('snapshot-runs');
    const runIds: string[] = [];
    for (const title of ['first run', 'second run']) {
      const b = await bridge(home);
      if (title === 'first run') toolOk(await callTool(b, 'svc_space_control', { action: 'create', name: space, title: 'Runs' }));
      toolOk(await callTool(b, 'svc_post', { space, kind: 'obs', title, body: title }));
      await b.close();
    }
    const reader = await bridge(home);
    const read = toolOk(await callTool(reader, 'svc_read_space', { space, after: '0', detail: 'full' }));
    for (const item of read.items) runIds.push(item.run_id);
    expect(runIds).toHaveLength(2);
    for (const id of runIds) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(runIds[0]).not.toBe(runIds[1]);
  });

  it('keeps a sealed SPACE: the owner seals, a second bridge is admitted, opens the lock and reads it', async () => {
    const owner = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const member = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const name = freshName('sealed-snapshot');
    toolOk(await callTool(owner, 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed from a snapshot' }));
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
