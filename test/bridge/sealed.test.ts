/**
 * Sealed SPACES end to end (protocol/sealed.md): the real relay over
 * HTTP and real bridge processes, one per KEY, driven over MCP (svc_space_control, svc_join,
 * svc_post, svc_read_space) and through the CLI (`svc-bridge keepers`, `stamp`, `keeper --once`).
 *
 * An owner and two members: the owner creates the SPACE (its first key made on the owner's
 * machine), signs a keeper list, stamps the members, who put their stamps and ask to join; the
 * keeper admits them and locks the key for them. Posts open for every member. The owner removes
 * one member; once the change is due (the relay's clock moved past change_every), the keeper
 * changes the key. The removed member still opens, with the keys it kept, what it had, and not
 * what was posted after the change; those two steps use the removed member's own bridge
 * modules (bridge/sealed/sealing.ts `openKept`) in this process, since the relay no longer lets it read.
 * A newcomer admitted after the change reads the whole history through the back links; so does
 * one admitted by a long-running keeper process, woken by its mailbox and stopped by SIGTERM.
 * The secrets a bridge keeps are sealed at rest. Last, the relay's data directory holds none of
 * the words written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fromBase64url } from '../../shared/encoding.js';
import { createSealer } from '../../bridge/sealed/encryption.js';
import { loadKey, openKeyDirectory, DEFAULT_KEY_NAME } from '../../bridge/keys/keys.js';
import { openSealedCache, sealedCachePath } from '../../bridge/sealed/sealed-cache.js';
import { Sealing } from '../../bridge/sealed/sealing.js';
import { RelayClient } from '../../bridge/relay-client.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
const name = `sealed-e2e-${Date.now().toString(36)}`;
const home = { owner: tempHome(), a: tempHome(), b: tempHome(), n: tempHome(), c: tempHome() };
const id: Record<keyof typeof home, string> = { owner: '', a: '', b: '', n: '', c: '' };
const bridges: Partial<Record<keyof typeof home, RunningBridge>> = {};

const NO_DUTY = { SVC_KEEPER_INTERVAL: '0' };

/** Words written in this test: none may reach the relay's disk. */
const written: string[] = [];

async function cli(who: keyof typeof home, args: string[]) {
  const r = await runBridge(args, { relayUrl: relay.url, home: home[who] });
  if (r.code !== 0) throw new Error(`svc-bridge ${args.join(' ')} (${who}) exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

async function tool(who: keyof typeof home, tool: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, tool, args);
  return { r, text: textOf(r), data: r.structuredContent as any };
}

async function post(who: keyof typeof home, title: string, body: string, data: string) {
  written.push(title, body, data);
  const { r, text, data: out } = await tool(who, 'svc_post', { space: name, kind: 'obs', title, body, data: { x_note: data } });
  expect(r.isError, text).toBeFalsy();
  return { text, out };
}

/** A member asks to join with a stamp from the owner; the owner's keeper admits it and locks the key. */
async function stampAndAsk(who: 'a' | 'b' | 'n' | 'c') {
  const stamp = (await cli('owner', ['stamp', id[who]])).stdout.trim();
  const put = await cli(who, ['stamp', '--put', stamp, '--space', name]);
  expect(put.stdout).toContain('Stamp put');
  const ask = await tool(who, 'svc_join', { action: 'join', name, message: 'please let me in' });
  expect(ask.r.isError, ask.text).toBeFalsy();
  expect(ask.text).toContain('Asked to join');
}

async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The posts of the SPACE as the relay serves them at full detail (header and ciphertext). */
async function servedPosts(): Promise<any[]> {
  const token = (await cli('owner', ['token'])).stdout.trim();
  const res = await fetch(`${relay.url}/v1/spaces/${name}/posts?detail=full&limit=50`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as any).items;
}

/** B's own bridge modules, in this process: its KEY, its sealed cache. */
function membersSealing(who: keyof typeof home): Sealing {
  const dir = openKeyDirectory(home[who]);
  const k = loadKey(dir, DEFAULT_KEY_NAME);
  const sealer = createSealer(k);
  const api = new RelayClient({ api: new URL(relay.url), key: k, dir });
  return new Sealing({ api, identity: { peerId: k.peerId }, signer: k.signer, sealer, privateSalt: k.privateSalt, now: Date.now, log: () => {} }, openSealedCache(sealedCachePath(dir, k.name), sealer.box));
}

beforeAll(async () => {
  relay = await startRelay();
  await Promise.all(
    (Object.keys(home) as (keyof typeof home)[]).map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      // The keeper under test here is the command: the serving bridges' own keeper duty is off.
      if (who !== 'n' && who !== 'c') bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: NO_DUTY });
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('a sealed SPACE with an owner and two members, over real bridges', () => {
  it('is created with its first key made on the owner machine, and the owner signs its keeper list', async () => {
    const made = await tool('owner', 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed work' });
    expect(made.r.isError, made.text).toBeFalsy();
    expect(made.text).toContain('Sealed: the relay holds ciphertext only');
    const space = (await relay.store.spaces.byName(name))!;
    expect(space.visibility).toBe('sealed');
    expect(await relay.store.encryptionKeys.get(id.owner)).toBeDefined();
    const list = await cli('owner', ['keepers', name, '--change-every', '60', '--admission', 'stamped']);
    expect(list.stdout).toMatch(/revision:\s+1/);
    expect(list.stdout).toMatch(/change_every:\s+60 s/);
  }, 120_000);

  it('admits two stamped members by the keeper, which locks the key for them', async () => {
    await stampAndAsk('a');
    await stampAndAsk('b');
    const pass = await cli('owner', ['keeper', name, '--once']);
    expect(pass.stdout).toContain(`admitted ${id.a}`);
    expect(pass.stdout).toContain(`admitted ${id.b}`);
    expect(pass.stdout).toContain('locked generation 1 for 2 member(s)');
    const space = (await relay.store.spaces.byName(name))!;
    expect(await relay.store.members.roleOf(space, id.a)).toBe('writer');
    expect(await relay.store.members.roleOf(space, id.b)).toBe('writer');
  }, 120_000);

  it('seals posts on the writer machine and opens them for every member, fenced as peer content (as its own for the writer)', async () => {
    const first = await post('owner', 'Owner title one', 'The owner body, generation one.', 'owner-data-one');
    expect(first.text).toMatch(/sealed:\s+yes, on this machine under generation 1/);
    await post('a', 'Member A title', 'What member A found.', 'a-data-one');
    for (const who of ['owner', 'a', 'b'] as const) {
      const read = await tool(who, 'svc_read_space', { space: name, after: '0', detail: 'full' });
      expect(read.r.isError, read.text).toBeFalsy();
      expect(read.text).not.toContain('COULD NOT BE OPENED');
      // Fenced as another KEY's words, or as the reader's own for the post it wrote.
      const mark = (author: 'owner' | 'a') => (who === author ? 'own' : 'peer');
      expect(read.text).toMatch(new RegExp(`title: ⟦${mark('owner')} title [0-9a-f]+⟧Owner title one⟦/${mark('owner')} [0-9a-f]+⟧`));
      expect(read.text).toMatch(new RegExp(`body: ⟦${mark('a')} body [0-9a-f]+⟧What member A found\\.⟦/${mark('a')}`));
      const items = read.data.items as any[];
      expect(items.map((p) => p.title)).toEqual(['Owner title one', 'Member A title']);
      expect(items.every((p) => p.sealed.opened === true && p.sealed.generation === 1)).toBe(true);
      expect(items[0].data).toEqual({ x_note: 'owner-data-one' });
    }
  }, 120_000);

  it('changes the key after a member is removed: the removed member opens what it had and nothing after', async () => {
    const before = await servedPosts();
    const removed = await tool('owner', 'svc_space_control', { action: 'revoke', name, peer_id: id.b });
    expect(removed.r.isError, removed.text).toBeFalsy();
    expect(removed.data.sealed_stamp).toMatchObject({ state: 'ended' });
    // Not due yet: change_every (60 s) has not passed since the last change.
    const early = await cli('owner', ['keeper', name, '--once']);
    expect(early.stdout).not.toContain('changed the key');
    relay.clock.advance(61_000);
    const pass = await cli('owner', ['keeper', name, '--once']);
    // The removal ended the owner's stamp for it too: the relay counts its old lock as lapsed.
    expect(pass.stdout).toContain('a key change is due (departure, lapsed)');
    expect(pass.stdout).toContain('changed the key: generation 2 is in use');
    await post('owner', 'After the change', 'Only current members read this.', 'owner-data-two');
    const read = await tool('a', 'svc_read_space', { space: name, after: '0', detail: 'full' });
    expect(read.text).not.toContain('COULD NOT BE OPENED');
    expect((read.data.items as any[]).map((p) => [p.title, p.sealed.generation])).toEqual([
      ['Owner title one', 1],
      ['Member A title', 1],
      ['After the change', 2],
    ]);
    // The removed member's bridge is refused by the relay now.
    const refused = await tool('b', 'svc_read_space', { space: name, after: '0' });
    expect(refused.r.isError).toBe(true);
    expect(refused.text).toContain('READ_DENIED');
    // What it had still opens with the keys it kept; what came after does not.
    const after = await servedPosts();
    const b = membersSealing('b');
    const spaceId = (await relay.store.spaces.byName(name))!.spaceId;
    for (const p of before) {
      const { content } = b.openKept(spaceId, fromBase64url(p.sealed.header, 'h'), fromBase64url(p.sealed.ciphertext, 'c'));
      expect([content.title, content.body]).not.toContain(undefined);
    }
    const late = after.find((p) => p.sealed.generation === 2);
    expect(() => b.openKept(spaceId, fromBase64url(late.sealed.header, 'h'), fromBase64url(late.sealed.ciphertext, 'c'))).toThrow(/never held the key of generation 2/);
    b.cache.close();
  }, 180_000);

  it('lets a newcomer admitted after the change read the whole history through the back links', async () => {
    bridges.n = await startBridge({ relayUrl: relay.url, home: home.n, env: NO_DUTY });
    await stampAndAsk('n');
    const pass = await cli('owner', ['keeper', name, '--once']);
    expect(pass.stdout).toContain(`admitted ${id.n}`);
    expect(pass.stdout).toContain('locked generation 2 for 1 member(s)');
    const read = await tool('n', 'svc_read_space', { space: name, after: '0', detail: 'full' });
    expect(read.r.isError, read.text).toBeFalsy();
    expect(read.text).not.toContain('COULD NOT BE OPENED');
    expect((read.data.items as any[]).map((p) => p.title)).toEqual(['Owner title one', 'Member A title', 'After the change']);
    // At snippet detail the bridge fetches the sealed bytes itself and shows snippets.
    const snippets = await tool('n', 'svc_read_space', { space: name, after: '0' });
    expect((snippets.data.items as any[]).map((p) => p.snippet)).toEqual(['The owner body, generation one.', 'What member A found.', 'Only current members read this.']);
  }, 180_000);

  it('runs a keeper until SIGTERM that wakes on its mailbox, admits a newcomer and hands it the key', async () => {
    bridges.c = await startBridge({ relayUrl: relay.url, home: home.c, env: NO_DUTY });
    const keeper = spawn(process.execPath, ['--import', 'tsx', 'bridge/main.ts', 'keeper', name], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_API: relay.url, SVC_HOME: home.owner },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    keeper.stdout.on('data', (d: Buffer) => (out += d.toString()));
    keeper.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => keeper.on('close', (code) => resolve(code)));
    try {
      await until(() => err.includes('keeping'), 'the keeper to start');
      await stampAndAsk('c');
      await until(() => out.includes(`admitted ${id.c}`) && out.includes('locked generation 2 for 1 member(s)'), 'the keeper to admit and lock');
      const read = await tool('c', 'svc_read_space', { space: name, after: '0', detail: 'full' });
      expect(read.text).not.toContain('COULD NOT BE OPENED');
      expect((read.data.items as any[]).map((p) => p.title)).toEqual(['Owner title one', 'Member A title', 'After the change']);
    } finally {
      keeper.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(err).toContain('SIGTERM, stopping');
  }, 180_000);

  it('seals a post near the largest body and opens it in a snippets read, which fetches its bytes', async () => {
    const big = `Large sealed body ${'0123456789abcdef'.repeat(3900)}`;
    await post('a', 'A large post', big, 'a-data-large');
    const read = await tool('n', 'svc_read_space', { space: name, order: 'desc', limit: 3 });
    expect(read.r.isError, read.text).toBeFalsy();
    const newest = (read.data.items as any[])[0];
    expect(newest).toMatchObject({ title: 'A large post', snippet_truncated: true, sealed: { opened: true, generation: 2 } });
    expect(newest.snippet).toBe([...big].slice(0, 280).join(''));
    const full = await tool('n', 'svc_get', { post_id: newest.post_id, proof: false });
    expect(full.data.body).toBe(big);
  }, 60_000);

  it('keeps secrets at rest sealed under a key from the KEY seed, in a file only its user reads', async () => {
    const spaceId = (await relay.store.spaces.byName(name))!.spaceId;
    const file = sealedCachePath(openKeyDirectory(home.owner), DEFAULT_KEY_NAME);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const own = membersSealing('owner');
    const kept = own.cache.secret(own.relay, spaceId, 1);
    expect(kept?.secret).toHaveLength(32);
    expect(readFileSync(file).includes(Buffer.from(kept!.secret))).toBe(false);
    // Another KEY's box opens nothing in this file.
    const other = loadKey(openKeyDirectory(home.a), DEFAULT_KEY_NAME);
    const foreign = openSealedCache(file, createSealer(other).box);
    expect(foreign.space(own.relay, spaceId)?.generation).toBe(2);
    expect(foreign.secret(own.relay, spaceId, 1)).toBeUndefined();
    foreign.close();
    own.cache.close();
    const shown = await cli('owner', ['sealed', name]);
    expect(shown.stdout).toMatch(/encryption key fingerprint( [0-9a-f]{4}){8}/);
    expect(shown.stdout).toMatch(/generation:\s+2 \(key held\)/);
  }, 60_000);

  it('leaves none of the titles, bodies and data values written in the relay data directory', async () => {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(relay.dataDir);
    expect(files.length).toBeGreaterThan(0);
    const bytes = files.map((f) => readFileSync(f));
    expect(written.length).toBe(12);
    for (const w of written) {
      const needle = Buffer.from(w, 'utf8');
      expect(bytes.some((b) => b.includes(needle)), w).toBe(false);
    }
  });
});
