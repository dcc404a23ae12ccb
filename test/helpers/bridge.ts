/**
 * Test helper that runs the REAL bridge: `startBridge` spawns `svc-bridge` (bridge/main.ts
 * through tsx, dist/bridge/main.js with `built: true`, or the one-file bundle with `bundle`, from
 * the bundle's own directory) as its own process and connects the
 * MCP SDK's Client (v2, @modelcontextprotocol/client) to it over stdio, speaking protocol
 * revision 2025-11-25 (initialize; the default) or 2026-07-28 (pinned: `server/discover`, no
 * session). `runBridge` runs one CLI command and collects its output; `spawnBridge` starts one that
 * serves and leaves it running. `callTool` and `textOf`
 * shorten tool calls in tests.
 *
 * A bridge runs as the one-file bundle this test run built (test/helpers/bundle.ts), the program
 * the package installs as `svc-bridge` and the relay serves as `/bridge.mjs`: one file starts in
 * a fraction of the time the sources take through tsx (hundreds of modules, each through its
 * loader), and the suite starts a few hundred bridges. With SVC_TEST_BRIDGE=sources every bridge
 * a test starts runs bridge/main.ts through tsx instead (stack traces name the sources):
 * `SVC_TEST_BRIDGE=sources npx vitest run test/e2e/bridge.test.ts`. A test that is about the
 * sources themselves says `bundle: false`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, type CallToolResult } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { COMPILE_CACHE_ENV, bridgeBundle } from './bundle.js';
import { REPO_ROOT } from './relay.js';

export interface StartBridgeOptions {
  /** SVC_API. */
  relayUrl: string;
  /** SVC_HOME; a fresh temporary directory when omitted. */
  home?: string;
  /** More environment (SVC_KEY, SVC_TOKEN, ...). */
  env?: Record<string, string>;
  /** Run dist/bridge/main.js instead of bridge/main.ts through tsx. */
  built?: boolean;
  /** Run this one-file bundle (from its own directory); false: bridge/main.ts through tsx, whatever SVC_TEST_BRIDGE says. */
  bundle?: string | false;
  /** MCP protocol revision the client speaks (default 2025-11-25). */
  revision?: McpRevision;
  /** Start from this startup snapshot of `bundle` (scripts/bundle-bridge.mjs --snapshot). */
  snapshot?: string;
  /** The `node` the client launches (default: the one running the tests). */
  node?: string;
}

/** The two MCP protocol revisions the bridge serves. */
export type McpRevision = '2025-11-25' | '2026-07-28';

export interface RunningBridge {
  client: Client;
  home: string;
  /** What the bridge wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

export function tempHome(prefix = 'svc-bridge-test-'): string {
  return join(mkdtempSync(join(tmpdir(), prefix)), 'svc');
}

/** How to run the bridge: node's arguments before the command, and the directory to run in. */
function launch(opts: { built?: boolean | undefined; bundle?: string | false | undefined; snapshot?: string | undefined }): { args: string[]; cwd: string } {
  const bundle = opts.bundle ?? (!opts.built && process.env.SVC_TEST_BRIDGE !== 'sources' ? bridgeBundle() : false);
  if (bundle !== false && opts.snapshot !== undefined) return { args: ['--snapshot-blob', opts.snapshot, pathToFileURL(bundle).href], cwd: dirname(bundle) };
  if (bundle !== false) return { args: [bundle], cwd: dirname(bundle) };
  return { args: opts.built ? ['dist/bridge/main.js'] : ['--import', 'tsx', 'bridge/main.ts'], cwd: REPO_ROOT };
}

function bridgeEnv(opts: StartBridgeOptions, home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'SYSTEMROOT']) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  const compiled = process.env[COMPILE_CACHE_ENV];
  return { ...env, SVC_API: opts.relayUrl, SVC_HOME: home, ...(compiled === undefined ? {} : { SVC_COMPILE_CACHE: compiled }), ...opts.env };
}

/** Spawn the bridge and connect an MCP client to it over stdio. */
export async function startBridge(opts: StartBridgeOptions): Promise<RunningBridge> {
  const home = opts.home ?? tempHome();
  const how = launch(opts);
  const transport = new StdioClientTransport({
    command: opts.node ?? process.execPath,
    args: [...how.args, 'serve'],
    cwd: how.cwd,
    env: bridgeEnv(opts, home),
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  // 2025-11-25 is the v2 client's plain legacy connect (initialize, its LATEST_PROTOCOL_VERSION);
  // 2026-07-28 is pinned: the client opens with server/discover and fails if it is not offered.
  const client = new Client(
    { name: 'svc-test', version: '0.0.0' },
    opts.revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  try {
    await client.connect(transport);
  } catch (e) {
    await transport.close().catch(() => {});
    throw new Error(`bridge did not start: ${(e as Error).message}\n${err}`);
  }
  return {
    client,
    home,
    stderr: () => err,
    close: () => client.close(),
  };
}

/** Call a tool and return its result (tool errors included, as `isError` results). */
export async function callTool(bridge: RunningBridge, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await bridge.client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text content of a tool result. */
export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

/** The structured answer of a tool call that must succeed; throws with the tool's text when it is an error. */
export function toolOk(r: CallToolResult): Record<string, any> {
  if (r.isError) throw new Error(`tool error: ${textOf(r)}`);
  return r.structuredContent as Record<string, any>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Start `svc-bridge <args>` and leave it running (a command that serves, as `view`), stdout and stderr piped. */
export function spawnBridge(
  args: string[],
  opts: { relayUrl: string; home: string; env?: Record<string, string>; bundle?: string | false },
): ChildProcessWithoutNullStreams {
  const how = launch(opts);
  const env = bridgeEnv({ relayUrl: opts.relayUrl, ...(opts.env ? { env: opts.env } : {}) }, opts.home);
  return spawn(process.execPath, [...how.args, ...args], { cwd: how.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Run `svc-bridge <args>` to completion. */
export function runBridge(
  args: string[],
  opts: { relayUrl?: string; home: string; env?: Record<string, string>; built?: boolean; bundle?: string | false; snapshot?: string },
): Promise<CliResult> {
  const env = bridgeEnv({ relayUrl: opts.relayUrl ?? 'http://127.0.0.1:9', ...(opts.env ? { env: opts.env } : {}) }, opts.home);
  return new Promise((resolve, reject) => {
    const how = launch(opts);
    const child = spawn(process.execPath, [...how.args, ...args], { cwd: how.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
