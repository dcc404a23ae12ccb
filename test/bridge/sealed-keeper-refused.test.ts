/**
 * A keeper whose lock for one KEY the relay refuses (protocol/sealed.md §8): between the
 * keeper's read of the members still without a lock and its write of their locks, a KEY may
 * leave; the relay then refuses the whole chunk with LOCK_RECIPIENT_NOT_A_MEMBER, its detail
 * that KEY's bare peer id. A real HTTP proxy (test/helpers/proxy.ts) in front of the real relay
 * lists such a KEY (stamped by the keeper, never a member) beside a real member; `svc-bridge
 * keeper --once` passes that KEY over, says so, and hands the member its lock all the same.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startProxy, type RunningProxy } from '../helpers/proxy.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { publishKey, sealedKey, type SealedKey } from '../helpers/sealed.js';
import { call } from '../helpers/spaces.js';

let proxy: RunningProxy;
let relay: RunningRelay;
let owner: RunningBridge;
let ownerId: string;
const home = tempHome();
const name = `keeper-refused-${Date.now().toString(36)}`;

async function keyed(): Promise<SealedKey> {
  const k = await sealedKey(relay);
  const r = await publishKey(relay, k);
  if (r.status !== 200) throw new Error(`publish refused: ${r.text}`);
  return k;
}

/** The owner's stamp for `peer`, as `svc-bridge stamp` prints it (the body of PUT …/sealed/stamp). */
async function stampFor(peer: string): Promise<Record<string, unknown>> {
  const r = await runBridge(['stamp', peer], { relayUrl: proxy.url, home });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.trim());
}

async function keyView(k: SealedKey): Promise<Record<string, unknown>> {
  const token = (await runBridge(['token'], { relayUrl: proxy.url, home })).stdout.trim();
  const peer = await call(relay, 'GET', `/v1/peers/${k.peerId}`, { token });
  return { peer_id: k.peerId, public_key: peer.body.public_key, key_type: peer.body.key_type, encryption_key: peer.body.encryption_key };
}

beforeAll(async () => {
  proxy = await startProxy();
  relay = await startRelay({ publicUrl: proxy.url });
  proxy.target = relay.url;
  ownerId = (await runBridge(['id'], { home })).stdout.trim();
  owner = await startBridge({ relayUrl: proxy.url, home, env: { SVC_KEEPER_INTERVAL: '0' } });
  const made = await callTool(owner, 'svc_space_control', { action: 'create', name, title: 'Kept', visibility: 'sealed' });
  expect(made.isError, textOf(made)).toBeFalsy();
}, 120_000);

afterAll(async () => {
  await owner?.close();
  await relay?.close();
  await proxy?.close();
});

describe('a keeper the relay refuses one lock', () => {
  it('passes over the KEY the refusal names and locks the key for the other members', async () => {
    const member = await keyed();
    const gone = await keyed();
    const stamp = await stampFor(member.peerId);
    expect((await call(relay, 'PUT', `/v1/spaces/${name}/sealed/stamp`, { token: member.token, body: stamp })).status).toBe(200);
    const ask = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: member.token, body: { message: 'let me in' } });
    expect(ask.status, ask.text).toBe(202);
    const approved = await call(relay, 'POST', `/v1/requests/${ask.body.request_id}/approve`, { token: (await runBridge(['token'], { relayUrl: proxy.url, home })).stdout.trim(), body: {} });
    expect(approved.status, approved.text).toBe(200);

    // The relay's listing names, beside the member, a KEY the owner stamped that is no member.
    const goneStamp = await stampFor(gone.peerId);
    const goneKey = await keyView(gone);
    proxy.rewrite = (a) => {
      if (a.method !== 'GET' || !a.url.startsWith(`/v1/spaces/${name}/sealed/unlocked`) || a.status !== 200) return undefined;
      const body = JSON.parse(a.body);
      const real = body.items.find((i: any) => i.peer_id === member.peerId);
      if (real === undefined) return undefined;
      body.items.push({
        ...goneKey,
        role: 'writer',
        vouched: true,
        stamp: { ...real.stamp, stamp: goneStamp.stamp, signature: { ...real.stamp.signature, signature: goneStamp.signature }, peer_id: gone.peerId },
      });
      return JSON.stringify(body);
    };
    const pass = await runBridge(['keeper', name, '--once'], { relayUrl: proxy.url, home });
    proxy.rewrite = undefined;
    expect(pass.code, `${pass.stdout}\n${pass.stderr}`).toBe(0);
    expect(pass.stdout).toContain(`${gone.peerId} was not locked for generation 1: the relay refused it (LOCK_RECIPIENT_NOT_A_MEMBER)`);
    const st = await call(relay, 'GET', `/v1/spaces/${name}/sealed`, { token: member.token });
    expect(st.status, st.text).toBe(200);
    expect(st.body.locks.map((l: any) => [l.generation, l.sender.peer_id])).toEqual([['1', ownerId]]);
  }, 60_000);
});
