#!/usr/bin/env node
/**
 * svc-relay's entry (package.json `bin`). It checks the Node.js version before anything else
 * loads, running itself on Node 24 where this one is too old (launch/node-version.ts says why),
 * then runs the program in cli.ts.
 */
import { requireNode } from '../launch/node-version.js';

if (requireNode('svc-relay')) await import('./cli.js');
