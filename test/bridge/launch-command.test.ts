/**
 * The command `svc-bridge --help` tells people to give their MCP client
 * (bridge/launch-command.ts): `svc-bridge` for an installed package whose command is on PATH,
 * else node and the absolute path of the built entry, as in a checkout; each through
 * `npx -y node@N` when the Node.js running the bridge is the one npx fetched.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { builtEntry, launchCommand, npxNode } from '../../bridge/launch-command.js';
import { REPO_ROOT } from '../helpers/relay.js';
import { runBridge, tempHome } from '../helpers/bridge.js';

/** A global install's layout: PREFIX/lib/node_modules/svc-bridge/dist/bridge/main.js and PREFIX/bin/svc-bridge linking to it. */
function fakeGlobalInstall(): { prefix: string; entry: string } {
  const prefix = mkdtempSync(join(tmpdir(), 'svc-prefix-'));
  const entry = join(prefix, 'lib/node_modules/svc-bridge/dist/bridge/main.js');
  mkdirSync(join(prefix, 'lib/node_modules/svc-bridge/dist/bridge'), { recursive: true });
  writeFileSync(entry, '');
  mkdirSync(join(prefix, 'bin'));
  symlinkSync('../lib/node_modules/svc-bridge/dist/bridge/main.js', join(prefix, 'bin/svc-bridge'));
  return { prefix, entry };
}

describe('how --help says to launch the bridge', () => {
  it('an installed bridge whose svc-bridge is on PATH is launched as svc-bridge', () => {
    const { prefix, entry } = fakeGlobalInstall();
    expect(launchCommand(entry, ['/nowhere', join(prefix, 'bin')].join(delimiter))).toEqual({ command: 'svc-bridge', args: [] });
  });

  it('an installed bridge whose command is not on PATH, or is another program, is launched by node and its path', () => {
    const { entry } = fakeGlobalInstall();
    expect(launchCommand(entry, '/usr/bin')).toEqual({ command: 'node', args: [entry] });
    const other = fakeGlobalInstall();
    expect(launchCommand(entry, join(other.prefix, 'bin'))).toEqual({ command: 'node', args: [entry] });
  });

  it('a bridge run by npx (its command on PATH only through the node_modules/.bin of npx) is launched by node and its path', () => {
    const cache = mkdtempSync(join(tmpdir(), 'svc-npx-'));
    const entry = join(cache, '_npx/0123abcd/node_modules/svc-bridge/dist/bridge.mjs');
    mkdirSync(join(cache, '_npx/0123abcd/node_modules/svc-bridge/dist'), { recursive: true });
    mkdirSync(join(cache, '_npx/0123abcd/node_modules/.bin'));
    writeFileSync(entry, '');
    symlinkSync('../svc/dist/bridge.mjs', join(cache, '_npx/0123abcd/node_modules/.bin/svc-bridge'));
    expect(launchCommand(entry, [join(cache, '_npx/0123abcd/node_modules/.bin'), '/usr/bin'].join(delimiter))).toEqual({ command: 'node', args: [entry] });
  });

  it('a checkout is launched by node and the absolute path of its build, even with an svc-bridge on PATH', () => {
    const { prefix } = fakeGlobalInstall();
    const entry = join(REPO_ROOT, 'dist/bridge.mjs');
    expect(launchCommand(entry, join(prefix, 'bin'))).toEqual({ command: 'node', args: [entry] });
  });

  it('a bridge run on the Node.js npx fetched is launched through npx the same way', () => {
    const npx = { execPath: '/home/you/.npm/_npx/387698761821791d/node_modules/node/bin/node', version: '24.11.1' };
    const entry = join(REPO_ROOT, 'dist/bridge.mjs');
    expect(launchCommand(entry, '/usr/bin', npx)).toEqual({ command: 'npx', args: ['-y', 'node@24', entry] });
    const { prefix, entry: installed } = fakeGlobalInstall();
    expect(launchCommand(installed, join(prefix, 'bin'), npx)).toEqual({ command: 'npx', args: ['-y', '-p', 'node@24', 'svc-bridge'] });
    // Any other Node.js keeps the plain forms.
    for (const execPath of ['/usr/bin/node', '/home/you/.nvm/versions/node/v24.11.1/bin/node', '/home/you/_npx/tools/bin/node']) {
      expect(npxNode({ execPath, version: '24.11.1' }), execPath).toBeUndefined();
      expect(launchCommand(entry, '/usr/bin', { execPath, version: '24.11.1' })).toEqual({ command: 'node', args: [entry] });
    }
  });

  it('--help, run on a node in npx\'s cache, gives the npx -y node@N forms with this checkout\'s path', async () => {
    // npx's layout: _npx/<hash>/node_modules/node/bin/node, here a link to (or copy of) this very Node.js.
    const cache = mkdtempSync(join(tmpdir(), 'svc-npx-'));
    const bin = join(cache, '_npx/0123456789abcdef/node_modules/node/bin');
    mkdirSync(bin, { recursive: true });
    const node = join(bin, 'node');
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
    let r: SpawnSyncReturns<string>;
    try {
      r = spawnSync(node, ['--import', 'tsx', 'bridge/main.ts', '--help'], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: tempHome() } });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
    expect(r.status, r.stderr).toBe(0);
    const entry = join(REPO_ROOT, 'dist/bridge.mjs');
    const major = process.versions.node.split('.')[0];
    expect(r.stdout).toContain(`{"mcpServers": {"svc": {"command": "npx", "args": ["-y", "node@${major}", ${JSON.stringify(entry)}], "env": {"SVC_API": "http://127.0.0.1:8787"}}}}`);
    expect(r.stdout).toContain(`claude mcp add svc --env SVC_API=http://127.0.0.1:8787 -- npx -y node@${major} ${entry}`);
  }, 60_000);

  it('the built entry of a checkout is its one-file bundle, dist/bridge.mjs, from the compiled bridge or from the sources', () => {
    expect(builtEntry(pathToFileURL(join(REPO_ROOT, 'dist/bridge/cli.js')).href)).toBe(join(REPO_ROOT, 'dist/bridge.mjs'));
    expect(builtEntry(pathToFileURL(join(REPO_ROOT, 'bridge/cli.ts')).href)).toBe(join(REPO_ROOT, 'dist/bridge.mjs'));
  });

  it('the one-file bundle is its own entry, wherever it was copied', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
    expect(builtEntry(pathToFileURL(join(dir, 'bridge.mjs')).href)).toBe(join(dir, 'bridge.mjs'));
    expect(builtEntry(pathToFileURL(join(REPO_ROOT, 'dist/bridge.mjs')).href)).toBe(join(REPO_ROOT, 'dist/bridge.mjs'));
  });

  it('in this checkout, --help gives the node form with this checkout path and no npm link advice', async () => {
    const r = await runBridge(['--help'], { home: tempHome(), bundle: false });
    const entry = join(REPO_ROOT, 'dist/bridge.mjs');
    expect(r.stdout).toContain(`{"mcpServers": {"svc": {"command": "node", "args": [${JSON.stringify(entry)}], "env": {"SVC_API": "http://127.0.0.1:8787"}}}}`);
    expect(r.stdout).toContain(`claude mcp add svc --env SVC_API=http://127.0.0.1:8787 -- node ${entry}`);
    expect(r.stdout).not.toContain('npm link');
  }, 60_000);
});
