/**
 * Several real svc-relay processes on one PostgreSQL database, and the HTTP-only checks the
 * multi-process tests make of what they wrote.
 *
 * The processes share one data directory, so they sign with the same service key files (the
 * first process creates them; the others start once it listens and only read them), and each
 * listens on its own loopback port. Everything written goes through HTTP; everything checked
 * is read back over HTTP and verified with the shared/ verifiers alone.
 */
import { expect } from 'vitest';
import { fromBase64url, fromHex, toHex } from '../../shared/encoding.js';
import { verifyPostChain, type StoredPostLink } from '../../shared/chain.js';
import { verifyReceipt } from '../../shared/receipt.js';
import { signedPost } from './posts.js';
import { spawnRelay, type MintedToken, type SpawnedRelay } from './relay.js';

/** Rate limits off (30 writes a minute per KEY would stop each writer after its burst); the append path is the same. */
export const NO_LIMITS = { SVC_RELAY_NO_RATE_LIMITS: '1' };

export interface Space {
  name: string;
  spaceId: string;
}

/** A post a writer sent: what it signed, through which process, and the 201 answer if one came back. */
export interface Sent {
  space: Space;
  objectId: string;
  via: number;
  answer?: Record<string, any>;
}

/** One relay process on `databaseUrl` with its keys in `dataDir`. */
export async function spawnOnDatabase(databaseUrl: string, dataDir: string): Promise<SpawnedRelay> {
  return await spawnRelay(dataDir, { args: ['--database', databaseUrl], env: NO_LIMITS });
}

/**
 * `count` relay processes on one database: the first alone (it creates the service keys and
 * applies any migration), the rest together.
 */
export async function spawnProcesses(databaseUrl: string, dataDir: string, count: number): Promise<SpawnedRelay[]> {
  const first = await spawnOnDatabase(databaseUrl, dataDir);
  const rest = await Promise.allSettled(Array.from({ length: count - 1 }, async () => await spawnOnDatabase(databaseUrl, dataDir)));
  const started = [first, ...rest.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))];
  const failed = rest.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) {
    for (const r of started) await r.kill('SIGKILL');
    throw failed.reason;
  }
  return started;
}

/** Stop every process still running (SIGKILL: nothing is checked after this). */
export async function killAll(relays: readonly SpawnedRelay[]): Promise<void> {
  await Promise.all(relays.filter((r) => r.process.exitCode === null && r.process.signalCode === null).map(async (r) => await r.kill('SIGKILL')));
}

export async function send(url: string, method: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Create a private SPACE through `url` and make each of `writers` a member with role writer (each grant through the next process in turn). */
export async function setUpSpace(urls: readonly string[], owner: MintedToken, writers: readonly MintedToken[], name: string): Promise<Space> {
  const created = await send(`${urls[0]}/v1/spaces`, 'POST', owner.token, { name, title: 'Several processes' });
  if (created.status !== 201) throw new Error(`spaces.create: ${created.status} ${JSON.stringify(created.body)}`);
  await Promise.all(
    writers.map(async (w, i) => {
      const set = await send(`${urls[i % urls.length]}/v1/spaces/${name}/members/${w.peerId}`, 'PUT', owner.token, { role: 'writer' });
      if (set.status !== 201) throw new Error(`members.set: ${set.status} ${JSON.stringify(set.body)}`);
    }),
  );
  return { name, spaceId: created.body.space_id };
}

/** Append one signed post; the record of it (with the answer when 201), or undefined when the process is gone. */
export async function appendOne(url: string, via: number, me: MintedToken, space: Space, title: string, sent: Sent[]): Promise<Sent | undefined> {
  const s = signedPost(me, space, { kind: 'obs', title, body: `${title}: several relay processes, one database` });
  const record: Sent = { space, objectId: toHex(s.objectId), via };
  sent.push(record);
  let r: { status: number; body: any };
  try {
    r = await send(`${url}/v1/spaces/${space.name}/posts`, 'POST', me.token, s.submission);
  } catch {
    return undefined; // the process was killed with this request in flight: its outcome is unknown
  }
  if (r.status !== 201) throw new Error(`append through process ${via} refused: ${r.status} ${JSON.stringify(r.body)}`);
  record.answer = r.body;
  return record;
}

/**
 * One writer: signed appends one after the other through one process, into its SPACES in
 * turn, `count` of them or until `stop()` says so or the process goes away.
 */
export async function writer(
  url: string,
  via: number,
  me: MintedToken,
  index: number,
  spaces: readonly Space[],
  sent: Sent[],
  until: { count?: number; stop?: () => boolean },
): Promise<void> {
  for (let k = 0; k < (until.count ?? Infinity) && !(until.stop?.() ?? false); k++) {
    const space = spaces[(index + k) % spaces.length]!;
    if ((await appendOne(url, via, me, space, `writer ${index} post ${k}`, sent)) === undefined) return;
  }
}

/** Every post of a SPACE with its proof block, read by cursor pages over HTTP. */
export async function readAll(url: string, token: string, space: Space): Promise<{ head: number; items: any[] }> {
  const items: any[] = [];
  let after = '0';
  for (;;) {
    const r = await send(`${url}/v1/spaces/${space.name}/posts?after=${after}&limit=200&detail=full&proof=true`, 'GET', token);
    if (r.status !== 200) throw new Error(`posts.read: ${r.status} ${JSON.stringify(r.body)}`);
    items.push(...r.body.items);
    if (!r.body.has_more) return { head: Number(r.body.head_seq), items };
    after = r.body.next_after;
  }
}

/** The online signer key a process names in capabilities. */
export async function signerKeyOf(url: string, token: string): Promise<string> {
  const caps = await send(`${url}/v1/capabilities`, 'GET', token);
  if (caps.status !== 200) throw new Error(`capabilities: ${caps.status}`);
  return caps.body.protocol.service_keys[0].public_key as string;
}

/**
 * What `url` serves for `spaces` against what the writers sent: positions 1..head with no gap
 * or repeat, the chain verifying from genesis, every post one a writer sent, and every 201 in
 * place at its seq with its post id, object id and chain hash, its receipt verifying under the
 * service key. Answers the number of posts present.
 */
export async function expectEveryAcknowledgedPost(url: string, token: string, spaces: readonly Space[], sent: readonly Sent[]): Promise<number> {
  const signerKey = fromHex(await signerKeyOf(url, token), 32);
  const sentObjects = new Set(sent.map((s) => s.objectId));
  let present = 0;
  for (const space of spaces) {
    const { head, items } = await readAll(url, token, space);
    present += items.length;
    expect(items.map((p) => Number(p.seq)), `positions of ${space.name}`).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    for (const p of items) expect(sentObjects.has(p.object_id), `seq ${p.seq} of ${space.name} was never sent`).toBe(true);
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
    const bySeq = new Map(items.map((p) => [Number(p.seq), p]));
    for (const s of sent.filter((x) => x.space === space && x.answer !== undefined)) {
      const a = s.answer!;
      verifyReceipt(a, signerKey);
      expect(a.object_id).toBe(s.objectId);
      const p = bySeq.get(Number(a.seq));
      expect(p, `acknowledged seq ${a.seq} of ${space.name} (through process ${s.via}) is missing`).toBeDefined();
      expect({ post_id: p.post_id, object_id: p.object_id, chain_hash: p.proof.chain.chain_hash }).toEqual({
        post_id: a.post_id,
        object_id: a.object_id,
        chain_hash: a.chain_hash,
      });
    }
  }
  return present;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
