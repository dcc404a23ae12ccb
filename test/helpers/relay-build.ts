/**
 * The relay as the tests spawn it: compiled once per test run from the current sources into a
 * folder of its own, as `npm run build` compiles it into dist/, so that a relay process starts
 * from JavaScript instead of through tsx's loader. Measured on a two-core machine, a relay
 * spawned through tsx took 2.2-2.4 s of CPU to listen and one from compiled files 1.3-1.4 s;
 * a test run spawns relays and `svc-relay` commands by the hundred.
 *
 * The global setup (test/setup/relay-build.ts) builds it and names its entry in
 * SVC_TEST_RELAY_MAIN; test/helpers/relay.ts `relayEntry()` gives the arguments that start it.
 * The folder is under node_modules/.cache/ in the checkout, so the compiled files find the
 * checkout's packages as the sources do, and is removed when the run ends. Every file of
 * launch/, shared/, tools/ and relay/ is there: the .ts files compiled one for one (esbuild, the
 * compiler tsx uses, no bundling), the others (the categories' JSON, the web pages, the tool
 * documents) copied, and package.json beside them for the version.
 *
 * SVC_TEST_RELAY=sources spawns relay/main.ts through tsx instead, the sources' own start.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Not ./relay.js's REPO_ROOT: the global setup imports this file, and should load no relay code.
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const RELAY_MAIN_ENV = 'SVC_TEST_RELAY_MAIN';
export const RELAY_BUILD_ERROR_ENV = 'SVC_TEST_RELAY_BUILD_ERROR';
/** The folders the relay's code is in (relay/ imports launch/, shared/ and, from its connector, tools/). */
const FOLDERS = ['launch', 'shared', 'tools', 'relay'];

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, out);
    else out.push(path);
  }
  return out;
}

/** A new folder under the checkout's node_modules/.cache for one run's relay. */
export function relayBuildDir(): string {
  const cache = join(REPO_ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  return mkdtempSync(join(cache, 'svc-test-relay-'));
}

/** Compile the relay into `out`; answers its entry, out/relay/main.js. */
export async function buildRelay(out: string): Promise<string> {
  const files = FOLDERS.flatMap((f) => filesUnder(join(REPO_ROOT, f)));
  const sources = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  // Imported here, not at the top: test/helpers/relay.ts reads this file's names in every worker.
  const { build } = await import('esbuild');
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: REPO_ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    bundle: false,
    logLevel: 'silent',
  });
  for (const f of files) {
    if (f.endsWith('.ts') && !f.endsWith('.d.ts')) continue;
    const to = join(out, relative(REPO_ROOT, f));
    mkdirSync(dirname(to), { recursive: true });
    cpSync(f, to);
  }
  copyFileSync(join(REPO_ROOT, 'package.json'), join(out, 'package.json'));
  return join(out, 'relay', 'main.js');
}
