/**
 * A relay that lies, seen through the bridge: a real svc-bridge process over stdio, a real relay
 * on loopback, and between them a small real HTTP proxy that changes what the relay said: one
 * byte of a receipt, a receipt of another post, a forked checkpoint signed with the relay's own
 * certified key (so only the history rule can catch it), a checkpoint under a key the root
 * never certified, a service root that changes. Every case must be reported in the tool answer.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCache } from '../../bridge/cache/cache-file.js';
import { openKeyDirectory } from '../../bridge/keys/keys.js';
import { renderCheckpoint, signCheckpoint, type CheckpointFields } from '../../shared/checkpoint.js';
import { toHex } from '../../shared/encoding.js';
import { signerFromSeed } from '../../shared/identity.js';
import { createServiceSigner, renderSigner } from '../../shared/service-keys.js';
import { callTool, startBridge, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { post } from '../helpers/posts.js';
import type { RunningProxy } from '../helpers/proxy.js';
import { closeProxiedBridge, spaceWithPeer as proxiedSpaceWithPeer, startProxiedBridge, type ProxiedBridge } from '../helpers/proxied-bridge.js';
import type { MintedToken, RunningRelay } from '../helpers/relay.js';

let proxy: RunningProxy;
let relay: RunningRelay;
let a: RunningBridge;
let homeA: string;
let p: MintedToken;
let setup: ProxiedBridge;

beforeAll(async () => {
  setup = await startProxiedBridge();
  ({ proxy, relay, a, homeA, p } = setup);
}, 60_000);

afterAll(async () => {
  await closeProxiedBridge({ proxy, relay, a });
});

const spaceWithPeer = (): Promise<string> => proxiedSpaceWithPeer(setup, 'tp');

/** Sign every uncovered range of every SPACE, as the relay's worker does ten minutes on. */
async function checkpointNow(): Promise<void> {
  relay.clock.advance(11 * 60_000);
  await (relay.app as any).checkpointer.runOnce(relay.clock.now());
}

/** The newest posts checkpoint the relay holds for a SPACE. */
async function latest(space: string) {
  return (await relay.store.checkpoints.latest((await relay.store.spaces.byName(space))!.id, 'posts'))!;
}

/** A checkpoint with changed members, signed by the relay's own certified key. */
function forge(fields: CheckpointFields, change: Partial<CheckpointFields>) {
  const { signer_key_id: _k, ...rest } = { ...fields, ...change };
  const c = signCheckpoint(relay.serviceKeys.signer, rest);
  return renderCheckpoint(c, relay.serviceKeys.rendering);
}

/** Serve `checkpoint` in the posts.proof answer of one position. */
function serveCheckpoint(space: string, seq: number, checkpoint: unknown): void {
  proxy.rewrite = (x) => {
    if (x.method !== 'GET' || !x.url.startsWith(`/v1/spaces/${space}/posts/${seq}/proof`)) return undefined;
    const body = JSON.parse(x.body);
    body.checkpoint = checkpoint;
    return JSON.stringify(body);
  };
}

function keptLast(space: string): string | undefined {
  const cache = openCache(openKeyDirectory(homeA), 'default');
  try {
    return cache.checkpoint(proxy.url, space, 'posts')?.last;
  } finally {
    cache.close();
  }
}

describe('receipts', () => {
  it('a receipt with one byte changed is reported loudly, not called verified', async () => {
    const space = await spaceWithPeer();
    proxy.rewrite = (x) => {
      if (x.method !== 'POST' || !x.url.startsWith(`/v1/spaces/${space}/posts`)) return undefined;
      const body = JSON.parse(x.body);
      const sig: string = body.receipt.signature;
      body.receipt.signature = `${sig[0] === '0' ? '1' : '0'}${sig.slice(1)}`;
      return JSON.stringify(body);
    };
    try {
      const r = await callTool(a, 'svc_post', { space, kind: 'result', body: 'tampered on the way back' });
      const s = toolOk(r);
      expect(s.bridge.receipt_check.ok).toBe(false);
      expect(s.bridge.receipt_check.detail).toContain('receipt.signature: does not verify');
      expect(textOf(r)).toMatch(/^!!! RECEIPT DOES NOT VERIFY/);
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('a changed member the receipt covers is reported', async () => {
    const space = await spaceWithPeer();
    proxy.rewrite = (x) => {
      if (x.method !== 'POST' || !x.url.startsWith(`/v1/spaces/${space}/posts`)) return undefined;
      const body = JSON.parse(x.body);
      body.seq = String(Number(body.seq) + 1);
      return JSON.stringify(body);
    };
    try {
      const s = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'moved' }));
      expect(s.bridge.receipt_check).toMatchObject({ ok: false });
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it("another post's genuine receipt, served as this post's, is reported", async () => {
    const space = await spaceWithPeer();
    let recorded: string | undefined;
    proxy.rewrite = (x) => {
      if (x.method !== 'POST' || !x.url.startsWith(`/v1/spaces/${space}/posts`)) return undefined;
      if (recorded === undefined) {
        recorded = x.body;
        return undefined;
      }
      return recorded;
    };
    try {
      expect(toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'first' })).bridge.receipt_check.ok).toBe(true);
      const s = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'second' }));
      expect(s.bridge.receipt_check.ok).toBe(false);
      expect(s.bridge.receipt_check.detail).toContain('names another object than the one this bridge signed');
    } finally {
      proxy.rewrite = undefined;
    }
  });
});

describe('checkpoints and history', () => {
  it('a forked checkpoint signed by the certified key is CHANGED HISTORY; the kept checkpoint stays', async () => {
    const space = await spaceWithPeer();
    for (const n of [1, 2, 3]) await post(relay, p, space, { kind: 'obs', body: `first range ${n}` });
    await checkpointNow();
    expect(toolOk(await callTool(a, 'svc_get', { space, seq: '2' })).bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '1', last: '3' } });
    expect(keptLast(space)).toBe('3');

    for (const n of [4, 5, 6]) await post(relay, p, space, { kind: 'obs', body: `second range ${n}` });
    await checkpointNow();
    const real = await latest(space);
    expect(real.fields).toMatchObject({ first: '4', last: '6' });
    // Same range, same posts (so the Merkle path still verifies), but it starts from another link.
    serveCheckpoint(space, 5, forge(real.fields, { predecessor_hash: toHex(randomBytes(32)) }));
    try {
      const r = await callTool(a, 'svc_get', { space, seq: '5' });
      const s = toolOk(r);
      expect(s.bridge.changed_history).toBe(true);
      expect(s.bridge.checks[0].inclusion.history).toMatchObject({ changed: true });
      expect(textOf(r)).toMatch(/^!!! CHANGED HISTORY in SPACE /);
      expect(textOf(r)).toContain('predecessor_hash is not the kept ending_hash');
    } finally {
      proxy.rewrite = undefined;
    }
    expect(keptLast(space)).toBe('3');
    // The honest checkpoint extends the kept one and replaces it.
    const honest = toolOk(await callTool(a, 'svc_get', { space, seq: '5' }));
    expect(honest.bridge.checks[0].inclusion.history).toMatchObject({ ok: true, changed: false });
    expect(keptLast(space)).toBe('6');

    // A second checkpoint over the kept range.
    serveCheckpoint(space, 4, forge(real.fields, { created_at: new Date(Date.parse(real.fields.created_at) + 1).toISOString() }));
    try {
      const again = toolOk(await callTool(a, 'svc_get', { space, seq: '4' }));
      expect(again.bridge.checks[0].inclusion.history.detail).toContain('two different checkpoints end at the same position');
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('a forked checkpoint further on is caught through the checkpoints between', async () => {
    const space = await spaceWithPeer();
    for (const n of [1, 2]) await post(relay, p, space, { kind: 'obs', body: `a${n}` });
    await checkpointNow();
    toolOk(await callTool(a, 'svc_get', { space, seq: '1' }));
    expect(keptLast(space)).toBe('2');
    for (const n of [3, 4]) await post(relay, p, space, { kind: 'obs', body: `b${n}` });
    await checkpointNow();
    for (const n of [5, 6]) await post(relay, p, space, { kind: 'obs', body: `c${n}` });
    await checkpointNow();
    const c3 = await latest(space);
    expect(c3.fields).toMatchObject({ first: '5', last: '6' });
    serveCheckpoint(space, 6, forge(c3.fields, { ending_hash: toHex(randomBytes(32)) }));
    try {
      const s = toolOk(await callTool(a, 'svc_read_space', { space, after: '5', proof: true }));
      expect(s.bridge.changed_history).toBe(true);
      expect(s.bridge.checks[0].inclusion.history.detail).toContain("the relay's own list holds another checkpoint");
    } finally {
      proxy.rewrite = undefined;
    }
    expect(keptLast(space)).toBe('2');
    const honest = toolOk(await callTool(a, 'svc_read_space', { space, after: '5', proof: true }));
    expect(honest.bridge.changed_history).toBe(false);
    expect(keptLast(space)).toBe('6');
  });

  it('a checkpoint under a key the pinned root never certified fails its inclusion check', async () => {
    const space = await spaceWithPeer();
    await post(relay, p, space, { kind: 'obs', body: 'one' });
    await checkpointNow();
    const real = await latest(space);
    const rogue = createServiceSigner({
      root: signerFromSeed(new Uint8Array(randomBytes(32))),
      online: signerFromSeed(new Uint8Array(randomBytes(32))),
      notBefore: new Date(Date.now() - 86_400_000).toISOString(),
    });
    const { signer_key_id: _k, ...rest } = real.fields;
    serveCheckpoint(space, 1, renderCheckpoint(signCheckpoint(rogue, rest), renderSigner(rogue)));
    try {
      const s = toolOk(await callTool(a, 'svc_get', { space, seq: '1' }));
      expect(s.bridge.checks[0].inclusion.ok).toBe(false);
      expect(s.bridge.checks[0].inclusion.detail).toMatch(/INCLUSION PROOF DOES NOT VERIFY: .*root/);
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('a relay that later publishes another service root is warned about, and the pinned root stays', async () => {
    const space = await spaceWithPeer();
    const other = toHex(randomBytes(32));
    proxy.rewrite = (x) => {
      if (!x.url.startsWith('/v1/capabilities')) return undefined;
      const caps = JSON.parse(x.body);
      caps.service_root_key = other;
      caps.protocol.service_root_key = other;
      return JSON.stringify(caps);
    };
    // A fresh process reads capabilities anew (the running one remembers them for a while).
    const fresh = await startBridge({ relayUrl: proxy.url, home: homeA });
    try {
      const r = await callTool(fresh, 'svc_post', { space, kind: 'obs', body: `root ${randomUUID()}` });
      const s = toolOk(r);
      expect(s.bridge.receipt_check.ok).toBe(true);
      expect(s.bridge.receipt_check.warning).toContain(`publishes service_root_key ${other}`);
      expect(textOf(r)).toContain('!!! WARNING');
      const cache = openCache(openKeyDirectory(homeA), 'default');
      try {
        expect(cache.serviceRoot(proxy.url)).toBe(relay.serviceKeys.rootKey);
      } finally {
        cache.close();
      }
    } finally {
      proxy.rewrite = undefined;
      await fresh.close();
    }
  });
});

describe('attachments', () => {
  it('a file the relay swaps into a post fails its proof check through svc_read_space proof=true, naming the file', async () => {
    const space = await spaceWithPeer();
    const bytes = Buffer.from(`log ${randomUUID()}`, 'utf8');
    const file = { sha256: createHash('sha256').update(bytes).digest('hex'), name: 'run.log', media_type: 'text/plain' };
    relay.clock.advance(2_100);
    const up = await fetch(`${relay.url}/v1/spaces/${space}/files/${file.sha256}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${p.token}` }, body: bytes });
    expect(up.status).toBeLessThan(300);
    await post(relay, p, space, { kind: 'result', body: 'see the log', attachments: [file] });
    const honest = toolOk(await callTool(a, 'svc_read_space', { space, after: '0', proof: true }));
    expect(honest.bridge.checks[0].proof.ok).toBe(true);
    expect(honest.bridge.checks[0].proof.detail).toContain('1 attachment, each a sha256.file fingerprint of the object');
    proxy.rewrite = (x) => {
      if (x.method !== 'GET' || !x.url.startsWith(`/v1/spaces/${space}/posts?`)) return undefined;
      const body = JSON.parse(x.body);
      for (const item of body.items) if (Array.isArray(item.attachments)) item.attachments[0].sha256 = 'd'.repeat(64);
      return JSON.stringify(body);
    };
    try {
      const r = await callTool(a, 'svc_read_space', { space, after: '0', proof: true });
      const s = toolOk(r);
      expect(s.bridge.checks[0].proof.ok).toBe(false);
      expect(s.bridge.checks[0].proof.detail).toContain('attachments[0] ("run.log"): its sha256 is not a sha256.file fingerprint');
      expect(textOf(r)).toContain('proof: FAILED: the proof does not verify: attachments[0]');
    } finally {
      proxy.rewrite = undefined;
    }
  });
});

