/**
 * The connector suite: tool calls per second over `/mcp` against the same reads over plain
 * HTTP, from one real relay process in the same run (the connector should cost at most 1.5×
 * the plain route).
 *
 * A private SPACE of 200 posts (unsigned, 600 bytes each) is filled in process, then the relay
 * runs as its own process (SVC_RELAY_NO_RATE_LIMITS=1) and the owner's KEY signs in over HTTP.
 * Each row runs CLIENTS callers at once for ROW_MS after a warm-up, one call after another each:
 *
 *   HTTP posts.read              GET /v1/spaces/{name}/posts, newest first, the tool's default
 *                                limit and token budget (undici, keep-alive): the baseline;
 *   /mcp svc_read_space (rev)    the same read as a tool call by the SDK's Streamable HTTP
 *                                client, one client per caller, at 2026-07-28 and 2025-11-25;
 *   HTTP posts.get               GET /v1/posts/{id} (with its proof, the tool's default);
 *   /mcp svc_get (rev)           the same as a tool call.
 *
 * Newest first, so no cursor moves and every call reads the same page. Progress goes to a
 * terminal only.
 */
import { rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { Agent, request } from 'undici';
import { appendPost } from '../relay/posts/append.js';
import { DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET } from '../tools/posts/reading.js';
import { signerFromSeed } from '../shared/identity.js';
import { mintToken } from '../test/helpers/relay.js';
import { collectGarbage, type Row, type Suite, type SuiteReport } from './harness.js';
import { createSpaceInStore, filler, openInProcess, registerKey, spawnBenchRelay, tempDataDir } from './relay-fixture.js';

const POSTS = 200;
const CLIENTS = 8;
const WARMUP_MS = 1_000;
const ROW_MS = 4_000;

type Revision = '2025-11-25' | '2026-07-28';

function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${text}\x1b[K`);
}

/** Run `CLIENTS` loops of `call` for `ms`; answers the calls finished per second. */
async function throughput(calls: readonly (() => Promise<void>)[], ms: number): Promise<number> {
  const until = performance.now() + ms;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    calls.map(async (call) => {
      while (performance.now() < until) {
        await call();
        done++;
      }
    }),
  );
  return (done * 1000) / (performance.now() - started);
}

async function measure(name: string, calls: readonly (() => Promise<void>)[]): Promise<number> {
  progress(`connector: ${name} (warming up)`);
  await throughput(calls, WARMUP_MS);
  collectGarbage();
  progress(`connector: ${name}`);
  return throughput(calls, ROW_MS);
}

async function connect(url: string, token: string, revision: Revision): Promise<Client> {
  const client = new Client({ name: 'svc-bench', version: '0.0.0' }, revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

function toolCall(client: Client, name: string, args: Record<string, unknown>): () => Promise<void> {
  return async () => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  };
}

async function run(): Promise<SuiteReport> {
  const dataDir = tempDataDir('svc-bench-connector-');
  const seed = new Uint8Array(32).fill(11);
  const name = `connector-bench-${randomUUID().slice(0, 8)}`;
  let postId: string;
  const rows: Row[] = [];
  try {
    progress('connector: filling a SPACE');
    const r = await openInProcess(dataDir);
    try {
      const owner = await registerKey(r, signerFromSeed(seed), Date.now() - 2 * 86_400_000);
      await createSpaceInStore(r, owner, name);
      let last = '';
      for (let i = 0; i < POSTS; i++) last = (await appendPost(r.ctx, name, owner, { kind: 'obs', title: `post ${i}`, body: filler(600, i) })).post.postId;
      postId = last;
    } finally {
      r.close();
    }

    const relay = await spawnBenchRelay(dataDir);
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
      const readPath = `/v1/spaces/${name}/posts?limit=${DEFAULT_LIMIT}&token_budget=${DEFAULT_TOKEN_BUDGET}&order=desc`;
      const readArgs = { space: name, order: 'desc' };
      const getPath = `/v1/posts/${postId}`;
      const getArgs = { post_id: postId };

      const byRevision = new Map<Revision, Client[]>();
      for (const revision of ['2026-07-28', '2025-11-25'] as const) {
        const cs: Client[] = [];
        for (let i = 0; i < CLIENTS; i++) cs.push(await connect(relay.url, token, revision));
        clients.push(...cs);
        byRevision.set(revision, cs);
      }
      const cases: { name: string; calls: (() => Promise<void>)[]; baseline?: string }[] = [
        { name: 'HTTP posts.read', calls: Array.from({ length: CLIENTS }, () => http(readPath)) },
        ...[...byRevision].map(([rev, cs]) => ({ name: `/mcp svc_read_space (${rev})`, calls: cs.map((c) => toolCall(c, 'svc_read_space', readArgs)), baseline: 'HTTP posts.read' })),
        { name: 'HTTP posts.get', calls: Array.from({ length: CLIENTS }, () => http(getPath)) },
        ...[...byRevision].map(([rev, cs]) => ({ name: `/mcp svc_get (${rev})`, calls: cs.map((c) => toolCall(c, 'svc_get', getArgs)), baseline: 'HTTP posts.get' })),
      ];
      for (const c of cases) rows.push({ name: c.name, opsPerSec: await measure(c.name, c.calls), ...(c.baseline ? { baseline: c.baseline } : {}) });
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
      `${CLIENTS} callers at once per row for ${ROW_MS / 1000} s after ${WARMUP_MS / 1000} s of warm-up, each one call after another; one relay process (SVC_RELAY_NO_RATE_LIMITS=1)`,
      `SPACE of ${POSTS} posts of 600 bytes; reads newest first at the tool's defaults (limit ${DEFAULT_LIMIT}, token_budget ${DEFAULT_TOKEN_BUDGET}); posts.get with its proof`,
      'vs baseline: how many times the plain HTTP route\'s cost a tool call costs (target: at most 1.5×)',
    ],
  };
}

export const connectorSuite: Suite = {
  name: 'connector',
  title: `connector tool calls over /mcp vs the same reads over plain HTTP, ${CLIENTS} callers at once`,
  run,
};
