/**
 * Hidden posts and unsafe integers through the real bridge (svc-bridge over stdio, MCP SDK
 * client) against a real relay, with a real HTTP proxy between them so a test can serve what
 * a lying relay would.
 *
 * - A hidden post reads as hidden, its proof checked as a chain position, never as tampered.
 * - A relay that drops a post's object bytes without the unavailable marker, shows a hidden
 *   post's run_id, or drops a signed post's signature is reported: the proof fails.
 * - svc_post refuses `data` holding an integer beyond ±(2^53 − 1) before anything is sent (the
 *   MCP client's JSON already made it a float: 1e21, 1.2345678901234568e23): its argument
 *   schema refuses it, and shared/validate.ts would behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { call, get } from '../helpers/posts.js';
import type { RunningProxy } from '../helpers/proxy.js';
import { closeProxiedBridge, spaceWithPeer as proxiedSpaceWithPeer, startProxiedBridge, type ProxiedBridge } from '../helpers/proxied-bridge.js';
import type { MintedToken, RunningRelay } from '../helpers/relay.js';

let proxy: RunningProxy;
let relay: RunningRelay;
let a: RunningBridge;
let p: MintedToken;
let setup: ProxiedBridge;

beforeAll(async () => {
  setup = await startProxiedBridge();
  ({ proxy, relay, a, p } = setup);
}, 60_000);

afterAll(async () => {
  await closeProxiedBridge({ proxy, relay, a });
});

const spaceWithPeer = (): Promise<string> => proxiedSpaceWithPeer(setup, 'wp');

/** A post by KEY A (signed by its bridge, with data and a run id), hidden by A as the owner. */
async function hiddenPost(space: string): Promise<string> {
  const sent = toolOk(await callTool(a, 'svc_post', { space, kind: 'result', title: 'to be hidden', body: 'hidden words', data: { x_n: 7 } }));
  const hide = toolOk(await callTool(a, 'svc_space_control', { action: 'hide', post_id: sent.post_id }));
  expect(hide).toBeDefined();
  return sent.post_id as string;
}

/** Rewrite the JSON answers of GET requests whose address starts with `prefix`. */
function rewriteReads(prefix: string, change: (body: any) => void): void {
  proxy.rewrite = (x) => {
    if (x.method !== 'GET' || !x.url.startsWith(prefix)) return undefined;
    const body = JSON.parse(x.body);
    change(body);
    return JSON.stringify(body);
  };
}

describe('a hidden post through the bridge', () => {
  it('reads as hidden, its proof checked as a chain position, by id and in a page', async () => {
    const space = await spaceWithPeer();
    const id = await hiddenPost(space);
    const one = await callTool(a, 'svc_get', { post_id: id });
    const got = toolOk(one);
    expect(got.bridge.checks[0].proof.ok, got.bridge.checks[0].proof.detail).toBe(true);
    expect(got.bridge.checks[0].proof.detail).toMatch(/hidden: its words are not shown, so it is checked as a chain position/);
    expect(textOf(one)).toMatch(/unavailable: hidden/);
    expect(textOf(one)).not.toMatch(/FAILED|hidden words|to be hidden/);
    const page = toolOk(await callTool(a, 'svc_read_space', { space, detail: 'full', proof: true }));
    expect(page.bridge.checks.map((c: any) => c.proof.ok)).toEqual([true]);
  });

  it('is reported when a relay shows its run_id without the bytes that vouch for it', async () => {
    const space = await spaceWithPeer();
    const id = await hiddenPost(space);
    rewriteReads(`/v1/posts/${id}`, (body) => {
      body.run_id = '00000000-0000-4000-8000-000000000000';
    });
    try {
      const r = toolOk(await callTool(a, 'svc_get', { post_id: id }));
      expect(r.bridge.checks[0].proof).toMatchObject({ ok: false });
      expect(r.bridge.checks[0].proof.detail).toMatch(/run_id is shown, and the bytes that would vouch for it are not/);
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('is reported when a relay drops the object bytes of a post it does not mark unavailable', async () => {
    const space = await spaceWithPeer();
    const sent = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'shown words' }));
    rewriteReads(`/v1/posts/${sent.post_id}`, (body) => {
      body.proof.canonical = null;
    });
    try {
      const r = toolOk(await callTool(a, 'svc_get', { post_id: sent.post_id }));
      expect(r.bridge.checks[0].proof.ok).toBe(false);
      expect(r.bridge.checks[0].proof.detail).toMatch(/not marked unavailable/);
    } finally {
      proxy.rewrite = undefined;
    }
  });

  it('is reported when a relay drops the signature of a signed post that is not hidden', async () => {
    const space = await spaceWithPeer();
    const sent = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'signed words' }));
    rewriteReads(`/v1/posts/${sent.post_id}`, (body) => {
      body.proof.signature = null;
    });
    try {
      const r = toolOk(await callTool(a, 'svc_get', { post_id: sent.post_id }));
      expect(r.bridge.checks[0].proof.ok).toBe(false);
      expect(r.bridge.checks[0].proof.detail).toMatch(/marked signed, but no signature is shown/);
    } finally {
      proxy.rewrite = undefined;
    }
  });
});

describe('svc_post and unsafe integers', () => {
  it('refuses data with an integer beyond ±(2^53 − 1) before sending anything, and keeps safe integers and fractions', async () => {
    const space = await spaceWithPeer();
    const before = (await get(relay, `/v1/spaces/${space}`, p)).body.head_seq;
    for (const n of [1e21, 123456789012345678901234, -(2 ** 53), 1e300]) {
      const r = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'numbers', data: { x_n: n } });
      expect(r.isError, String(n)).toBe(true);
      expect(textOf(r)).toMatch(/data\.x_n: an integer beyond ±\(2\^53 − 1\) is refused/);
    }
    expect((await get(relay, `/v1/spaces/${space}`, p)).body.head_seq).toBe(before);
    const ok = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'numbers', data: { x_max: 2 ** 53 - 1, x_f: 0.5 } }));
    const read = await call(relay, 'GET', `/v1/posts/${ok.post_id}`, { token: p.token });
    expect(read.body.data).toEqual({ x_max: 2 ** 53 - 1, x_f: 0.5 });
  });
});


