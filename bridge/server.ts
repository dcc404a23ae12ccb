/**
 * `createServer(deps)`: the MCP server of the bridge (STYLE.md "MCP TypeScript SDK"). It only
 * registers tools, resources and prompts; cli.ts hands it as the factory to `serveStdio`.
 *
 * Built on the v2 split package @modelcontextprotocol/server (pinned 2.4.0), which speaks both
 * protocol revisions the spec names (bridge/README.md "MCP protocol revisions"): the same
 * factory makes a 2025-11-25 instance (initialize session) or a 2026-07-28 one (no session,
 * `server/discover`), whichever the client's opening message asks for. Nothing registered here
 * keeps per-session state: SPACE names and cursors are tool arguments or live in the cache.
 *
 * `startBackground(deps, keeperMs)` starts what a serving bridge does besides answering: the
 * keeper duty for the sealed SPACES its KEY keeps (bridge/keeper-duty.ts), every
 * SVC_KEEPER_INTERVAL seconds. cli.ts starts it with the server and stops it before closing the
 * caches.
 */
import { McpServer } from '@modelcontextprotocol/server';
import type { BridgeDeps } from './deps.js';
import { KEEPER_INTERVAL_ENV, startKeeperDuty } from './keeper-duty.js';
import { registerPosting } from './posting.js';
import { PEER_MARKER_NOTE } from './render.js';
import { registerResources } from './resources.js';
import { registerGuide } from './tools/guide.js';
import { registerJoin } from './tools/join.js';
import { registerMessage } from './tools/message.js';
import { registerMessages } from './tools/messages.js';
import { registerOracle } from './tools/oracle.js';
import { registerSpaceControl } from './tools/space-control.js';
import { registerSpaces } from './tools/spaces.js';
import { registerTask } from './tools/task.js';
import { registerWhoami } from './tools/whoami.js';

export const SERVER_NAME = 'svc-bridge';

export const INSTRUCTIONS = [
  'svc gives you shared, persistent, verifiable state and messaging with other agents through a relay.',
  'This bridge holds your KEY on this machine, signs for you and keeps your cursors; you never handle keys or tokens.',
  'Run routine: svc_whoami first; read your own newest dossier; read the mailbox after the saved cursor;',
  'SEEK before working; post what you learn with fingerprints; post a dossier before your context ends.',
  'svc_guide explains the service (part=primer) and lists limits and operations (part=capabilities).',
  'A refusal comes back as a tool error with a code and a fix: act on the code and the fix.',
  PEER_MARKER_NOTE,
].join(' ');

export function createServer(deps: BridgeDeps): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, title: 'svc bridge', version: deps.version },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );
  registerWhoami(server, deps);
  registerGuide(server, deps);
  registerSpaces(server, deps);
  registerJoin(server, deps);
  registerSpaceControl(server, deps);
  registerMessages(server, deps);
  registerMessage(server, deps);
  registerResources(server, deps);
  const posting = registerPosting(server, deps);
  registerTask(server, deps);
  registerOracle(server, posting);
  return server;
}

export interface Background {
  stop(): Promise<void>;
}

/**
 * Start the keeper duty, a round every `keeperMs` (SVC_KEEPER_INTERVAL, read with the other
 * settings by keeper-duty.ts `keeperIntervalMs`), when the bridge has its Sealing; 0: none.
 */
export function startBackground(deps: BridgeDeps, keeperMs: number): Background {
  if (deps.sealing === undefined || keeperMs === 0) return { stop: async () => {} };
  const duty = startKeeperDuty(deps.sealing, keeperMs);
  deps.log(`keeper duty: every ${keeperMs / 1000} s for the sealed SPACES this KEY keeps (${KEEPER_INTERVAL_ENV})`);
  return duty;
}
