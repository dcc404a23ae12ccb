/**
 * The one-file bridge (`/bridge.mjs`) for tests. The global setup (test/setup/bridge-bundle.ts)
 * builds it once per test run from the current sources with scripts/bundle-bridge.mjs, the
 * script `npm run build` runs, into a temporary directory removed when the run ends, and names
 * the file in SVC_TEST_BRIDGE_BUNDLE. Tests never take dist/bridge.mjs: it may be older than
 * the sources.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Not ./relay.js's REPO_ROOT: the global setup imports this file, and should load no relay code.
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const BUNDLE_ENV = 'SVC_TEST_BRIDGE_BUNDLE';
/** The compile cache the run's bridges share (SVC_COMPILE_CACHE): one first start compiles the bundle, the others take its code. */
export const COMPILE_CACHE_ENV = 'SVC_TEST_COMPILE_CACHE';
export const BUNDLE_ERROR_ENV = 'SVC_TEST_BRIDGE_BUNDLE_ERROR';

/** Write the bundle to `outfile` with the build's own script; throws with its output when it fails. */
export function buildBridgeBundle(outfile: string): void {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/bundle-bridge.mjs'), '--outfile', outfile], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`bundling the bridge failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}

/** The bundle the global setup built for this run. */
export function bridgeBundle(): string {
  const path = process.env[BUNDLE_ENV];
  if (path !== undefined && path !== '') return path;
  throw new Error(process.env[BUNDLE_ERROR_ENV] ?? `no bridge bundle: ${BUNDLE_ENV} is set by the vitest global setup test/setup/bridge-bundle.ts`);
}

export interface LoneBundle {
  /** bridge.mjs, alone in `dir`. */
  readonly file: string;
  readonly dir: string;
  remove(): void;
}

/** A copy of the bundle alone in a fresh directory: no node_modules, no package.json, nothing of the checkout. */
export function bundleAlone(): LoneBundle {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bridge-alone-'));
  const file = join(dir, 'bridge.mjs');
  copyFileSync(bridgeBundle(), file);
  return { file, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Build a startup snapshot of the bridge for this Node.js into `blob` with the build's own script; throws with its output when it fails. */
export function buildBridgeSnapshot(blob: string): void {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/bundle-bridge.mjs'), '--snapshot', blob], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the bridge snapshot failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
}
