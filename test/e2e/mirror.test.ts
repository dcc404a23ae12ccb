/**
 * Mirrors end to end: two real relays on loopback (the origin, and a mirror that accepts it with
 * --mirror-from), the real `svc-bridge mirror` command, and readers checking what the mirror
 * serves with the protocol's own verifiers under the origin's root.
 *
 * @module-tag slow
 */
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patiently } from '../../bridge/commands/mirror.js';
import { RelayRefusal } from '../../tools/errors.js';
import { openKeyDirectory, chooseKey } from '../../bridge/keys/keys.js';
import { checkPostProof } from '../../shared/post-proof.js';
import { verifyCheckpointInclusion } from '../../shared/checkpoint.js';
import { fromHex } from '../../shared/encoding.js';
import { runBridge, tempHome } from '../helpers/bridge.js';
import { signedPost } from '../helpers/posts.js';
import { grant } from '../helpers/invites.js';
import { call, startRelay, tempDataDir, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { createSpace, freshName } from '../helpers/spaces.js';
import { onPostgres, ON_POSTGRES_SKIP } from '../helpers/test-store.js';
import { stablePort } from '../helpers/ports.js';

const PATH_ENV = { PATH: process.env.PATH ?? '' };

interface Owner {
  home: string;
  peerId: string;
  originToken: string;
  mirrorToken: string;
}

async function bridgeToken(relay: RunningRelay, home: string): Promise<string> {
  const r = await runBridge(['token'], { relayUrl: relay.url, home });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

async function owner(origin: RunningRelay, mirror: RunningRelay): Promise<Owner> {
  const home = tempHome();
  const id = await runBridge(['id'], { relayUrl: origin.url, home });
  return { home, peerId: id.stdout.trim(), originToken: await bridgeToken(origin, home), mirrorToken: await bridgeToken(mirror, home) };
}

function mirrorRun(o: Owner, origin: RunningRelay, mirror: RunningRelay, name: string, extra: string[] = []) {
  return runBridge(['mirror', name, '--to', mirror.url, ...extra], { relayUrl: origin.url, home: o.home, env: PATH_ENV });
}

async function append(relay: RunningRelay, token: string, name: string, body: string): Promise<void> {
  relay.clock.advance(2_100);
  const r = await call(relay, 'POST', `/v1/spaces/${name}/posts`, { token, body: { kind: 'progress', body } });
  expect(r.status, r.text).toBe(201);
}

async function checkpointNow(relay: RunningRelay): Promise<void> {
  relay.clock.advance(11 * 60_000);
  await (relay.app as any).checkpointer.runOnce(relay.clock.now());
}

/** Wait until the closed relay's write-ahead log is folded into its database file (its checkpoint thread ends after close). */
async function settled(dataDir: string): Promise<void> {
  for (let i = 0; i < 100 && ['-wal', '-shm'].some((side) => existsSync(join(dataDir, `relay.sqlite${side}`))); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A relay started again on the same port: this process's HTTP pool may still hold a socket to
 * the closed one, which fails its first request; one such failure is let go here.
 */
async function reachable(relay: RunningRelay): Promise<RunningRelay> {
  for (let i = 0; i < 3; i++) {
    try {
      await call(relay, 'GET', '/healthz');
      return relay;
    } catch {
      // the stale socket is dropped from the pool; the next request opens a new one
    }
  }
  return relay;
}

/** Item lines of an export (trailer dropped). */
function exportLines(text: string): string[] {
  return text.trimEnd().split('\n').slice(0, -1);
}

async function originExport(origin: RunningRelay, token: string, name: string, after = 0): Promise<string[]> {
  const r = await call(origin, 'GET', `/v1/spaces/${name}/posts?after=${after}`, { token, headers: { accept: 'application/x-ndjson' } });
  expect(r.status, r.text).toBe(200);
  return exportLines(r.text);
}

async function status(mirror: RunningRelay, spaceId: string, token?: string) {
  const r = await call(mirror, 'GET', `/v1/mirrors/${spaceId}`, { token });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

describe('svc-bridge mirror between two relays', () => {
  let origin: RunningRelay;
  let mirror: RunningRelay;
  let o: Owner;
  let name: string;
  let spaceId: string;

  beforeAll(async () => {
    origin = await startRelay({ publicSpaceKeyAgeSeconds: 0, rateLimits: false });
    mirror = await startRelay({ rateLimits: false, config: { mirrorOrigins: [origin.url] } });
    o = await owner(origin, mirror);
    name = freshName('mirrored');
    spaceId = (await createSpace(origin, o.originToken, { name, visibility: 'public', categories: ['general'] })).space_id;
    // One signed post carrying members-only data, two unsigned ones, then a checkpoint over them.
    const key = chooseKey(openKeyDirectory(o.home), undefined);
    const signed = signedPost({ peerId: key.peerId, signer: key.signer }, { spaceId }, { kind: 'decision', body: 'signed words' }, { data: { x_why: 'members only' } });
    const sent = await call(origin, 'POST', `/v1/spaces/${name}/posts`, { token: o.originToken, body: signed.submission });
    expect(sent.status, sent.text).toBe(201);
    await append(origin, o.originToken, name, 'second');
    await append(origin, o.originToken, name, 'third');
    await checkpointNow(origin);
  }, 60_000);

  afterAll(async () => {
    await origin?.close();
    await mirror?.close();
  });

  it('copies the posts and checkpoints, and a second run sends only what is new', async () => {
    const first = await mirrorRun(o, origin, mirror, name);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('sent 3 lines and 1 checkpoints');
    expect(first.stdout).toContain("the mirror's proof of seq 3 verifies under the origin's root");

    const s = await status(mirror, spaceId);
    expect(s).toMatchObject({ name, origin: origin.url, head_seq: '3', checkpoints: 1, service_root_key: origin.serviceKeys.rootKey, owner: o.peerId });

    await append(origin, o.originToken, name, 'fourth');
    await append(origin, o.originToken, name, 'fifth');
    await checkpointNow(origin);
    const second = await mirrorRun(o, origin, mirror, name);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('sent 2 lines and 1 checkpoints');
    const third = await mirrorRun(o, origin, mirror, name);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stdout).toContain('sent 0 lines and 0 checkpoints');

    // The owner's export from the mirror is the origin's, line for line.
    const fromMirror = await call(mirror, 'GET', `/v1/mirrors/${spaceId}/posts`, { token: o.mirrorToken, headers: { accept: 'application/x-ndjson' } });
    expect(exportLines(fromMirror.text)).toEqual(await originExport(origin, o.originToken, name));
    const check = await mirrorRun(o, origin, mirror, name, ['--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('agrees');
  }, 120_000);

  it('serves anyone the public SPACE to verify under the origin root, without members-only fields', async () => {
    const page = await call(mirror, 'GET', `/v1/mirrors/${spaceId}/posts`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.items.length).toBeGreaterThanOrEqual(3);
    for (const post of page.body.items) expect(checkPostProof(post).ok, JSON.stringify(post)).toBe(true);
    const signed = page.body.items[0];
    expect(signed.signed).toBe(true);
    expect(signed.data).toBeUndefined();
    expect(signed.proof.private).toBeUndefined();
    expect(signed.proof.chain.admitted_revision).toBeUndefined();

    const root = fromHex(origin.serviceKeys.rootKey, 32);
    for (const seq of [1, 2, 3]) {
      const proof = await call(mirror, 'GET', `/v1/mirrors/${spaceId}/posts/${seq}/proof`);
      expect(proof.status, proof.text).toBe(200);
      expect(checkPostProof(proof.body.post).ok).toBe(true);
      const verified = verifyCheckpointInclusion(
        { spaceId, stream: 'posts', position: BigInt(seq), id: fromHex(proof.body.post.object_id, 32), chainHash: fromHex(proof.body.post.proof.chain.chain_hash, 32) },
        { leaf: proof.body.leaf, checkpoint: proof.body.checkpoint, inclusion: proof.body.inclusion },
        root,
      );
      // The same checkpoint the origin serves for that post.
      const there = await call(origin, 'GET', `/v1/spaces/${name}/posts/${seq}/proof`);
      expect(there.body.checkpoint.checkpoint_id).toBe(proof.body.checkpoint.checkpoint_id);
      expect(verified.fields.last).toBe('3');
    }
    const checkpoints = await call(mirror, 'GET', `/v1/mirrors/${spaceId}/checkpoints`);
    const originCheckpoints = await call(origin, 'GET', `/v1/spaces/${name}/checkpoints`);
    expect(checkpoints.body.items).toEqual(originCheckpoints.body.items);
  });

  it('refuses writes to the mirror and syncs by any KEY but the owner', async () => {
    const append = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/posts`, { token: o.mirrorToken, body: { kind: 'progress', body: 'x' } });
    expect(append.status).toBe(409);
    expect(append.body.error.code).toBe('SPACE_CLOSED');
    expect(append.body.error.detail).toContain(origin.url);

    const stranger = await bridgeToken(mirror, tempHome());
    const sync = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/sync`, { token: stranger, body: { lines: [], checkpoints: [] } });
    expect(sync.status).toBe(403);
    expect(sync.body.error.code).toBe('CONTROL_DENIED');
    const create = await call(mirror, 'POST', '/v1/mirrors', { token: stranger, body: { origin: origin.url, name } });
    expect(create.body.error.code).toBe('CONTROL_DENIED');
    // The relay reads only from the origins its operator listed.
    const elsewhere = await call(mirror, 'POST', '/v1/mirrors', { token: o.mirrorToken, body: { origin: 'http://127.0.0.1:9', name } });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.detail).toContain(`mirrors only from ${origin.url}`);
  });

  it('refuses a tampered line or checkpoint and stores nothing of the sync', async () => {
    await append(origin, o.originToken, name, 'sixth, as the origin wrote it');
    await checkpointNow(origin);
    const before = await status(mirror, spaceId);
    const head = Number(before.head_seq);
    const [line] = await originExport(origin, o.originToken, name, head);
    const checkpoints = (await call(origin, 'GET', `/v1/spaces/${name}/checkpoints?after=${before.last_checkpoint.last}`)).body.items;
    expect(checkpoints).toHaveLength(1);

    const tampered = line!.replace('sixth, as the origin wrote it', 'sixth, as someone else wrote it');
    const r1 = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/sync`, { token: o.mirrorToken, body: { lines: [tampered], checkpoints } });
    expect(r1.status, r1.text).toBe(400);
    expect(r1.body.error.code).toBe('INVALID_REQUEST');
    expect(r1.body.error.detail).toContain(`seq ${head + 1}`);

    const badCheckpoint = { ...checkpoints[0], signature: checkpoints[0].signature.replace(/^./, (c: string) => (c === '0' ? '1' : '0')) };
    const r2 = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/sync`, { token: o.mirrorToken, body: { lines: [line], checkpoints: [badCheckpoint] } });
    expect(r2.status, r2.text).toBe(400);
    expect(r2.body.error.detail).toContain('signature');

    const after = await status(mirror, spaceId);
    expect(after.head_seq).toBe(before.head_seq);
    expect(after.checkpoints).toBe(before.checkpoints);
    // The untampered data is then taken.
    const ok = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/sync`, { token: o.mirrorToken, body: { lines: [line], checkpoints } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.stored).toEqual({ lines: 1, checkpoints: 1 });
  });

  it("follows the origin's owner: after a hand-over the new owner syncs the mirror and the previous one is refused", async () => {
    const successor = await owner(origin, mirror);
    await grant(origin, { token: o.originToken } as MintedToken, name, successor.peerId, 'reader');
    const offer = await call(origin, 'POST', `/v1/spaces/${name}/hand-over`, { token: o.originToken, body: { to: successor.peerId } });
    expect(offer.status, offer.text).toBe(201);
    const accepted = await call(origin, 'POST', `/v1/hand-overs/${offer.body.offer_id}/accept`, { token: successor.originToken });
    expect(accepted.status, accepted.text).toBe(200);
    await append(origin, successor.originToken, name, 'the new owner writes');

    const run = await mirrorRun(successor, origin, mirror, name);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('sent 1 lines and 0 checkpoints');
    expect((await status(mirror, spaceId)).owner).toBe(successor.peerId);
    await append(origin, successor.originToken, name, 'and again');
    const previous = await mirrorRun(o, origin, mirror, name);
    expect(previous.code).toBe(1);
    expect(previous.stderr).toContain('CONTROL_DENIED');

    // Any reader of a public SPACE compares the mirror with the origin itself; nothing is sent.
    const reader = await owner(origin, mirror);
    const check = await mirrorRun(reader, origin, mirror, name, ['--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`agrees with ${origin.url}: mirror head 7, origin head 8 (1 newer at the origin, not mirrored yet)`);
  }, 60_000);
});

// The origin's data directory is copied to make it show another history: a SQLite file. On the
// PostgreSQL test store (SVC_TEST_STORE=postgres) no such copy of an open database is made.
describe.skipIf(onPostgres)(`a mirror whose origin shows another history${ON_POSTGRES_SKIP}`, () => {
  it('is reported loudly by svc-bridge mirror (exit 3, SPACE, position, both hashes) and the mirror keeps its copy', async () => {
    const dirA = tempDataDir();
    const dirFork = tempDataDir();
    // Started again at the same address twice: a port no other relay of the run takes meanwhile (test/helpers/ports.ts).
    const port = await stablePort();
    let origin = await startRelay({ dataDir: dirA, port, publicSpaceKeyAgeSeconds: 0, rateLimits: false });
    const mirror = await startRelay({ rateLimits: false, config: { mirrorOrigins: [origin.url] } });
    try {
      const o = await owner(origin, mirror);
      const name = freshName('forked');
      const spaceId = (await createSpace(origin, o.originToken, { name })).space_id;
      for (const b of ['one', 'two', 'three']) await append(origin, o.originToken, name, b);
      await checkpointNow(origin);
      const first = await mirrorRun(o, origin, mirror, name);
      expect(first.code, first.stderr).toBe(0);
      // A private SPACE's mirror is read by its owner only.
      const anonymous = await call(mirror, 'GET', `/v1/mirrors/${spaceId}/posts`);
      expect(anonymous.status).toBe(403);
      expect(anonymous.body.error.code).toBe('READ_DENIED');
      expect((await call(mirror, 'GET', `/v1/mirrors/${spaceId}/posts`, { token: o.mirrorToken })).body.items).toHaveLength(3);

      // The origin's data as it stood then is copied aside; the origin goes on with history A.
      await origin.close();
      await settled(dirA);
      cpSync(dirA, dirFork, { recursive: true });
      origin = await reachable(await startRelay({ dataDir: dirA, port, publicSpaceKeyAgeSeconds: 0, rateLimits: false }));
      for (const b of ['four (A)', 'five (A)']) await append(origin, o.originToken, name, b);
      await checkpointNow(origin);
      const second = await mirrorRun(o, origin, mirror, name);
      expect(second.code, second.stderr).toBe(0);
      const kept = await status(mirror, spaceId, o.mirrorToken);
      expect(kept.head_seq).toBe('5');

      // The same address now serves the copy, which goes on with history B: validly signed, different.
      await origin.close();
      origin = await reachable(await startRelay({ dataDir: dirFork, port, publicSpaceKeyAgeSeconds: 0, rateLimits: false }));
      const behind = await mirrorRun(o, origin, mirror, name);
      expect(behind.code).toBe(3);
      expect(behind.stderr).toContain(`MIRROR DIFFERS FROM ITS ORIGIN: SPACE ${name} seq 5: the origin has no such position (CURSOR_AHEAD`);
      expect(behind.stderr).toContain(`the mirror holds chain_hash ${kept.head_chain_hash} there`);
      for (const b of ['four (B)', 'five (B)', 'six (B)']) await append(origin, o.originToken, name, b);
      await checkpointNow(origin);
      const forked = await originExport(origin, o.originToken, name);
      const originHash5 = JSON.parse(forked[4]!).proof.chain.chain_hash as string;

      const third = await mirrorRun(o, origin, mirror, name);
      expect(third.code).toBe(3);
      expect(third.stderr).toContain('MIRROR DIFFERS FROM ITS ORIGIN');
      expect(third.stderr).toContain(`SPACE ${name} seq 5: origin chain_hash ${originHash5}, mirror chain_hash ${kept.head_chain_hash}`);
      expect(third.stderr).toContain(`SPACE ${name} checkpoint`);

      // Pushed anyway, the other history is refused and the mirror keeps its copy.
      const checkpoints = (await call(origin, 'GET', `/v1/spaces/${name}/checkpoints`, { token: o.originToken })).body.items;
      const push = await call(mirror, 'POST', `/v1/mirrors/${spaceId}/sync`, { token: o.mirrorToken, body: { lines: forked.slice(3), checkpoints } });
      expect(push.status, push.text).toBe(409);
      expect(push.body.error.code).toBe('HISTORY_ROLLBACK');
      expect(push.body.error.detail).toContain('seq 4');
      const after = await status(mirror, spaceId, o.mirrorToken);
      expect(after).toMatchObject({ head_seq: '5', head_chain_hash: kept.head_chain_hash, checkpoints: kept.checkpoints });
    } finally {
      await origin.close();
      await mirror.close();
      rmSync(dirA, { recursive: true, force: true });
      rmSync(dirFork, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('svc-bridge mirror on the command line', () => {
  it('explains itself with --help, and a missing --to is a usage error (exit 2) that shows the help', async () => {
    const home = tempHome();
    const help = await runBridge(['mirror', '--help'], { home });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc-bridge mirror SPACE --to URL');
    expect(help.stdout).toContain('3 THE MIRROR AND THE ORIGIN DIFFER');
    expect((await runBridge(['help', 'mirror'], { home })).stdout).toBe(help.stdout);
    const usage = await runBridge(['mirror', 'findings'], { home });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--to URL: the relay that keeps the mirror');
    const plain = await runBridge(['mirror', 'findings', '--to', 'http://mirror.example.net'], { home });
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('--to: the address http://mirror.example.net is plain http');
  }, 60_000);
});

describe('a push the mirror cannot take right now', () => {
  const refusal = (code: string, retryAfter: number) => new RelayRefusal(code === 'BUSY' ? 503 : 429, { code, message: code, fix: 'wait', retryAfter });
  const ctx = { log: () => {} } as unknown as Parameters<typeof patiently>[0];

  it('is sent again after Retry-After when rate limited or busy, and given up after a few tries', async () => {
    let calls = 0;
    const sent = await patiently(ctx, async () => {
      calls++;
      if (calls === 1) throw refusal('RATE_LIMITED', 0);
      if (calls === 2) throw refusal('BUSY', 0);
      return 'stored';
    });
    expect(sent).toBe('stored');
    expect(calls).toBe(3);
    let tries = 0;
    await expect(patiently(ctx, async () => { tries++; throw refusal('RATE_LIMITED', 0); })).rejects.toThrow('RATE_LIMITED');
    expect(tries).toBe(5);
  });

  it('is not sent again when refused for what it holds, or when the wait asked is long', async () => {
    let tries = 0;
    await expect(patiently(ctx, async () => { tries++; throw new RelayRefusal(409, { code: 'HISTORY_ROLLBACK', message: 'x', fix: 'y' }); })).rejects.toThrow();
    await expect(patiently(ctx, async () => { tries++; throw refusal('RATE_LIMITED', 3600); })).rejects.toThrow();
    expect(tries).toBe(2);
  });
});
