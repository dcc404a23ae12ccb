/**
 * The bridge's proof-block check (bridge/verify.ts `checkPostProof`, objects.md §13 steps 1-5)
 * on posts a real relay served at full detail with proofs, then changed one member at a time
 * as a lying relay would. The admission a member sees is recomputed from its admitted revision
 * and control hash (shared/chain.ts), so changing either is caught. A hidden post (no object
 * bytes) is a chain position: it verifies while it shows nothing those bytes would vouch for.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPostProof } from '../bridge/verify.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from './helpers/relay.js';
import { call, get, newSpace, post, signedPost } from './helpers/posts.js';

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

describe('a post without its object bytes', () => {
  /** A signed post with every private field, hidden by its owner, as a member reads it in full. */
  async function hiddenPost(): Promise<{ hidden: any; shown: any }> {
    const space = newSpace(relay, owner);
    const s = signedPost(owner, space, { kind: 'obs', title: 'T', body: 'words', fingerprints: [{ scheme: 'git.commit', value: 'abc' }] }, {
      data: { x_k: 1 },
      run_id: randomUUID(),
    });
    relay.clock.advance(2_100);
    const sent = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: owner.token, body: s.submission });
    expect(sent.status).toBe(201);
    const shown = (await get(relay, `/v1/posts/${sent.body.post_id}`, owner)).body;
    expect((await call(relay, 'PUT', `/v1/posts/${sent.body.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    const hidden = (await get(relay, `/v1/posts/${sent.body.post_id}`, owner)).body;
    return { hidden, shown };
  }

  it('verifies as a chain position when it is marked unavailable and shows none of its words', async () => {
    const { hidden } = await hiddenPost();
    const r = checkPostProof(hidden);
    expect(r).toMatchObject({ ok: true });
    expect(r.detail).toMatch(/hidden: its words are not shown, so it is checked as a chain position/);
    const { admitted_revision: _r, admitted_control_hash: _h, ...chain } = hidden.proof.chain;
    const { run_id: _id, admitted_revision: _a, ...outside } = hidden;
    expect(checkPostProof({ ...outside, proof: { object_id: hidden.proof.object_id, canonical: null, signature: null, chain } }).ok).toBe(true);
  });

  it('checks a signature shown beside it, and fails one that does not verify', async () => {
    const { hidden, shown } = await hiddenPost();
    expect(checkPostProof({ ...hidden, proof: { ...hidden.proof, signature: shown.proof.signature } })).toMatchObject({ ok: true });
    const bad = { ...shown.proof.signature, value: flip(shown.proof.signature.value) };
    expect(checkPostProof({ ...hidden, proof: { ...hidden.proof, signature: bad } }).detail).toMatch(/signature does not verify/);
  });

  it('fails when it shows a word the missing bytes would have to vouch for', async () => {
    const { hidden, shown } = await hiddenPost();
    for (const [member, value] of [
      ['run_id', shown.run_id],
      ['title', 'T'],
      ['body', 'words'],
      ['to', [owner.peerId]],
      ['data', { x_k: 1 }],
      ['budget', { observed_at: '2026-01-31T12:00:00Z' }],
      ['fingerprints', shown.fingerprints],
      ['sealed', { generation: 1, bytes: 17 }],
    ] as const) {
      const r = checkPostProof({ ...hidden, [member]: value });
      expect(r.ok, member).toBe(false);
      expect(r.detail).toMatch(new RegExp(`${member} (is|are) shown, and the bytes that would vouch for`));
    }
    expect(checkPostProof({ ...hidden, proof: { ...hidden.proof, private: shown.proof.private } }).ok).toBe(false);
  });

  it('fails when a post not marked unavailable comes without them, or a signed one without its signature', async () => {
    const { shown } = await hiddenPost();
    expect(checkPostProof(shown)).toMatchObject({ ok: true });
    const stripped = checkPostProof({ ...shown, proof: { ...shown.proof, canonical: null } });
    expect(stripped).toMatchObject({ ok: false });
    expect(stripped.detail).toMatch(/the object bytes are missing, and the post is not marked unavailable/);
    const unsigned = checkPostProof({ ...shown, proof: { ...shown.proof, signature: null } });
    expect(unsigned.detail).toMatch(/marked signed, but no signature is shown/);
    const noPrivate = checkPostProof({ ...shown, proof: { ...shown.proof, private: null } });
    expect(noPrivate.detail).toMatch(/data is shown, and the bytes that would vouch for it are not/);
  });
});
