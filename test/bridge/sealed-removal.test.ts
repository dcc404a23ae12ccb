/**
 * Removing a member of a sealed SPACE ends the vouching the remover's KEY gave it
 * (protocol/sealed.md §8: a newer stamp replaces the older; "after which it stops counting"):
 * the real relay in-process, real bridge processes over stdio with the MCP SDK client, and the
 * `svc-bridge keeper --once` command, which admits vouched join requests on its own.
 *
 * The owner approves B with svc_space_control (its bridge stamps B, without end, and locks the
 * key for it), then revokes B: its bridge puts a stamp for B that ended already. B asks again;
 * neither the owner's serving bridge (its background keeper duty) nor a keeper pass run by the
 * owner admits B or locks for it. The owner approving B again with the tool vouches anew (a
 * fresh stamp replaces the ended one) and B reads. A stamp without end that B kept from before
 * and puts again counts no more for the owner's keeper, until the owner vouches for B anew.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedStamp } from '../../bridge/sealed/stamping.js';
import { DEFAULT_KEY_NAME, loadKey, openKeyDirectory } from '../../bridge/keys/keys.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

type Who = 'owner' | 'b';

let relay: RunningRelay;
const name = `sealed-removal-${Date.now().toString(36)}`;
const home: Record<Who, string> = { owner: tempHome(), b: tempHome() };
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};

async function tool(who: Who, t: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, t, args);
  const text = textOf(r);
  expect(r.isError, text).toBeFalsy();
  return { text, data: r.structuredContent as any };
}

async function cli(who: Who, args: string[]) {
  const r = await runBridge(args, { relayUrl: relay.url, home: home[who] });
  if (r.code !== 0) throw new Error(`svc-bridge ${args.join(' ')} (${who}) exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

async function space() {
  return (await relay.store.spaces.byName(name))!;
}

async function isMember(who: Who): Promise<boolean> {
  return await relay.store.members.roleOf(await space(), id[who]) !== null;
}

/** The locks the relay holds for `who` (a removed member's stay until the next key change). */
async function locks(who: Who): Promise<{ generation: number; created_at: number }[]> {
  return await relay.store.db
    .prepare('SELECT generation, created_at FROM sealed_locks WHERE space_row_id = ? AND recipient = ? ORDER BY generation, created_at')
    .all((await space()).id, id[who]) as { generation: number; created_at: number }[];
}

async function holdsLock(who: Who): Promise<boolean> {
  const g = await relay.store.sealed.generationInUse((await space()).id);
  return (await locks(who)).some((l) => l.generation === g);
}

async function ask(): Promise<string> {
  const asked = await tool('b', 'svc_join', { action: 'join', name, message: 'let me in' });
  expect(asked.text).toContain('Asked to join');
  return asked.data.request_id as string;
}

async function readTitles(): Promise<string[]> {
  const read = await tool('b', 'svc_read_space', { space: name, after: '0', detail: 'full' });
  expect(read.text).not.toContain('COULD NOT BE OPENED');
  return (read.data.items as any[]).map((p) => p.title);
}

async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Wait until the owner's serving bridge has finished `n` more background keeper rounds over the SPACE. */
async function ownerRounds(n: number): Promise<void> {
  // Each round reads the key records (GET …/sealed); nobody else reads them meanwhile.
  const start = servedStatus;
  await until(() => servedStatus >= start + n, 'the owner bridge keeper rounds');
}
let servedStatus = 0;

beforeAll(async () => {
  relay = await startRelay();
  relay.app.server.on('request', (req: { method?: string; url?: string }) => {
    if (req.method === 'GET' && req.url === `/v1/spaces/${name}/sealed`) servedStatus++;
  });
  for (const who of ['owner', 'b'] as const) {
    id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
    // The owner keeps its SPACES every second while it serves; B keeps nothing.
    bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: { SVC_KEEPER_INTERVAL: who === 'owner' ? '1' : '0' } });
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('removing a member of a sealed SPACE with svc_space_control', () => {
  it('ends the stamp the approval gave, so no keeper admits the KEY that asks again, until the owner approves it again', async () => {
    await tool('owner', 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Removal' });
    await tool('owner', 'svc_post', { space: name, kind: 'obs', title: 'First', body: 'Before B.' });
    const approved = await tool('owner', 'svc_space_control', { action: 'approve', request_id: await ask() });
    expect(approved.data.sealed_key).toEqual({ state: 'locked', generation: 1, stamped: true });
    expect(await relay.store.sealed.stamp((await space()).id, id.b)).toMatchObject({ issuer: id.owner, notAfter: null });
    expect(await readTitles()).toEqual(['First']);

    const before = Math.floor(Date.now() / 1000);
    const removed = await tool('owner', 'svc_space_control', { action: 'revoke', name, peer_id: id.b });
    expect(removed.text).toContain('Removed');
    expect(removed.text).toContain(`Sealed: the vouching this KEY gave ${id.b} in ${name} has ended`);
    expect(removed.text).toContain('keepers leave its request to a person');
    expect(removed.data.sealed_stamp).toMatchObject({ state: 'ended' });
    const ended = (await relay.store.sealed.stamp((await space()).id, id.b))!;
    expect(ended.issuer).toBe(id.owner);
    // Ended before the removal's answer came back: it counts at no later second.
    expect(ended.notAfter).not.toBeNull();
    expect(ended.notAfter!).toBeLessThan(before + 1);
    expect(removed.data.sealed_stamp.notAfter).toBe(ended.notAfter);
    expect(await relay.store.sealed.vouched(await space(), id.b, Date.now())).toBe(false);

    const lockedBefore = await locks('b');
    const again = await ask();
    // The owner's background duty runs its rounds meanwhile: it admits nobody, locks for nobody outside.
    await ownerRounds(2);
    const pass = await cli('owner', ['keeper', name, '--once']);
    expect(pass.stdout).toContain(`1 join request(s) wait for a person: not vouched for (${id.b})`);
    expect(pass.stdout).not.toContain(`admitted ${id.b}`);
    expect(await isMember('b')).toBe(false);
    expect(await locks('b')).toEqual(lockedBefore);
    expect((await relay.store.requests.listPending((await space()).id, Date.now(), 0, 10)).items.map((r) => r.requester)).toEqual([id.b]);

    // Approved again by hand: the tool vouches anew, and the fresh stamp replaces the ended one.
    const back = await tool('owner', 'svc_space_control', { action: 'approve', request_id: again });
    // Its lock of generation 1 stays at the relay until the next key change.
    expect(back.data.sealed_key).toEqual({ state: 'held', generation: 1, stamped: true });
    expect(back.text).toContain(`Sealed: vouched for ${id.b} anew (a stamp this KEY signed); it already holds the key of generation 1`);
    expect(await relay.store.sealed.stamp((await space()).id, id.b)).toMatchObject({ issuer: id.owner, notAfter: null });
    await tool('owner', 'svc_post', { space: name, kind: 'obs', title: 'Second', body: 'After B came back.' });
    expect(await readTitles()).toEqual(['First', 'Second']);
  }, 180_000);

  it("does not count a stamp without end from the owner that the removed KEY puts again, until the owner vouches for it anew", async () => {
    const removed = await tool('owner', 'svc_space_control', { action: 'revoke', name, peer_id: id.b });
    expect(removed.data.sealed_stamp).toMatchObject({ state: 'ended' });
    // A day later (join requests: two a day per KEY and SPACE), and the key change the removals
    // made due (one day without a keeper list) done by the owner's background duty.
    relay.clock.advance(86_400_000 + 1_000);
    await until(async () => await relay.store.sealed.generationInUse((await space()).id) === 2, "the owner's keeper duty to change the key");

    // The stamp the approval made has no end and is deterministic (Ed25519): B may hold its
    // bytes (a stamp printed for it before, say). Built here from the owner's key file.
    const owner = loadKey(openKeyDirectory(home.owner), DEFAULT_KEY_NAME);
    const old = signedStamp(owner.signer, id.owner, id.b);
    const put = await cli('b', ['stamp', '--put', JSON.stringify(old), '--space', name]);
    expect(put.stdout).toContain('Stamp put');
    expect(await relay.store.sealed.stamp((await space()).id, id.b)).toMatchObject({ issuer: id.owner, notAfter: null });
    const lockedBefore = await locks('b');
    await ask();

    const pass = await cli('owner', ['keeper', name, '--once']);
    expect(pass.stdout).toContain(`a stamp this KEY signed for ${id.b} is shown again after this KEY ended its vouching for it (removed): not counted`);
    expect(pass.stdout).toContain(`1 join request(s) wait for a person: not vouched for (${id.b})`);
    expect(await isMember('b')).toBe(false);
    expect(await locks('b')).toEqual(lockedBefore);

    // A stamp the owner signs for B that ended already vouches for nothing: still not counted.
    await cli('owner', ['stamp', id.b, '--until', '1']);
    const still = await cli('owner', ['keeper', name, '--once']);
    expect(still.stdout).toContain(`1 join request(s) wait for a person: not vouched for (${id.b})`);
    expect(await isMember('b')).toBe(false);

    // The owner's person vouches for B anew with the stamp command: the keeper admits it now.
    await cli('owner', ['stamp', id.b, '--space', name]);
    const admitted = await cli('owner', ['keeper', name, '--once']);
    expect(admitted.stdout).toContain(`admitted ${id.b}`);
    expect(await isMember('b')).toBe(true);
    expect(await holdsLock('b')).toBe(true);
    expect(await readTitles()).toEqual(['First', 'Second']);
  }, 180_000);
});
