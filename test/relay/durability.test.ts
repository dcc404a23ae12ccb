/**
 * Durability of acknowledged posts through kill -9 (spec/1-concepts.md
 * "Chains, checkpoints and proofs"; DESIGN.md "Storage": SQLite WAL with synchronous=FULL, and
 * every 201 is sent only after its commit).
 *
 * The REAL relay process (test/helpers/relay.ts spawnRelay) takes signed appends from four
 * clients into two SPACES over HTTP; it is killed with SIGKILL while requests are in flight,
 * then started again on the same data directory. Everything is checked over HTTP with the
 * shared/ verifiers only:
 * - every post answered 201 is present at the same `seq` with the same `post_id`, `object_id`
 *   and `chain_hash`, and its receipt verifies against the signer key in capabilities;
 * - positions run 1..head without a gap, and each SPACE's chain verifies from genesis;
 * - every post present is one a client sent (a post whose answer was lost in the kill may be
 *   there or not, but nothing else);
 * - every checkpoint verifies (signature, signer certificate under the root key in
 *   capabilities), names the link served at its `last`, and extends the one before it; the
 *   checkpointer runs over the restored data in a third start (see the comment there).
 *
 * kill -9 ends the process, not the machine: it shows that no 201 is sent before its commit
 * and that the database reopens whole after a crash mid-write; power loss (what
 * synchronous=FULL guards against beyond this) cannot be staged in a test.
 *
 * The relay runs with SVC_RELAY_NO_RATE_LIMITS=1: the write limit (30 a minute, burst 60 per
 * KEY) would otherwise stop each client after 60 posts within the first second. The setting
 * only skips the limiter; the append path and its commit are the same.
 *
 * @module-tag slow
 */
import { afterEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mintToken, spawnRelay, startRelay, tempDataDir, type MintedToken, type SpawnedRelay } from '../helpers/relay.js';
import { signedPost } from '../helpers/posts.js';
import { fromBase64url, fromHex, toHex } from '../../shared/encoding.js';
import { verifyPostChain, type StoredPostLink } from '../../shared/chain.js';
import { verifyReceipt } from '../../shared/receipt.js';
import { checkExtends, verifyCheckpoint, type VerifiedCheckpoint } from '../../shared/checkpoint.js';

const CLIENTS = 4;
/**
 * The kill comes after this many acknowledged posts (over 1,024 per SPACE, so each posts stream
 * gets more than one checkpoint), or after STREAM_MS, whichever is first.
 */
const KILL_AFTER_ACKS = 2_600;
const STREAM_MS = 6_000;
const NO_LIMITS = { SVC_RELAY_NO_RATE_LIMITS: '1' };

interface Space {
  name: string;
  spaceId: string;
}

/** A post a client sent: what it signed, and the 201 answer when one came back. */
interface Sent {
  space: Space;
  objectId: string;
  answer?: Record<string, any>;
}

const running: SpawnedRelay[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) if (r.process.exitCode === null && r.process.signalCode === null) await r.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(dir: string): Promise<SpawnedRelay> {
  const r = await spawnRelay(dir, { env: NO_LIMITS });
  running.push(r);
  return r;
}

async function send(url: string, method: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Create a private SPACE over HTTP and make every writer a member with role writer. */
async function setUpSpace(url: string, owner: MintedToken, writers: readonly MintedToken[], name: string): Promise<Space> {
  const created = await send(`${url}/v1/spaces`, 'POST', owner.token, { name, title: 'Durability' });
  if (created.status !== 201) throw new Error(`spaces.create: ${created.status} ${JSON.stringify(created.body)}`);
  for (const w of writers) {
    const set = await send(`${url}/v1/spaces/${name}/members/${w.peerId}`, 'PUT', owner.token, { role: 'writer' });
    if (set.status !== 201) throw new Error(`members.set: ${set.status} ${JSON.stringify(set.body)}`);
  }
  return { name, spaceId: created.body.space_id };
}

/**
 * One client: signed appends one after the other, alternating SPACES, until told to stop or
 * the relay goes away (a failed fetch ends the client; that post's outcome is unknown).
 */
async function client(url: string, me: MintedToken, index: number, spaces: readonly Space[], sent: Sent[], stop: () => boolean): Promise<void> {
  for (let k = 0; !stop(); k++) {
    const space = spaces[(index + k) % spaces.length]!;
    const s = signedPost(me, space, {
      kind: 'obs',
      title: `client ${index} post ${k}`,
      body: `durability stream: client ${index}, post ${k}`,
    });
    const record: Sent = { space, objectId: toHex(s.objectId) };
    sent.push(record);
    let r: { status: number; body: any };
    try {
      r = await send(`${url}/v1/spaces/${space.name}/posts`, 'POST', me.token, s.submission);
    } catch {
      return; // the relay was killed with this request in flight
    }
    if (r.status !== 201) throw new Error(`append refused: ${r.status} ${JSON.stringify(r.body)}`);
    record.answer = r.body;
  }
}

/** Every post of a SPACE with its proof block, read by cursor pages over HTTP. */
async function readAll(url: string, token: string, space: Space): Promise<{ head: number; items: any[] }> {
  const items: any[] = [];
  let after = '0';
  let head = -1;
  for (;;) {
    const r = await send(`${url}/v1/spaces/${space.name}/posts?after=${after}&limit=200&detail=full&proof=true`, 'GET', token);
    if (r.status !== 200) throw new Error(`posts.read: ${r.status} ${JSON.stringify(r.body)}`);
    items.push(...r.body.items);
    head = Number(r.body.head_seq);
    if (!r.body.has_more) return { head, items };
    after = r.body.next_after;
  }
}

/** Every checkpoint of one stream of a SPACE, oldest first, read by cursor pages. */
async function checkpointsOf(url: string, token: string, space: Space, stream: 'posts' | 'events'): Promise<unknown[]> {
  const out: unknown[] = [];
  let after: string | null = null;
  for (;;) {
    const q: string = `?stream=${stream}&limit=200${after === null ? '' : `&after=${after}`}`;
    const r = await send(`${url}/v1/spaces/${space.name}/checkpoints${q}`, 'GET', token);
    if (r.status !== 200) throw new Error(`checkpoints.list: ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...r.body.items);
    if (!r.body.has_more) return out;
    after = r.body.next_after;
  }
}

describe('kill -9 of the relay during a stream of signed appends from several clients', () => {
  it('loses no acknowledged post: after restart each is in place with its receipt, positions are gap-free, chains verify from genesis and every checkpoint verifies', async () => {
    const dir = tempDataDir('svc-durability-');
    dirs.push(dir);
    const first = await start(dir);
    const owner = await mintToken(first.url);
    const writers = await Promise.all(Array.from({ length: CLIENTS }, () => mintToken(first.url)));
    const tag = randomUUID().slice(0, 8);
    const spaces = [
      await setUpSpace(first.url, owner, writers, `durable-a-${tag}`),
      await setUpSpace(first.url, owner, writers, `durable-b-${tag}`),
    ];

    // Stream, then kill -9 with requests in flight.
    const sent: Sent[] = [];
    const acked = () => sent.reduce((n, s) => n + (s.answer ? 1 : 0), 0);
    const started = Date.now();
    let killed = false;
    const clients = writers.map((w, i) => client(first.url, w, i, spaces, sent, () => killed));
    while (acked() < KILL_AFTER_ACKS && Date.now() - started < STREAM_MS) await new Promise((r) => setTimeout(r, 5));
    const inFlight = sent.length - acked();
    killed = true;
    expect(await first.kill('SIGKILL')).toBe('SIGKILL');
    await Promise.all(clients);
    const acknowledged = sent.filter((s) => s.answer !== undefined);
    expect(acknowledged.length).toBeGreaterThan(100);
    expect(inFlight).toBeGreaterThan(0); // the kill landed mid-stream

    // Restart on the same data directory; the signer key is read from capabilities.
    const second = await start(dir);
    const caps = await send(`${second.url}/v1/capabilities`, 'GET', owner.token);
    const signerKey = fromHex(caps.body.protocol.service_keys[0].public_key, 32);
    const rootKey = fromHex(caps.body.protocol.service_root_key, 32);
    const sentObjects = new Set(sent.map((s) => s.objectId));

    let present = 0;
    const heads = new Map<Space, { head: number; chainAt: (seq: number) => string | undefined }>();
    for (const space of spaces) {
      const { head, items } = await readAll(second.url, owner.token, space);
      present += items.length;
      // 1..head, no gap, no repeat.
      expect(items.map((p) => Number(p.seq))).toEqual(Array.from({ length: head }, (_, i) => i + 1));
      // Nothing but what the clients sent.
      for (const p of items) expect(sentObjects.has(p.object_id), `seq ${p.seq} was never sent`).toBe(true);
      // The chain from genesis, with the members' proof (admission recomputed, object ids from the bytes).
      const links: StoredPostLink[] = items.map((p) => ({
        seq: Number(p.proof.chain.seq),
        objectId: fromHex(p.proof.object_id, 32),
        admission: fromHex(p.proof.chain.admission, 32),
        chainHash: fromHex(p.proof.chain.chain_hash, 32),
        admittedRevision: Number(p.proof.chain.admitted_revision),
        admittedControlHash: fromHex(p.proof.chain.admitted_control_hash, 32),
        canonical: fromBase64url(p.proof.canonical, 'canonical'),
      }));
      expect(verifyPostChain(space.spaceId, links)).toMatchObject({ ok: true, count: head });

      // Every acknowledged post of this SPACE, in place.
      const bySeq = new Map(items.map((p) => [Number(p.seq), p]));
      for (const s of acknowledged.filter((a) => a.space === space)) {
        const a = s.answer!;
        verifyReceipt(a, signerKey);
        expect(a.object_id).toBe(s.objectId);
        const p = bySeq.get(Number(a.seq));
        expect(p, `acknowledged seq ${a.seq} of ${space.name} is missing`).toBeDefined();
        expect({ post_id: p.post_id, object_id: p.object_id, chain_hash: p.proof.chain.chain_hash }).toEqual({
          post_id: a.post_id,
          object_id: a.object_id,
          chain_hash: a.chain_hash,
        });
      }

      heads.set(space, { head, chainAt: (seq: number) => bySeq.get(seq)?.proof.chain.chain_hash });
    }
    expect(present).toBeGreaterThanOrEqual(acknowledged.length);
    expect(present).toBeLessThanOrEqual(sent.length);
    await second.kill('SIGTERM');

    // Checkpoints. The process's checkpointer signs a range once 1,024 positions are uncovered
    // or the oldest is ten minutes old, on a 60 s timer: too slow to wait for here. So the
    // relay is started once more on the same data, in this process with its clock eleven
    // minutes ahead, and its checkpointer runs once over everything restored after the kill.
    // Every checkpoint served must verify under the root key in capabilities, name the link
    // at its `last` as served above, and extend the one before it from position 1.
    const third = await startRelay({ dataDir: dir, clockOffsetMs: 11 * 60_000 });
    try {
      const run = await third.app.checkpointer.runOnce();
      expect(run.pending).toBe(0);
      let checkpoints = 0;
      for (const space of spaces) {
        const { head, chainAt } = heads.get(space)!;
        const served = await checkpointsOf(third.url, owner.token, space, 'posts');
        let kept: VerifiedCheckpoint | undefined;
        for (const c of served) {
          const v = verifyCheckpoint(c, rootKey);
          expect(v.fields.space_id).toBe(space.spaceId);
          expect(v.fields.stream).toBe('posts');
          expect(v.fields.ending_hash).toBe(chainAt(Number(v.fields.last)));
          if (kept !== undefined) checkExtends(kept, v);
          else expect(v.fields.first).toBe('1');
          kept = v;
          checkpoints++;
        }
        // Every position is covered.
        expect(kept === undefined ? 0 : Number(kept.fields.last)).toBe(head);

        // The governance log's checkpoints (SPACE creation, the writers' grants) likewise.
        let keptEvents: VerifiedCheckpoint | undefined;
        for (const c of await checkpointsOf(third.url, owner.token, space, 'events')) {
          const v = verifyCheckpoint(c, rootKey);
          expect({ space: v.fields.space_id, stream: v.fields.stream }).toEqual({ space: space.spaceId, stream: 'events' });
          if (keptEvents !== undefined) checkExtends(keptEvents, v);
          else expect(v.fields.first).toBe('1');
          keptEvents = v;
          checkpoints++;
        }
        expect(keptEvents).toBeDefined();
      }
      expect(checkpoints).toBeGreaterThanOrEqual(2 * spaces.length);
    } finally {
      await third.close();
    }
  }, 120_000);
});
