/**
 * Backups and restores, end to end with the real commands (`svc-relay backup`, `svc-relay
 * restore` as processes) against a relay serving on the data directory: the copy while appends
 * run, a restore that lost nothing, a restore that lost signed positions (closed SPACE,
 * continuation, HISTORY_ROLLBACK, signed notices, a new epoch, the checkpoint log kept going).
 *
 * @module-tag slow
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCheckpointBytes, verifyCheckpoint, type CheckpointFields } from '../../../shared/checkpoint.js';
import { fromBase64url, fromHex } from '../../../shared/encoding.js';
import { recoveryExplains, verifyRecovery } from '../../../shared/recovery.js';
import { readCheckpointLog } from '../../../relay/checkpoint-log.js';
import { readBackup } from '../../../relay/store/sqlite/backup-file.js';
import { CHECKPOINT_LOG_KEY } from '../../../relay/service-mode.js';
import { admit, codeOf, get, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { runCli } from '../../helpers/relay-cli.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../../helpers/test-store.js';

const TEN_MINUTES = 10 * 60_000 + 1_000;
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function dir(prefix: string): string {
  const d = tempDataDir(prefix);
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function relayOn(dataDir: string, checkpointLog?: string): Promise<RunningRelay> {
  const relay = await startRelay({ dataDir, checkpointLog });
  cleanup.push(() => relay.close());
  return relay;
}

/** Sign everything uncovered (the ten-minute rule, on the relay's own clock). */
async function checkpointNow(relay: RunningRelay): Promise<void> {
  relay.clock.advance(TEN_MINUTES);
  await relay.app.checkpointer.runOnce(relay.clock.now());
}

async function posts(relay: RunningRelay, who: MintedToken, space: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await post(relay, who, space, { kind: 'obs', title: `note ${i}`, body: `body ${i}` });
}

function logCheckpoints(path: string): CheckpointFields[] {
  return readCheckpointLog(path).entries.flatMap((e) => ('checkpoint' in e ? [readCheckpointBytes(fromBase64url(e.checkpoint.canonical))] : []));
}

// backup and restore copy SQLite's file (PostgreSQL: pg_dump): not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`svc-relay backup${ON_POSTGRES_SKIP}`, () => {
  it('copies a serving relay while appends run, and the copy opens, checks and restores with every post linked', async () => {
    const data = dir('svc-bk-data-');
    const relay = await relayOn(data);
    const owner = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await posts(relay, owner, space.name, 20);
    let appending = true;
    let appended = 0;
    const appends = (async () => {
      while (appending) {
        await post(relay, owner, space.name, { kind: 'obs', title: 'during', body: `during ${appended}` });
        appended++;
      }
    })();
    const file = join(dir('svc-bk-out-'), 'relay.backup');
    const run = await runCli(['backup', file, '--data', data]);
    appending = false;
    await appends;
    expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
    // Quiet when not on a terminal.
    expect(run.stdout).toBe('');
    expect(appended).toBeGreaterThan(0);
    expect(existsSync(`${file}.partial`)).toBe(false);
    const contents = readBackup(file);
    expect(contents.manifest).toMatchObject({ format: 'svc-relay-backup', version: 1 });
    expect([...contents.files.keys()].sort()).toEqual(['challenge.secret', 'service-certificate.json', 'service-root.key', 'service-signer.key']);

    const restored = dir('svc-bk-restored-');
    rmSync(restored, { recursive: true });
    const r = await runCli(['restore', file, '--data', restored, '--without-checkpoint-log']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const copy = await relayOn(restored);
    expect(copy.serviceKeys.rootKey).toBe(relay.serviceKeys.rootKey);
    const row = (await copy.store.spaces.byName(space.name))!;
    const head = await copy.store.checkpoints.streamHead(row.id, 'posts');
    expect(head).toBeGreaterThanOrEqual(20);
    const links = await copy.store.checkpoints.links(row.id, 'posts', 1, head);
    expect(links.map((l) => l.position)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    for (let i = 1; i < links.length; i++) expect(links[i]!.previousHash).toEqual(links[i - 1]!.chainHash);
  });
});

// backup and restore copy SQLite's file (PostgreSQL: pg_dump): not run on the PostgreSQL test store (SVC_TEST_STORE=postgres).
describe.skipIf(onPostgres)(`svc-relay restore${ON_POSTGRES_SKIP}`, () => {
  it('a restore that lost nothing keeps the epoch, closes nothing and keeps every checkpoint the log has', async () => {
    const data = dir('svc-rs-data-');
    const log = join(dir('svc-rs-log-'), 'checkpoints.log');
    const relay = await relayOn(data, log);
    const owner = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await posts(relay, owner, space.name, 4);
    const file = join(dir('svc-rs-out-'), 'relay.backup');
    expect((await runCli(['backup', file, '--data', data])).code).toBe(0);
    // Signed after the backup, over positions the backup holds: nothing lost.
    await checkpointNow(relay);
    const signed = logCheckpoints(log);
    expect(signed.map((c) => `${c.stream} ${c.first}-${c.last}`).sort()).toEqual(['events 1-1', 'posts 1-4']);
    const epoch = await relay.store.state.get('service_epoch');
    await relay.close();

    const restored = join(dir('svc-rs-new-'), 'data');
    const r = await runCli(['restore', file, '--data', restored, '--checkpoint-log', log]);
    expect(r, r.stderr).toMatchObject({ code: 0, stdout: '' });
    const again = await relayOn(restored, log);
    expect(await again.store.state.get('service_epoch')).toBe(epoch);
    const row = (await again.store.spaces.byName(space.name))!;
    expect(row.status).toBe('active');
    expect((await again.store.checkpoints.latest(row.id, 'posts'))!.fields).toEqual(signed.find((c) => c.stream === 'posts'));
    expect((await again.store.checkpoints.latest(row.id, 'events'))!.fields).toEqual(signed.find((c) => c.stream === 'events'));
    expect((await get(again, '/v1/recovery')).body.items).toEqual([]);
    const last = readCheckpointLog(log).entries.at(-1)!;
    expect(last).toMatchObject({ restore: { previous_epoch: epoch, service_epoch: epoch, cuts: [] } });
  });

  it('a restore that lost signed positions closes the SPACE, continues it with the same members, answers HISTORY_ROLLBACK and publishes a notice that verifies', async () => {
    const data = dir('svc-rl-data-');
    const log = join(dir('svc-rl-log-'), 'checkpoints.log');
    const relay = await relayOn(data, log);
    const owner = await mintToken(relay.url);
    const writer = await mintToken(relay.url);
    const space = await newSpace(relay, owner);
    await admit(relay, space, writer, 'writer');
    await posts(relay, owner, space.name, 5);
    await checkpointNow(relay);
    const file = join(dir('svc-rl-out-'), 'relay.backup');
    expect((await runCli(['backup', file, '--data', data])).code).toBe(0);
    // After the backup: more posts and a newer checkpoint a client kept.
    await posts(relay, writer, space.name, 5);
    await checkpointNow(relay);
    const served = (await get(relay, `/v1/spaces/${space.name}/checkpoints?order=desc&limit=1`, owner)).body.items[0];
    const root = fromHex(relay.serviceKeys.rootKey, 32);
    const keptByClient = verifyCheckpoint(served, root);
    expect(keptByClient.fields.last).toBe('10');
    const oldEpoch = (await relay.store.state.get('service_epoch'))!;
    await relay.close();
    rmSync(data, { recursive: true, force: true });

    const restored = join(dir('svc-rl-new-'), 'data');
    const r = await runCli(['restore', file, '--data', restored, '--checkpoint-log', log]);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toContain(`${space.name} closed (posts signed to 10, survived to 5); continues in ${space.name}-2`);
    expect(existsSync(join(restored, 'restore.lock'))).toBe(false);

    const again = await relayOn(restored, log);
    expect(await again.store.state.get(CHECKPOINT_LOG_KEY)).toBe(log);
    const me = await get(again, '/v1/me', owner);
    expect(me.body.service_epoch).not.toBe(oldEpoch);
    const closed = await get(again, `/v1/spaces/${space.name}`, owner);
    expect(closed.body).toMatchObject({ status: 'closed', replaced_by: `${space.name}-2` });
    // Reads and export work; a cursor past the surviving head is HISTORY_ROLLBACK naming the continuation.
    const read = await get(again, `/v1/spaces/${space.name}/posts?after=0`, owner);
    expect(read.body.items.length).toBe(5);
    const rollback = await get(again, `/v1/spaces/${space.name}/posts?after=8`, writer);
    expect(codeOf(rollback)).toBe('HISTORY_ROLLBACK');
    expect(JSON.stringify(rollback.body.error)).toContain(`${space.name}-2`);
    const refused = await call(again, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: { kind: 'obs', body: 'late' } });
    expect(codeOf(refused)).toBe('SPACE_CLOSED');
    // The continuation: same members and roles; the writer posts there from seq 1.
    const next = (await again.store.spaces.byName(`${space.name}-2`))!;
    expect(next.owner).toBe(owner.peerId);
    expect((await again.store.members.get(next.id, writer.peerId))?.role).toBe('writer');
    const first = await post(again, writer, next.name, { kind: 'obs', body: 'continuing' });
    expect(first.seq).toBe('1');

    const list = await get(again, '/v1/recovery', owner);
    expect(list.body.items).toHaveLength(1);
    const notice = verifyRecovery(list.body.items[0], root);
    expect(notice.fields).toMatchObject({
      space_id: space.spaceId,
      name: space.name,
      replaced_by: next.name,
      replaced_by_space_id: next.spaceId,
      previous_epoch: oldEpoch,
      service_epoch: me.body.service_epoch,
      chains: [{ stream: 'posts', signed_last: '10', survived_last: '5' }],
    });
    expect(recoveryExplains(notice.fields, keptByClient.fields, keptByClient.id)).toBe(true);
    // Anyone may read the notices, without a KEY (of this private SPACE, the withheld form); `space` narrows the list.
    const anonymous = (await call(again, 'GET', '/v1/recovery')).body.items;
    expect(anonymous).toHaveLength(1);
    expect(verifyRecovery(anonymous[0], root).fields).toMatchObject({ space_id: space.spaceId, replaced_by: next.name, full_recovery_id: list.body.items[0].recovery_id });
    expect((await call(again, 'GET', `/v1/recovery?space=${next.name}`, { token: owner.token })).body.items).toEqual([]);
    expect((await call(again, 'GET', `/v1/recovery?space=${space.name}`, { token: owner.token })).body.items).toEqual(list.body.items);
    expect((await call(again, 'GET', '/v1/recovery?space=no-such-space')).body.items).toEqual([]);

    // The log got the restore's line and keeps going: the continuation's first checkpoint is in it, under the new epoch.
    await checkpointNow(again);
    const entries = readCheckpointLog(log).entries;
    const marker = entries.findIndex((e) => 'restore' in e);
    expect(entries[marker]).toMatchObject({ restore: { service_epoch: me.body.service_epoch, cuts: [{ space_id: space.spaceId, stream: 'posts', survived_last: '5' }] } });
    const after = logCheckpoints(log).filter((c) => c.space_id === next.spaceId);
    expect(after.map((c) => [c.first, c.last, c.service_epoch])).toContainEqual(['1', '1', me.body.service_epoch]);
    expect(readFileSync(log, 'utf8').endsWith('\n')).toBe(true);
  });

  it("serves a private SPACE's lost chains only to its members and owner, a public SPACE's posts chain to anyone and its governance log's to members, every notice signed", async () => {
    const data = dir('svc-rw-data-');
    const log = join(dir('svc-rw-log-'), 'checkpoints.log');
    const relay = await relayOn(data, log);
    const owner = await mintToken(relay.url);
    const member = await mintToken(relay.url);
    const outsider = await mintToken(relay.url);
    const late = await mintToken(relay.url);
    const secret = await newSpace(relay, owner);
    const open = await newSpace(relay, owner, { visibility: 'public' });
    await admit(relay, secret, member, 'writer');
    await admit(relay, open, member, 'writer');
    await posts(relay, owner, secret.name, 3);
    await posts(relay, owner, open.name, 3);
    await checkpointNow(relay);
    const file = join(dir('svc-rw-out-'), 'relay.backup');
    expect((await runCli(['backup', file, '--data', data])).code).toBe(0);
    // Lost after the backup: posts of both SPACES, and a member change of the public one (its governance log).
    await posts(relay, member, secret.name, 3);
    await posts(relay, member, open.name, 3);
    await admit(relay, open, late, 'reader');
    await checkpointNow(relay);
    const root = fromHex(relay.serviceKeys.rootKey, 32);
    const newest = async (name: string, stream: string) =>
      (await get(relay, `/v1/spaces/${name}/checkpoints?stream=${stream}&order=desc&limit=1`, owner)).body.items[0];
    // What only members may read: the ids and links of the private SPACE's checkpoints and of the public one's governance log.
    const secretIds = [(await newest(secret.name, 'posts')).checkpoint_id, (await newest(secret.name, 'posts')).ending_hash];
    const logIds = [(await newest(open.name, 'events')).checkpoint_id, (await newest(open.name, 'events')).ending_hash];
    const openPosts = await newest(open.name, 'posts');
    await relay.close();
    rmSync(data, { recursive: true, force: true });

    const restored = join(dir('svc-rw-new-'), 'data');
    expect((await runCli(['restore', file, '--data', restored, '--checkpoint-log', log])).code).toBe(0);
    const again = await relayOn(restored, log);
    const read = async (token?: string) => {
      const r = await call(again, 'GET', '/v1/recovery', { token });
      expect(r.status, r.text).toBe(200);
      const items = r.body.items as Record<string, unknown>[];
      // Every notice served verifies under the root key, whichever form it is.
      const verified = items.map((item) => verifyRecovery(item, root).fields);
      return { text: r.text, bySpace: (id: string) => verified.find((f) => f.space_id === id)! };
    };
    const whole = await read(owner.token);
    const secretWhole = whole.bySpace(secret.spaceId);
    const openWhole = whole.bySpace(open.spaceId);
    expect(secretWhole.full_recovery_id).toBeUndefined();
    expect(secretWhole.chains).toEqual([expect.objectContaining({ stream: 'posts', signed_last: '6', survived_last: '3', signed_checkpoint_id: secretIds[0], signed_ending_hash: secretIds[1] })]);
    expect(openWhole.chains).toEqual([
      expect.objectContaining({ stream: 'posts', signed_last: '6', survived_last: '3', signed_checkpoint_id: openPosts.checkpoint_id }),
      expect.objectContaining({ stream: 'events', signed_checkpoint_id: logIds[0], signed_ending_hash: logIds[1] }),
    ]);
    const secretId = (await call(again, 'GET', `/v1/recovery?space=${secret.name}`, { token: owner.token })).body.items[0].recovery_id;
    const openId = (await call(again, 'GET', `/v1/recovery?space=${open.name}`, { token: owner.token })).body.items[0].recovery_id;

    // A member reads what the owner reads.
    expect((await call(again, 'GET', '/v1/recovery', { token: member.token })).body).toEqual((await call(again, 'GET', '/v1/recovery', { token: owner.token })).body);

    // No token, a KEY of neither SPACE, or a token that does not authenticate: the withheld forms.
    const withheld = { signed_last: null, signed_checkpoint_id: null, signed_ending_hash: null, survived_last: null, survived_hash: null, unavailable: true };
    for (const token of [undefined, outsider.token, `svc_${'0'.repeat(64)}`]) {
      const seen = await read(token);
      const s = seen.bySpace(secret.spaceId);
      expect(s).toMatchObject({ name: secret.name, replaced_by: secretWhole.replaced_by, full_recovery_id: secretId });
      expect(s.chains).toEqual([{ stream: 'posts', ...withheld }]);
      const o = seen.bySpace(open.spaceId);
      expect(o.full_recovery_id).toBe(openId);
      expect(o.chains).toEqual([openWhole.chains[0], { stream: 'events', ...withheld }]);
      for (const hidden of [...secretIds, ...logIds, secretWhole.chains[0]!.survived_hash]) expect(seen.text).not.toContain(hidden);
    }
  });
});
