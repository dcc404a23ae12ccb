#!/usr/bin/env node
/**
 * svc-bridge's entry (package.json `bin`; what an MCP client launches). It checks the Node.js
 * version before anything else loads (launch/node-version.ts says why), then runs the program
 * in cli.ts.
 */
import { requireNode } from '../launch/node-version.js';

if (requireNode('svc-bridge')) (await import('./cli.js')).main(process.argv.slice(2), process.env);
