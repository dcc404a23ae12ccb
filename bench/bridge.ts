/**
 * The bridge suite: how long an agent waits for the bridge after its MCP client spawns it, in
 * each form a client launches it, against spawning `node -e 0` (to its exit) in the same run.
 *
 * Each case spawns the bridge with a key directory made beforehand, speaks JSON-RPC lines over
 * its stdio as a client does, and times from spawn to the answer it waits for (tools/list:
 * initialize, then notifications/initialized and tools/list, revision 2025-11-25):
 *
 *   tools/list, installed svc-bridge   `npm pack` of this checkout installed into a temporary
 *                                      prefix (test/helpers/package.ts); its `svc-bridge` run as a
 *                                      client runs a command, through its `#!/usr/bin/env node`
 *   tools/list, bridge.mjs alone       the one-file bundle (scripts/bundle-bridge.mjs, built now)
 *                                      alone in an empty directory: `node bridge.mjs`
 *   tools/list, svc.mcpb               dist/svc.mcpb unpacked by the format's own unpacker and
 *                                      launched as its `mcp_config` says (@anthropic-ai/mcpb), as
 *                                      a desktop host does, with this Node as the host's
 *   tools/list, checkout (README)      the checkout form README.md gives (its MCP client JSON, the
 *                                      clone's path filled in), on this checkout built now when
 *                                      its build is older than its sources
 *   tools/list (2026-07-28)            bridge.mjs alone, tools/list carrying the revision's _meta
 *                                      envelope (no session)
 *   first svc_whoami, token minted     bridge.mjs alone: initialize, then svc_whoami; the token
 *                                      file holds a token
 *   first svc_whoami, first mint       the same with no token file: challenge, signature, verify
 *   tools/list, first start            bridge.mjs alone with no compile cache in the key
 *                                      directory yet: the first start on a machine, or after an
 *                                      upgrade of the bridge or of Node.js
 *   tools/list, bridge.mjs on Node 20  bridge.mjs launched by the system Node when it is older
 *                                      than 22.13 (/usr/bin/node): it re-launches itself on Node 24
 *
 * and two starts from a startup snapshot of the bundle (scripts/bundle-bridge.mjs --snapshot,
 * built now for this Node.js), for comparison only (no launch form starts that way: a blob
 * belongs to one Node.js build, and a launcher that checks it first is one more Node start):
 *
 *   tools/list, snapshot direct        `node --snapshot-blob FILE BUNDLE_URL serve`
 *   tools/list, snapshot launched      a small CommonJS launcher that checks the snapshot is there
 *                                      and replaces itself with the direct command (process.execve)
 *
 * The relay is its own process with rate limits off (bench only). 20 runs of each case,
 * interleaved round by round; the figure is the median (p99 and max beside it). Targets: every
 * launch form's tools/list within 2.5 times node -e 0; the first svc_whoami with a token minted
 * within 2 times tools/list of the same form. The machine's load average is sampled every round
 * (other work on it slows every figure, node -e 0 included).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { getMcpConfigForManifest, unpackExtension } from '@anthropic-ai/mcpb';
import { RelayClient } from '../bridge/relay-client.js';
import { createKey, openKeyDirectory } from '../bridge/keys/keys.js';
import { tokenFilePath } from '../bridge/keys/token-file.js';
import { REPO_ROOT, tempDataDir } from '../test/helpers/relay.js';
import { tempHome } from '../test/helpers/bridge.js';
import { buildBridgeBundle, buildBridgeSnapshot } from '../test/helpers/bundle.js';
import { packAndInstall } from '../test/helpers/package.js';
import { median, summarizeLatency, formatDuration, type Row, type Suite, type SuiteReport } from './harness.js';
import { spawnBenchRelay } from './relay-fixture.js';
import { nodeIsRecentEnough } from '../launch/node-version.js';

const RUNS = 20;
/** tools/list from every launch form: at most this many times node -e 0. */
const TARGET_RATIO = 2.5;
/** The first svc_whoami with a token minted: at most this many times tools/list of the same form. */
const TARGET_WHOAMI_RATIO = 2;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'svc-bench', version: '0.0.0' },
};

/** Newest modification time of the sources under `dir` (ms). */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : /\.(ts|mjs|json)$/.test(e.name) ? statSync(p).mtimeMs : 0);
  }
  return t;
}

/** How to start a bridge: the command (default: this Node), its arguments before `serve`, the directory to run in, PATH. */
interface Entry {
  command?: string;
  args: string[];
  cwd: string;
  path?: string;
}

/** The system Node (/usr/bin/node) when it is older than the bridge needs, so that it re-launches on Node 24. */
function olderSystemNode(): string | undefined {
  const r = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && !nodeIsRecentEnough(r.stdout.trim()) ? '/usr/bin/node' : undefined;
}

/** The checkout's build (dist/), built now with `npm run build` when older than its sources; how it was had. */
function checkoutBuild(): string {
  const outputs = ['dist/bridge/main.js', 'dist/bridge.mjs', 'dist/svc.mcpb'].map((f) => join(REPO_ROOT, f));
  const sources = Math.max(...['bridge', 'tools', 'shared', 'launch', 'scripts'].map((d) => newest(join(REPO_ROOT, d))));
  if (outputs.every((f) => existsSync(f) && statSync(f).mtimeMs >= sources)) return 'the checkout: dist/ built, up to date';
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  return 'the checkout: dist/ built now (npm run build)';
}

/**
 * The checkout form README.md gives: the `args` of its MCP client JSON with `node`, the clone's
 * path (`/path/to/svc`) replaced by this checkout's.
 */
function readmeForm(): { args: string[]; shown: string } {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const line = readme.split('\n').find((l) => l.includes('"mcpServers"') && l.includes('"command": "node"') && l.includes('/path/to/svc/'));
  if (line === undefined) throw new Error('README.md gives no MCP client JSON with "command": "node" and a /path/to/svc/ path');
  const config = JSON.parse(line) as { mcpServers: { svc: { args: string[] } } };
  const shown = config.mcpServers.svc.args;
  return { args: shown.map((a) => a.replace('/path/to/svc/', `${REPO_ROOT.replace(/\/$/, '')}/`)), shown: `node ${shown.join(' ')}` };
}

/** dist/svc.mcpb unpacked by the format's own unpacker, and the command its manifest says a host runs. */
async function mcpbForm(dir: string, relay: string, home: string): Promise<Entry> {
  const out = join(dir, 'svc');
  if (!(await unpackExtension({ mcpbPath: join(REPO_ROOT, 'dist/svc.mcpb'), outputDir: out, silent: true }))) throw new Error('dist/svc.mcpb did not unpack');
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as never;
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: out,
    systemDirs: { HOME: home, DESKTOP: home, DOCUMENTS: home, DOWNLOADS: home },
    userConfig: { relay, key_directory: home },
    pathSeparator: '/',
  });
  if (config === undefined || config.command !== 'node') throw new Error('the manifest does not launch the bundle with node');
  return { args: config.args ?? [], cwd: home };
}

/**
 * A launcher as a package bin would need one: Node starts it, it checks that the snapshot is
 * there and replaces itself with the snapshot start (a child with the same stdio where Node has
 * no process.execve), else would load the bundle.
 */
function launcherSource(direct: string[]): string {
  return `const args = ${JSON.stringify(direct)};
require('node:fs').statSync(args[1]);
const argv = [...args, ...process.argv.slice(2)];
if (typeof process.execve === 'function') process.execve(process.execPath, [process.execPath, ...argv], process.env);
require('node:child_process').spawn(process.execPath, argv, { stdio: 'inherit' }).on('exit', (code) => process.exit(code ?? 1));
`;
}

function envFor(api: string, home: string, path = process.env.PATH ?? ''): Record<string, string> {
  return { PATH: path, HOME: process.env.HOME ?? '', SVC_API: api, SVC_HOME: home };
}

/**
 * Spawn the bridge, send `opening` at once, then whatever `next` returns for each answer;
 * resolve with the ms from spawn to the answer whose id is `until`.
 */
function timeBridge(
  entry: Entry,
  env: Record<string, string>,
  opening: unknown[],
  next: (answer: { id?: number }) => unknown[],
  until: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(entry.command ?? process.execPath, [...entry.args, 'serve'], {
      cwd: entry.cwd,
      env: entry.path === undefined ? env : { ...env, PATH: entry.path },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const send = (ms: unknown[]) => {
      for (const m of ms) child.stdin.write(`${JSON.stringify(m)}\n`);
    };
    let done = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = JSON.parse(line) as { id?: number; error?: unknown; result?: { isError?: boolean } };
      if (m.id === until && !done) {
        done = true;
        const ms = performance.now() - t0;
        child.stdin.end();
        if (m.error !== undefined || m.result?.isError === true) reject(new Error(`bridge answered an error: ${line.slice(0, 300)}\n${err}`));
        else child.once('exit', () => resolve(ms));
        return;
      }
      send(next(m));
    });
    child.on('exit', (code) => {
      if (!done) reject(new Error(`bridge exited (${code}) before answering:\n${err}`));
    });
    send(opening);
  });
}

function timeNodeBaseline(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`node -e 0 exited ${code}`))));
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'svc-bench', version: '0.0.0' } },
};
const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** After the initialize answer: initialized, then `request` as id 2. */
function afterInit(request: Record<string, unknown>): (a: { id?: number }) => unknown[] {
  return (a) => (a.id === 1 ? [initialized, { jsonrpc: '2.0', id: 2, ...request }] : []);
}

const listTools = (entry: Entry, env: Record<string, string>) => () => timeBridge(entry, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2);

interface Case {
  name: string;
  prepare?: () => void | Promise<void>;
  run: () => Promise<number>;
  /** Target: at most this many times node -e 0. */
  ratio?: number;
  /** Target: at most `ratio` times the case named here (instead of node -e 0). */
  against?: string;
}

export const bridgeSuite: Suite = {
  name: 'bridge',
  title: 'svc-bridge start, as each MCP client launch form starts it: spawn to tools/list and to the first svc_whoami, median of 20',
  async run(): Promise<SuiteReport> {
    const built = checkoutBuild();
    const readme = readmeForm();
    const checkout: Entry = { args: readme.args, cwd: REPO_ROOT };
    // The package as installed, and the bundle alone; each runs from an empty directory of its own.
    const pkg = packAndInstall();
    const aloneDir = mkdtempSync(join(tmpdir(), 'svc-bench-bundle-'));
    const dataDir = tempDataDir('svc-bench-bridge-');
    const home = tempHome('svc-bench-bridge-');
    let relay: Awaited<ReturnType<typeof spawnBenchRelay>> | undefined;
    try {
      const installed: Entry = { command: pkg.bin.bridge, args: [], cwd: pkg.scratch, path: pkg.path };
      buildBridgeBundle(join(aloneDir, 'bridge.mjs'));
      const alone: Entry = { args: [join(aloneDir, 'bridge.mjs')], cwd: aloneDir };
      const systemNode = olderSystemNode();
      const blob = join(aloneDir, 'bridge.blob');
      buildBridgeSnapshot(blob);
      const direct = ['--snapshot-blob', blob, pathToFileURL(join(aloneDir, 'bridge.mjs')).href];
      const snapshot: Entry = { args: direct, cwd: aloneDir };
      writeFileSync(join(aloneDir, 'launch.cjs'), launcherSource(direct));
      const launched: Entry = { args: [join(aloneDir, 'launch.cjs')], cwd: aloneDir };
      relay = await spawnBenchRelay(dataDir);
      const mcpb = await mcpbForm(aloneDir, relay.url, home);
      // The KEY exists beforehand (a KEY is made once, not per start), registered by a first mint.
      const dir = openKeyDirectory(home);
      const key = createKey(dir, 'default').key;
      const api = new URL(relay.url);
      const client = new RelayClient({ api, key, dir });
      await client.mint();
      const tokenFile = tokenFilePath(dir, 'default', api);
      const env = envFor(relay.url, home);
      // The first start has a key directory of its own: removing its compile cache leaves the others' in place.
      const firstHome = join(dirname(home), 'first');
      const firstDir = openKeyDirectory(firstHome);
      createKey(firstDir, 'default');
      const firstEnv = envFor(relay.url, firstHome);
      const compileCache = join(firstDir.cacheDir, 'compile');

      const cases: Case[] = [
        { name: 'spawn node -e 0', run: timeNodeBaseline },
        { name: 'tools/list, installed svc-bridge', ratio: TARGET_RATIO, run: listTools(installed, env) },
        { name: 'tools/list, bridge.mjs alone', ratio: TARGET_RATIO, run: listTools(alone, env) },
        { name: 'tools/list, svc.mcpb', ratio: TARGET_RATIO, run: listTools(mcpb, env) },
        { name: 'tools/list, checkout (README)', ratio: TARGET_RATIO, run: listTools(checkout, env) },
        {
          name: 'tools/list (2026-07-28)',
          ratio: TARGET_RATIO,
          run: () => timeBridge(alone, env, [{ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } }], () => [], 2),
        },
        {
          name: 'first svc_whoami, token minted',
          ratio: TARGET_WHOAMI_RATIO,
          against: 'tools/list, bridge.mjs alone',
          prepare: async () => {
            if (!existsSync(tokenFile)) await client.mint();
          },
          run: () => timeBridge(alone, env, [initialize], afterInit({ method: 'tools/call', params: { name: 'svc_whoami', arguments: {} } }), 2),
        },
        {
          name: 'first svc_whoami, first mint',
          prepare: () => rmSync(tokenFile, { force: true }),
          run: () => timeBridge(alone, env, [initialize], afterInit({ method: 'tools/call', params: { name: 'svc_whoami', arguments: {} } }), 2),
        },
        // Last of the bridge.mjs starts of a round: the next round's first start finds the cache it left.
        { name: 'tools/list, first start', prepare: () => rmSync(compileCache, { recursive: true, force: true }), run: listTools(alone, firstEnv) },
        ...(systemNode === undefined ? [] : [{ name: 'tools/list, bridge.mjs on Node 20', run: listTools({ ...alone, command: systemNode }, env) }]),
        { name: 'tools/list, snapshot direct', run: listTools(snapshot, env) },
        { name: 'tools/list, snapshot launched', run: listTools(launched, env) },
      ];

      // One untimed start of each, so file caches, the compile cache and the relay are warm.
      for (const c of cases) {
        await c.prepare?.();
        await c.run();
      }
      const loads: number[] = [];
      const samples = cases.map(() => [] as number[]);
      for (let r = 0; r < RUNS; r++) {
        loads.push(loadavg()[0]!);
        for (const [i, c] of cases.entries()) {
          await c.prepare?.();
          samples[i]!.push(await c.run());
        }
      }
      loads.push(loadavg()[0]!);

      const medians = new Map(cases.map((c, i) => [c.name, median(samples[i]!)]));
      const baseline = medians.get(cases[0]!.name)!;
      const rows: Row[] = cases.map((c, i) => {
        const ms = samples[i]!;
        const med = medians.get(c.name)!;
        const against = c.against === undefined ? '' : `; ${(med / medians.get(c.against)!).toFixed(2)}x ${c.against}`;
        return {
          name: c.name,
          opsPerSec: 1000 / med,
          ...(i === 0 ? {} : { baseline: cases[0]!.name }),
          latency: summarizeLatency(ms.map((x) => x * 1e6)),
          note: i === 0 ? 'median; the cost of starting Node alone' : `${formatDuration((med - baseline) * 1e6)} above node -e 0${against}`,
        };
      });
      const notes = [
        `load average (1 min) during the run: ${Math.min(...loads).toFixed(2)} to ${Math.max(...loads).toFixed(2)}, median ${median(loads).toFixed(2)}, on ${readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length} CPUs`,
        `installed svc-bridge: npm pack of this checkout, npm install -g --offline into a temporary prefix; ${pkg.bin.bridge.slice(pkg.prefix.length + 1)} run through its #! line with PATH the prefix's bin and this Node's directory`,
        'bridge.mjs alone: scripts/bundle-bridge.mjs built now, in an empty directory',
        'svc.mcpb: dist/svc.mcpb unpacked by @anthropic-ai/mcpb, launched as its mcp_config says with this Node as the host\'s',
        `checkout (README): ${readme.shown}; ${built}`,
        'tools/list (2026-07-28), first svc_whoami: bridge.mjs alone',
        `first start: bridge.mjs alone after removing ${compileCache.slice(dirname(home).length + 1)} (a key directory of its own)`,
        `program hashes (the compile cache each form uses): ${(
          [
            ['installed', realpathSync(pkg.bin.bridge)],
            ['alone', join(aloneDir, 'bridge.mjs')],
            ['svc.mcpb', mcpb.args[0]!],
            ['checkout', readme.args[0]!],
          ] as const
        )
          .map(([form, file]) => `${form} ${/svc-program-hash (\w+)/.exec(readFileSync(file, 'utf8').slice(-64))?.[1] ?? 'none'}`)
          .join(', ')}`,
        systemNode === undefined
          ? 'bridge.mjs on Node 20: not measured (no /usr/bin/node older than 22.13 on this machine)'
          : `bridge.mjs on Node 20: the same file launched by ${systemNode} (${spawnSync(systemNode, ['--version'], { encoding: 'utf8' }).stdout.trim()}), which re-launches it on Node 24 from npm's cache (launch/recent-node.mjs): one Node start more`,
        `snapshot (comparison only): scripts/bundle-bridge.mjs --snapshot built now for Node ${process.version} (${(statSync(blob).size / 1e6).toFixed(1)} MB); launched: process.execve ${typeof process.execve === 'function' ? 'replaces the launcher' : 'is missing, the launcher spawns the snapshot with stdio inherited'}`,
        `${RUNS} runs per case, interleaved; time/op is the median start, p99 and max beside it.`,
      ];
      for (const c of cases) {
        if (c.ratio === undefined) continue;
        const med = medians.get(c.name)!;
        const base = c.against === undefined ? baseline : medians.get(c.against)!;
        const ratio = med / base;
        notes.push(`target ${c.name} within ${c.ratio}x ${c.against ?? 'node -e 0'}: ${ratio <= c.ratio ? 'met' : 'missed'} (${ratio.toFixed(2)}x: ${med.toFixed(0)} ms against ${base.toFixed(0)} ms)`);
      }
      return { rows, notes };
    } finally {
      await relay?.kill('SIGTERM');
      pkg.remove();
      rmSync(aloneDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(dirname(home), { recursive: true, force: true });
    }
  },
};
