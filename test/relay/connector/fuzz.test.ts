/**
 * Property-based fuzz of the connector's JSON-RPC methods (fast-check) over a real relay on a
 * loopback port: initialize, ping, tools/list, tools/call of every tool by name, resources/list,
 * resources/read, resources/templates/list, prompts/list, prompts/get, subscriptions/listen,
 * server/discover and unknown methods, each with generated params (test/helpers/fuzz/rpc.ts), at
 * both protocol revisions, from a caller with no token, a KEY's token or a token the relay does
 * not know at `/mcp`, and an app token of either scope at `/mcp/connect`.
 *
 * A client's mistake is answered -32600, -32601, -32602, the header mismatch -32020 or resource
 * not found, or as a tool's or resource's ordinary answer; -32603 Internal error says the server
 * failed, so no generated request may get it, nor an HTTP 5xx. A live stream is read up to its
 * acknowledgement and left. `SVC_CONNECTOR_FUZZ_RUNS` requests per method and per tool (default 16, about
 * 450 requests: the file runs in about 10 s); `SVC_FUZZ_SEED` replays a run. What each method was
 * answered is printed at the end, so a run shows it reached past the checks into the handlers.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectConnector } from '../../helpers/connector.js';
import { rpcRequest, type RpcRequest, type RpcSurface } from '../../helpers/fuzz/rpc.js';
import { anyText } from '../../helpers/fuzz/values.js';
import { buildWorld, type World } from '../../helpers/fuzz/world.js';
import { appToken } from '../../helpers/oauth-flow.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';

const RUNS = Number(process.env.SVC_CONNECTOR_FUZZ_RUNS ?? 16);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? undefined : Number(process.env.SVC_FUZZ_SEED);

const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'subscriptions/listen',
  'server/discover',
] as const;

/** Who sends: the path and the Authorization header. */
interface Sender {
  name: string;
  path: '/mcp' | '/mcp/connect';
  authorization?: string;
}

/** Answers seen, by method: HTTP status, and the JSON-RPC error code or "result". */
const seen = new Map<string, Map<string, number>>();

function tally(sent: string, status: number, messages: unknown[]): void {
  const method = (METHODS as readonly string[]).includes(sent) || sent === 'tools/call' ? sent : '(other methods)';
  const m = (messages.find((x) => typeof x === 'object' && x !== null && ('result' in x || 'error' in x)) ?? messages[0]) as { result?: unknown; error?: { code?: unknown } } | undefined;
  const what = `${status} ${m === undefined ? '-' : m.error !== undefined ? String(m.error.code) : 'result' in m ? 'result' : 'stream'}`;
  const byMethod = seen.get(method) ?? new Map<string, number>();
  byMethod.set(what, (byMethod.get(what) ?? 0) + 1);
  seen.set(method, byMethod);
}

let relay: RunningRelay;
let world: World;
let surface: RpcSurface;
let senders: Sender[];

beforeAll(async () => {
  relay = await startRelay({ rateLimits: false });
  world = await buildWorld(relay);
  const readWrite = await appToken(relay, { scope: 'read write', keyToken: world.owner.token });
  const readOnly = await appToken(relay, { scope: 'read', keyToken: world.owner.token });
  senders = [
    { name: 'no token', path: '/mcp' },
    { name: "a KEY's token", path: '/mcp', authorization: `Bearer ${world.owner.token}` },
    { name: 'an unknown token', path: '/mcp', authorization: `Bearer svc_${'0'.repeat(64)}` },
    { name: 'a read and write app token', path: '/mcp/connect', authorization: `Bearer ${readWrite.accessToken}` },
    { name: 'a read-only app token', path: '/mcp/connect', authorization: `Bearer ${readOnly.accessToken}` },
  ];
  const c = await connectConnector(relay.url, { token: world.owner.token });
  // /mcp/connect lists the tools of /mcp and the compatibility tools beside them.
  const app = await connectConnector(relay.url, { token: readWrite.accessToken, path: '/mcp/connect' });
  try {
    const tools = (await app.client.listTools()).tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema as Record<string, unknown> }));
    const resources = (await c.client.listResources()).resources.map((r) => r.uri);
    const templates = (await c.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    const prompts = (await c.client.listPrompts()).prompts.map((p) => ({ name: p.name, arguments: (p.arguments ?? []).map((a) => a.name) }));
    const known = [world.space, world.sealed.name, world.postId, world.owner.peerId, world.writer.peerId, world.inviteCode];
    surface = { tools, resources, templates, prompts, known };
  } finally {
    await app.close();
    await c.close();
  }
}, 60_000);

afterAll(async () => {
  const lines = [...seen].map(([method, answers]) => `  ${method}: ${[...answers].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  if (lines.length > 0) console.log(`connector fuzz, answers by method (HTTP status, JSON-RPC code or result):\n${lines.join('\n')}`);
  await relay?.close();
});

/** The JSON-RPC messages of an answer (a JSON body, or SSE events: all of them, or a live stream's first). */
async function answerOf(res: Response, listen: boolean, abort: AbortController): Promise<unknown[]> {
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') || res.body === null) {
    const text = await res.text();
    try {
      const v = JSON.parse(text) as unknown;
      return Array.isArray(v) ? v : [v];
    } catch {
      return [];
    }
  }
  const messages: unknown[] = [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += value;
      let cut: number;
      while ((cut = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        if (data === '') continue;
        messages.push(JSON.parse(data) as unknown);
        // A live stream is left once it said its first word; any other stream ends by itself.
        if (listen) return messages;
      }
    }
  } finally {
    abort.abort();
  }
  return messages;
}

/** What is wrong with the answer to `req` from `sender`, or undefined. */
async function problem(sender: Sender, req: RpcRequest): Promise<string | undefined> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...req.headers };
  if (sender.authorization !== undefined) headers.authorization = sender.authorization;
  const abort = new AbortController();
  const res = await fetch(`${relay.url}${sender.path}`, { method: 'POST', headers, body: req.body, signal: abort.signal });
  if (res.status >= 500) return `HTTP ${res.status}: ${await res.text()}`;
  const messages = await answerOf(res, req.method === 'subscriptions/listen', abort);
  tally(req.method, res.status, messages);
  for (const m of messages) {
    const error = (m as { error?: { code?: unknown; message?: unknown } }).error;
    if (error?.code === -32603) return `-32603 from ${sender.name} at ${req.revision}: ${String(error.message).slice(0, 400)}`;
  }
  return undefined;
}

function check(method: fc.Arbitrary<string>, tool?: string): Promise<void> {
  return fc.assert(
    fc.asyncProperty(fc.constantFrom(...senders), rpcRequest(method, surface, tool), async (sender, req) => {
      const found = await problem(sender, req);
      expect(found, `${req.body} (${JSON.stringify(req.headers)})`).toBeUndefined();
    }),
    { numRuns: RUNS, seed: SEED },
  );
}

describe('generated params to every JSON-RPC method of the connector are never answered -32603 or 5xx', () => {
  for (const method of METHODS) {
    it(method, async () => {
      await check(fc.constant(method));
    }, 120_000);
  }

  it('tools/call of every tool', async () => {
    expect(surface.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['svc_messages', 'svc_post', 'search', 'fetch']));
    for (const tool of surface.tools) await check(fc.constant('tools/call'), tool.name);
  }, 600_000);

  it('unknown methods', async () => {
    await check(fc.oneof(anyText, fc.constantFrom('tools/cal', 'resources/subscribe', 'completion/complete', 'logging/setLevel', 'tasks/get', 'sampling/createMessage')));
  }, 120_000);
});
