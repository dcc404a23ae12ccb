/**
 * MCP protocol revisions (issue 5 "Protocol revisions"): the real svc-bridge process over
 * stdio serves a client that asks for 2025-11-25 (initialize session) and one that speaks
 * 2026-07-28 (no initialize; `server/discover`; every request carries its own `_meta`
 * envelope), against a real relay on loopback.
 *
 * Both SDK cases use the v2 client (@modelcontextprotocol/client): its default connect is the
 * 2025 `initialize`, and `versionNegotiation: { mode: { pin: '2026-07-28' } }` makes it open with
 * `server/discover` and fail unless that revision is offered. A last case drives raw JSON-RPC
 * lines over the child's stdio, so the wire facts (no initialize, discover first, a tool call
 * straight after) are pinned independently of the client library.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEER_MARKER_NOTE } from '../../tools/render.js';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';

const TOOLS = ['svc_guide', 'svc_join', 'svc_space_control', 'svc_spaces', 'svc_whoami'];

let relay: RunningRelay;
let home: string;
let peerId: string;

beforeAll(async () => {
  relay = await startRelay();
  home = tempHome();
  const id = await runBridge(['id'], { home, relayUrl: relay.url });
  peerId = id.stdout.trim();
}, 60_000);

afterAll(async () => {
  await relay?.close();
});

describe('a client that asks for 2025-11-25', () => {
  let bridge: RunningBridge;
  beforeAll(async () => {
    bridge = await startBridge({ relayUrl: relay.url, home, revision: '2025-11-25' });
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
  });

  it('completes initialize on 2025-11-25 and learns the server and its instructions', () => {
    expect(bridge.client.getProtocolEra()).toBe('legacy');
    expect(bridge.client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(bridge.client.getServerVersion()?.name).toBe('svc-bridge');
    expect(bridge.client.getInstructions()).toContain(PEER_MARKER_NOTE);
  });

  it('lists the tools and calls one', async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(TOOLS));
    const r = await callTool(bridge, 'svc_whoami', {});
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { peer_id: string }).peer_id).toBe(peerId);
  });
});

describe('a client that speaks 2026-07-28', () => {
  let bridge: RunningBridge;
  beforeAll(async () => {
    bridge = await startBridge({ relayUrl: relay.url, home, revision: '2026-07-28' });
  }, 60_000);
  afterAll(async () => {
    await bridge?.close();
  });

  it('connects through server/discover, with no initialize session, on 2026-07-28', () => {
    expect(bridge.client.getProtocolEra()).toBe('modern');
    expect(bridge.client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const discover = bridge.client.getDiscoverResult();
    expect(discover?.supportedVersions).toContain('2026-07-28');
    expect(discover?.capabilities.tools).toBeDefined();
  });

  it('lists the same tools and calls one, answered as the same KEY', async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(TOOLS));
    const r = await callTool(bridge, 'svc_whoami', {});
    expect(r.isError).toBeFalsy();
    expect((r.structuredContent as { peer_id: string }).peer_id).toBe(peerId);
    expect(textOf(r)).toContain(peerId);
  });

  it('answers a refusal as a tool error with code and fix, like 2025-11-25', async () => {
    const r = await callTool(bridge, 'svc_spaces', { action: 'get' });
    expect(r.isError).toBe(true);
    const e = (r.structuredContent as { error: { code: string; detail: string; fix: string } }).error;
    expect(e.code).toBe('INVALID_REQUEST');
    expect(e.detail).toContain('name');
    expect(e.fix.length).toBeGreaterThan(0);
  });
});

/** The bridge as a bare child process, spoken to in JSON-RPC lines. */
interface RawBridge {
  child: ChildProcessWithoutNullStreams;
  request(id: number, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

function spawnRaw(): RawBridge {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bridge/main.ts', 'serve'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_API: relay.url, SVC_HOME: home },
  });
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const m = JSON.parse(line) as Record<string, unknown>;
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  child.stderr.resume();
  return {
    child,
    request: (id, method, params) =>
      new Promise((resolve) => {
        waiting.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
    close: () =>
      new Promise((resolve) => {
        child.on('close', () => resolve());
        child.stdin.end();
      }),
  };
}

const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0.0.0' },
};

describe('2026-07-28 on the wire (raw JSON-RPC lines over stdio)', () => {
  it('answers server/discover as the first message, then a tool call that carries its own envelope', async () => {
    const raw = spawnRaw();
    try {
      const discover = await raw.request(1, 'server/discover', { _meta: envelope });
      expect(discover.error).toBeUndefined();
      const result = discover.result as { supportedVersions: string[]; capabilities: Record<string, unknown>; instructions?: string };
      expect(result.supportedVersions).toContain('2026-07-28');
      expect(result.capabilities).toHaveProperty('tools');
      expect(result.instructions).toContain(PEER_MARKER_NOTE);

      const call = await raw.request(2, 'tools/call', { name: 'svc_whoami', arguments: {}, _meta: envelope });
      expect(call.error).toBeUndefined();
      const r = call.result as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { peer_id: string }).peer_id).toBe(peerId);
    } finally {
      await raw.close();
    }
  }, 60_000);

  it('refuses a request that claims a revision it does not serve', async () => {
    const raw = spawnRaw();
    try {
      const r = await raw.request(1, 'server/discover', { _meta: { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } });
      expect(r.result).toBeUndefined();
      // -32022: unsupported protocol version, naming the revisions it does serve.
      expect(r.error).toMatchObject({ code: -32022, data: { supported: expect.arrayContaining(['2026-07-28']), requested: '2099-01-01' } });
    } finally {
      await raw.close();
    }
  }, 60_000);
});
