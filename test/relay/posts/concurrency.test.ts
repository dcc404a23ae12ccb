/**
 * Many writers at once over real HTTP (spec/1-concepts.md "Chains": `seq` gap-free, assigned
 * inside the write transaction; protocol/objects.md §5 replay). Requests are sent together with
 * Promise.all; the relay serialises them through one immediate transaction each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, postJson, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { expectChainVerifies } from '../../helpers/chain.js';
import { signedPost, spaceWithWriters, startWithWriters } from '../../helpers/posts.js';
import { toHex } from '../../../shared/encoding.js';
import { verifyReceipt } from '../../../shared/receipt.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';

let relay: RunningRelay;
let signerKey: Uint8Array;
let owner: MintedToken;
let writers: MintedToken[];

beforeAll(async () => {
  ({ relay, signerKey, owner, writers } = await startWithWriters(32));
});
afterAll(async () => {
  await relay.close();
});

/** A fresh private SPACE with every writer admitted. */
const newSpace = async (): Promise<SpaceRow> => await spaceWithWriters(relay, owner, writers);

const auth = (t: MintedToken) => ({ authorization: `Bearer ${t.token}` });
const appendTo = (t: MintedToken, space: SpaceRow, body: unknown) =>
  postJson(`${relay.url}/v1/spaces/${space.name}/posts`, body, auth(t));

/** The refill of every write bucket: the clock moves a minute and a half. */
const restWriters = () => relay.clock.advance(90_000);

describe('32 concurrent writers', () => {
  it('get gap-free positions 1..n with no duplicates, and the chain verifies from genesis', async () => {
    restWriters();
    const space = await newSpace();
    const perWriter = 8;
    const requests = writers.flatMap((w, wi) =>
      Array.from({ length: perWriter }, (_, k) => {
        if ((wi + k) % 2 === 0) return appendTo(w, space, { kind: 'obs', body: `writer ${wi} post ${k}`, data: { x_k: k } });
        const s = signedPost(w, space, { kind: 'result', body: `writer ${wi} post ${k}` });
        return appendTo(w, space, s.submission);
      }),
    );
    const answers = await Promise.all(requests);
    const total = writers.length * perWriter;
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(201);
    const seqs = answers.map((a) => Number(a.body.seq)).sort((x, y) => x - y);
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(new Set(answers.map((a) => a.body.post_id)).size).toBe(total);
    for (const a of answers) {
      verifyReceipt(a.body, signerKey);
      const row = (await relay.store.posts.byPostId(a.body.post_id))!;
      expect(String(row.seq)).toBe(a.body.seq);
      expect(toHex(row.chainHash)).toBe(a.body.chain_hash);
    }
    expect((await relay.store.posts.head(space.id)).seq).toBe(total);
    await expectChainVerifies(relay, space, total);
  });

  it('writing into several SPACES at once keep each chain gap-free on its own', async () => {
    restWriters();
    const spaces = await Promise.all([newSpace(), newSpace(), newSpace(), newSpace()]);
    const answers = await Promise.all(
      writers.flatMap((w, wi) => spaces.map((s, si) => appendTo(w, s, { kind: 'obs', body: `${wi}/${si}` }))),
    );
    for (const a of answers) expect(a.status).toBe(201);
    for (const s of spaces) await expectChainVerifies(relay, s, writers.length);
  });

  it('addressing one KEY fill its mailbox without gaps, one row per post', async () => {
    restWriters();
    const space = await newSpace();
    const target = await mintToken(relay.url);
    await relay.store.members.admit((await relay.store.spaces.byRowId(space.id))!, { peer: target.peerId, role: 'reader', tags: [], broughtInBy: owner.peerId }, owner.peerId, relay.clock.now());
    const answers = await Promise.all(writers.map((w) => appendTo(w, space, { kind: 'question', to: [target.peerId] })));
    for (const a of answers) expect(a.status).toBe(201);
    const rows = await relay.store.mailbox.list(target.peerId, 0, 100);
    expect(rows.map((r) => r.mailboxSeq)).toEqual(Array.from({ length: writers.length }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.postId))).toEqual(new Set(answers.map((a) => a.body.post_id)));
  });
});

describe('one idempotency key sent 32 times at once', () => {
  it('writes one post; every other answer is its replay', async () => {
    restWriters();
    const space = await newSpace();
    const w = writers[0]!;
    const body = { kind: 'handoff', body: 'take over the migration', idempotency_key: 'once-only' };
    const answers = await Promise.all(Array.from({ length: 32 }, () => appendTo(w, space, body)));
    expect(answers.every((a) => a.status === 201)).toBe(true);
    expect(answers.filter((a) => a.body.replayed === false)).toHaveLength(1);
    expect(answers.filter((a) => a.body.replayed === true)).toHaveLength(31);
    expect(new Set(answers.map((a) => a.body.post_id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.receipt.signature)).size).toBe(1);
    expect((await relay.store.posts.head(space.id)).seq).toBe(1);
  });

  it('signed, likewise writes one post', async () => {
    restWriters();
    const space = await newSpace();
    const w = writers[1]!;
    const s = signedPost(w, space, { kind: 'decision', body: 'ship it', idempotency_key: 'signed-once' });
    const answers = await Promise.all(Array.from({ length: 32 }, () => appendTo(w, space, s.submission)));
    expect(answers.every((a) => a.status === 201)).toBe(true);
    expect(answers.map((a) => a.body.replayed).sort()).toEqual([false, ...Array(31).fill(true)]);
    expect(new Set(answers.map((a) => a.body.seq))).toEqual(new Set(['1']));
  });
});
