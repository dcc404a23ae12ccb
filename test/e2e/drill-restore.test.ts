/**
 * The disaster drill, end to end (spec/1-concepts.md Versioning 6, "Space status" closed and
 * replaced_by; 2-endpoints recovery.list; shared/recovery.ts; tools/verify/epoch.ts, tools/verify/recovery.ts):
 *
 * 1. A relay serves a SPACE with posts and signed checkpoints (in this process: its clock is
 *    moved to sign checkpoints now, and every checkpoint also goes to a checkpoint log kept on
 *    another directory). A real svc-bridge process (stdio, MCP SDK client) is its KEY's owner.
 * 2. `svc-relay backup` (its own process) copies the relay while it serves.
 * 3. More posts and a newer checkpoint, which the bridge reads and keeps.
 * 4. Disaster: the relay stops and its data directory is destroyed.
 * 5. `svc-relay restore` (its own process) starts a new directory from the backup and compares
 *    it with the checkpoint log; the relay is started again as its own process.
 * 6. The SPACE is closed and continues in another; `/v1/recovery` verifies with shared/ code
 *    under the root the relay had before; the bridge, still the same process, tells the model,
 *    moves its cursors to the continuation and posts there; nothing it held is lost: its KEY,
 *    its cursors' SPACES and its kept checkpoints (the lost one set apart, not deleted).
 * 7. Once the restored relay signs a checkpoint over what survived, one the kept checkpoint does
 *    not extend, the bridge accepts it because the verified notice declares the kept one lost.
 *
 * And the same disaster restored without the checkpoint log: nothing is closed, no notice is
 * signed, and the relay's new checkpoint over the lost range is CHANGED HISTORY at the bridge.
 *
 * A small real HTTP proxy (no rewrites) stands at the relay's public address, so the bridge
 * reaches every relay of the drill at one address, as clients reach a service after a restore.
 *
 * @module-tag slow
 */
import { onPostgres, ON_POSTGRES_SKIP } from '../helpers/test-store.js';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Cache } from '../../tools/cache/cache.js';
import { openCache } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { fromHex } from '../../shared/encoding.js';
import { verifyRecovery } from '../../shared/recovery.js';
import { callTool, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { admit, post } from '../helpers/posts.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { call, mintToken, spawnRelay, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { runCli } from '../helpers/relay-cli.js';
import { freshName } from '../helpers/spaces.js';

const ELEVEN_MINUTES = 11 * 60_000;
const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function dir(prefix: string): string {
  const d = tempDataDir(prefix);
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function checkpointNow(relay: RunningRelay): Promise<void> {
  relay.clock.advance(ELEVEN_MINUTES);
  await (relay.app as any).checkpointer.runOnce(relay.clock.now());
}

interface BeforeTheDisaster {
  proxy: RunningProxy;
  bridge: RunningBridge;
  home: string;
  peer: MintedToken;
  space: string;
  backup: string;
  log: string;
  rootKey: string;
  epoch: string;
  /** How far the relay's clock ran ahead (the restored relay starts there). */
  clockOffsetMs: number;
  /** What the bridge held before the disaster. */
  held: { keyFiles: Record<string, string>; peerId: string; kept: string; cursor: string | undefined };
}

/** Every file of the bridge's key directory (the KEY and what goes with it), as base64. */
function keyFiles(home: string): Record<string, string> {
  const dir = openKeyDirectory(home).keysDir;
  return Object.fromEntries(readdirSync(dir).sort().map((f) => [f, readFileSync(join(dir, f)).toString('base64')]));
}

function withCache<T>(home: string, proxy: RunningProxy, use: (cache: Cache, relay: string) => T): T {
  const cache = openCache(openKeyDirectory(home), 'default');
  try {
    return use(cache, proxy.url);
  } finally {
    cache.close();
  }
}

/**
 * Steps 1-4: posts 1-3 under a checkpoint, post 4 uncovered, the backup, posts 5-6 under a
 * newer checkpoint (4-6) that the bridge reads and keeps, then the relay stopped and its data
 * directory destroyed. The checkpoint log survives on its own directory.
 */
async function beforeTheDisaster(): Promise<BeforeTheDisaster> {
  const proxy = await startProxy();
  cleanup.push(() => proxy.close());
  const data = dir('svc-drill-data-');
  const log = join(dir('svc-drill-log-'), 'checkpoints.log');
  const relay = await startRelay({ dataDir: data, checkpointLog: log, publicUrl: proxy.url });
  proxy.target = relay.url;
  const home = tempHome('svc-drill-bridge-');
  const bridge = await startBridge({ relayUrl: proxy.url, home });
  cleanup.push(() => bridge.close());
  const me = toolOk(await callTool(bridge, 'svc_whoami', {}));
  const peer = await mintToken(relay.url);
  const space = freshName('drill');
  toolOk(await callTool(bridge, 'svc_space_control', { action: 'create', name: space }));
  await admit(relay, (await relay.store.spaces.byName(space))!, peer, 'writer');

  toolOk(await callTool(bridge, 'svc_post', { space, kind: 'obs', body: 'one, by the bridge' }));
  for (const n of ['two', 'three']) await post(relay, peer, space, { kind: 'obs', body: n });
  await checkpointNow(relay);
  await post(relay, peer, space, { kind: 'obs', body: 'four, in the backup, not yet signed' });
  const backup = join(dir('svc-drill-backup-'), 'relay.backup');
  const made = await runCli(['backup', backup, '--data', data]);
  expect(made, made.stderr).toMatchObject({ code: 0 });

  toolOk(await callTool(bridge, 'svc_post', { space, kind: 'obs', body: 'five, after the backup' }));
  await post(relay, peer, space, { kind: 'obs', body: 'six, after the backup' });
  await checkpointNow(relay);
  const read = toolOk(await callTool(bridge, 'svc_read_space', { space }));
  expect(read.items).toHaveLength(6);
  const proof = toolOk(await callTool(bridge, 'svc_get', { space, seq: '6' }));
  expect(proof.bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '4', last: '6' } });

  const held = withCache(home, proxy, (cache, at) => ({
    keyFiles: keyFiles(home),
    peerId: me.peer_id as string,
    kept: cache.checkpoint(at, space, 'posts')!.checkpointId,
    cursor: cache.cursor(at, { kind: 'space', space }),
  }));
  expect(held.cursor).toBe('6');
  expect(Object.keys(held.keyFiles).length).toBeGreaterThan(0);
  const caps = await call(relay, 'GET', '/v1/capabilities');
  const rootKey = caps.body.protocol.service_root_key as string;
  const epoch = me.service_epoch as string;
  const clockOffsetMs = relay.clock.now() - Date.now();

  // The disaster: the relay stops and its data directory is gone.
  await relay.close();
  rmSync(data, { recursive: true, force: true });
  return { proxy, bridge, home, peer, space, backup, log, rootKey, epoch, clockOffsetMs, held };
}

// The drill restores a SQLite backup file (svc-relay backup/restore); a PostgreSQL relay is backed
// up with PostgreSQL's own tools, so on the PostgreSQL test store (SVC_TEST_STORE=postgres) it skips.
describe.skipIf(onPostgres)(`the disaster drill${ON_POSTGRES_SKIP}`, () => {
  it('a restore from an older backup closes the SPACE with a verified notice; the same bridge reports it, follows the continuation, posts there, and keeps everything it held', async () => {
    const d = await beforeTheDisaster();
    const { proxy, bridge, home, space } = d;
    const next = `${space}-2`;

    const data = join(dir('svc-drill-restored-'), 'data');
    const restored = await runCli(['restore', d.backup, '--data', data, '--checkpoint-log', d.log]);
    expect(restored, restored.stderr).toMatchObject({ code: 0 });
    expect(restored.stdout).toContain(space);
    const serving = await spawnRelay(data, { args: ['--public-url', proxy.url] });
    cleanup.push(() => serving.kill());
    proxy.target = serving.url;

    // The relay: a new epoch, the SPACE closed at its surviving head, continued, and a notice that verifies.
    const at = { url: proxy.url } as RunningRelay;
    const profile = (await call(at, 'GET', `/v1/spaces/${space}`, { token: d.peer.token })).body;
    expect(profile).toMatchObject({ status: 'closed', replaced_by: next, head_seq: '4' });
    const list = await call(at, 'GET', '/v1/recovery', { token: d.peer.token });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    const notice = verifyRecovery(list.body.items[0], fromHex(d.rootKey, 32));
    expect(notice.fields).toMatchObject({ name: space, replaced_by: next, previous_epoch: d.epoch });
    expect(notice.fields.service_epoch).not.toBe(d.epoch);
    expect(notice.fields.chains).toEqual([expect.objectContaining({ stream: 'posts', signed_last: '6', signed_checkpoint_id: d.held.kept, survived_last: '4' })]);

    // The bridge (the same process all along) hears of it in svc_whoami.
    const who = await callTool(bridge, 'svc_whoami', {});
    const whoText = textOf(who);
    expect(toolOk(who).peer_id).toBe(d.held.peerId);
    expect(whoText).toContain(`service_epoch changed (${d.epoch} → ${notice.fields.service_epoch})`);
    expect(whoText).toContain(`- ${space}: status closed, head_seq 4; saved cursor 6 is past it: positions 5-6 were lost. Cursor set to 4.`);
    expect(whoText).toContain(`${space} is CLOSED (a restore cut its history): it continues in ${next}.`);
    expect(whoText).toContain('posts signed up to 6, survived up to 4 (positions 5-6 are gone for good)');
    expect(toolOk(who).bridge.closed_spaces).toEqual([{ space, replaced_by: next, recovery_id: list.body.items[0].recovery_id }]);

    // A read past the surviving head is HISTORY_ROLLBACK at the relay; the bridge follows the continuation.
    const rolled = toolOk(await callTool(bridge, 'svc_read_space', { space, after: '6' }));
    expect(rolled.bridge.followed_from).toEqual([space]);
    expect(rolled.bridge.notices.join('\n')).toContain(`${space} was cut back by a restore (HISTORY_ROLLBACK) and is closed. Reading its continuation ${next} instead.`);

    // Posting: the closed SPACE refuses, naming the continuation; the continuation takes the post.
    const refused = await callTool(bridge, 'svc_post', { space, kind: 'obs', body: 'after the restore' });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('SPACE_CLOSED');
    expect(textOf(refused)).toContain(`continues in ${next}: post there (svc_post space=${next})`);
    const posted = toolOk(await callTool(bridge, 'svc_post', { space: next, kind: 'obs', body: 'after the restore, in the continuation' }));
    expect(posted.bridge.receipt_check.ok).toBe(true);
    expect(posted.receipt.service_epoch).toBe(notice.fields.service_epoch);
    const continued = toolOk(await callTool(bridge, 'svc_read_space', { space: next }));
    expect(continued.items.map((p: any) => p.seq)).toEqual(['1']);

    // What survived still verifies against the kept checkpoint (4-6 extends 1-3).
    expect(toolOk(await callTool(bridge, 'svc_get', { space, seq: '2' })).bridge.changed_history).toBe(false);

    // Nothing the bridge held is lost: the KEY file, the kept checkpoint, a cursor for each SPACE.
    withCache(home, proxy, (cache, relayKey) => {
      expect(keyFiles(home)).toEqual(d.held.keyFiles);
      expect(cache.checkpoint(relayKey, space, 'posts')!.checkpointId).toBe(d.held.kept);
      expect(cache.cursor(relayKey, { kind: 'space', space })).toBe('4');
      expect(cache.cursor(relayKey, { kind: 'space', space: next })).toBe('1');
    });

    // 7. The restored relay signs what survived (post 4: 4-4, extending 1-3, not the kept 4-6).
    await serving.kill();
    const again = await startRelay({ dataDir: data, checkpointLog: d.log, publicUrl: proxy.url, clockOffsetMs: d.clockOffsetMs });
    cleanup.push(() => again.close());
    proxy.target = again.url;
    await checkpointNow(again);
    const four = await callTool(bridge, 'svc_get', { space, seq: '4' });
    const checked = toolOk(four);
    expect(checked.bridge.changed_history).toBe(false);
    expect(checked.bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '4', last: '4' } });
    expect(checked.bridge.checks[0].inclusion.history.recovered).toMatchObject({ recovery_id: list.body.items[0].recovery_id, lost_checkpoint_id: d.held.kept, replaced_by: next });
    expect(textOf(four)).toContain(`NOTICE: a restore cut SPACE ${space} back: checkpoint ${d.held.kept} (4-6)`);
    withCache(home, proxy, (cache, relayKey) => {
      expect(cache.checkpoint(relayKey, space, 'posts')!.last).toBe('4');
      expect(cache.lostCheckpoints(relayKey)).toEqual([expect.objectContaining({ space, checkpointId: d.held.kept, first: '4', last: '6', recoveryId: list.body.items[0].recovery_id })]);
    });
  });

  it('the same disaster restored without the checkpoint log: nothing is closed, no notice is signed, and the new checkpoint over the lost range is CHANGED HISTORY', async () => {
    const d = await beforeTheDisaster();
    const { proxy, bridge, home, space } = d;
    const data = join(dir('svc-drill-unlogged-'), 'data');
    const restored = await runCli(['restore', d.backup, '--data', data, '--without-checkpoint-log']);
    expect(restored, restored.stderr).toMatchObject({ code: 0 });
    const relay = await startRelay({ dataDir: data, publicUrl: proxy.url, clockOffsetMs: d.clockOffsetMs });
    cleanup.push(() => relay.close());
    proxy.target = relay.url;
    const at = { url: proxy.url } as RunningRelay;
    expect((await call(at, 'GET', `/v1/spaces/${space}`, { token: d.peer.token })).body).toMatchObject({ status: 'active', head_seq: '4' });
    expect((await call(at, 'GET', '/v1/recovery', { token: d.peer.token })).body.items).toEqual([]);

    // The relay writes positions 5 and 6 again, other posts, and signs them.
    for (const n of ['five, again', 'six, again']) await post(relay, d.peer, space, { kind: 'obs', body: n });
    await checkpointNow(relay);
    const r = await callTool(bridge, 'svc_get', { space, seq: '6' });
    const s = toolOk(r);
    expect(s.bridge.changed_history).toBe(true);
    expect(textOf(r)).toMatch(/^!!! CHANGED HISTORY in SPACE /);
    expect(s.bridge.checks[0].inclusion.history.recovered ?? null).toBeNull();
    withCache(home, proxy, (cache, relayKey) => {
      expect(cache.checkpoint(relayKey, space, 'posts')!.checkpointId).toBe(d.held.kept);
      expect(cache.lostCheckpoints(relayKey)).toEqual([]);
    });
  });
});
