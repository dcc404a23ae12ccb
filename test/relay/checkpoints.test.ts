/**
 * Checkpoints and proofs over the real HTTP server (spec/1-concepts.md "Chains, checkpoints and
 * proofs"; spec/2-endpoints.md posts.proof, checkpoints.list; protocol/objects.md §11-§13).
 *
 * Everything served is checked with the shared/ verifiers only (verifyCheckpoint, checkExtends,
 * verifyCheckpointInclusion, verifyPostChain, verifyControlChain), against the root key the
 * capability document publishes. The checkpointer is driven with `runOnce(now)` on the relay's
 * movable clock.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkExtends, verifyCheckpoint, verifyCheckpointInclusion, type VerifiedCheckpoint } from '../../shared/checkpoint.js';
import { verifyControlChain, verifyPostChain } from '../../shared/chain.js';
import { fromBase64url, fromHex } from '../../shared/encoding.js';
import { inclusionProof, eventLeaf } from '../../shared/merkle.js';
import { objectIdOf } from '../../shared/objects.js';
import { mintToken, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { admit, codeOf, get, newSpace, post } from '../helpers/posts.js';
import type { SpaceRow } from '../../relay/store/spaces.js';
import { createCheckpointer } from '../../relay/jobs/checkpointer.js';
import { checkpointTreesFor } from '../../relay/posts/checkpoint-trees.js';
import { RATE_LIMITS } from '../../shared/limits.js';

const MINUTE = 60_000;
const BURST_KINDS = ['obs', 'result', 'fail', 'warn', 'question', 'workaround', 'progress', 'decision', 'dossier', 'ack'];

let relay: RunningRelay;
let root: Uint8Array;
let owner: MintedToken;
let writer: MintedToken;
let stranger: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  const caps = await get(relay, '/v1/capabilities');
  root = fromHex(caps.body.protocol.service_root_key, 32);
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  stranger = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** A read that first moves the clock so the read bucket (600 a minute per KEY, 120 per address) never runs dry. */
function read(path: string, who?: MintedToken, headers: Record<string, string> = {}) {
  relay.clock.advance(who ? 120 : 520);
  return get(relay, path, who, headers);
}

/** `task(0)` … `task(count - 1)`, `width` running at once; rejects with the first that fails. */
async function atOnce(width: number, count: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: width }, lane));
}

/** Every checkpoint of a stream, oldest first, paging through checkpoints.list. */
async function allCheckpoints(space: SpaceRow, stream: 'posts' | 'events', who?: MintedToken): Promise<any[]> {
  const out: any[] = [];
  let after = '0';
  for (;;) {
    const r = await read(`/v1/spaces/${space.name}/checkpoints?stream=${stream}&limit=3&after=${after}`, who);
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.items);
    if (!r.body.has_more) {
      expect(r.body.next_after).toBeNull();
      return out;
    }
    after = r.body.next_after;
  }
}

/** Verify a run of served checkpoints: each one alone, then each extends the one before. */
function verifyRun(items: any[], spaceId: string, stream: 'posts' | 'events'): VerifiedCheckpoint[] {
  const verified = items.map((c) => verifyCheckpoint(c, root));
  verified.forEach((v, i) => {
    expect(v.fields.space_id).toBe(spaceId);
    expect(v.fields.stream).toBe(stream);
    if (i === 0) expect(v.fields.first).toBe('1');
    else checkExtends(verified[i - 1]!, v);
    expect(BigInt(v.fields.last) - BigInt(v.fields.first) + 1n).toBeLessThanOrEqual(1024n);
  });
  return verified;
}

/** Every post of a SPACE in full with proof, from the export (members see admitted_revision too). */
async function exportAll(space: SpaceRow, who: MintedToken): Promise<any[]> {
  const out: any[] = [];
  let after = '0';
  for (;;) {
    const r = await read(`/v1/spaces/${space.name}/posts?limit=1000&after=${after}`, who, { accept: 'application/x-ndjson' });
    expect(r.status).toBe(200);
    const lines = r.text.trim().split('\n').map((l) => JSON.parse(l));
    const trailer = lines.pop();
    out.push(...lines);
    if (!trailer.cursor.has_more) return out;
    after = trailer.cursor.next_after;
  }
}

describe('a long random history', { tags: ['slow'] }, () => {
  it('every checkpoint and every proof of both streams verifies with the shared verifiers only', async () => {
    const space = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request', categories: ['general'] });
    await admit(relay, space, writer, 'writer');
    const checkpointer = relay.app.checkpointer;

    // A burst longer than one range: 1,024 positions are signed at once, the rest once the
    // oldest of them is ten minutes old (the burst spans far more than that on the clock).
    // Sixteen at a time, as concurrent writers would: they share COMMITs, which keeps the burst
    // to seconds (one append at a time waits for a commit each, minutes on PostgreSQL).
    await atOnce(16, 1100, async (i) => {
      const who = i % 3 === 0 ? writer : owner;
      await post(relay, who, space, { kind: BURST_KINDS[randomInt(BURST_KINDS.length)]!, body: `burst ${i}`, ...(i % 7 === 0 ? { title: `t${i}` } : {}) });
    });
    let run = await checkpointer.runOnce(relay.clock.now());
    expect(run.signed).toBe(2);

    // Then rounds of a few posts, a few governance events and random pauses.
    let expectedEvents = (await relay.store.events.head(space.id)).revision;
    for (let round = 0; round < 12; round++) {
      const n = randomInt(0, 40);
      for (let i = 0; i < n; i++) await post(relay, round % 2 ? writer : owner, space, { kind: 'obs', body: `round ${round} post ${i}` });
      const joiners = randomInt(0, 3);
      for (let j = 0; j < joiners; j++) {
        await admit(relay, space, await mintToken(relay.url), 'reader');
        expectedEvents++;
      }
      relay.clock.advance(randomInt(0, 15) * MINUTE);
      run = await checkpointer.runOnce(relay.clock.now());
      expect(run.pending).toBeGreaterThanOrEqual(0);
    }
    relay.clock.advance(11 * MINUTE);
    await checkpointer.runOnce(relay.clock.now());
    expect(await checkpointer.runOnce(relay.clock.now())).toEqual({ signed: 0, pending: 0 });

    // Posts stream: the checkpoints, alone and as a run, cover 1..head with no gap.
    const head = (await relay.store.posts.head(space.id)).seq;
    const postRun = verifyRun(await allCheckpoints(space, 'posts'), space.spaceId, 'posts');
    expect(postRun[postRun.length - 1]!.fields.last).toBe(String(head));
    expect(postRun.some((c) => c.fields.first === '1' && c.fields.last === '1024')).toBe(true);
    expect(postRun.some((c) => Number(c.fields.last) - Number(c.fields.first) + 1 < 1024)).toBe(true);

    // The chain verifies from genesis, with every object id recomputed from its bytes.
    const posts = await exportAll(space, owner);
    expect(posts.map((p) => Number(p.seq))).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const chain = verifyPostChain(
      space.spaceId,
      posts.map((p) => ({
        seq: Number(p.seq),
        objectId: fromHex(p.object_id, 32),
        admission: fromHex(p.proof.chain.admission, 32),
        chainHash: fromHex(p.proof.chain.chain_hash, 32),
        admittedRevision: Number(p.proof.chain.admitted_revision),
        admittedControlHash: fromHex(p.proof.chain.admitted_control_hash, 32),
        canonical: fromBase64url(p.proof.canonical),
      })),
    );
    expect(chain).toMatchObject({ ok: true, count: head });

    // Every post's proof, read by an outsider without a KEY: leaf, checkpoint and path verify.
    const byId = new Map(postRun.map((c) => [c.fields.first + '-' + c.fields.last, c]));
    // As many at once as the relay lets one address without a KEY read (more are BUSY).
    await atOnce(RATE_LIMITS.readsWithoutToken.concurrent, posts.length, async (i) => {
      const p = posts[i]!;
      const r = await read(`/v1/spaces/${space.name}/posts/${p.seq}/proof`);
      expect(r.status, r.text).toBe(200);
      const proven = r.body.post;
      expect(proven.proof).not.toHaveProperty('private');
      expect(objectIdOf(fromBase64url(proven.proof.canonical))).toEqual(fromHex(proven.object_id, 32));
      const verified = verifyCheckpointInclusion(
        { spaceId: space.spaceId, stream: 'posts', position: BigInt(proven.seq), id: fromHex(proven.object_id, 32), chainHash: fromHex(proven.proof.chain.chain_hash, 32) },
        { leaf: r.body.leaf, checkpoint: r.body.checkpoint, inclusion: r.body.inclusion },
        root,
      );
      const listed = byId.get(verified.fields.first + '-' + verified.fields.last);
      expect(listed && Buffer.from(listed.id).equals(Buffer.from(verified.id))).toBe(true);
    });

    // Events stream: members only; every checkpoint verifies and every event is included.
    const eventRun = verifyRun(await allCheckpoints(space, 'events', writer), space.spaceId, 'events');
    const events: any[] = [];
    let after = '0';
    for (;;) {
      const r = await read(`/v1/spaces/${space.name}/events?after=${after}&limit=200`, writer, { accept: 'application/x-ndjson' });
      const lines = r.text.trim().split('\n').map((l) => JSON.parse(l));
      const trailer = lines.pop();
      events.push(...lines);
      if (!trailer.cursor.has_more) break;
      after = trailer.cursor.next_after;
    }
    expect(events).toHaveLength(expectedEvents);
    expect(eventRun[eventRun.length - 1]!.fields.last).toBe(String(expectedEvents));
    const control = verifyControlChain(
      space.spaceId,
      events.map((e) => ({ revision: Number(e.revision), commandId: fromHex(e.command_id, 32), chainHash: fromHex(e.chain_hash, 32), canonical: fromBase64url(e.canonical) })),
    );
    expect(control.ok).toBe(true);
    for (const c of await allCheckpoints(space, 'events', writer)) {
      const first = Number(c.first);
      const range = events.slice(first - 1, Number(c.last));
      const leaves = range.map((e) => eventLeaf(space.spaceId, Number(e.revision), fromHex(e.command_id, 32), fromHex(e.chain_hash, 32)));
      range.forEach((e, i) => {
        verifyCheckpointInclusion(
          { spaceId: space.spaceId, stream: 'events', position: BigInt(e.revision), id: fromHex(e.command_id, 32), chainHash: fromHex(e.chain_hash, 32) },
          { checkpoint: c, inclusion: { leaf_index: i, tree_size: leaves.length, path: inclusionProof(leaves, i).map((h) => Buffer.from(h).toString('hex')) } },
          root,
        );
      });
    }
  }, 300_000); // 1,100 appends and every proof of them: the timeout catches a hang, not a slow machine
});

describe('the checkpointer', () => {
  it('waits until the oldest uncovered position is ten minutes old, then signs everything uncovered', async () => {
    const space = await newSpace(relay, owner);
    for (let i = 0; i < 3; i++) await post(relay, owner, space, { kind: 'obs', body: `p${i}` });
    const checkpointer = relay.app.checkpointer;
    await checkpointer.runOnce(relay.clock.now());
    expect(await relay.store.checkpoints.latest(space.id, 'posts')).toBeUndefined();
    const before = await read(`/v1/spaces/${space.name}/posts/1/proof`, owner);
    expect(before.body).toMatchObject({ checkpoint: null, inclusion: null });
    expect(before.body.leaf).toMatch(/^[0-9a-f]{64}$/);
    relay.clock.advance(10 * MINUTE);
    await checkpointer.runOnce(relay.clock.now());
    const c = (await relay.store.checkpoints.latest(space.id, 'posts'))!;
    expect(c.fields).toMatchObject({ first: '1', last: '3', previous_checkpoint_id: null });
    // The events stream of the SPACE (space.created) is signed in the same pass.
    expect((await relay.store.checkpoints.latest(space.id, 'events'))?.fields.last).toBe('1');
    await post(relay, owner, space, { kind: 'obs', body: 'later' });
    relay.clock.advance(10 * MINUTE);
    await checkpointer.runOnce(relay.clock.now());
    const next = (await relay.store.checkpoints.latest(space.id, 'posts'))!;
    expect(next.fields).toMatchObject({ first: '4', last: '4', predecessor_hash: c.fields.ending_hash });
    checkExtends(c, next);
  });

  it('signs on its own once started, a range at a time, and stops when told', async () => {
    const space = await newSpace(relay, owner);
    for (let i = 0; i < 2; i++) await post(relay, owner, space, { kind: 'obs', body: `timer ${i}` });
    relay.clock.advance(11 * MINUTE);
    const job = createCheckpointer({
      checkpoints: relay.store.checkpoints,
      clock: relay.clock.now,
      signer: relay.serviceKeys.signer,
      rendering: relay.serviceKeys.rendering,
      serviceEpoch: await relay.store.state.getOrCreate('service_epoch', () => 'unused'),
      intervalMs: 5,
    });
    job.start();
    try {
      for (let i = 0; i < 400 && await relay.store.checkpoints.latest(space.id, 'posts') === undefined; i++) {
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await job.stop();
    }
    const c = await relay.store.checkpoints.latest(space.id, 'posts');
    expect(c?.fields).toMatchObject({ first: '1', last: '2' });
    verifyCheckpoint((await read(`/v1/spaces/${space.name}/checkpoints`, owner)).body.items[0], root);
  });

  it('keeps its checkpoints across a restart, and the next one extends the last', async () => {
    const dir = tempDataDir();
    const first = await startRelay({ dataDir: dir });
    const who = await mintToken(first.url, owner.seed);
    const space = await newSpace(first, who);
    for (let i = 0; i < 2; i++) await post(first, who, space, { kind: 'obs', body: `before ${i}` });
    first.clock.advance(11 * MINUTE);
    await first.app.checkpointer.runOnce(first.clock.now());
    const kept = (await get(first, `/v1/spaces/${space.name}/checkpoints`, who)).body.items[0];
    await first.close();

    const second = await startRelay({ dataDir: dir, clockOffsetMs: 60 * MINUTE });
    try {
      const again = await mintToken(second.url, owner.seed);
      await post(second, again, space.name, { kind: 'obs', body: 'after' });
      second.clock.advance(11 * MINUTE);
      await second.app.checkpointer.runOnce(second.clock.now());
      const caps = await get(second, '/v1/capabilities');
      const root2 = fromHex(caps.body.protocol.service_root_key, 32);
      const items = (await get(second, `/v1/spaces/${space.name}/checkpoints`, again)).body.items;
      expect(items).toHaveLength(2);
      expect(items[0]).toEqual(kept);
      checkExtends(verifyCheckpoint(items[0], root2), verifyCheckpoint(items[1], root2));
      expect(items[1]).toMatchObject({ first: '3', last: '3' });
    } finally {
      await second.close();
    }
  });
});

describe('checkpoints.list', () => {
  it('answers pages with next_after while has_more, newest first with order=desc, and the service keys', async () => {
    const space = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request', categories: ['general'] });
    for (let round = 0; round < 3; round++) {
      await post(relay, owner, space, { kind: 'obs', body: `r${round}` });
      relay.clock.advance(11 * MINUTE);
      await relay.app.checkpointer.runOnce(relay.clock.now());
    }
    const r = await read(`/v1/spaces/${space.name}/checkpoints?limit=2`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((c: any) => c.last)).toEqual(['1', '2']);
    expect(r.body).toMatchObject({ next_after: '2', has_more: true });
    expect(Object.keys(r.body)).toEqual(['items', 'next_after', 'has_more', 'tokens_estimated', 'service_keys', 'notice']);
    expect(Object.keys(r.body.items[0])).toEqual([
      'checkpoint_id', 'stream', 'first', 'last', 'previous_checkpoint_id', 'predecessor_hash', 'ending_hash', 'merkle_root',
      'service_epoch', 'created_at', 'canonical', 'signature', 'signer',
    ]);
    expect(r.body.service_keys[0].key_id).toBe(r.body.items[0].signer.key_id);
    const desc = await read(`/v1/spaces/${space.name}/checkpoints?order=desc`);
    expect(desc.body.items.map((c: any) => c.last)).toEqual(['3', '2', '1']);
    expect(desc.body.next_after).toBeNull();
  });

  it('refuses: SPACE_NOT_FOUND, READ_DENIED for a private SPACE and for the events stream outside the SPACE', async () => {
    const open = await newSpace(relay, owner, { visibility: 'public', joinPolicy: 'request', categories: ['general'] });
    const closed = await newSpace(relay, owner);
    expect(codeOf(await read('/v1/spaces/not-a-space-anywhere/checkpoints'))).toBe('SPACE_NOT_FOUND');
    expect(codeOf(await read(`/v1/spaces/${closed.name}/checkpoints`, stranger))).toBe('READ_DENIED');
    expect(codeOf(await read(`/v1/spaces/${open.name}/checkpoints?stream=events`, stranger))).toBe('READ_DENIED');
    expect(codeOf(await read(`/v1/spaces/${open.name}/checkpoints?stream=events`))).toBe('READ_DENIED');
    expect((await read(`/v1/spaces/${open.name}/checkpoints?stream=events`, owner)).status).toBe(200);
    expect((await read(`/v1/spaces/${open.name}/checkpoints`)).status).toBe(200);
    expect(codeOf(await read(`/v1/spaces/${open.name}/checkpoints?stream=tasks`, owner))).toBe('INVALID_REQUEST');
  });
});

describe('posts.proof refusals', () => {
  it('SPACE_NOT_FOUND, READ_DENIED and POST_NOT_FOUND', async () => {
    const space = await newSpace(relay, owner);
    await post(relay, owner, space, { kind: 'obs', body: 'x' });
    expect(codeOf(await read('/v1/spaces/not-a-space-anywhere/posts/1/proof', owner))).toBe('SPACE_NOT_FOUND');
    expect(codeOf(await read(`/v1/spaces/${space.name}/posts/1/proof`, stranger))).toBe('READ_DENIED');
    expect(codeOf(await read(`/v1/spaces/${space.name}/posts/2/proof`, owner))).toBe('POST_NOT_FOUND');
    expect(codeOf(await read(`/v1/spaces/${space.name}/posts/0/proof`, owner))).toBe('INVALID_REQUEST');
  });

  /** A SPACE of four posts under one signed checkpoint. */
  async function checkpointed(): Promise<SpaceRow> {
    const space = await newSpace(relay, owner);
    for (let i = 0; i < 4; i++) await post(relay, owner, space, { kind: 'obs', body: `y${i}` });
    relay.clock.advance(11 * MINUTE);
    await relay.app.checkpointer.runOnce(relay.clock.now());
    return space;
  }
  /** Rewrite one stored link behind the relay's back (as a damaged or altered database would). */
  const damage = async (space: SpaceRow, seq: number) =>
    await relay.store.db.prepare(`UPDATE posts SET chain_hash = ? WHERE space_row_id = ? AND seq = ${seq}`).run(randomBytes(32), space.id);
  const expectInvalid = (r: Awaited<ReturnType<typeof read>>) => {
    expect(r.status).toBe(500);
    expect(codeOf(r)).toBe('CHECKPOINT_INVALID');
    expect(r.body).not.toHaveProperty('post');
  };

  it('CHECKPOINT_INVALID when the stored range no longer gives the signed root, and nothing else is served', async () => {
    const space = await checkpointed();
    await damage(space, 3);
    expectInvalid(await read(`/v1/spaces/${space.name}/posts/2/proof`, owner));
    // Refused again, not kept: the tree is kept only once its root is the signed one.
    expectInvalid(await read(`/v1/spaces/${space.name}/posts/1/proof`, owner));
  });

  it('CHECKPOINT_INVALID for a post whose stored link changed after its checkpoint\'s tree was built and kept; its neighbours\' proofs still verify', async () => {
    const space = await checkpointed();
    const trees = checkpointTreesFor(relay.store);
    const built = trees.built;
    expect((await read(`/v1/spaces/${space.name}/posts/2/proof`, owner)).status).toBe(200);
    expect((await read(`/v1/spaces/${space.name}/posts/4/proof`, owner)).status).toBe(200);
    expect(trees.built).toBe(built + 1); // one tree for the checkpoint, kept for the second proof
    await damage(space, 3);
    expectInvalid(await read(`/v1/spaces/${space.name}/posts/3/proof`, owner));
    // Post 2's own link is intact: its path comes from the tree checked against the signed root.
    const r = await read(`/v1/spaces/${space.name}/posts/2/proof`, owner);
    expect(r.status).toBe(200);
    const p = r.body.post;
    expect(() =>
      verifyCheckpointInclusion(
        { spaceId: space.spaceId, stream: 'posts', position: BigInt(p.seq), id: fromHex(p.object_id, 32), chainHash: fromHex(p.proof.chain.chain_hash, 32) },
        { leaf: r.body.leaf, checkpoint: r.body.checkpoint, inclusion: r.body.inclusion },
        root,
      ),
    ).not.toThrow();
  });
});
