/**
 * `npm run soak [-- --minutes 30 --rate 200 --clients 8]`: a real relay process (rate limits
 * off, as in the benchmarks) under mixed traffic from the benchmark clients for a while, sampled
 * every minute: the relay's resident memory (/proc/<pid>/status), its V8 heap after a full
 * collection (bench/soak-probe.mjs, loaded into it), its open file descriptors
 * (/proc/<pid>/fd) and the clients' p50 and p99 latency over that minute. Prints the table at
 * the end (progress on a terminal only) and exits 1 when memory or descriptors keep growing
 * after minute 5 (bench/soak-stats.ts says how that is judged) or when an answer was wrong.
 *
 * The traffic, paced to `--rate` requests a second over `--clients` KEYS, each with its own
 * SPACE: appends (a third), recent reads, reads of one post, SEEK, the mailbox, the SPACE
 * profile, capabilities, and one in twenty a long poll of a second at the head (sent aside and
 * left out of the latency, which it would only measure as its wait; at most two per KEY at once,
 * as the relay holds no more). Wrong answers are printed by kind. Not part of the
 * test suite: it takes as long as it is asked to.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mintToken } from '../test/helpers/relay.js';
import { call, spawnBenchRelay, tempDataDir } from './relay-fixture.js';
import { DEFAULT_LIMITS, formatSamples, growthVerdict, type Sample } from './soak-stats.js';
import { percentile } from './harness.js';

interface Options {
  minutes: number;
  rate: number;
  clients: number;
  sampleSeconds: number;
}

function options(argv: readonly string[]): Options {
  const opts: Options = { minutes: 30, rate: 200, clients: 8, sampleSeconds: 60 };
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.replace(/^--/, '').replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    if (!(name in opts)) throw new Error(`unknown option ${argv[i]}; options: --minutes, --rate, --clients, --sample-seconds`);
    const value = Number(argv[++i]);
    if (!(value > 0)) throw new Error(`${argv[i - 1]} takes a positive number`);
    (opts as unknown as Record<string, number>)[name] = value;
  }
  return opts;
}

interface Client {
  token: string;
  space: string;
  posts: string[];
  /** Long polls of this KEY still waiting: the relay holds 2 per KEY and answers a third BUSY. */
  polls: number;
}

/** The wrong answers seen, by operation, status and code, with their count (printed at the end). */
const wrongAnswers = new Map<string, number>();

/** Whether `r` has the `expected` status; a wrong answer is counted by what it was. */
function expectStatus(what: string, r: { status: number; body: any }, expected: number): boolean {
  if (r.status === expected) return true;
  const key = `${what}: ${r.status} ${r.body?.error?.code ?? ''} ${String(r.body?.error?.detail ?? '').slice(0, 80)}`.trim();
  wrongAnswers.set(key, (wrongAnswers.get(key) ?? 0) + 1);
  return false;
}

/** Whether a request of the mix is the long poll (sent aside: its second of waiting is no latency). */
function isLongPoll(n: number): boolean {
  return n % 20 === 19;
}

/** One request of the mix; resolves to whether its answer was the expected one. */
async function oneRequest(url: string, c: Client, n: number): Promise<boolean> {
  const pick = n % 20;
  if (pick < 7) {
    const r = await call(`${url}/v1/spaces/${c.space}/posts`, 'POST', c.token, { kind: 'obs', title: `t${n}`, body: `soak post ${n} ${randomBytes(24).toString('hex')}` });
    if (r.status === 201 && c.posts.length < 1000) c.posts.push(r.body.post_id);
    return expectStatus('posts.append', r, 201);
  }
  if (pick < 11) return expectStatus('posts.read', await call(`${url}/v1/spaces/${c.space}/posts?order=desc&limit=20`, 'GET', c.token), 200);
  if (pick < 13) {
    const id = c.posts[n % Math.max(1, c.posts.length)];
    return id === undefined || expectStatus('posts.get', await call(`${url}/v1/posts/${id}`, 'GET', c.token), 200);
  }
  if (pick < 15) return expectStatus('seek', await call(`${url}/v1/seek?q=soak+post&limit=10`, 'GET', c.token), 200);
  if (pick < 17) return expectStatus('mailbox', await call(`${url}/v1/mailbox?limit=20`, 'GET', c.token), 200);
  if (pick === 17) return expectStatus('spaces.get', await call(`${url}/v1/spaces/${c.space}`, 'GET', c.token), 200);
  if (pick === 18) return expectStatus('capabilities', await call(`${url}/v1/capabilities`, 'GET', undefined), 200);
  // A long poll at the head: waits a second for a post that does not come.
  const head = await call(`${url}/v1/spaces/${c.space}/posts?order=desc&limit=1`, 'GET', c.token);
  const seq = head.body?.items?.[0]?.seq ?? '0';
  return expectStatus('posts.read wait', await call(`${url}/v1/spaces/${c.space}/posts?after=${seq}&wait=1`, 'GET', c.token), 200);
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function lastHeapMiB(probe: string): number {
  const lines = readFileSync(probe, 'utf8').trim().split('\n');
  const last = lines[lines.length - 1];
  return last ? (JSON.parse(last) as { heapUsed: number }).heapUsed / 2 ** 20 : Number.NaN;
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const dataDir = tempDataDir('svc-soak-');
  const probe = join(dataDir, 'memory.ndjson');
  writeFileSync(probe, '');
  const probeModule = fileURLToPath(new URL('./soak-probe.mjs', import.meta.url));
  const relay = await spawnBenchRelay(dataDir, {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc --import ${probeModule}`.trim(),
    SVC_SOAK_PROBE: probe,
    SVC_SOAK_PROBE_MS: String(Math.max(1000, (opts.sampleSeconds * 1000) / 4)),
  });
  const pid = relay.process.pid!;
  const clients: Client[] = [];
  for (let i = 0; i < opts.clients; i++) {
    const t = await mintToken(relay.url);
    const space = `soak-${i}-${randomBytes(4).toString('hex')}`;
    const r = await call(`${relay.url}/v1/spaces`, 'POST', t.token, { name: space });
    if (r.status !== 201) throw new Error(`spaces.create refused: ${JSON.stringify(r.body)}`);
    clients.push({ token: t.token, space, posts: [], polls: 0 });
  }

  const tty = process.stdout.isTTY;
  const started = Date.now();
  const endAt = started + opts.minutes * 60_000;
  const samples: Sample[] = [];
  let window: number[] = [];
  let requests = 0;
  let errors = 0;
  let n = 0;
  const polls = new Set<Promise<boolean>>();
  // Each client sends at rate/clients a second, one request at a time, skipping ahead when behind.
  const interval = (1000 * opts.clients) / opts.rate;
  const loops = clients.map(async (c, i) => {
    let next = Date.now() + (interval * i) / opts.clients;
    while (Date.now() < endAt) {
      const wait = next - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      next = Math.max(next + interval, Date.now() - interval);
      let k = n++;
      // A KEY holds at most 2 waiting reads (spec: a third is BUSY); past that the turn is a plain read.
      if (isLongPoll(k) && c.polls >= 2) k -= 10;
      if (isLongPoll(k)) c.polls++;
      const sent = oneRequest(relay.url, c, k).catch((e: unknown) => {
        const key = `network: ${String((e as { cause?: unknown }).cause ?? e).slice(0, 80)}`;
        wrongAnswers.set(key, (wrongAnswers.get(key) ?? 0) + 1);
        return false;
      });
      requests++;
      if (isLongPoll(k)) {
        // Not awaited: the client goes on while the poll waits; its answer still counts.
        polls.add(sent);
        void sent.then((ok) => {
          c.polls--;
          polls.delete(sent);
          if (!ok) errors++;
        });
        continue;
      }
      const t0 = performance.now();
      const ok = await sent;
      window.push(performance.now() - t0);
      if (!ok) errors++;
    }
  });
  const sampler = setInterval(() => {
    const lat = [...window].sort((a, b) => a - b);
    window = [];
    const s: Sample = {
      minute: Math.round(((Date.now() - started) / 60_000) * 10) / 10,
      requests,
      errors,
      p50: lat.length > 0 ? percentile(lat, 50) : 0,
      p99: lat.length > 0 ? percentile(lat, 99) : 0,
      rssMiB: rssMiB(pid),
      heapMiB: lastHeapMiB(probe),
      fds: readdirSync(`/proc/${pid}/fd`).length,
    };
    samples.push(s);
    requests = 0;
    errors = 0;
    if (tty) process.stdout.write(`\r${s.minute} min: ${s.requests} requests, p99 ${s.p99.toFixed(1)} ms, RSS ${s.rssMiB.toFixed(1)} MiB, heap ${s.heapMiB.toFixed(1)} MiB, ${s.fds} fds   `);
  }, opts.sampleSeconds * 1000);
  await Promise.all(loops);
  await Promise.all(polls);
  clearInterval(sampler);
  if (tty) process.stdout.write('\n');
  await relay.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });

  const limits = { ...DEFAULT_LIMITS, warmupMinutes: Math.min(DEFAULT_LIMITS.warmupMinutes, opts.minutes / 2) };
  const verdict = growthVerdict(samples, limits);
  const wrong = samples.reduce((a, s) => a + s.errors, 0);
  console.log(`soak: ${opts.minutes} min, ${opts.rate} requests/s over ${opts.clients} KEYS, sampled every ${opts.sampleSeconds} s`);
  console.log(formatSamples(samples));
  console.log(
    `after minute ${limits.warmupMinutes} (${verdict.settled} samples): RSS ${verdict.rssSlope.toFixed(3)} MiB/min (limit ${limits.rssMiBPerMinute}), heap ${verdict.heapSlope.toFixed(3)} MiB/min (limit ${limits.heapMiBPerMinute}), fds ${verdict.fdSlope.toFixed(3)}/min (limit ${limits.fdsPerMinute}); ${wrong} wrong answers`,
  );
  for (const [what, count] of wrongAnswers) console.log(`wrong answer ×${count}: ${what}`);
  const failures = [...verdict.failures, ...(wrong > 0 ? [`${wrong} answers were not the expected ones`] : [])];
  if (failures.length > 0) {
    console.log(`FAIL: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else console.log('PASS: memory and descriptors settle after the warm-up');
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
