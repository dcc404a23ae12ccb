/**
 * The bridge as a program to run once the Node.js version check has passed, or to serve the
 * reason it failed: what both entries call. bridge/main.ts (the sources' entry, dist/bridge/main.js)
 * imports it; in the one-file bridge it is the program text bridge/bundle-main.ts compiles
 * (scripts/bundle-bridge.mjs).
 *
 * Both functions load what they run when called, never before: on a Node.js too old for the
 * bridge nothing but the MCP SDK and config-error-server.ts is evaluated (launch/node-version.ts
 * says why).
 */
import { config } from 'zod';

/**
 * Run the command `argv` names (bridge/cli.ts); `entry` names the file an MCP client launches
 * when it is not this module's own.
 *
 * Zod runs without its JIT in the bridge (set before any schema is made, which takes the setting
 * when made): with it, the first check of each object schema compiles a parser of its own with
 * `new Function`, code no code cache keeps, so every start compiled one for each message and
 * argument schema it met. The bridge checks a few messages a second at most; the checks and
 * their results are the same either way.
 */
export async function runBridge(argv: string[], env: NodeJS.ProcessEnv, entry?: string): Promise<void> {
  config({ jitless: true });
  (await import('./cli.js')).main(argv, env, entry);
}

/**
 * Serve MCP with every tool answering `line` (why Node 24 could not be had, what to install),
 * then exit 1 when the client closes stdin: an MCP client shows a process that prints a line
 * and exits only as "Connection closed".
 */
export async function serveNodeTooOld(line: string): Promise<void> {
  const [server, pkg] = await Promise.all([import('./config-error-server.js'), import('../launch/package-version.js')]);
  server.serveMessage(server.configErrorMessage(line), pkg.packageVersion(), 1);
}
