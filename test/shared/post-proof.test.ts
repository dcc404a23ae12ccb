/**
 * The proof-block check every reader runs (shared/post-proof.ts `checkPostProof`, objects.md §13 steps 1-5)
 * on posts a real relay served at full detail with proofs, then changed one member at a time
 * as a lying relay would. The admission a member sees is recomputed from its admitted revision
 * and control hash (shared/chain.ts), so changing either is caught. A hidden post (no object
 * bytes) is a chain position: it verifies while it shows nothing those bytes would vouch for.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPostProof } from '../../shared/post-proof.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { call, createSpaceInStore, get, newSpace, post, signedPost } from '../helpers/posts.js';
import { passkeyKey, passkeyPolicyOf, signPostWebauthn, softAuthenticator } from '../helpers/passkey-authenticator.js';
import { fromBase64url, toBase64url } from '../../shared/encoding.js';
import { buildPostObject, postObjectBytes } from '../../shared/objects.js';

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
  const space = await newSpace(relay, owner);
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
    const space = await newSpace(relay, owner);
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

describe('a post signed by a passkey KEY', () => {
  /** A passkey KEY's signed post in a SPACE it owns, read at full detail with its proof. */
  async function passkeyPost(): Promise<{ post: any; policy: { rpId: string; origins: string[] } }> {
    const who = await passkeyKey(relay, -7);
    const space = await createSpaceInStore(relay.store, who.peerId, `pk-${randomUUID().slice(0, 8)}`, relay.clock.now());
    const p = await passkeyPolicyOf(relay);
    const object = buildPostObject({ space_id: space.spaceId, author_id: who.peerId, idempotency_key: randomUUID(), kind: 'obs', body: 'signed on a passkey' }, 'signed');
    const canonical = postObjectBytes(object);
    relay.clock.advance(2_100);
    const a = await call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: who.token, body: { alg: 'webauthn', canonical: toBase64url(canonical), ...signPostWebauthn(who.auth, canonical, p) } });
    expect(a.status, a.text).toBe(201);
    const r = await call(relay, 'GET', `/v1/spaces/${space.name}/posts?detail=full&proof=true`, { token: who.token });
    expect(r.status).toBe(200);
    return { post: r.body.items[0], policy: { rpId: p.rpId, origins: [p.origin] } };
  }

  it('verifies its WebAuthn assertion under the relay\'s passkey policy', async () => {
    const { post: p, policy } = await passkeyPost();
    expect(p.proof.signature.alg).toBe('webauthn');
    const r = checkPostProof(p, policy);
    expect(r).toMatchObject({ ok: true });
    expect(r.detail).toMatch(/author signature and chain link verify/);
  });

  it('says the signature was not checked when the relay publishes no passkey policy', async () => {
    const { post: p } = await passkeyPost();
    const r = checkPostProof(p, null);
    expect(r.ok).toBe(true);
    expect(r.detail).toMatch(/object and chain link verify; a passkey signature, not checked/);
  });

  it('fails when the assertion, its key or the policy does not hold', async () => {
    const { post: p, policy } = await passkeyPost();
    const sig = p.proof.signature;
    const bytes = fromBase64url(sig.value);
    bytes[bytes.length - 1]! ^= 1;
    const cases: [string, any, RegExp][] = [
      ['a changed signature', { ...p, proof: { ...p.proof, signature: { ...sig, value: toBase64url(bytes) } } }, /passkey signature does not verify: signature/],
      ['another origin', p, /client_data_json.origin/],
      ['another key', { ...p, proof: { ...p.proof, signature: { ...sig, public_key: toBase64url(softAuthenticator(-7).spki) } } }, /not the author's KEY/],
    ];
    for (const [what, post, why] of cases) {
      const r = checkPostProof(post, what === 'another origin' ? { rpId: policy.rpId, origins: ['https://elsewhere.example'] } : policy);
      expect(r.ok, what).toBe(false);
      expect(r.detail, what).toMatch(why);
    }
  });
});

/** Bytes PUT to the SPACE by `who`; answers the attachment entry a post names them by. */
async function uploaded(space: string, who: MintedToken, text: string, name: string) {
  const bytes = Buffer.from(text, 'utf8');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  relay.clock.advance(2_100);
  const r = await fetch(`${relay.url}/v1/spaces/${space}/files/${sha256}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${who.token}` }, body: bytes });
  expect(r.status, await r.text()).toBeLessThan(300);
  return { sha256, name, media_type: 'text/plain' };
}

describe('attachments: each file a post shows is a sha256.file fingerprint of its object', () => {
  /** An unsigned and a signed post, each attaching a file, read at full detail with proofs. */
  async function postsWithFiles(): Promise<any[]> {
    const space = await newSpace(relay, owner);
    const a = await uploaded(space.name, owner, `unsigned ${randomUUID()}`, 'run.log');
    const b = await uploaded(space.name, owner, `signed ${randomUUID()}`, 'table.csv');
    await post(relay, owner, space, { kind: 'result', body: 'see the log', attachments: [a] });
    const s = signedPost(owner, space, { kind: 'result', body: 'see the table', fingerprints: [{ scheme: 'sha256.file', value: b.sha256 }, { scheme: 'build.digest', value: 'c'.repeat(64) }] });
    await post(relay, owner, space, { ...(s.submission as unknown as Record<string, unknown>), attachments: [b] });
    const r = await get(relay, `/v1/spaces/${space.name}/posts?detail=full&proof=true`, owner);
    expect(r.body.items.map((p: any) => p.attachments.length)).toEqual([1, 1]);
    return r.body.items;
  }

  it('verifies as served, unsigned (the relay wrote the fingerprint) and signed (its author did), and says the files were checked', async () => {
    for (const p of await postsWithFiles()) {
      const r = checkPostProof(p);
      expect(r.ok, r.detail).toBe(true);
      expect(r.detail).toContain('1 attachment, each a sha256.file fingerprint of the object');
    }
  });

  it('fails, naming the file, when a shown file is not among the fingerprints of the object', async () => {
    const [unsigned, signed] = await postsWithFiles();
    const other = 'e'.repeat(64);
    const cases: [string, any][] = [
      ['another hash', { ...unsigned, attachments: [{ ...unsigned.attachments[0], sha256: other }] }],
      ['a file added', { ...signed, attachments: [...signed.attachments, { sha256: other, name: 'added.bin', media_type: 'application/octet-stream', bytes: 1 }] }],
      // The hash is there, but under another scheme: it says nothing of a file.
      ['another scheme', { ...signed, attachments: [{ ...signed.attachments[0], sha256: 'c'.repeat(64) }] }],
      ['no hash', { ...unsigned, attachments: [{ name: 'x', media_type: 'text/plain', bytes: 1 }] }],
    ];
    for (const [what, p] of cases) {
      const r = checkPostProof(p);
      expect(r.ok, what).toBe(false);
      expect(r.detail, what).toMatch(/attachments\[\d\].*: its sha256 is not a sha256\.file fingerprint of the post's object/);
    }
    expect(checkPostProof({ ...signed, attachments: [...signed.attachments, { sha256: other, name: 'added.bin' }] }).detail).toContain('attachments[1] ("added.bin")');
  });
});
