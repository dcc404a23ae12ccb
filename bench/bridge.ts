/**
 * The bridge suite: how long an agent waits for the bridge after its MCP client spawns it.
 *
 * Each case spawns `svc-bridge` (the built dist/bridge/main.js when it is up to date, else it
 * builds it; tsx only if the build fails, and the notes say which) with a key directory made
 * beforehand, speaks JSON-RPC lines over its stdio as a client does, and times from spawn to
 * the answer it waits for:
 *
 *   tools/list (2025-11-25)          initialize, then notifications/initialized and tools/list
 *   tools/list (2026-07-28)          tools/list carrying the revision's _meta envelope (no session)
 *   first svc_whoami, token minted   initialize, then svc_whoami; the token file holds a token
 *   first svc_whoami, first mint     the same with no token file: challenge, signature, verify
 *
 * and the two ways a person gets the bridge without a checkout, each timed to the tools/list
 * answer (2025-11-25) like the first case:
 *
 *   tools/list, installed package    `npm pack` of this checkout installed into a temporary
 *                                    prefix (test/helpers/package.ts); its svc-bridge, run from
 *                                    an empty directory
 *   tools/list, bridge.mjs alone     the one-file bundle (scripts/bundle-bridge.mjs, built now
 *                                    from the sources) alone in an empty directory
 *   tools/list, bridge.mjs on Node 20  the same, launched by the system Node when it is older than
 *                                    22.13 (/usr/bin/node): it re-launches itself on Node 24
 *
 * and two starts from a startup snapshot of that bundle (scripts/bundle-bridge.mjs --snapshot,
 * built now for this Node.js), to weigh whether the package should start that way:
 *
 *   tools/list, snapshot direct      `node --snapshot-blob FILE BUNDLE_URL serve`, as an MCP client
 *                                    configured with that command would start it
 *   tools/list, snapshot launched    a small CommonJS launcher that checks the snapshot is there
 *                                    and replaces itself with the direct command (process.execve),
 *                                    as a package bin that falls back to the bundle would have to
 *
 * against the baseline of spawning `node -e 0` (to its exit) in the same run. The relay is its
 * own process with rate limits off (bench only). 20 runs of each case, interleaved round by
 * round; the figure is the median (p99 and max beside it). Targets: tools/list under 300 ms,
 * the first svc_whoami under 500 ms; from the package, from bridge.mjs and from the snapshot,
 * tools/list within 2.5 times node -e 0.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
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
const TARGET_LIST_MS = 300;
const TARGET_WHOAMI_MS = 500;
/** tools/list from the installed package and from bridge.mjs: at most this many times node -e 0. */
const TARGET_RATIO = 2.5;
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'svc-bench', version: '0.0.0' },
};

/** Newest modification time under a directory of sources (ms). */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : e.name.endsWith('.ts') ? statSync(p).mtimeMs : 0);
  }
  return t;
}

/** How to start a bridge: node's arguments before the command, the directory to run in, and which node (default: this one). */
interface Entry {
  args: string[];
  cwd: string;
  node?: string;
}

/** The system Node (/usr/bin/node) when it is older than the bridge needs, so that it re-launches on Node 24. */
function olderSystemNode(): string | undefined {
  const r = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  return r.status === 0 && !nodeIsRecentEnough(r.stdout.trim()) ? '/usr/bin/node' : undefined;
}

/** The command that starts the bridge, and how it was chosen. */
function bridgeEntry(): { args: string[]; note: string } {
  const dist = join(REPO_ROOT, 'dist/bridge/main.js');
  const sources = Math.max(...['bridge', 'tools', 'shared'].map((d) => newest(join(REPO_ROOT, d))));
  if (existsSync(dist) && statSync(dist).mtimeMs >= sources) return { args: [dist], note: 'bridge: dist/bridge/main.js (built, up to date)' };
  const build = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (build.status === 0 && existsSync(dist)) return { args: [dist], note: 'bridge: dist/bridge/main.js (built now: npm run build)' };
  return { args: ['--import', 'tsx', join(REPO_ROOT, 'bridge/main.ts')], note: `bridge: bridge/main.ts through tsx (the build failed: ${(build.stderr || build.stdout).split('\n')[0]})` };
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

function envFor(api: string, home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_API: api, SVC_HOME: home };
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
    const child = spawn(entry.node ?? process.execPath, [...entry.args, 'serve'], { cwd: entry.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
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
        else resolve(ms);
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

export const bridgeSuite: Suite = {
  name: 'bridge',
  title: 'svc-bridge start: spawn to tools/list and to the first svc_whoami answer, median of 20',
  async run(): Promise<SuiteReport> {
    const chosen = bridgeEntry();
    const entry: Entry = { args: chosen.args, cwd: REPO_ROOT };
    // The package as installed, and the bundle alone; each runs from an empty directory of its own.
    const pkg = packAndInstall();
    const aloneDir = mkdtempSync(join(tmpdir(), 'svc-bench-bundle-'));
    const dataDir = tempDataDir('svc-bench-bridge-');
    const home = tempHome('svc-bench-bridge-');
    let relay: Awaited<ReturnType<typeof spawnBenchRelay>> | undefined;
    try {
      const installed: Entry = { args: [realpathSync(pkg.bin.bridge)], cwd: pkg.scratch };
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
      // The KEY exists beforehand (a KEY is made once, not per start), registered by a first mint.
      const dir = openKeyDirectory(home);
      const key = createKey(dir, 'default').key;
      const api = new URL(relay.url);
      const client = new RelayClient({ api, key, dir });
      await client.mint();
      const tokenFile = tokenFilePath(dir, 'default', api);
      const env = envFor(relay.url, home);

      const cases: { name: string; prepare?: () => void | Promise<void>; run: () => Promise<number>; target?: number; ratio?: number }[] = [
        { name: 'spawn node -e 0', run: timeNodeBaseline },
        {
          name: 'tools/list (2025-11-25)',
          target: TARGET_LIST_MS,
          run: () => timeBridge(entry, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
        },
        {
          name: 'tools/list (2026-07-28)',
          target: TARGET_LIST_MS,
          run: () => timeBridge(entry, env, [{ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } }], () => [], 2),
        },
        {
          name: 'tools/list, installed package',
          ratio: TARGET_RATIO,
          run: () => timeBridge(installed, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
        },
        {
          name: 'tools/list, bridge.mjs alone',
          ratio: TARGET_RATIO,
          run: () => timeBridge(alone, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
        },
        ...(systemNode === undefined
          ? []
          : [
              {
                name: 'tools/list, bridge.mjs on Node 20',
                ratio: TARGET_RATIO + 1,
                run: () => timeBridge({ ...alone, node: systemNode }, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
              },
            ]),
        {
          name: 'tools/list, snapshot direct',
          ratio: TARGET_RATIO,
          run: () => timeBridge(snapshot, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
        },
        {
          name: 'tools/list, snapshot launched',
          ratio: TARGET_RATIO,
          run: () => timeBridge(launched, env, [initialize], afterInit({ method: 'tools/list', params: {} }), 2),
        },
        {
          name: 'first svc_whoami, token minted',
          target: TARGET_WHOAMI_MS,
          prepare: async () => {
            if (!existsSync(tokenFile)) await client.mint();
          },
          run: () => timeBridge(entry, env, [initialize], afterInit({ method: 'tools/call', params: { name: 'svc_whoami', arguments: {} } }), 2),
        },
        {
          name: 'first svc_whoami, first mint',
          target: TARGET_WHOAMI_MS,
          prepare: () => rmSync(tokenFile, { force: true }),
          run: () => timeBridge(entry, env, [initialize], afterInit({ method: 'tools/call', params: { name: 'svc_whoami', arguments: {} } }), 2),
        },
      ];

      // One untimed start of each, so file caches and the relay are warm.
      for (const c of cases) {
        await c.prepare?.();
        await c.run();
      }
      const samples = cases.map(() => [] as number[]);
      for (let r = 0; r < RUNS; r++) {
        for (const [i, c] of cases.entries()) {
          await c.prepare?.();
          samples[i]!.push(await c.run());
        }
      }

      const baseline = median(samples[0]!);
      const rows: Row[] = cases.map((c, i) => {
        const ms = samples[i]!;
        const med = median(ms);
        return {
          name: c.name,
          opsPerSec: 1000 / med,
          ...(i === 0 ? {} : { baseline: cases[0]!.name }),
          latency: summarizeLatency(ms.map((x) => x * 1e6)),
          note:
            i === 0
              ? 'median; the cost of starting Node alone'
              : `median ${formatDuration(med * 1e6)}, ${formatDuration((med - baseline) * 1e6)} above node -e 0, ${(med / baseline).toFixed(2)}x`,
        };
      });
      const notes = [
        chosen.note,
        `installed package: npm pack of this checkout, npm install -g --offline into a temporary prefix; its svc-bridge is ${installed.args[0]!.slice(pkg.prefix.length + 1)}`,
        'bridge.mjs alone: scripts/bundle-bridge.mjs built now, copied into an empty directory',
        systemNode === undefined
          ? 'bridge.mjs on Node 20: not measured (no /usr/bin/node older than 22.13 on this machine)'
          : `bridge.mjs on Node 20: the same file launched by ${systemNode} (${spawnSync(systemNode, ['--version'], { encoding: 'utf8' }).stdout.trim()}), which re-launches it on Node 24 from npm's cache (launch/recent-node.mjs): one more Node start, so its target is one more than the others'`,
        `snapshot: scripts/bundle-bridge.mjs --snapshot built now for Node ${process.version} (${(statSync(blob).size / 1e6).toFixed(1)} MB); launched: process.execve ${typeof process.execve === 'function' ? 'replaces the launcher' : 'is missing, the launcher spawns the snapshot with stdio inherited'}`,
        `${RUNS} runs per case, interleaved; time/op is the median start, p99 and max beside it.`,
      ];
      for (const [i, c] of cases.entries()) {
        const med = median(samples[i]!);
        if (c.target !== undefined) {
          notes.push(`target ${c.name} < ${c.target} ms: ${med < c.target ? 'met' : 'missed'} (median ${med.toFixed(0)} ms; node -e 0 ${baseline.toFixed(0)} ms)`);
        }
        if (c.ratio !== undefined) {
          const ratio = med / baseline;
          notes.push(`target ${c.name} within ${c.ratio}x node -e 0: ${ratio <= c.ratio ? 'met' : 'missed'} (${ratio.toFixed(2)}x: median ${med.toFixed(0)} ms; node -e 0 ${baseline.toFixed(0)} ms)`);
        }
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
