/**
 * A sealed SPACE kept with the MCP tools alone (protocol/sealed.md §8, §9): the real relay
 * in-process, real bridge processes over stdio with the MCP SDK client, one key directory each.
 *
 * - The owner creates the SPACE, a KEY asks to join with svc_join, the owner approves with
 *   svc_space_control: the owner's bridge vouches for it (a stamp) and locks the key for it in
 *   that call, and the member reads and posts sealed content at once.
 * - A KEY that never published an encryption key is refused by set_member with
 *   ENCRYPTION_KEY_MISSING, whose fix names the call that makes its bridge publish the key;
 *   after that call, set_member admits it and hands it the key.
 * - While it serves, the owner's bridge does its keeper duty in the background
 *   (SVC_KEEPER_INTERVAL, short here): it locks the key for a member an admin admitted (the admin
 *   keeps nothing), and changes the key once a removal makes a change due. The test waits for
 *   each by polling the relay with a deadline.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keeperIntervalMs } from '../../bridge/sealed/keeper-duty.js';
import { isBridgeError } from '../../tools/errors.js';
import type { Ended, Handed } from '../../tools/ports.js';
import { peerFence } from '../../tools/render.js';
import { endedLine, handedLine } from '../../tools/spaces/sealed-admission.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';

const WHO = ['owner', 'member', 'late', 'admin', 'newcomer'] as const;
type Who = (typeof WHO)[number];

let relay: RunningRelay;
const name = `sealed-tools-${Date.now().toString(36)}`;
const home = Object.fromEntries(WHO.map((w) => [w, tempHome()])) as Record<Who, string>;
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};

async function tool(who: Who, tool: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, tool, args);
  return { r, text: textOf(r), data: r.structuredContent as any };
}

async function ok(who: Who, t: string, args: Record<string, unknown>) {
  const out = await tool(who, t, args);
  expect(out.r.isError, out.text).toBeFalsy();
  return out;
}

/** Ask to join with svc_join; returns the request id. */
async function ask(who: Who): Promise<string> {
  const asked = await ok(who, 'svc_join', { action: 'join', name, message: 'let me in' });
  expect(asked.text).toContain('Asked to join');
  return asked.data.request_id as string;
}

/** Read every post of the SPACE with svc_read_space; fails on anything that did not open. */
async function readAll(who: Who): Promise<any[]> {
  const read = await ok(who, 'svc_read_space', { space: name, after: '0', detail: 'full' });
  expect(read.text).not.toContain('COULD NOT BE OPENED');
  return read.data.items as any[];
}

async function space() {
  return (await relay.store.spaces.byName(name))!;
}

async function holdsLock(who: Who, generation: number): Promise<boolean> {
  const row = await relay.store.db
    .prepare('SELECT 1 AS one FROM sealed_locks WHERE space_row_id = ? AND generation = ? AND recipient = ?')
    .get((await space()).id, generation, id[who]);
  return row !== undefined;
}

async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  relay = await startRelay();
  await Promise.all(
    WHO.map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      // The owner keeps its SPACES every second; the others keep nothing.
      const env = who === 'owner' ? { SVC_KEEPER_INTERVAL: '1' } : { SVC_KEEPER_INTERVAL: '0' };
      bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env });
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('the sealed cache and the local index of a serving bridge', () => {
  it('are opened when first used: a start that lists the tools and answers svc_whoami opens neither, a sealed SPACE made opens the cache, a post sealed in it the index', async () => {
    const own = tempHome();
    const b = await startBridge({ relayUrl: relay.url, home: own, env: { SVC_KEEPER_INTERVAL: '0' } });
    try {
      const sealedFiles = () => readdirSync(join(own, 'cache')).filter((f) => /\.(sealed|seek)\.sqlite$/.test(f));
      expect((await b.client.listTools()).tools.length).toBeGreaterThan(0);
      const me = await callTool(b, 'svc_whoami', {});
      expect(me.isError, textOf(me)).toBeFalsy();
      expect(sealedFiles()).toEqual([]);
      const made = await callTool(b, 'svc_space_control', { action: 'create', name: `${name}-lazy`, visibility: 'sealed' });
      expect(made.isError, textOf(made)).toBeFalsy();
      expect(sealedFiles()).toEqual(['default.sealed.sqlite']);
      const posted = await callTool(b, 'svc_post', { space: `${name}-lazy`, kind: 'obs', title: 'Sealed here', body: 'Indexed on this machine.' });
      expect(posted.isError, textOf(posted)).toBeFalsy();
      expect(sealedFiles().sort()).toEqual(['default.seek.sqlite', 'default.sealed.sqlite'].sort());
    } finally {
      await b.close();
    }
  });
});

describe('a sealed SPACE kept with the MCP tools alone', () => {
  it('admits a KEY the owner approves with svc_space_control, and the member reads and posts sealed words at once', async () => {
    const made = await ok('owner', 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed by tools' });
    expect(made.text).toContain('approve them with action=approve');
    await ok('owner', 'svc_post', { space: name, kind: 'obs', title: 'Before the member', body: 'Written before anyone joined.' });

    const requestId = await ask('member');
    const approved = await ok('owner', 'svc_space_control', { action: 'approve', request_id: requestId });
    expect(approved.text).toContain('vouched for it (a stamp this KEY signed) and locked the key of generation 1 for');
    expect(approved.data.sealed_key).toEqual({ state: 'locked', generation: 1, stamped: true });
    // The call itself made the lock: it is there when the answer comes back.
    expect(await holdsLock('member', 1)).toBe(true);

    expect((await readAll('member')).map((p) => p.title)).toEqual(['Before the member']);
    const posted = await ok('member', 'svc_post', { space: name, kind: 'obs', title: 'From the member', body: 'Sealed on the member machine.' });
    expect(posted.text).toMatch(/sealed:\s+yes, on this machine under generation 1/);
    const seen = await readAll('owner');
    expect(seen.map((p) => [p.title, p.body])).toEqual([
      ['Before the member', 'Written before anyone joined.'],
      ['From the member', 'Sealed on the member machine.'],
    ]);
    expect(bridges.member!.stderr()).not.toContain('SEALED_NO_KEY');
  }, 120_000);

  it('refuses set_member for a KEY without an encryption key with ENCRYPTION_KEY_MISSING, naming the call that publishes it', async () => {
    // Known to the relay (it signed in), never near a sealed SPACE: no encryption key.
    await ok('late', 'svc_whoami', {});
    expect(await relay.store.encryptionKeys.get(id.late)).toBeUndefined();
    const refused = await tool('owner', 'svc_space_control', { action: 'set_member', name, peer_id: id.late, role: 'writer' });
    expect(refused.r.isError).toBe(true);
    expect(refused.data.error).toMatchObject({ code: 'ENCRYPTION_KEY_MISSING', source: 'relay' });
    expect(refused.text).toMatch(/^ENCRYPTION_KEY_MISSING\./);
    expect(refused.text).toContain(`KEY ${id.late} has not published its encryption key`);
    expect(refused.text).toContain(`Its bridge publishes the key on first need: when it calls svc_join action=join name=${name}`);
    expect(await relay.store.members.roleOf(await space(), id.late)).toBeNull();

    // The call the fix names publishes the key (and files a request) ...
    await ask('late');
    expect(await relay.store.encryptionKeys.get(id.late)).toBeDefined();
    // ... and set_member again admits the KEY and hands it the key.
    const granted = await ok('owner', 'svc_space_control', { action: 'set_member', name, peer_id: id.late, role: 'reader' });
    expect(granted.text).toContain('admitted');
    expect(granted.data.sealed_key).toMatchObject({ state: 'locked', generation: 1 });
    expect((await readAll('late')).map((p) => p.title)).toEqual(['Before the member', 'From the member']);
  }, 120_000);

  it("locks the key in the background for a member an admin admitted, on the owner's serving bridge", async () => {
    // An admin that keeps nothing; the keeper list (signed with the one command there is for it)
    // admits every KEY, so the owner's keeper duty vouches for whoever the admin lets in.
    const adminAsked = await ask('admin');
    await ok('owner', 'svc_space_control', { action: 'approve', request_id: adminAsked, role: 'admin' });
    const list = await runBridge(['keepers', name, '--admission', 'open'], { relayUrl: relay.url, home: home.owner });
    expect(list.code, list.stderr).toBe(0);

    const requestId = await ask('newcomer');
    const approved = await ok('admin', 'svc_space_control', { action: 'approve', request_id: requestId });
    expect(approved.data.sealed_key).toEqual({ state: 'not_keeper' });
    expect(approved.text).toContain('your KEY keeps nothing in');
    await until(async () => await holdsLock('newcomer', 1), "the owner's keeper duty to lock the key for the newcomer");
    expect((await readAll('newcomer')).map((p) => p.title)).toEqual(['Before the member', 'From the member']);
    expect(bridges.owner!.stderr()).toMatch(/keeper duty, sealed-tools-[0-9a-z]+ \(generation 1\): locked generation 1 for 1 member\(s\)/);
  }, 120_000);

  it("changes the key in the background once a removal makes a change due, and the members read what follows", async () => {
    const removed = await ok('owner', 'svc_space_control', { action: 'revoke', name, peer_id: id.late });
    expect(removed.text).toContain('Removed');
    // The list says one day between changes after a departure (the keepers command's default).
    relay.clock.advance(86_400_000 + 1_000);
    await until(async () => await relay.store.sealed.generationInUse((await space()).id) === 2, "the owner's keeper duty to change the key");
    await until(async () => await holdsLock('member', 2) && await holdsLock('newcomer', 2), 'locks of generation 2');
    expect(await holdsLock('late', 2)).toBe(false);
    await ok('owner', 'svc_post', { space: name, kind: 'obs', title: 'After the change', body: 'Generation two.' });
    const items = await readAll('member');
    expect(items.map((p) => [p.title, p.sealed.generation])).toEqual([
      ['Before the member', 1],
      ['From the member', 1],
      ['After the change', 2],
    ]);
  }, 120_000);

  it('ends the owner bridge when its stdin closes, keeper duty and all', async () => {
    const owner = bridges.owner!;
    delete bridges.owner;
    // The client ends stdin, waits up to 2 s for the process, then sends SIGTERM: a bridge that
    // a timer kept alive would say "SIGTERM, stopping".
    await owner.close();
    expect(owner.stderr()).toContain('keeper duty: every 1 s');
    expect(owner.stderr()).not.toContain('SIGTERM');
  }, 30_000);
});

describe('SVC_KEEPER_INTERVAL', () => {
  it('is whole seconds from 0 (no keeper duty) to a day, 60 when unset, and anything else is a CONFIG refusal', () => {
    expect(keeperIntervalMs({})).toBe(60_000);
    expect(keeperIntervalMs({ SVC_KEEPER_INTERVAL: '' })).toBe(60_000);
    expect(keeperIntervalMs({ SVC_KEEPER_INTERVAL: '0' })).toBe(0);
    expect(keeperIntervalMs({ SVC_KEEPER_INTERVAL: '5' })).toBe(5_000);
    expect(keeperIntervalMs({ SVC_KEEPER_INTERVAL: '86400' })).toBe(86_400_000);
    for (const bad of ['86401', '-1', '1.5', '1e3', ' 5', 'soon', '9999999']) {
      let thrown: unknown;
      try {
        keeperIntervalMs({ SVC_KEEPER_INTERVAL: bad });
      } catch (e) {
        thrown = e;
      }
      expect(isBridgeError(thrown, 'CONFIG'), bad).toBe(true);
      expect((thrown as Error).message).toContain('SVC_KEEPER_INTERVAL must be whole seconds from 0 to 86400');
    }
  });

  it('malformed, is said by every tool of a bridge that could not start, like any other setting', async () => {
    const b = await startBridge({ relayUrl: 'http://127.0.0.1:9', env: { SVC_KEEPER_INTERVAL: 'soon' } });
    try {
      const r = await callTool(b, 'svc_whoami', {});
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('svc-bridge could not start');
      expect(textOf(r)).toContain('SVC_KEEPER_INTERVAL must be whole seconds from 0 to 86400, not "soon"');
    } finally {
      await b.close();
    }
  }, 30_000);
});

describe('what an admission in a sealed SPACE says about the key', () => {
  const fence = peerFence({ nonce: '0123abcd' });
  const peerId = 'ab'.repeat(32);
  const states: Handed[] = [
    { state: 'locked', generation: 3, stamped: true },
    { state: 'locked', generation: 3, stamped: false },
    { state: 'held', generation: 3, stamped: false },
    { state: 'held', generation: 3, stamped: true },
    { state: 'not_keeper' },
    { state: 'no_key_here', generation: 3, why: 'no lock for this KEY yet' },
    { state: 'no_encryption_key', generation: 3, stamped: true },
    { state: 'not_vouched', generation: 3 },
    { state: 'failed', why: 'TRANSPORT: the relay <could not> be reached' },
  ];

  it('is one plain paragraph per outcome, naming the KEY, with the reasons the relay gave fenced', () => {
    for (const h of states) {
      const line = handedLine(fence, 'work-space', peerId, h);
      expect(line, h.state).toMatch(/^Sealed: /);
      expect(line, h.state).toContain(peerId);
      // Sentences are whole: none starts in lower case after a full stop.
      expect(line, h.state).not.toMatch(/\.\s+[a-z]/);
      expect(line, h.state).not.toContain('undefined');
    }
    expect(handedLine(fence, 'work-space', peerId, states[0]!)).toContain('vouched for it (a stamp this KEY signed) and locked the key of generation 3');
    expect(handedLine(fence, 'work-space', peerId, states[8]!)).toContain('⟦peer why 0123abcd⟧TRANSPORT: the relay <could not> be reached⟦/peer 0123abcd⟧');
  });
});

describe('what a removal from a sealed SPACE says about the vouching it ended', () => {
  const fence = peerFence({ nonce: '0123abcd' });
  const peerId = 'ab'.repeat(32);
  const states: Ended[] = [
    { state: 'ended', notAfter: 1_700_000_000, still: undefined },
    { state: 'ended', notAfter: 1_700_000_000, still: 'open' },
    { state: 'ended', notAfter: 1_700_000_000, still: 'listed' },
    { state: 'other_issuer', issuer: 'cd'.repeat(32) },
    { state: 'not_keeper' },
    { state: 'failed', why: 'TRANSPORT: the relay <could not> be reached', remembered: true },
    { state: 'failed', why: 'TRANSPORT: the relay <could not> be reached', remembered: false },
  ];

  it('is one plain paragraph per outcome, naming the KEY, when the stamp ended, and whether a keeper still admits it', () => {
    for (const e of states) {
      const line = endedLine(fence, 'work-space', peerId, e);
      expect(line, e.state).toMatch(/^Sealed: /);
      expect(line, e.state).toContain(peerId);
      expect(line, e.state).not.toMatch(/\.\s+[a-z]/);
      expect(line, e.state).not.toContain('undefined');
    }
    expect(endedLine(fence, 'work-space', peerId, states[0]!)).toContain('a stamp this KEY signed that ended at 2023-11-14T22:13:20.000Z replaces any earlier stamp');
    expect(endedLine(fence, 'work-space', peerId, states[0]!)).toContain('keepers leave its request to a person');
    expect(endedLine(fence, 'work-space', peerId, states[1]!)).toContain('a keeper still admits');
    expect(endedLine(fence, 'work-space', peerId, states[3]!)).toContain(`holds a stamp from ${'cd'.repeat(32)}`);
    expect(endedLine(fence, 'work-space', peerId, states[5]!)).toContain('⟦peer why 0123abcd⟧TRANSPORT: the relay <could not> be reached⟦/peer 0123abcd⟧');
  });
});
