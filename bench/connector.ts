/**
 * The connector suite: tool calls per second over `/mcp` against the same operations over plain
 * HTTP, from one real relay process in the same run (the connector should cost at most 1.5× the
 * plain route).
 *
 * A private SPACE of 200 posts (unsigned, 600 bytes each) is filled in process, 40 of them by a
 * second member addressed to the owner (the owner's mailbox); then the relay runs as its own
 * process (SVC_RELAY_NO_RATE_LIMITS=1) and the owner's KEY signs in over HTTP. Five groups, each
 * a plain route (the baseline) and the tool that does the same at the tool's defaults:
 *
 *   posts.read   GET /v1/spaces/{name}/posts newest first    svc_read_space {space, order: desc}
 *   posts.get    GET /v1/posts/{id} with its proof            svc_get {post_id}
 *   seek         GET /v1/seek?q=merkle                        svc_seek {q: merkle}
 *   mailbox      GET /v1/mailbox?after=0                      svc_mailbox {after: "0"}
 *   posts.write  POST /v1/spaces/{name}/posts, unsigned       svc_post {space, kind, title, body}
 *
 * Beside posts.get, the floor of every tool call: `svc_guide {part: tools, section: svc_get}`
 * from the structured-only clients, a tool call on the same lane that calls no route and answers
 * about 1 KB of fixed text (the plain posts.get answers 3.3 KB). Its ratio to posts.get is what
 * any tool pays before its route's own work; it has no target of its own.
 *
 * Each tool is called by the SDK's Streamable HTTP client, one client per caller: at 2026-07-28
 * (text and structured content), at 2026-07-28 by a client that declares it reads structured
 * content alone (relay/connector/structured.ts: no text is made), and at 2025-11-25. Newest
 * first and `after: "0"`, so every read reads the same page.
 *
 * Each case runs CLIENTS callers at once, one call after another each. A group is measured once
 * the relay has warmed up to it (its cases in turn for WARM_MS, bench/process-cpu.ts), so V8 has
 * optimised what they run: the steady state a long-running relay serves in. Before that a tool
 * call, which runs more code than its plain route, pays more for what is not yet optimised.
 * Then the cases run in interleaved rounds (every case one round in turn, ROUNDS times), and a
 * case's figure is its best round: other work on a shared machine only ever slows a round down.
 * Beside it, the relay process's CPU time per call over all its rounds (its threads' run time,
 * /proc/<pid>/task/<tid>/schedstat): the relay's own cost, which other work on the machine does
 * not change.
 *
 * What that cost is compared with. A relay's CPU per request depends on how fast requests
 * arrive: arriving close together, several are read, served and written per turn of the event
 * loop and share its wake-ups and system calls; measured here, GET /healthz costs the relay about
 * 80 µs a call from 8 callers going as fast as they can and about 175 µs from one. The plain
 * routes, called by undici, arrive four to five times as fast as the tools, called by the MCP
 * SDK's client on the same two cores, so a plain route served as fast as its callers go is
 * cheaper per call for its rate alone. Each tool case is therefore followed, in every round, by
 * its plain route served by the same number of callers paced to the rate the tool was just
 * served at (harness.ts `pacedStartMs`): the tool's ratio to that is the cost of the same read
 * under the same load, and is what the target is judged by. The ratio to the plain route served
 * as fast as it goes is printed too.
 *
 * `npm run bench -- connector --cpu-prof` also writes the relay process's CPU profile
 * (`node --cpu-prof`) into a directory it names at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { Agent, request } from 'undici';
import { appendPost } from '../relay/posts/append.js';
import { STRUCTURED_ONLY_EXTENSION } from '../relay/connector/structured.js';
import { DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET } from '../tools/posts/reading.js';
import { signerFromSeed } from '../shared/identity.js';
import { mintToken } from '../test/helpers/relay.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { collectGarbage, pacedStartMs, progress, type Row, type Suite, type SuiteReport } from './harness.js';
import { processCpuReader, warmUp, WARM_MS, WARM_SLICE_MS } from './process-cpu.js';
import { createSpaceInStore, filler, openInProcess, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const POSTS = 200;
const TO_OWNER = 40;
const CLIENTS = 8;
const ROUND_MS = 1_000;
const ROUNDS = 4;
/** What a tool call may cost at most, as a multiple of the same plain route's relay CPU. */
const TARGET = 1.5;
/** A tool call on the direct lane that calls no route: the floor under every tool's ratio. */
const FLOOR = { tool: 'svc_guide', args: { part: 'tools', section: 'svc_get' } } as const;

type Revision = '2025-11-25' | '2026-07-28';
/** How a client connects: its revision, and whether it declares it reads structured content alone. */
type Flavour = { revision: Revision; structuredOnly: boolean; label: string };

const FLAVOURS: readonly Flavour[] = [
  { revision: '2026-07-28', structuredOnly: false, label: '2026-07-28' },
  { revision: '2026-07-28', structuredOnly: true, label: '2026-07-28, structured only' },
  { revision: '2025-11-25', structuredOnly: false, label: '2025-11-25' },
];

/**
 * Run every loop of `calls` for `ms`; answers the calls finished per second. With `rate`, the
 * callers together start at most `rate` calls a second, evenly spaced (harness.ts `pacedStartMs`).
 */
async function throughput(calls: readonly (() => Promise<void>)[], ms: number, rate?: number): Promise<number> {
  const started = performance.now();
  const until = started + ms;
  let done = 0;
  await Promise.all(
    calls.map(async (call, i) => {
      for (let k = 0; performance.now() < until; k++) {
        if (rate !== undefined) {
          const wait = started + pacedStartMs(k, i, calls.length, rate) - performance.now();
          if (wait > 0) await sleep(wait);
          if (performance.now() >= until) break;
        }
        await call();
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - started);
}

interface Case {
  readonly name: string;
  readonly calls: readonly (() => Promise<void>)[];
  /** The plain route served by as many callers as fast as they go. */
  readonly baseline?: string;
  /** The plain route served at this case's own rate: the case named here runs paced to it. */
  readonly sameRate?: string;
  /** This case runs paced to the rate the case named here was served at in the same round. */
  readonly pacedBy?: string;
}

/**
 * The cases of one group in interleaved rounds, once the relay has warmed up to them
 * (bench/process-cpu.ts `warmUp`); each case's best round, and the relay process's CPU time per
 * call over all its rounds. A case with `pacedBy` runs at the rate that case was served at in
 * the same round, just before it. `ratios` gets each tool's ratio to its plain route served as
 * fast as it goes (`closed`) and served at the tool's own rate (`sameRate`).
 */
async function measureGroup(group: string, cases: readonly Case[], relayPid: number, ratios?: Map<string, { closed: number; sameRate?: number }>): Promise<Row[]> {
  await warmUp(cases.length, async (i) => {
    await throughput(cases[i]!.calls, WARM_SLICE_MS);
  }, (_, ms) => progress(`connector: ${group} warming up, ${(ms / 1000).toFixed(0)} of ${WARM_MS / 1000} s`));
  const cpuNs = processCpuReader(relayPid);
  const best = new Map<string, number>();
  const cpu = new Map<string, { micros: number; calls: number }>();
  for (let round = 1; round <= ROUNDS; round++) {
    const rates = new Map<string, number>();
    for (const c of cases) {
      collectGarbage();
      progress(`connector: ${group} round ${round}/${ROUNDS}: ${c.name}`);
      const before = cpuNs();
      const started = performance.now();
      const ops = await throughput(c.calls, ROUND_MS, c.pacedBy === undefined ? undefined : rates.get(c.pacedBy));
      const spent = (cpuNs() - before) / 1000;
      rates.set(c.name, ops);
      const sum = cpu.get(c.name) ?? { micros: 0, calls: 0 };
      cpu.set(c.name, { micros: sum.micros + spent, calls: sum.calls + (ops * (performance.now() - started)) / 1000 });
      best.set(c.name, Math.max(best.get(c.name) ?? 0, ops));
    }
  }
  const perCall = (name: string) => cpu.get(name)!.micros / cpu.get(name)!.calls;
  return cases.map((c) => {
    const own = perCall(c.name);
    const base = c.baseline === undefined ? undefined : perCall(c.baseline);
    const same = c.sameRate === undefined ? undefined : perCall(c.sameRate);
    if (base !== undefined) ratios?.set(c.name, { closed: own / base, ...(same === undefined ? {} : { sameRate: own / same }) });
    // Beside the ratio, what the tool adds to the route in µs: the MCP request's own cost.
    const closed = base === undefined ? '' : ` (${(own / base).toFixed(2)}×, +${Math.round(own - base)} µs`;
    const atRate = same === undefined ? '' : `; at the same rate ${(own / same).toFixed(2)}×, +${Math.round(own - same)} µs`;
    const ratio = base === undefined ? '' : `${closed}${atRate})`;
    return { name: c.name, opsPerSec: best.get(c.name)!, note: `relay CPU ${Math.round(own)} µs/call${ratio}`, ...(c.baseline ? { baseline: c.baseline } : {}) };
  });
}

async function connect(url: string, token: string, flavour: Flavour): Promise<Client> {
  const client = new Client(
    { name: 'svc-bench', version: '0.0.0' },
    {
      ...(flavour.revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
      ...(flavour.structuredOnly ? { capabilities: { extensions: { [STRUCTURED_ONLY_EXTENSION]: {} } } } : {}),
    },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

function toolCall(client: Client, name: string, args: () => Record<string, unknown>): () => Promise<void> {
  return async () => {
    const r = (await client.callTool({ name, arguments: args() })) as CallToolResult;
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  };
}

/** `--cpu-prof` among the arguments: the relay writes its CPU profile into a new directory. */
function profileDir(): string | undefined {
  return process.argv.includes('--cpu-prof') ? mkdtempSync(join(tmpdir(), 'svc-connector-prof-')) : undefined;
}

async function run(): Promise<SuiteReport> {
  const dataDir = tempDataDir('svc-bench-connector-');
  const seed = new Uint8Array(32).fill(11);
  const otherSeed = new Uint8Array(32).fill(12);
  const name = `connector-bench-${randomUUID().slice(0, 8)}`;
  const prof = profileDir();
  let postId: string;
  const rows: Row[] = [];
  const verdicts: string[] = [];
  try {
    progress('connector: filling a SPACE');
    const r = await openInProcess(dataDir);
    try {
      const owner = await registerKey(r, signerFromSeed(seed), Date.now() - 2 * 86_400_000);
      const other = await registerKey(r, signerFromSeed(otherSeed), Date.now() - 2 * 86_400_000);
      const space = await createSpaceInStore(r, owner, name);
      await r.store.members.admit(space, { peer: other, role: 'writer', tags: [], broughtInBy: owner }, owner, Date.now());
      let last = '';
      for (let i = 0; i < POSTS; i++) {
        const toOwner = i % (POSTS / TO_OWNER) === 0;
        const author = toOwner ? other : owner;
        const post = { kind: 'obs', title: `post ${i}`, body: filler(600, i), ...(toOwner ? { to: [owner] } : {}) };
        last = (await appendPost(r.ctx, name, author, post)).post.postId;
      }
      postId = last;
    } finally {
      await r.close();
    }

    const relay = await spawnBenchRelay(dataDir, prof === undefined ? {} : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${prof}` });
    const agent = new Agent({ connections: CLIENTS * 2 });
    const clients: Client[] = [];
    try {
      const { token } = await mintToken(relay.url, seed);
      const headers = { authorization: `Bearer ${token}` };
      const http = (path: string) => async () => {
        const res = await request(`${relay.url}${path}`, { headers, dispatcher: agent });
        const body = await res.body.text();
        if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${body.slice(0, 200)}`);
      };
      const postPath = `/v1/spaces/${name}/posts`;
      const httpPost = () => async () => {
        const body = JSON.stringify({ kind: 'obs', title: 'bench post', body: filler(600, 7), idempotency_key: randomUUID() });
        const res = await request(`${relay.url}${postPath}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body, dispatcher: agent });
        const text = await res.body.text();
        if (res.statusCode !== 201) throw new Error(`POST ${postPath}: ${res.statusCode} ${text.slice(0, 200)}`);
      };
      const budget = `limit=${DEFAULT_LIMIT}&token_budget=${DEFAULT_TOKEN_BUDGET}`;
      const groups: { group: string; plain: string; http: () => () => Promise<void>; tool: string; args: () => Record<string, unknown> }[] = [
        { group: 'read', plain: 'HTTP posts.read', http: () => http(`${postPath}?${budget}&order=desc`), tool: 'svc_read_space', args: () => ({ space: name, order: 'desc' }) },
        { group: 'get', plain: 'HTTP posts.get', http: () => http(`/v1/posts/${postId}`), tool: 'svc_get', args: () => ({ post_id: postId }) },
        { group: 'seek', plain: 'HTTP seek', http: () => http(`/v1/seek?q=merkle&${budget}`), tool: 'svc_seek', args: () => ({ q: 'merkle' }) },
        { group: 'mailbox', plain: 'HTTP mailbox', http: () => http(`/v1/mailbox?after=0&${budget}`), tool: 'svc_mailbox', args: () => ({ after: '0' }) },
        { group: 'post', plain: 'HTTP posts.write', http: httpPost, tool: 'svc_post', args: () => ({ space: name, kind: 'obs', title: 'bench post', body: filler(600, 7) }) },
      ];

      const byFlavour = new Map<Flavour, Client[]>();
      for (const flavour of FLAVOURS) {
        const cs: Client[] = [];
        for (let i = 0; i < CLIENTS; i++) cs.push(await connect(relay.url, token, flavour));
        clients.push(...cs);
        byFlavour.set(flavour, cs);
      }
      const structuredOnly = [...byFlavour].find(([f]) => f.structuredOnly)![1];
      for (const g of groups) {
        // Each tool case is followed by its plain route paced to the rate the tool was just served at.
        const toolCases = (label: string, tool: string, cs: readonly Client[], args: () => Record<string, unknown>): Case[] => {
          const name = `/mcp ${tool} (${label})`;
          const paced = `${g.plain} at the rate of ${tool} (${label})`;
          return [
            { name, calls: cs.map((c) => toolCall(c, tool, args)), baseline: g.plain, sameRate: paced },
            { name: paced, calls: Array.from({ length: CLIENTS }, () => g.http()), pacedBy: name },
          ];
        };
        const cases: Case[] = [
          { name: g.plain, calls: Array.from({ length: CLIENTS }, () => g.http()) },
          ...[...byFlavour].flatMap(([f, cs]) => toolCases(f.label, g.tool, cs, g.args)),
        ];
        const floor = g.group === 'get' ? toolCases('structured only', FLOOR.tool, structuredOnly, () => FLOOR.args) : [];
        const floorName = floor[0]?.name;
        const ratios = new Map<string, { closed: number; sameRate?: number }>();
        rows.push(...(await measureGroup(g.group, [...cases, ...floor], relay.process.pid!, ratios)));
        const floorRatio = floorName === undefined ? undefined : ratios.get(floorName);
        if (floorName !== undefined) ratios.delete(floorName);
        const label = (name: string) => name.replace(/^\/mcp \S+ \((.*)\)$/, '$1');
        const sameRate = [...ratios].map(([name, r]) => `${label(name)} ${r.sameRate!.toFixed(2)}×`);
        const closed = [...ratios].map(([name, r]) => `${label(name)} ${r.closed.toFixed(2)}×`);
        const met = [...ratios.values()].every((r) => r.sameRate! <= TARGET);
        verdicts.push(`${g.tool} ÷ ${g.plain} served at the tool's rate, relay CPU: ${sameRate.join(', ')}; target ≤ ${TARGET}: ${met ? 'met' : 'missed'}`);
        verdicts.push(`  ÷ ${g.plain} served as fast as its callers go: ${closed.join(', ')}`);
        if (floorRatio !== undefined) {
          verdicts.push(`  floor: a tool call that calls no route (${FLOOR.tool} ${JSON.stringify(FLOOR.args)}, structured only) ÷ ${g.plain}: ${floorRatio.sameRate!.toFixed(2)}× at its rate, ${floorRatio.closed.toFixed(2)}× as fast as it goes; what any tool pays before its route's own work (no target)`);
        }
      }
    } finally {
      progress('');
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await agent.close();
      await relay.kill('SIGTERM');
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    rows,
    notes: [
      ...verdicts,
      `${CLIENTS} callers at once per case, each one call after another; the cases of a group in ${ROUNDS} interleaved rounds of ${ROUND_MS / 1000} s, the best round kept; one relay process (SVC_RELAY_NO_RATE_LIMITS=1)`,
      `warm-up: ${WARM_MS / 1000} s per group before its rounds, its cases in turn ${WARM_SLICE_MS} ms each, so V8 has optimised what they run: the steady state a long-running relay serves in (bench/process-cpu.ts; SVC_BENCH_WARM_S sets it)`,
      `SPACE of ${POSTS} posts of 600 bytes, ${TO_OWNER} of them addressed to the caller; reads at the tool's defaults (limit ${DEFAULT_LIMIT}, token_budget ${DEFAULT_TOKEN_BUDGET}); posts.get with its proof; posts unsigned, 600 bytes`,
      'vs baseline: how many times the plain HTTP route\'s cost a tool call costs (target: at most 1.5×), from calls per second of the best round (clients and relay on the same machine)',
      'relay CPU: the relay process\'s CPU time per call over every round (its threads\' run time, /proc/<pid>/task/*/schedstat), its ratio to the plain route\'s and what the tool adds to it: what other work on the machine does not change',
      '"at the rate of": the plain route from as many callers, paced to the calls per second the tool was served at just before it in the same round; a relay pays more per request when requests arrive further apart, so this is the same read under the same load (the target is judged by it)',
      ...(prof === undefined ? [] : [`the relay's CPU profile: ${prof}`]),
    ],
  };
}

export const connectorSuite: Suite = {
  name: 'connector',
  title: `connector tool calls over /mcp vs the same operations over plain HTTP, ${CLIENTS} callers at once`,
  run,
};
