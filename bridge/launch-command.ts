/**
 * How an MCP client launches this bridge, as `svc-bridge --help` shows it. An installed package
 * (its files under a `node_modules` directory, as after `npm install -g`) is launched by its
 * command, `svc-bridge`, when that name on PATH is this very bridge (not through the
 * node_modules/.bin that npx puts on PATH while it runs); anything else, a checkout
 * above all, by `node` and the absolute path of the one-file bundle (`bridge.mjs`,
 * scripts/bundle-bridge.mjs): the file itself when that is what runs, else the checkout's
 * dist/bridge.mjs, which `npm run build` writes beside dist/bridge/ (README's checkout form: one
 * file, compiled from its code cache, starts several times faster than dist/bridge/main.js).
 *
 * A bridge that runs on the Node.js npx fetched (`npx -y node@24 …`, as README says to do where
 * the system's Node is too old) is launched the same way again: its `node` is in npx's cache,
 * first on the PATH npx gave this process only, and the `node` an MCP client finds on its own
 * PATH may be the old one that made npx necessary.
 */
import { realpathSync } from 'node:fs';
import { delimiter, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LaunchCommand {
  readonly command: string;
  readonly args: readonly string[];
}

/** The Node.js running the bridge: its executable and version (process.execPath, process.versions.node). */
export interface RunningNode {
  readonly execPath: string;
  readonly version: string;
}

/** The one-file bundle of the running module: the bundle itself, else the checkout's dist/bridge.mjs (from dist/bridge/ once built, or from the sources). */
export function builtEntry(moduleUrl: string): string {
  if (moduleUrl.endsWith('.mjs')) return fileURLToPath(moduleUrl);
  return fileURLToPath(new URL(moduleUrl.endsWith('.js') ? '../bridge.mjs' : '../dist/bridge.mjs', moduleUrl));
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The `node@MAJOR` package npx ran this Node.js from, or undefined when it is not npx's: npx
 * installs a package into `_npx/<hash>/node_modules/<package>` in its cache, and the `node`
 * package's executable is `node_modules/node/bin/node` there.
 */
export function npxNode(node: RunningNode | undefined): string | undefined {
  if (node === undefined) return undefined;
  const parts = node.execPath.split(/[\\/]/);
  const at = parts.lastIndexOf('_npx');
  const major = /^v?(\d+)\./.exec(node.version)?.[1];
  if (at < 0 || major === undefined || !parts.slice(at).join('/').includes('/node_modules/node/')) return undefined;
  return `node@${major}`;
}

/** The launch command for the entry at `entry`, given the PATH the bridge was started with and the Node.js it runs on. */
export function launchCommand(entry: string, pathEnv: string | undefined, node?: RunningNode): LaunchCommand {
  const entryReal = real(entry) ?? entry;
  const installed = entryReal.split(sep).includes('node_modules');
  const npx = npxNode(node);
  if (installed) {
    for (const dir of (pathEnv ?? '').split(delimiter)) {
      // npm and npx put a node_modules/.bin on PATH only while they run (npx -p PACKAGE svc-bridge):
      // a client started elsewhere would not find the command there.
      if (dir === '' || dir.split(sep).slice(-2).join('/') === 'node_modules/.bin') continue;
      if (real(join(dir, 'svc-bridge')) === entryReal) {
        return npx === undefined ? { command: 'svc-bridge', args: [] } : { command: 'npx', args: ['-y', '-p', npx, 'svc-bridge'] };
      }
    }
  }
  return npx === undefined ? { command: 'node', args: [entry] } : { command: 'npx', args: ['-y', npx, entry] };
}
