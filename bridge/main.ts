#!/usr/bin/env node
/**
 * svc-bridge's entry (package.json `bin`; what an MCP client launches). It checks the Node.js
 * version before anything else loads, running itself on Node 24 where this one is too old
 * (launch/node-version.ts says why), then runs the program in cli.ts.
 *
 * Where an older Node cannot run it on Node 24 (no network, no npm) and the bridge was started
 * to serve MCP, it serves the reason instead (config-error-server.ts, which this Node loads):
 * an MCP client shows a process that prints a line and exits only as "Connection closed".
 */
import { requireNode } from '../launch/node-version.js';

const args = process.argv.slice(2);
const serving = args.length === 0 || args[0] === 'serve';

const cannot = serving
  ? (line: string) =>
      void Promise.all([import('./config-error-server.js'), import('../launch/package-version.js')]).then(([server, pkg]) =>
        server.serveMessage(server.configErrorMessage(line), pkg.packageVersion(), 1),
      )
  : undefined;

if (requireNode('svc-bridge', cannot)) (await import('./cli.js')).main(args, process.env);
