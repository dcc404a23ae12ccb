/**
 * The bridge's proof-block check (bridge/verify.ts `checkPostProof`, objects.md §13 steps 1-5)
 * on posts a real relay served at full detail with proofs, then changed one member at a time
 * as a lying relay would. The admission a member sees is recomputed from its admitted revision
 * and control hash (shared/chain.ts), so changing either is caught.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPostProof } from '../bridge/verify.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './helpers/relay.js';
import { get, newSpace, post } from './helpers/posts.js';

let relay: RunningRelay;
let owner: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** The post at `seq` as a member reads it: full detail with its proof block. */
async function fullPost(): Promise<any> {
  const space = newSpace(relay, owner);
  await post(relay, owner, space, { kind: 'obs', body: 'first' });
  await post(relay, owner, space, { kind: 'result', title: 'T', body: 'second' });
  const r = await get(relay, `/v1/spaces/${space.name}/posts?detail=full&proof=true`, owner);
  expect(r.status).toBe(200);
  const p = r.body.items[1];
  expect(p.proof.chain).toHaveProperty('admitted_revision');
  return p;
}

/** A copy of `p` with one member of its proof's chain replaced. */
function withChain(p: any, change: Record<string, unknown>): any {
  return { ...p, proof: { ...p.proof, chain: { ...p.proof.chain, ...change } } };
}

const flip = (hex: string) => `${hex[0] === '0' ? '1' : '0'}${hex.slice(1)}`;

describe('a proof block the relay served', () => {
  it('verifies as served, and without the admitted revision (a reader who is not a member)', async () => {
    const p = await fullPost();
    expect(checkPostProof(p)).toMatchObject({ ok: true });
    const { admitted_revision: _r, admitted_control_hash: _h, ...chain } = p.proof.chain;
    expect(checkPostProof({ ...p, proof: { ...p.proof, chain } })).toMatchObject({ ok: true });
  });

  it('fails when the admitted revision does not give the admission', async () => {
    const p = await fullPost();
    const r = checkPostProof(withChain(p, { admitted_revision: String(Number(p.proof.chain.admitted_revision) + 1) }));
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/admission/);
  });

  it('fails when the admitted control hash does not give the admission', async () => {
    const p = await fullPost();
    const r = checkPostProof(withChain(p, { admitted_control_hash: flip(p.proof.chain.admitted_control_hash) }));
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/admission/);
  });

  it('fails when the admission is changed, with or without the members that give it', async () => {
    const p = await fullPost();
    const changed = withChain(p, { admission: flip(p.proof.chain.admission) });
    expect(checkPostProof(changed).ok).toBe(false);
    const { admitted_revision: _r, admitted_control_hash: _h, ...chain } = changed.proof.chain;
    const r = checkPostProof({ ...changed, proof: { ...changed.proof, chain } });
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/chain_hash/);
  });

  it('fails when the chain hash or the previous link is changed', async () => {
    const p = await fullPost();
    expect(checkPostProof(withChain(p, { chain_hash: flip(p.proof.chain.chain_hash) })).ok).toBe(false);
    expect(checkPostProof(withChain(p, { previous_hash: flip(p.proof.chain.previous_hash) })).ok).toBe(false);
  });
});
