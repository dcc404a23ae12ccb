/**
 * The Node.js version check both programs run before anything else. Each program's entry
 * (relay/main.ts, bridge/main.ts) imports only this module, statically, and loads the program
 * itself with a dynamic import once the check passes: a static import would load what an older
 * Node lacks first (the relay's better-sqlite3, whose prebuilt binary crashes it with a bare
 * "Segmentation fault"; the bridge's `node:sqlite`, which it does not have) before any line of
 * ours could run.
 *
 * So this file must stay loadable by old Node versions: no imports of the program, and no
 * syntax newer than what Node 18 parses.
 */

/**
 * The oldest Node.js both programs run on: package.json `engines.node` is ">=22.13". The
 * dependencies need 22.12; the bridge's cache needs `node:sqlite`, usable without a flag from
 * 22.13.
 */
export const NODE_NEEDED = { major: 22, minor: 13 } as const;

/** Exit code of a program started on a Node.js older than NODE_NEEDED. */
export const EXIT_NODE_TOO_OLD = 1;

/** True when `version` ("22.13.0", "v24.1.0") is NODE_NEEDED or later. */
export function nodeIsRecentEnough(version: string): boolean {
  const match = /^v?(\d+)\.(\d+)\./.exec(version);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > NODE_NEEDED.major || (major === NODE_NEEDED.major && minor >= NODE_NEEDED.minor);
}

/** One word as a POSIX shell reads it: plain when it is safe, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The one line a program prints when Node.js is too old: what it needs, what it found, and one
 * command that runs the same program with the same arguments on Node 24 without root (npx
 * fetches the `node` package from the npm registry into its cache).
 */
export function nodeTooOldLine(program: string, found: string, script: string, args: readonly string[]): string {
  const rerun = ['npx', '-y', 'node@24', script, ...args].map(shellWord).join(' ');
  return `${program} needs Node.js ${NODE_NEEDED.major}.${NODE_NEEDED.minor} or later; this is Node ${found.replace(/^v/, '')}. Run it with Node 24 in one command: ${rerun}`;
}

/**
 * Check the running Node.js. When it is too old, print the one line on stderr, set the exit
 * code and return false: the caller then loads nothing else and the process ends by itself.
 */
export function requireNode(program: string): boolean {
  const found = process.versions.node;
  if (nodeIsRecentEnough(found)) return true;
  process.stderr.write(`${nodeTooOldLine(program, found, process.argv[1] ?? program, process.argv.slice(2))}\n`);
  process.exitCode = EXIT_NODE_TOO_OLD;
  return false;
}
