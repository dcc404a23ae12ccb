#!/usr/bin/env node
/**
 * svc-bridge's entry from the sources (dist/bridge/main.js once built). It checks the Node.js
 * version before anything else loads, running itself on Node 24 where this one is too old
 * (launch/node-version.ts says why), then runs the program (program.ts, cli.ts). The one-file
 * bridge an MCP client launches (bridge.mjs, the package's svc-bridge) starts from
 * bundle-main.ts instead, the same steps with the program compiled from its code cache.
 *
 * Where an older Node cannot run it on Node 24 (no network, no npm) and the bridge was started
 * to serve MCP, it serves the reason instead (config-error-server.ts, which this Node loads):
 * an MCP client shows a process that prints a line and exits only as "Connection closed".
 */
import { requireNode } from '../launch/node-version.js';
import { runBridge, serveNodeTooOld } from './program.js';

const args = process.argv.slice(2);
const serving = args.length === 0 || args[0] === 'serve';

if (requireNode('svc-bridge', serving ? (line) => void serveNodeTooOld(line) : undefined)) void runBridge(args, process.env);
