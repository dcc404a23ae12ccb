/**
 * The in-process append's CPU time, in a process of its own started as the relay process is
 * (`node --import tsx`, Node's default heap settings), so its figure and the relay's are
 * measured alike: `npm run bench` gives its own process a larger young generation, which would
 * flatter this side. Run by bench/appends-cpu.ts; prints one JSON line on stdout:
 *
 *   {"alone": [µs per append, per round], "grouped": [...], "appendsPerSec": {...}}
 *
 * alone:   relay/posts/append.ts `appendPost`, one call after another, each its own
 *          transaction and COMMIT (synchronous=FULL in WAL) — the in-process append the relay
 *          figure is held to: signature check, chain link, receipt, commit.
 * grouped: `appendPostGrouped` from GROUPED_CALLERS callers at once, through the same commit
 *          queue as the HTTP route, so the appends that arrive together share a COMMIT as they
 *          do over HTTP with as many clients.
 * paused:  `appendPost` as alone, with the process idle for PAUSE_MS between appends and woken by
 *          its event loop (a timer), as a relay serving one client waits between its requests
 *          and is woken by the next one's socket: what that adds to an append's CPU time on this
 *          machine, which `alone` never pays (measured apart: idling alone, in Atomics.wait with no
 *          turn of the event loop, adds about half of it; the turn that wakes it, the rest).
 *
 * CPU time is process.cpuUsage() (every thread of this process) over each round, bodies signed
 * and parsed before the round starts.
 *
 * Rounds are run when asked, so that bench/appends-cpu.ts can take each just before the relay's
 * round of the same number, and a machine whose speed drifts over the minute of the bench (a
 * shared host does) moves both sides of a ratio alike. After its warm-up the process writes its
 * ready line (below) on stdout; then each line `round` on stdin runs one round and is answered
 * with one JSON line:
 *
 *   {"alone": µs per append, "grouped": ..., "paused": ..., "appendsPerSec": {"alone": ..., "grouped": ...}}
 *
 * It ends when stdin closes.
 *
 * The floor: the process also serves the same append over HTTP with Node's own server
 * (node:http) and nothing else, no Fastify, authentication, validation, log or limits:
 * `POST /v1/spaces/<its SPACE>/posts` with a signed body, parsed, `appendPostGrouped`, answered
 * 201 with the receipt as the relay answers it. Its CPU per append over HTTP against its own
 * in-process rounds is what serving an append over HTTP costs in Node on this machine before
 * any of the relay's own work; bench/appends-cpu.ts prints it beside the relay's figure. The
 * ready line says where it listens and how to sign for it:
 *
 *   {"ready":true,"floor":{"url":...,"seed":<hex>,"author":...,"space":{"name":...,"spaceId":...}}}
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { appendAnswer } from '../relay/posts/answer.js';
import { appendPost, appendPostGrouped } from '../relay/posts/append.js';
import { signerFromSeed } from '../shared/identity.js';
import { ceilingSetup, signedBody } from './appends-cases.js';
import { warmUp } from './process-cpu.js';

const BYTES = 1024;
const ROUND_APPENDS = Number(process.env.SVC_BENCH_ROUND_APPENDS ?? 1500);
/** Appends per slice of the warm-up (about half a second each on a 2-core machine), and of the paused kind. */
const WARM_SLICE_APPENDS = 400;
const WARM_SLICE_PAUSED = 100;
export const GROUPED_CALLERS = 16;
const PAUSE_MS = 1;
const PAUSED_APPENDS = 400;

type Ceiling = Awaited<ReturnType<typeof ceilingSetup>>;

let serial = 0;
function bodies(c: Ceiling, n: number): unknown[] {
  return Array.from({ length: n }, () => JSON.parse(signedBody(c.signer, c.author, c.space, BYTES, serial++)) as unknown);
}

function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

async function alone(c: Ceiling, list: unknown[]): Promise<void> {
  for (const b of list) await appendPost(c.r.ctx, c.space.name, c.author, b);
}

async function paused(c: Ceiling, list: unknown[]): Promise<void> {
  for (const b of list) {
    await appendPost(c.r.ctx, c.space.name, c.author, b);
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
}

async function grouped(c: Ceiling, list: unknown[]): Promise<void> {
  let next = 0;
  const caller = async (): Promise<void> => {
    while (next < list.length) await appendPostGrouped(c.r.ctx, c.space.name, c.author, list[next++]);
  };
  await Promise.all(Array.from({ length: GROUPED_CALLERS }, caller));
}

async function measure(c: Ceiling, run: (c: Ceiling, list: unknown[]) => Promise<void>, n = ROUND_APPENDS): Promise<{ us: number; perSec: number }> {
  const list = bodies(c, n);
  const cpu0 = cpuNs();
  const t0 = performance.now();
  await run(c, list);
  const t1 = performance.now();
  const cpu1 = cpuNs();
  return { us: (cpu1 - cpu0) / 1000 / list.length, perSec: (list.length * 1000) / (t1 - t0) };
}

/** One round of each kind, as the JSON line that answers `round`. */
async function round(c: Ceiling): Promise<string> {
  const a = await measure(c, alone);
  const g = await measure(c, grouped);
  const p = await measure(c, paused, PAUSED_APPENDS);
  return JSON.stringify({ alone: a.us, grouped: g.us, paused: p.us, appendsPerSec: { alone: a.perSec, grouped: g.perSec } });
}

/** The floor (see the file comment): the append behind node:http alone, on loopback. */
async function serveFloor(c: Ceiling): Promise<Server> {
  const path = `/v1/spaces/${c.space.name}/posts`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = async (): Promise<[number, unknown]> => {
        if (req.method !== 'POST' || req.url !== path) return [404, { error: `only POST ${path}` }];
        const outcome = await appendPostGrouped(c.r.ctx, c.space.name, c.author, JSON.parse(Buffer.concat(chunks).toString('utf8')));
        return [201, appendAnswer(outcome.space, outcome.post, outcome.replayed, 'short', outcome.oracle)];
      };
      void answer()
        .catch((e: unknown): [number, unknown] => [400, { error: String(e) }])
        .then(([status, body]) => {
          const text = JSON.stringify(body);
          res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

async function main(): Promise<void> {
  const seed = new Uint8Array(randomBytes(32));
  const c = await ceilingSetup(undefined, signerFromSeed(seed));
  const floor = await serveFloor(c);
  try {
    // Warmed up as the relay is (bench/appends-cpu.ts), so V8 has optimised what the appends
    // run: both sides measured in the steady state a long-running process is in.
    const slices = [
      { run: alone, appends: WARM_SLICE_APPENDS },
      { run: grouped, appends: WARM_SLICE_APPENDS },
      { run: paused, appends: WARM_SLICE_PAUSED },
    ];
    await warmUp(slices.length, async (i) => await slices[i]!.run(c, bodies(c, slices[i]!.appends)));
    const url = `http://127.0.0.1:${(floor.address() as AddressInfo).port}`;
    const ready = { ready: true, floor: { url, seed: Buffer.from(seed).toString('hex'), author: c.author, space: c.space } };
    process.stdout.write(`${JSON.stringify(ready)}\n`);
    for await (const line of createInterface({ input: process.stdin })) {
      if (line.trim() !== 'round') throw new Error(`appends-inprocess: expected "round" on stdin, read ${JSON.stringify(line)}`);
      process.stdout.write(`${await round(c)}\n`);
    }
  } finally {
    floor.closeAllConnections();
    await new Promise((resolve) => floor.close(resolve));
    await c.r.close();
  }
}

await main();
