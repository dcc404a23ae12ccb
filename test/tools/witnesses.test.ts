/**
 * SVC_WITNESSES end to end (tools/verify/witnesses.ts): the real bridge over stdio, reading a public
 * SPACE of a real relay with proofs, calls the history verified only when the tree head that
 * holds each post carries the cosignatures of the witnesses it was told to require. The witness
 * is a second real relay in witness mode; the origin accepts its cosignatures.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceKeys } from '../../relay/service-keys.js';
import type { SpaceRow } from '../../relay/store/spaces.js';
import { callTool, startBridge, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { newSpace, post } from '../helpers/posts.js';
import { mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { signCheckpoints } from '../helpers/tlog.js';

const W1 = 'w1.example';
const W2 = 'w2.example';

let a: RunningRelay;
let w1: RunningRelay;
let owner: MintedToken;
let space: SpaceRow;
let key1: string;
let key2: string;
const bridges: RunningBridge[] = [];

function witnessKey(dir: string): string {
  return Buffer.from(loadServiceKeys({ dataDir: dir, dev: true, now: Date.now(), random: (n) => new Uint8Array(randomBytes(n)) }).signer.publicKey).toString('base64');
}

async function bridge(env: Record<string, string>): Promise<RunningBridge> {
  const b = await startBridge({ relayUrl: a.url, env });
  bridges.push(b);
  return b;
}

/** svc_read_space from the start with proofs: each post's inclusion check. */
async function inclusions(b: RunningBridge): Promise<{ ok: boolean; detail: string }[]> {
  a.clock.advance(2_000);
  const read = toolOk(await callTool(b, 'svc_read_space', { space: space.name, after: '0', proof: true, token_budget: 20_000 }));
  expect(read.items.length).toBe(3);
  return read.bridge.checks.map((c: any) => c.inclusion);
}

beforeAll(async () => {
  const w1Dir = tempDataDir();
  key1 = witnessKey(w1Dir);
  key2 = witnessKey(tempDataDir());
  a = await startRelay({ config: { acceptedWitnesses: [{ name: W1, publicKey: Buffer.from(key1, 'base64') }] } });
  owner = await mintToken(a.url);
  space = await newSpace(a, owner, { visibility: 'public', joinPolicy: 'request' });
  for (let i = 0; i < 3; i++) await post(a, owner, space, { kind: 'obs', body: `witnessed ${i}` });
  await signCheckpoints(a);
  w1 = await startRelay({ dataDir: w1Dir, publicUrl: `https://${W1}`, config: { witness: { targets: [`${a.url}/v1/spaces/${space.name}`], intervalMs: 3_600_000 } } });
});
afterAll(async () => {
  for (const b of bridges) await b.close();
  await w1?.close();
  await a?.close();
});

describe('a bridge that requires witness cosignatures', () => {
  it('refuses to call history verified before the witness cosigned, and calls it verified after', async () => {
    const b = await bridge({ SVC_WITNESSES: `${W1}=${key1}`, SVC_WITNESSES_REQUIRED: '1' });
    const before = await inclusions(b);
    for (const c of before) {
      expect(c.ok).toBe(false);
      expect(c.detail).toMatch(/HISTORY NOT WITNESSED: 0 of the 1 cosignatures needed on the head of size 3/);
    }
    expect(await w1.app.witness.runOnce()).toEqual([expect.objectContaining({ kind: 'cosigned', size: 3, posted: true })]);
    const after = await inclusions(b);
    for (const c of after) {
      expect(c.ok).toBe(true);
      expect(c.detail).toMatch(/witnessed: the head of size 3 that holds this post is cosigned by w1\.example \(1 of 1 needed\)/);
    }
  });

  it('counts only the named witnesses: one it was not told of, or too few, leave the history unverified', async () => {
    // w2 is named but never cosigned: two required of two named is one short.
    const both = await bridge({ SVC_WITNESSES: `${W1}=${key1},${W2}=${key2}`, SVC_WITNESSES_REQUIRED: '2' });
    for (const c of await inclusions(both)) expect(c.detail).toMatch(/HISTORY NOT WITNESSED: 1 of the 2 cosignatures needed .*: w1\.example/);
    // A bridge told of w2 alone does not count w1's cosignature.
    const other = await bridge({ SVC_WITNESSES: `${W2}=${key2}` });
    for (const c of await inclusions(other)) expect(c).toMatchObject({ ok: false, detail: expect.stringMatching(/0 of the 1 cosignatures needed/) });
    // Without SVC_WITNESSES the checks are as before: verified, and no word of witnesses.
    const plain = await bridge({});
    for (const c of await inclusions(plain)) {
      expect(c.ok).toBe(true);
      expect(c.detail).not.toMatch(/witness/i);
    }
  });

  it('a witness list that does not read is a setting error every tool names', async () => {
    const b = await bridge({ SVC_WITNESSES: `${W1}=not-a-key`, SVC_WITNESSES_REQUIRED: '1' });
    const r = await callTool(b, 'svc_whoami', {});
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/SVC_WITNESSES/);
    const tooMany = await bridge({ SVC_WITNESSES: `${W1}=${key1}`, SVC_WITNESSES_REQUIRED: '2' });
    expect(textOf(await callTool(tooMany, 'svc_whoami', {}))).toMatch(/SVC_WITNESSES_REQUIRED must be a whole number from 1 to 1/);
  });
});
