/**
 * The bridge after a restore that lost positions (spec/1-concepts.md Versioning 6, "Space
 * status" closed and replaced_by; spec/3-errors.md HISTORY_ROLLBACK, SPACE_CLOSED;
 * shared/recovery.ts). A real svc-bridge process over stdio reaches a real relay through a
 * small real HTTP proxy, which shows what a restored relay would: a new service_epoch, a
 * SPACE's surviving head, recovery notices signed in the test with the relay's own certified
 * key (or a key the pinned root never certified), HISTORY_ROLLBACK. The SPACE closures
 * themselves are the relay store's own (`spaces.close`), so SPACE_CLOSED is the relay's.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cache } from '../../tools/cache/cache.js';
import { openCache } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { createMemoryCache } from '../../tools/cache/memory-cache.js';
import { acceptsLoss } from '../../tools/verify/recovery.js';
import { checkpointId, checkpointBytes, renderCheckpoint, signCheckpoint, streamGenesis, type CheckpointFields, type CheckpointLink } from '../../shared/checkpoint.js';
import { toHex } from '../../shared/encoding.js';
import { signerFromSeed } from '../../shared/identity.js';
import { renderRecovery, signRecovery, type RecoveryChain, type RecoveryFields } from '../../shared/recovery.js';
import { createServiceSigner, renderSigner, type ServiceSigner } from '../../shared/service-keys.js';
import { callTool, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { start } from '../helpers/conversations.js';
import { get, post } from '../helpers/posts.js';
import type { ProxiedAnswer, RunningProxy } from '../helpers/proxy.js';
import { closeProxiedBridge, spaceWithPeer as proxiedSpaceWithPeer, startProxiedBridge, type ProxiedBridge } from '../helpers/proxied-bridge.js';
import type { MintedToken, RunningRelay } from '../helpers/relay.js';

let proxy: RunningProxy;
let relay: RunningRelay;
let a: RunningBridge;
let homeA: string;
let p: MintedToken;
let setup: ProxiedBridge;
/** The relay's own epoch, and the one the proxy shows now (a restore moves it on). */
let realEpoch: string;
let shownEpoch: string;
/** Each test's own changes, applied after the epoch is shown. */
let extra: ((x: ProxiedAnswer) => string | { status: number; body: string } | undefined) | undefined;

function showEpoch(x: ProxiedAnswer): string | undefined {
  if (shownEpoch === realEpoch || x.method !== 'GET') return undefined;
  if (x.url.startsWith('/v1/capabilities')) {
    const caps = JSON.parse(x.body);
    caps.service_epoch = shownEpoch;
    if (caps.protocol) caps.protocol.service_epoch = shownEpoch;
    return JSON.stringify(caps);
  }
  if (x.url.startsWith('/v1/me') && x.status === 200) return JSON.stringify({ ...JSON.parse(x.body), service_epoch: shownEpoch });
  return undefined;
}

beforeAll(async () => {
  setup = await startProxiedBridge();
  ({ proxy, relay, a, homeA, p } = setup);
  realEpoch = (await get(relay, '/v1/me', p)).body.service_epoch;
  shownEpoch = realEpoch;
  proxy.rewrite = (x) => {
    const own = extra?.(x);
    if (own !== undefined) return own;
    return showEpoch(x);
  };
}, 60_000);

afterAll(async () => {
  await closeProxiedBridge({ proxy, relay, a });
});

const spaceWithPeer = (): Promise<string> => proxiedSpaceWithPeer(setup, 'rc');

function withCache<T>(use: (cache: Cache) => T): T {
  const cache = openCache(openKeyDirectory(homeA), 'default');
  try {
    return use(cache);
  } finally {
    cache.close();
  }
}

/** Sign every uncovered range of every SPACE, as the relay's worker does ten minutes on. */
async function checkpointNow(): Promise<void> {
  relay.clock.advance(11 * 60_000);
  await (relay.app as any).checkpointer.runOnce(relay.clock.now());
}

async function spaceRow(name: string) {
  return (await relay.store.spaces.byName(name))!;
}

async function latest(name: string) {
  return (await relay.store.checkpoints.latest((await spaceRow(name)).id, 'posts'))!;
}

/** The link at a position of a SPACE's posts stream, hex. */
async function linkAt(name: string, seq: number): Promise<string> {
  return toHex((await relay.store.posts.bySeq((await spaceRow(name)).id, seq))!.chainHash);
}

/** A restore the test plays: the relay closes `name` (continued in `next`) and shows a new epoch. */
async function closeSpace(name: string, next: string): Promise<void> {
  await relay.store.spaces.close((await spaceRow(name)).id, next, relay.clock.now());
  shownEpoch = randomUUID();
}

interface NoticeInput {
  space: string;
  next: string;
  chain: RecoveryChain;
  signer?: ServiceSigner;
}

/** A recovery notice as recovery.list serves it, signed by the relay's certified key unless told. */
async function notice(n: NoticeInput) {
  const signer = n.signer ?? relay.serviceKeys.signer;
  const signed = signRecovery(signer, {
    space_id: (await spaceRow(n.space)).spaceId,
    name: n.space,
    replaced_by: n.next,
    replaced_by_space_id: (await spaceRow(n.next)).spaceId,
    previous_epoch: realEpoch,
    service_epoch: shownEpoch,
    chains: [n.chain],
    created_at: new Date(relay.clock.now()).toISOString(),
  });
  return renderRecovery(signed, n.signer === undefined ? relay.serviceKeys.rendering : renderSigner(n.signer));
}

/** recovery.list answering these notices. */
function serveNotices(url: string, items: unknown[]): string | undefined {
  if (!url.startsWith('/v1/recovery')) return undefined;
  return JSON.stringify({ items, next_after: null, has_more: false, service_epoch: shownEpoch, notice: 'test' });
}

/** spaces.get of `name` showing `head` as its surviving head. */
function serveHead(url: string, body: string, name: string, head: string): string | undefined {
  if (url.split('?')[0] !== `/v1/spaces/${name}`) return undefined;
  return JSON.stringify({ ...JSON.parse(body), head_seq: head });
}

const rogue = (): ServiceSigner =>
  createServiceSigner({
    root: signerFromSeed(new Uint8Array(randomBytes(32))),
    online: signerFromSeed(new Uint8Array(randomBytes(32))),
    notBefore: new Date(Date.now() - 86_400_000).toISOString(),
  });

describe('a new service_epoch', () => {
  it('re-checks each followed SPACE: a closed one is reported with its continuation and its verified notice, the cursors follow the continuation, and svc_whoami lists it', async () => {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    for (const n of [1, 2, 3]) await post(relay, p, space, { kind: 'obs', body: `before ${n}` });
    toolOk(await callTool(a, 'svc_read_space', { space }));
    expect(withCache((c) => c.cursor(proxy.url, { kind: 'space', space }))).toBe('3');

    await closeSpace(space, next);
    const served = await notice({
      space,
      next,
      chain: { stream: 'posts', signed_last: '3', signed_checkpoint_id: toHex(randomBytes(32)), signed_ending_hash: await linkAt(space, 3), survived_last: '2', survived_hash: await linkAt(space, 2) },
    });
    extra = (x) => serveNotices(x.url, [served]) ?? serveHead(x.url, x.body, space, '2');
    try {
      const r = await callTool(a, 'svc_whoami', {});
      const text = textOf(r);
      expect(text).toContain('service_epoch changed');
      expect(text).toContain(`- ${space}: status closed, head_seq 2; saved cursor 3 is past it: positions 3-3 were lost. Cursor set to 2.`);
      expect(text).toContain(`${space} is CLOSED (a restore cut its history): it continues in ${next}.`);
      expect(text).toContain('signed recovery notice');
      expect(text).toContain('posts signed up to 3, survived up to 2 (positions 3-3 are gone for good)');
      expect(toolOk(r).bridge.closed_spaces).toEqual([{ space, replaced_by: next, recovery_id: served.recovery_id }]);
      withCache((c) => {
        expect(c.cursor(proxy.url, { kind: 'space', space })).toBe('2');
        expect(c.cursor(proxy.url, { kind: 'space', space: next })).toBe('0');
      });
      // Said once per epoch; the closure stays listed in every svc_whoami.
      const again = textOf(await callTool(a, 'svc_whoami', {}));
      expect(again).not.toContain('service_epoch changed');
      expect(again).toContain(`- ${space}: continues in ${next}; loss declared in signed recovery notice ${served.recovery_id.slice(0, 16)}`);
    } finally {
      extra = undefined;
    }
  });

  it('a closed SPACE whose notice does not verify under the pinned root is reported without one, and the refused notice is named', async () => {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    await post(relay, p, space, { kind: 'obs', body: 'one' });
    toolOk(await callTool(a, 'svc_read_space', { space }));
    await closeSpace(space, next);
    const forged = await notice({
      space,
      next,
      signer: rogue(),
      chain: { stream: 'posts', signed_last: '1', signed_checkpoint_id: toHex(randomBytes(32)), signed_ending_hash: await linkAt(space, 1), survived_last: '0', survived_hash: toHex(streamGenesis((await spaceRow(space)).spaceId, 'posts')) },
    });
    extra = (x) => serveNotices(x.url, [forged]);
    try {
      const r = toolOk(await callTool(a, 'svc_whoami', {}));
      const text = r.bridge.notices.join('\n');
      expect(text).toContain(`${space} is CLOSED`);
      expect(text).toMatch(/!!! a recovery notice the relay serves does not verify \(.*root.*\); it is not used/);
      expect(text).toContain(`No signed recovery notice for ${space} verifies`);
      expect(r.bridge.closed_spaces).toContainEqual({ space, replaced_by: next, recovery_id: null });
    } finally {
      extra = undefined;
    }
  });

  it('re-checks conversation cursors too: one past the conversation head is set back to it', async () => {
    const opened = await start(relay, p, [setup.whoami.peer_id], { body: 'hello A' });
    expect(opened.status).toBe(201);
    const id = opened.body.conversation.conversation_id as string;
    withCache((c) => c.advanceCursor(proxy.url, { kind: 'conversation', conversation: id }, '40', Date.now()));
    shownEpoch = randomUUID();
    const r = toolOk(await callTool(a, 'svc_whoami', {}));
    expect(r.bridge.notices.join('\n')).toContain(`- conversation ${id}: saved cursor 40 is past head_seq 1; messages 2-40 were lost. Cursor set to 1.`);
    expect(withCache((c) => c.cursor(proxy.url, { kind: 'conversation', conversation: id }))).toBe('1');
  });
});

describe('reads and writes of a closed SPACE', () => {
  it('HISTORY_ROLLBACK on a read: the bridge re-checks, says what was lost, and reads the continuation instead', async () => {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    for (const n of [1, 2, 3]) await post(relay, p, space, { kind: 'obs', body: `old ${n}` });
    toolOk(await callTool(a, 'svc_read_space', { space }));
    await closeSpace(space, next);
    await post(relay, p, next, { kind: 'obs', body: 'first in the continuation' });
    const served = await notice({
      space,
      next,
      chain: { stream: 'posts', signed_last: '3', signed_checkpoint_id: toHex(randomBytes(32)), signed_ending_hash: await linkAt(space, 3), survived_last: '1', survived_hash: await linkAt(space, 1) },
    });
    const rollback = JSON.stringify({
      error: { code: 'HISTORY_ROLLBACK', message: "A restore cut this SPACE's history back behind your cursor.", fix: 'Keep held data.', doc: 'x', request_id: 'r', detail: `continues in ${next}` },
    });
    extra = (x) =>
      serveNotices(x.url, [served]) ??
      serveHead(x.url, x.body, space, '1') ??
      (x.url.startsWith(`/v1/spaces/${space}/posts?`) && x.url.includes('after=3') ? { status: 409, body: rollback } : undefined);
    try {
      const r = await callTool(a, 'svc_read_space', { space });
      const s = toolOk(r);
      const text = textOf(r);
      expect(text).toContain(`${space} is CLOSED (a restore cut its history): it continues in ${next}.`);
      expect(text).toContain(`Reading its continuation ${next} instead.`);
      expect(text).toContain('first in the continuation');
      expect(s.bridge.followed_from).toEqual([space]);
      withCache((c) => {
        expect(c.cursor(proxy.url, { kind: 'space', space })).toBe('1');
        expect(c.cursor(proxy.url, { kind: 'space', space: next })).toBe('1');
      });
    } finally {
      extra = undefined;
    }
  });

  it('a read that finds nothing more in a closed SPACE follows its continuation; one that still shows posts says where it continues', async () => {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    await post(relay, p, space, { kind: 'obs', body: 'only post' });
    // Followed from its start: a cursor at 0.
    withCache((c) => c.advanceCursor(proxy.url, { kind: 'space', space }, '0', Date.now()));
    await closeSpace(space, next);
    await post(relay, p, next, { kind: 'obs', body: 'carried on' });
    toolOk(await callTool(a, 'svc_whoami', {}));
    const first = await callTool(a, 'svc_read_space', { space });
    expect(textOf(first)).toContain('only post');
    expect(textOf(first)).toContain(`NOTICE: ${space} is closed after a restore (no new posts); it continues in ${next}`);
    const second = await callTool(a, 'svc_read_space', { space });
    expect(textOf(second)).toContain('carried on');
    expect(toolOk(second).bridge.followed_from).toEqual([space]);
  });

  it('svc_post to a closed SPACE is SPACE_CLOSED, naming the SPACE that continues it', async () => {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    await closeSpace(space, next);
    const r = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'too late' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('SPACE_CLOSED');
    expect(textOf(r)).toContain(`continues in ${next}: post there (svc_post space=${next})`);
    const there = toolOk(await callTool(a, 'svc_post', { space: next, kind: 'obs', body: 'posted in the continuation' }));
    expect(there.bridge.receipt_check.ok).toBe(true);
  });
});

describe('kept checkpoints after a restore', () => {
  /**
   * Posts 1-3 under checkpoint A, posts 4-5 under B, B kept by the bridge; then the relay shows
   * C over 4 alone, extending A but not B: what a restore that kept post 4 and lost post 5 signs.
   */
  async function cutAfterFour() {
    const space = await spaceWithPeer();
    const next = await spaceWithPeer();
    for (const n of [1, 2, 3]) await post(relay, p, space, { kind: 'obs', body: `a${n}` });
    await checkpointNow();
    const A = await latest(space);
    for (const n of [4, 5]) await post(relay, p, space, { kind: 'obs', body: `b${n}` });
    await checkpointNow();
    const B = await latest(space);
    expect(B.fields).toMatchObject({ first: '4', last: '5' });
    toolOk(await callTool(a, 'svc_get', { space, seq: '5' }));
    expect(withCache((c) => c.checkpoint(proxy.url, space, 'posts')?.checkpointId)).toBe(toHex(B.id));
    const proof4 = (await get(relay, `/v1/spaces/${space}/posts/4/proof`, p)).body;
    const { signer_key_id: _k, ...rest } = {
      ...A.fields,
      first: '4',
      last: '4',
      predecessor_hash: A.fields.ending_hash,
      ending_hash: await linkAt(space, 4),
      merkle_root: proof4.leaf as string,
      previous_checkpoint_id: toHex(A.id),
      created_at: new Date(relay.clock.now()).toISOString(),
    } satisfies CheckpointFields;
    const C = renderCheckpoint(signCheckpoint(relay.serviceKeys.signer, rest), relay.serviceKeys.rendering);
    const serveC = (x: ProxiedAnswer) => {
      if (!x.url.startsWith(`/v1/spaces/${space}/posts/4/proof`)) return undefined;
      return JSON.stringify({ ...JSON.parse(x.body), checkpoint: C, inclusion: { leaf_index: 0, tree_size: 1, path: [] } });
    };
    const chain = async (survived: number): Promise<RecoveryChain> => ({
      stream: 'posts',
      signed_last: '5',
      signed_checkpoint_id: toHex(B.id),
      signed_ending_hash: B.fields.ending_hash,
      survived_last: String(survived),
      survived_hash: await linkAt(space, survived),
    });
    return { space, next, B, C, serveC, chain };
  }

  it('a checkpoint that does not extend the kept one, with no recovery notice, is still CHANGED HISTORY and the kept one stays', async () => {
    const { space, B, serveC } = await cutAfterFour();
    extra = (x) => serveNotices(x.url, []) ?? serveC(x);
    try {
      const r = await callTool(a, 'svc_get', { space, seq: '4' });
      const s = toolOk(r);
      expect(s.bridge.changed_history).toBe(true);
      expect(textOf(r)).toMatch(/^!!! CHANGED HISTORY in SPACE /);
    } finally {
      extra = undefined;
    }
    expect(withCache((c) => c.checkpoint(proxy.url, space, 'posts')?.checkpointId)).toBe(toHex(B.id));
  });

  it('a notice that verifies but lets no checkpoint end past what survived, or one under an uncertified key, explains nothing', async () => {
    const { space, next, B, serveC, chain } = await cutAfterFour();
    await closeSpace(space, next);
    for (const served of [await notice({ space, next, chain: await chain(3) }), await notice({ space, next, chain: await chain(4), signer: rogue() })]) {
      extra = (x) => serveNotices(x.url, [served]) ?? serveC(x);
      try {
        expect(toolOk(await callTool(a, 'svc_get', { space, seq: '4' })).bridge.changed_history).toBe(true);
      } finally {
        extra = undefined;
      }
    }
    expect(withCache((c) => c.checkpoint(proxy.url, space, 'posts')?.checkpointId)).toBe(toHex(B.id));
  });

  it('with a verified notice declaring the kept checkpoint lost, the one of what survived is accepted, the loss reported, and the lost one kept apart', async () => {
    const { space, next, B, C, serveC, chain } = await cutAfterFour();
    await closeSpace(space, next);
    const served = await notice({ space, next, chain: await chain(4) });
    extra = (x) => serveNotices(x.url, [served]) ?? serveC(x);
    try {
      const r = await callTool(a, 'svc_get', { space, seq: '4' });
      const s = toolOk(r);
      expect(s.bridge.changed_history).toBe(false);
      const history = s.bridge.checks[0].inclusion.history;
      expect(history).toMatchObject({ ok: true, changed: false, recovered: { recovery_id: served.recovery_id, lost_checkpoint_id: toHex(B.id), replaced_by: next } });
      expect(textOf(r)).toContain(`NOTICE: a restore cut SPACE ${space} back: checkpoint ${toHex(B.id)} (4-5)`);
      expect(textOf(r)).toContain(`continues in ${next}`);
    } finally {
      extra = undefined;
    }
    withCache((c) => {
      expect(c.checkpoint(proxy.url, space, 'posts')?.checkpointId).toBe(C.checkpoint_id);
      expect(c.lostCheckpoints(proxy.url)).toContainEqual(expect.objectContaining({ space, stream: 'posts', checkpointId: toHex(B.id), first: '4', last: '5', recoveryId: served.recovery_id }));
      expect(c.recoveries(proxy.url).map((k) => k.recoveryId)).toContain(served.recovery_id);
    });
    // From then on the honest checkpoint over 1-3 extends the one kept in B's place.
    expect(toolOk(await callTool(a, 'svc_get', { space, seq: '2' })).bridge.changed_history).toBe(false);
  });
});

describe('the loss rule and what the caches keep', () => {
  const spaceId = randomUUID();
  const link = (fields: Partial<CheckpointFields>): CheckpointLink => {
    const f: CheckpointFields = {
      space_id: spaceId,
      stream: 'posts',
      first: '4',
      last: '5',
      predecessor_hash: 'aa'.repeat(32),
      ending_hash: 'bb'.repeat(32),
      merkle_root: 'cc'.repeat(32),
      previous_checkpoint_id: 'dd'.repeat(32),
      service_epoch: randomUUID(),
      signer_key_id: 'ee'.repeat(32),
      created_at: '2026-11-01T00:00:00.000Z',
      ...fields,
    };
    const g = f.first === '1' ? { ...f, previous_checkpoint_id: null, predecessor_hash: toHex(streamGenesis(spaceId, f.stream)) } : f;
    return { fields: g, id: checkpointId(checkpointBytes(g)) };
  };
  const kept = link({});
  const fields = (survived: string, survivedHash = '11'.repeat(32)): RecoveryFields => ({
    space_id: spaceId,
    name: 'lab',
    replaced_by: 'lab-2',
    replaced_by_space_id: randomUUID(),
    previous_epoch: randomUUID(),
    service_epoch: randomUUID(),
    chains: [{ stream: 'posts', signed_last: '5', signed_checkpoint_id: toHex(kept.id), signed_ending_hash: 'bb'.repeat(32), survived_last: survived, survived_hash: survivedHash }],
    created_at: '2026-11-02T00:00:00.000Z',
    signer_key_id: 'ee'.repeat(32),
  });

  it('accepts a checkpoint within what survived, ending on the surviving link when it ends there, and nothing past it', () => {
    expect(acceptsLoss(fields('4'), kept, link({ first: '4', last: '4', ending_hash: '11'.repeat(32) }))).toBe(true);
    expect(acceptsLoss(fields('4'), kept, link({ first: '1', last: '3' }))).toBe(true);
    expect(acceptsLoss(fields('4'), kept, link({ first: '4', last: '4', ending_hash: '22'.repeat(32) }))).toBe(false);
    expect(acceptsLoss(fields('3'), kept, link({ first: '4', last: '4', ending_hash: '11'.repeat(32) }))).toBe(false);
    expect(acceptsLoss(fields('4'), kept, link({ first: '4', last: '4', ending_hash: '11'.repeat(32), space_id: randomUUID() }))).toBe(false);
    expect(acceptsLoss(fields('4'), kept, link({ first: '4', last: '4', ending_hash: '11'.repeat(32), stream: 'events' }))).toBe(false);
    // A notice about another checkpoint than the one kept at signed_last explains nothing.
    expect(acceptsLoss({ ...fields('4'), chains: [{ ...fields('4').chains[0]!, signed_checkpoint_id: 'ff'.repeat(32) }] }, kept, link({ first: '1', last: '3' }))).toBe(false);
    // The withheld form a non-member is served declares no loss: the kept checkpoint stays CHANGED HISTORY.
    const withheldChain = { stream: 'posts', signed_last: null, signed_checkpoint_id: null, signed_ending_hash: null, survived_last: null, survived_hash: null, unavailable: true } as const;
    expect(acceptsLoss({ ...fields('4'), chains: [withheldChain], full_recovery_id: 'ab'.repeat(32) }, kept, link({ first: '1', last: '3' }))).toBe(false);
  });

  for (const [name, make] of [
    ['the SQLite cache', () => openCache(openKeyDirectory(homeA), 'default')],
    ['the in-memory cache', () => createMemoryCache()],
  ] as const) {
    it(`${name} sets a lost checkpoint apart only while it is still the kept one, and keeps notices, closures and conversation cursors`, () => {
      const cache = make();
      const relayKey = `http://recovery-${randomUUID()}.example`;
      try {
        const cp = (id: string, first: string, last: string) => ({ checkpointId: id.repeat(64), first, last, served: `{"${id}":1}`, seenAt: 1 });
        cache.noteCheckpoint(relayKey, 'lab', 'posts', cp('b', '4', '5'));
        expect(cache.checkpointSpaces(relayKey)).toEqual(['lab']);
        expect(cache.replaceLostCheckpoint(relayKey, 'lab', 'posts', 'f'.repeat(64), cp('c', '4', '4'), '1'.repeat(64), 2)).toBe(false);
        expect(cache.replaceLostCheckpoint(relayKey, 'lab', 'posts', 'b'.repeat(64), cp('c', '4', '4'), '1'.repeat(64), 2)).toBe(true);
        expect(cache.checkpoint(relayKey, 'lab', 'posts')?.checkpointId).toBe('c'.repeat(64));
        expect(cache.lostCheckpoints(relayKey)).toEqual([{ ...cp('b', '4', '5'), space: 'lab', stream: 'posts', recoveryId: '1'.repeat(64), lostAt: 2 }]);
        cache.keepRecovery(relayKey, { recoveryId: '1'.repeat(64), spaceId, served: '{"first":1}', seenAt: 3 });
        cache.keepRecovery(relayKey, { recoveryId: '1'.repeat(64), spaceId, served: '{"second":1}', seenAt: 4 });
        expect(cache.recoveries(relayKey)).toEqual([{ recoveryId: '1'.repeat(64), spaceId, served: '{"first":1}', seenAt: 3 }]);
        cache.noteClosedSpace(relayKey, { space: 'lab', spaceId, replacedBy: 'lab-2', recoveryId: undefined, notedAt: 5 });
        cache.noteClosedSpace(relayKey, { space: 'lab', spaceId, replacedBy: 'lab-2', recoveryId: '1'.repeat(64), notedAt: 6 });
        expect(cache.closedSpace(relayKey, 'lab')).toEqual({ space: 'lab', spaceId, replacedBy: 'lab-2', recoveryId: '1'.repeat(64), notedAt: 6 });
        expect(cache.closedSpaces(relayKey)).toHaveLength(1);
        cache.advanceCursor(relayKey, { kind: 'conversation', conversation: 'c1' }, '7', 1);
        cache.advanceCursor(relayKey, { kind: 'space', space: 'lab' }, '3', 1);
        expect(cache.conversationCursors(relayKey)).toEqual([{ conversation: 'c1', after: '7' }]);
        expect(cache.cursors(relayKey).map((c) => c.kind)).toEqual(['space']);
      } finally {
        cache.close();
      }
    });
  }
});
