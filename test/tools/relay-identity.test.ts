/**
 * Another relay at the same address (spec/1-concepts.md: a relay's signatures chain to its
 * service_root_key; tools/verify/relay-identity.ts). A real bridge over stdio follows relay A on a
 * loopback port; A is stopped and relay B, with a data directory (and so a root key) of its own,
 * is started on the same port. The bridge refuses to register or post there, naming both root
 * keys, and moves no cursor; once the agent accepts B it works there with cursors of its own, and
 * when A comes back and the person accepts it again (`svc-bridge relay accept`), A's cursors are
 * there as they were. A restore of the same relay (same root key, new epoch) keeps its own path
 * (test/tools/recovery.test.ts).
 */
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCache } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { callTool, runBridge, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, tempDataDir, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

const dirA = tempDataDir('svc-identity-a-');
const dirB = tempDataDir('svc-identity-b-');
const home = tempHome('svc-identity-bridge-');
const ENV = { SVC_KEEPER_INTERVAL: '0' };
let relay: RunningRelay | undefined;
let port = 0;
let url = '';
let bridge: RunningBridge;
let peer: string;

async function startOn(dataDir: string): Promise<RunningRelay> {
  relay = await startRelay({ dataDir, port, rateLimits: false });
  port = Number(new URL(relay.url).port);
  url = relay.url;
  return relay;
}

async function stop(): Promise<void> {
  await relay!.close();
  relay = undefined;
}

/** What the bridge's cache file holds for the relay address (read through its own module). */
function cached<T>(use: (cache: ReturnType<typeof openCache>) => T): T {
  const cache = openCache(openKeyDirectory(home), 'default');
  try {
    return use(cache);
  } finally {
    cache.close();
  }
}

const spaceCursor = (space: string) => cached((c) => c.cursor(url, { kind: 'space', space }));

beforeAll(async () => {
  await startOn(dirA);
  bridge = await startBridge({ relayUrl: url, home, env: ENV });
  peer = toolOk(await callTool(bridge, 'svc_whoami', {})).peer_id;
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (relay !== undefined) await relay.close();
  for (const dir of [dirA, dirB, dirname(home)]) rmSync(dir, { recursive: true, force: true });
});

describe('another relay at the same address', () => {
  it('is refused by name until accepted, keeps the first relay\'s cursors apart, and finds them again when that relay is accepted back', async () => {
    // At relay A: a SPACE with two posts, read, so its cursor is saved.
    const rootA = relay!.serviceKeys.rootKey;
    const space = freshName('ida');
    toolOk(await callTool(bridge, 'svc_space_control', { action: 'create', name: space }));
    for (const body of ['one', 'two']) toolOk(await callTool(bridge, 'svc_post', { space, kind: 'obs', body }));
    const read = toolOk(await callTool(bridge, 'svc_read_space', { space }));
    expect(read.items).toHaveLength(2);
    const cursorA = spaceCursor(space);
    expect(cursorA).toBe(read.next_after);

    // A second SPACE at A, posted to once, then a post to it queued while A is away.
    const spare = freshName('idq');
    toolOk(await callTool(bridge, 'svc_space_control', { action: 'create', name: spare }));
    toolOk(await callTool(bridge, 'svc_post', { space: spare, kind: 'obs', body: 'online' }));

    // A stops; B, a relay of its own (new data directory, new root key), answers on the same port.
    await stop();
    expect(toolOk(await callTool(bridge, 'svc_post', { space: spare, kind: 'obs', body: 'queued for A' })).queued).toBe(true);
    await startOn(dirB);
    const rootB = relay!.serviceKeys.rootKey;
    expect(rootB).not.toBe(rootA);

    for (const [tool, args] of [
      ['svc_post', { space, kind: 'obs', body: 'three' }],
      ['svc_read_space', { space }],
      ['svc_whoami', {}],
    ] as const) {
      const r = await callTool(bridge, tool, args);
      expect(r.isError, tool).toBe(true);
      expect((r.structuredContent as any).error).toMatchObject({ code: 'RELAY_CHANGED', source: 'bridge' });
      const text = textOf(r);
      expect(text).toContain(`it publishes service_root_key ${rootB}`);
      expect(text).toContain(`this bridge pinned ${rootA}`);
      expect(text).toContain('not a restore');
      expect(text).toContain(`svc_whoami accept_relay="${rootB}"`);
      expect(text).toContain(`svc-bridge relay accept ${rootB}`);
    }
    // Nothing reached B: the KEY is not registered there, the cursor of A's SPACE did not move.
    expect(await relay!.store.keys.get(peer)).toBeUndefined();
    expect(spaceCursor(space)).toBe(cursorA);
    expect(cached((c) => c.serviceRoot(url))).toBe(rootA);

    // The person's view: the CLI names both keys.
    const shown = await runBridge(['relay'], { relayUrl: url, home });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`publishes: service_root_key ${rootB}`);
    expect(shown.stdout).toContain(`pinned:    ${rootA}`);
    expect(shown.stdout).toContain(`ANOTHER relay than the one pinned: nothing is registered or posted there until you run: svc-bridge relay accept ${rootB}`);

    // Only the key the relay publishes is accepted.
    const wrong = await callTool(bridge, 'svc_whoami', { accept_relay: rootA });
    expect(wrong.isError).toBe(true);
    expect((wrong.structuredContent as any).error.code).toBe('INVALID_REQUEST');
    expect(textOf(wrong)).toContain(`publishes service_root_key ${rootB}, not ${rootA}; nothing changed`);
    expect(cached((c) => c.serviceRoot(url))).toBe(rootA);

    // The agent accepts B: it is registered there and works with cursors of its own.
    const accepted = await callTool(bridge, 'svc_whoami', { accept_relay: rootB });
    const s = toolOk(accepted);
    expect(s.peer_id).toBe(peer);
    expect(s.bridge.accepted_relay).toEqual({ service_root_key: rootB, before: rootA, changed: true });
    expect(textOf(accepted)).toContain(`Accepted: the relay at ${url} with service_root_key ${rootB} is the relay this bridge follows from now on.`);
    expect(textOf(accepted)).not.toContain('service_epoch changed');
    expect(await relay!.store.keys.get(peer)).toBeDefined();
    expect(cached((c) => c.serviceRoot(url))).toBe(rootB);
    expect(spaceCursor(space)).toBeUndefined();
    // The write queued for A waits for A: B's outbox is empty, and nothing was sent to B.
    expect(s.bridge.outbox.queued).toBe(0);
    expect(textOf(accepted)).toContain('cursors, checkpoints, queued writes) is kept apart for it');
    const atB = freshName('idb');
    toolOk(await callTool(bridge, 'svc_space_control', { action: 'create', name: atB }));
    const posted = toolOk(await callTool(bridge, 'svc_post', { space: atB, kind: 'obs', body: 'at B' }));
    expect(posted.bridge.receipt_check.ok).toBe(true);
    const readB = toolOk(await callTool(bridge, 'svc_read_space', { space: atB }));
    expect(readB.items).toHaveLength(1);
    expect(spaceCursor(atB)).toBe(readB.next_after);

    // A comes back on the same port: B is pinned now, so A is the other relay, refused the same way.
    await stop();
    await startOn(dirA);
    const back = await callTool(bridge, 'svc_read_space', { space });
    expect((back.structuredContent as any).error.code).toBe('RELAY_CHANGED');
    expect(textOf(back)).toContain(`it publishes service_root_key ${rootA}, and this bridge pinned ${rootB}`);
    // The person accepts A again: A's own cursor is there as it was; B's stays apart.
    const again = await runBridge(['relay', 'accept', rootA], { relayUrl: url, home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('This relay was followed here before: its own cursors and checkpoints are used again.');
    expect(spaceCursor(space)).toBe(cursorA);
    expect(spaceCursor(atB)).toBeUndefined();
    const resumed = toolOk(await callTool(bridge, 'svc_read_space', { space }));
    expect(resumed.bridge).toMatchObject({ cursor_from: 'saved', after_sent: cursorA });
    expect(resumed.items).toHaveLength(0);
    expect(resumed.bridge.notices).toEqual([]);
    // The write queued for A went to A once A was accepted back.
    expect(resumed.outbox_notices).toHaveLength(1);
    expect(resumed.outbox_notices[0]).toMatch(new RegExp(`^Queued post delivered to SPACE ${spare} at seq 2: .*receipt verified`));
    const spareRead = toolOk(await callTool(bridge, 'svc_read_space', { space: spare, after: '0', detail: 'full' }));
    expect(spareRead.items.map((p: { body: string }) => p.body)).toEqual(['online', 'queued for A']);
    const me = await callTool(bridge, 'svc_whoami', {});
    expect(textOf(me)).not.toContain('service_epoch changed');
  }, 120_000);
});
