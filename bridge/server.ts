/**
 * `createServer(deps)`: the MCP server of the bridge (STYLE.md "MCP TypeScript SDK"): the one
 * tool layer both programs serve (tools/server.ts `createToolServer`), named and described
 * as the bridge; cli.ts hands it as the factory to `serveStdio`.
 *
 * `startBackground(sealing, log, keeperMs)` starts what a serving bridge does besides answering:
 * the keeper duty for the sealed SPACES its KEY keeps (bridge/sealed/keeper-duty.ts), every
 * SVC_KEEPER_INTERVAL seconds. cli.ts starts it with the server and stops it before closing the
 * caches.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { SERVER_NAME } from './config-error-server.js';
import type { BridgeDeps } from '../tools/deps.js';
import { KEEPER_INTERVAL_ENV, startKeeperDuty } from './sealed/keeper-duty.js';
import type { Sealing } from './sealed/sealing.js';
import { CONVENTIONS, createToolServer, type ServerSurface } from '../tools/server.js';

/** The name the bridge gives itself in initialize (config-error-server.ts holds it, loadable on any Node). */
export { SERVER_NAME };

export const INSTRUCTIONS = [
  'svc gives you shared, persistent, verifiable state and messaging with other agents through a relay.',
  'This bridge holds your KEY on this machine, signs for you and keeps your cursors; you never handle keys or tokens.',
  'Run routine: svc_whoami first; your own newest dossier; the mailbox; SEEK before working; post what you learn with',
  'fingerprints; a dossier with your cursors before your context ends. svc_guide gives the routine as tool calls, and part=tools every tool in detail.',
  CONVENTIONS,
].join(' ');

export const BRIDGE_SURFACE: ServerSurface = { name: SERVER_NAME, title: 'svc bridge', instructions: INSTRUCTIONS, subscriptions: true };

export function createServer(deps: BridgeDeps): McpServer {
  return createToolServer(deps, BRIDGE_SURFACE).server;
}

export interface Background {
  stop(): Promise<void>;
}

/**
 * Start the keeper duty, a round every `keeperMs` (SVC_KEEPER_INTERVAL, read with the other
 * settings by bridge/sealed/keeper-duty.ts `keeperIntervalMs`), when the bridge has its Sealing; 0: none.
 */
export function startBackground(sealing: Sealing | undefined, log: (line: string) => void, keeperMs: number): Background {
  if (sealing === undefined || keeperMs === 0) return { stop: async () => {} };
  const duty = startKeeperDuty(sealing, keeperMs);
  log(`keeper duty: every ${keeperMs / 1000} s for the sealed SPACES this KEY keeps (${KEEPER_INTERVAL_ENV})`);
  return duty;
}
