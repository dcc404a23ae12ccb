/**
 * How deep svc_post's free JSON may nest, through the real bridge (svc-bridge over stdio, MCP
 * SDK client) against a real relay. The relay reads a request body nesting at most
 * JSON_DEPTH_MAX arrays and objects (relay/http/json-body.ts); `data` and `budget` are members
 * of the post, one level inside it, so they may nest JSON_DEPTH_MAX − 1 deep. The bridge
 * measures that without recursion before its recursive argument schema runs, so a value
 * thousands of levels deep is one clear refusal, never a stack overflow, and nothing is sent.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_DEPTH_MAX, POST_FIELD_DEPTH_MAX } from '../../shared/limits.js';
import { callTool, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { get } from '../helpers/posts.js';
import { closeProxiedBridge, spaceWithPeer, startProxiedBridge, type ProxiedBridge } from '../helpers/proxied-bridge.js';
import { REPO_ROOT } from '../helpers/relay.js';

let setup: ProxiedBridge;
let a: RunningBridge;
let space: string;

beforeAll(async () => {
  setup = await startProxiedBridge();
  a = setup.a;
  space = await spaceWithPeer(setup, 'depth');
}, 60_000);

afterAll(async () => {
  await closeProxiedBridge(setup ?? {});
});

/** `levels` arrays and objects nested, counted as the relay counts them (`{}` is 1), alternating so both kinds are walked. */
function nested(levels: number): Record<string, unknown> {
  let v: unknown = 'bottom';
  for (let i = levels - 1; i >= 1; i--) v = i % 2 === 0 ? { x: v } : [v];
  return { x_deep: v };
}

const headSeq = async (): Promise<string> => (await get(setup.relay, `/v1/spaces/${space}`, setup.p)).body.head_seq;

const refusal = new RegExp(`data: arrays and objects nest more than ${POST_FIELD_DEPTH_MAX} deep`);

describe('svc_post and deeply nested data', () => {
  it('takes data nesting exactly as deep as a post allows, and the relay stores it as sent', async () => {
    expect(POST_FIELD_DEPTH_MAX).toBe(JSON_DEPTH_MAX - 1);
    const data = nested(POST_FIELD_DEPTH_MAX);
    const r = toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'deep enough', data }));
    const read = await get(setup.relay, `/v1/posts/${r.post_id}`, setup.p);
    expect(read.body.data).toEqual(data);
  });

  it('refuses data one level deeper with a tool error naming the limit, and sends nothing', async () => {
    const before = await headSeq();
    const r = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'too deep', data: nested(POST_FIELD_DEPTH_MAX + 1) });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(refusal);
    expect(textOf(r)).toContain(`at most ${JSON_DEPTH_MAX}`);
    expect(await headSeq()).toBe(before);
  });

  it('refuses data thousands of levels deep the same way, without a stack overflow, and answers the next call', async () => {
    const before = await headSeq();
    // 4,000 levels: far past where a recursive schema overflows the stack (about 1,500), and
    // within what this process's JSON.stringify writes (the MCP client serialises with it).
    const r = await callTool(a, 'svc_post', { space, kind: 'obs', body: 'far too deep', data: nested(4_000) });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(refusal);
    expect(textOf(r)).not.toMatch(/call stack|RangeError/i);
    expect(await headSeq()).toBe(before);
    toolOk(await callTool(a, 'svc_post', { space, kind: 'obs', body: 'still here', data: { x_ok: [1, { y: 2 }] } }));
  });

  it('refuses data 5,000 levels deep sent as a raw JSON-RPC line, and answers the next call', async () => {
    // JSON.stringify itself overflows near 4,500 levels, so this line is written by hand.
    const levels = 5_000;
    const deep = `${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}`;
    const args = `{"space":"${space}","kind":"obs","body":"far too deep","data":{"x_deep":${deep}}}`;
    const raw = spawnRaw();
    try {
      const call = await raw.send(2, `{"name":"svc_post","arguments":${args},"_meta":${JSON.stringify(ENVELOPE)}}`);
      const r = call.result as { isError?: boolean; content: { type: string; text: string }[] };
      expect(call.error).toBeUndefined();
      expect(r.isError).toBe(true);
      const text = r.content.map((c) => c.text).join('');
      expect(text).toMatch(refusal);
      expect(text).not.toMatch(/call stack|RangeError/i);
      const next = await raw.send(3, JSON.stringify({ name: 'svc_whoami', arguments: {}, _meta: ENVELOPE }));
      const whoami = next.result as { isError?: boolean; structuredContent?: { peer_id?: string } };
      expect(whoami.isError, JSON.stringify(next)).toBeFalsy();
      expect(whoami.structuredContent?.peer_id).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await raw.close();
    }
  }, 60_000);

  it('refuses a budget nesting deeper than a post allows before its schema runs', async () => {
    const deepRemaining = nested(4_000).x_deep;
    const r = await callTool(a, 'svc_post', {
      space,
      kind: 'obs',
      body: 'deep budget',
      budget: { observed_at: '2026-01-31T12:00:00Z', output_tokens: { remaining: deepRemaining } },
    });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(new RegExp(`budget: arrays and objects nest more than ${POST_FIELD_DEPTH_MAX} deep`));
  });
});

/** The per-request envelope of revision 2026-07-28: no initialize needed before a call. */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'depth-test', version: '0.0.0' },
};

/** A bridge of its own KEY as a bare child process, sent `tools/call` lines whose params are written by hand. */
function spawnRaw(): { send(id: number, params: string): Promise<Record<string, unknown>>; close(): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bridge/main.ts', 'serve'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_API: setup.proxy.url, SVC_HOME: tempHome() },
  });
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Record<string, unknown>;
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  child.stderr.resume();
  return {
    send: (id, params) =>
      new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}\n`);
      }),
    close: () =>
      new Promise((resolve) => {
        child.on('close', () => resolve());
        child.stdin.end();
      }),
  };
}
