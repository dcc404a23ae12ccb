/**
 * The cases every append suite measures (bench/appends.ts on SQLite, bench/appends-postgres.ts
 * beside PostgreSQL, bench/appends-against.ts beside another revision): the in-process ceiling
 * (appendPost one call after another, no HTTP) and signed appends over HTTP from concurrent
 * clients, each case run in rounds of ROUND_MS after WARMUP_MS of warm-up, and the figures
 * read from them.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { appendPost } from '../relay/posts/append.js';
import { peerIdHexOf, type Signer } from '../shared/identity.js';
import { signPost } from '../shared/objects.js';
import { mintToken, type MintedToken } from '../test/helpers/relay.js';
import { collectGarbage, summarizeLatency } from './harness.js';
import { createSpaceInStore, expectCall, filler, openInProcess, randomSigner, registerKey } from './relay-fixture.js';

export const SPREAD = 64;
export const LAYOUTS = ['one SPACE', '64 SPACES'] as const;
export type Layout = (typeof LAYOUTS)[number];

export const ROUNDS = 5;
export const WARMUP_MS = 200;
export const ROUND_MS = 800;

export interface Space {
  name: string;
  spaceId: string;
}

/** The latency summary of times given in ms. */
export const latencyOf = (ms: readonly number[]) => summarizeLatency(ms.map((x) => x * 1e6));
/** The p99 of times given in ms, in ms. */
export const p99Of = (ms: readonly number[]): number => latencyOf(ms).p99 / 1e6;

/** The best round: the least disturbed by other work on a shared machine. */
export const best = (rounds: readonly number[]): number => Math.max(...rounds);

export interface CaseResult {
  opsPerSec: number[];
  latencyMs: number[];
  /** p99 of each round on its own (ms), to show how much rounds differ. */
  roundP99Ms?: number[];
  /** With a CPU reader: the relay's CPU time per append answered in each round's window (µs). */
  cpuPerAppendUs?: number[];
}

/** One signed post body for `space` by `signer`, as JSON text. */
export function signedBody(signer: Signer, author: string, space: Space, bytes: number, seq: number): string {
  const s = signPost({
    fields: {
      space_id: space.spaceId,
      author_id: author,
      kind: 'obs',
      title: `bench post ${seq}`,
      body: filler(bytes, seq),
      idempotency_key: randomUUID(),
    },
    signer,
  });
  return JSON.stringify(s.submission);
}

/** The k-th SPACE of client i among c clients. */
function spaceFor(layout: Layout, hot: Space, spread: readonly Space[], i: number, k: number, c: number): Space {
  return layout === 'one SPACE' ? hot : spread[(i + k * c) % SPREAD]!;
}

// ---------------------------------------------------------------------------------------------
// Ceiling: appendPost in this process, no HTTP.

export async function ceilingSetup(database?: string, signer: Signer = randomSigner()) {
  const r = await openInProcess(undefined, database);
  const author = await registerKey(r, signer);
  const ownerSigner = randomSigner();
  const owner = await registerKey(r, ownerSigner);
  const space = await createSpaceInStore(r, owner, `ceiling-${randomUUID().slice(0, 8)}`);
  await r.store.members.admit(space, { peer: author, role: 'writer', tags: [], broughtInBy: owner }, owner, Date.now());
  return { r, signer, author, space: { name: space.name, spaceId: space.spaceId } };
}

export async function runCeiling(c: Awaited<ReturnType<typeof ceilingSetup>>, bytes: number, expected: number): Promise<CaseResult> {
  // Sign ahead, outside the timing; parse as the HTTP layer would before the handler.
  const count = Math.ceil(expected * ((WARMUP_MS + ROUND_MS) / 1000) * 1.5) + 50;
  const bodies = Array.from({ length: count }, (_, k) => JSON.parse(signedBody(c.signer, c.author, c.space, bytes, k)) as unknown);
  let k = 0;
  const next = (): unknown => bodies[k++] ?? JSON.parse(signedBody(c.signer, c.author, c.space, bytes, k));
  collectGarbage();
  const warmEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmEnd) await appendPost(c.r.ctx, c.space.name, c.author, next());
  const latencyMs: number[] = [];
  const start = performance.now();
  const end = start + ROUND_MS;
  let now = start;
  while (now < end) {
    const t0 = now;
    await appendPost(c.r.ctx, c.space.name, c.author, next());
    now = performance.now();
    latencyMs.push(now - t0);
  }
  return { opsPerSec: [(latencyMs.length * 1000) / (now - start)], latencyMs };
}

// ---------------------------------------------------------------------------------------------
// HTTP cases against the relay process.

/** A client's KEY: the bearer it sends and the signer of its posts. */
export interface Writer {
  token: Pick<MintedToken, 'token' | 'signer'>;
  author: string;
}

export async function runHttp(
  urls: readonly string[],
  writers: readonly Writer[],
  layout: Layout,
  hot: Space,
  spread: readonly Space[],
  bytes: number,
  clients: number,
  expected: number,
  /** The relay process's CPU time so far (ns), read when the measured window opens and closes. */
  relayCpuNs?: () => number,
): Promise<CaseResult> {
  // Each client's posts, signed before the case starts.
  const perClient = Math.ceil((expected * ((WARMUP_MS + ROUND_MS) / 1000) * 1.5) / clients) + 20;
  const queues = Array.from({ length: clients }, (_, i) => {
    const w = writers[i]!;
    return Array.from({ length: perClient }, (_, k) =>
      Buffer.from(signedBody(w.token.signer, w.author, spaceFor(layout, hot, spread, i, k, clients), bytes, k)),
    );
  });
  // Pre-signed bodies as Buffers, outside the JavaScript heap, and a collection before the clock
  // starts. Any collection in this process stops all the clients at once: measured, one to five
  // per case of 5-22 ms (the collector's threads wait for cores the relay keeps busy), enough to
  // make the p99 of a 16-client case. `npm run bench` also gives this process a 64 MiB young
  // generation, so a case of one second allocates into it without a collection at all.
  collectGarbage();
  const latencyMs: number[] = [];
  const started = performance.now();
  const measureFrom = started + WARMUP_MS;
  const end = measureFrom + ROUND_MS;
  let done = 0;
  // The relay's CPU over the window, divided by the appends answered in it (whenever they began):
  // in a steady stream the work inside the window is the work of the answers inside it.
  const window = { cpu0: 0, cpu1: 0, t0: Number.POSITIVE_INFINITY, t1: Number.POSITIVE_INFINITY, answered: 0 };
  const open = (): void => {
    window.cpu0 = relayCpuNs!();
    window.t0 = performance.now();
  };
  const close = (): void => {
    if (window.t1 !== Number.POSITIVE_INFINITY || window.t0 === Number.POSITIVE_INFINITY) return;
    window.cpu1 = relayCpuNs!();
    window.t1 = performance.now();
  };
  const timers = relayCpuNs === undefined ? [] : [setTimeout(open, measureFrom - performance.now()), setTimeout(close, end - performance.now())];
  // undici's Pool, one keep-alive connection per client: of the HTTP clients at hand the one that
  // costs the least CPU per request (measured, 1 KiB, 16 clients: ~85 µs, node:http ~115 µs,
  // global fetch ~300 µs), which matters because the clients share the machine with the relay.
  // With several relay processes client i talks to process i mod n, each over its own pool.
  const pools = urls.map((url, r) => new Pool(url, { connections: Math.max(1, Math.ceil((clients - r) / urls.length)), pipelining: 1 }));
  const worker = async (i: number): Promise<void> => {
    const w = writers[i]!;
    const pool = pools[i % pools.length]!;
    const headers = { authorization: `Bearer ${w.token.token}`, 'content-type': 'application/json' };
    for (let k = 0; ; k++) {
      const t0 = performance.now();
      if (t0 >= end) return;
      const space = spaceFor(layout, hot, spread, i, k, clients);
      const body = queues[i]![k] ?? Buffer.from(signedBody(w.token.signer, w.author, space, bytes, k));
      const res = await pool.request({ path: `/v1/spaces/${space.name}/posts`, method: 'POST', headers, body });
      const text = await res.body.text();
      const t1 = performance.now();
      if (res.statusCode !== 201) throw new Error(`append refused: ${res.statusCode} ${text}`);
      if (t1 >= window.t0 && t1 <= window.t1) window.answered++;
      if (t0 >= measureFrom && t1 <= end) {
        latencyMs.push(t1 - t0);
        done++;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, async (_, i) => await worker(i)));
  } finally {
    for (const t of timers) clearTimeout(t);
    // A busy machine can hold the closing timer past the last answer: the window closes now,
    // the relay having had nothing more to do since.
    if (relayCpuNs !== undefined) close();
    await Promise.all(pools.map(async (p) => await p.close()));
  }
  const result: CaseResult = { opsPerSec: [(done * 1000) / ROUND_MS], latencyMs };
  if (relayCpuNs !== undefined && window.answered > 0 && window.t1 !== Number.POSITIVE_INFINITY) {
    result.cpuPerAppendUs = [(window.cpu1 - window.cpu0) / 1000 / window.answered];
  }
  return result;
}

/** KEYS, one per client (as many as the most `clients`); a hot SPACE and SPREAD more, members over HTTP. */
export async function setUpWriters(url: string, clients: readonly number[]): Promise<{ writers: Writer[]; hot: Space; spread: Space[] }> {
  const tokens = await Promise.all(Array.from({ length: Math.max(...clients) }, async () => await mintToken(url)));
  const writers: Writer[] = tokens.map((t) => ({ token: t, author: peerIdHexOf(t.signer.publicKey) }));
  const owner = await mintToken(url);
  const tag = randomUUID().slice(0, 6);
  const create = async (name: string): Promise<Space> => {
    const b = await expectCall(201, `${url}/v1/spaces`, 'POST', owner.token, { name, title: 'bench' });
    return { name, spaceId: b.space_id };
  };
  const admit = async (space: Space, w: Writer) =>
    await expectCall(201, `${url}/v1/spaces/${space.name}/members/${w.author}`, 'PUT', owner.token, { role: 'writer' });
  const hot = await create(`bench-hot-${tag}`);
  for (const w of writers) await admit(hot, w);
  const spread: Space[] = [];
  for (let s = 0; s < SPREAD; s++) spread.push(await create(`bench-s${s}-${tag}`));
  // Client i of c writes into SPACES s ≡ i (mod c): admit each writer where some c needs it.
  for (let s = 0; s < SPREAD; s++) {
    for (let w = 0; w < writers.length; w++) {
      if (clients.some((c) => w < c && s % c === w % c)) await admit(spread[s]!, writers[w]!);
    }
  }
  return { writers, hot, spread };
}
