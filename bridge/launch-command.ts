/**
 * How an MCP client launches this bridge, as `svc-bridge --help` shows it. An installed package
 * (its files under a `node_modules` directory, as after `npm install -g`) is launched by its
 * command, `svc-bridge`, when that name on PATH is this very bridge (not through the
 * node_modules/.bin that npx puts on PATH while it runs); anything else, a checkout
 * above all, by `node` and the absolute path of the built entry: dist/bridge/main.js, or the
 * one-file bundle itself (`bridge.mjs`, scripts/bundle-bridge.mjs) when that is what runs.
 */
import { realpathSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** The built entry beside the running module: the bundle itself, main.js once built, else where `npm run build` puts it. */
export function builtEntry(moduleUrl: string): string {
  if (moduleUrl.endsWith('.mjs')) return fileURLToPath(moduleUrl);
  return fileURLToPath(new URL(moduleUrl.endsWith('.js') ? './main.js' : '../dist/bridge/main.js', moduleUrl));
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** The launch command for the entry at `entry`, given the PATH the bridge was started with. */
export function launchCommand(entry: string, pathEnv: string | undefined): LaunchCommand {
  const entryReal = real(entry) ?? entry;
  const installed = entryReal.split(sep).includes('node_modules');
  if (installed) {
    for (const dir of (pathEnv ?? '').split(delimiter)) {
      // npm and npx put a node_modules/.bin on PATH only while they run (npx -p PACKAGE svc-bridge):
      // a client started elsewhere would not find the command there.
      if (dir === '' || dir.split(sep).slice(-2).join('/') === 'node_modules/.bin') continue;
      if (real(join(dir, 'svc-bridge')) === entryReal) return { command: 'svc-bridge', args: [] };
    }
  }
  return { command: 'node', args: [entry] };
}
