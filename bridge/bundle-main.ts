#!/usr/bin/env node
/**
 * The entry of the one-file bridge (bridge.mjs: the package's `svc-bridge`, `/bridge.mjs`, the
 * MCP Bundle's server, the checkout's dist/bridge.mjs): what an MCP client launches. The same
 * steps as main.ts, the sources' entry: the Node.js version check before anything else, then
 * the program (program.ts). Here the program is a text the build put on this file's last lines
 * (scripts/bundle-bridge.mjs), compiled with V8's code cache kept in the key
 * directory's cache folder (code-cache.ts; SVC_COMPILE_CACHE), so that a start after the first
 * skips compiling it.
 *
 * A start that found no cache it could use makes one while serving, from what it compiled by
 * then: 2 s after it started (the opening requests of a client are answered by then; the timer
 * keeps nothing alive) or when it exits, whichever comes first. Commands (`id`, `--help`, …)
 * use the cache and make none: one made by a command would lack what serving runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireNode } from '../launch/node-version.js';
import { loadProgram, programHash, programTextIn } from './code-cache.js';
import { envSetting, keyHome } from './keys/home.js';

/**
 * Where the compiled code is kept: `SVC_COMPILE_CACHE` names an existing folder (several key
 * directories can share one: the test suite's bridges do), `0` keeps it nowhere; by default
 * `cache/compile/` of the key directory.
 */
function compileCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const given = envSetting(env, 'SVC_COMPILE_CACHE');
  if (given === '0') return undefined;
  return given ?? join(keyHome(env), 'cache', 'compile');
}

/** When a start that made no use of a cache makes one (ms after it started), unless it exits first. */
const SAVE_AFTER_MS = 2000;

type Run = (argv: string[], env: NodeJS.ProcessEnv, entry?: string) => Promise<void>;
type Serve = (line: string) => Promise<void>;

const args = process.argv.slice(2);
const serving = args.length === 0 || args[0] === 'serve';
const filename = fileURLToPath(import.meta.url);

/** The program this file carries (code-cache.ts), compiled from the cache in `cacheDir` when one fits. */
function program(cacheDir: string | undefined) {
  const hash = programHash(filename);
  const whole = `${filename} carries no program on its last lines: it is not a whole bridge.mjs (scripts/bundle-bridge.mjs)`;
  if (hash === undefined) throw new Error(whole);
  const text = () => {
    const found = programTextIn(readFileSync(filename));
    if (found === undefined) throw new Error(whole);
    return found;
  };
  return loadProgram({ hash, text, filename, cacheDir });
}

const cannot = serving ? (line: string) => void (program(undefined).exports.serveNodeTooOld as Serve)(line) : undefined;

if (requireNode('svc-bridge', cannot)) {
  const loaded = program(compileCacheDir(process.env));
  if (serving && loaded.cache !== 'used' && loaded.cache !== 'off') {
    setTimeout(() => loaded.save(), SAVE_AFTER_MS).unref();
    process.once('exit', () => loaded.save());
  }
  void (loaded.exports.runBridge as Run)(args, process.env, import.meta.url);
}
