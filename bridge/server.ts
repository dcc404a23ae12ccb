/**
 * `createServer(deps)`: the MCP server of the bridge (STYLE.md "MCP TypeScript SDK"). It only
 * registers tools, resources and prompts; cli.ts hands it as the factory to `serveStdio`.
 *
 * `createToolServer(deps, surface)` is the one tool layer both programs serve (DESIGN.md "MCP"):
 * the bridge over stdio with its KEY, and the relay's connector at `/mcp` over Streamable HTTP
 * (relay/connector/), with deps that carry no signer or sealing (bridge/deps.ts). The surface
 * names the server and its instructions, and says whether the bridge's own resource
 * subscriptions are registered (the connector serves live updates its own way).
 *
 * Built on the v2 split package @modelcontextprotocol/server (pinned 2.4.0), which speaks both
 * protocol revisions the spec names (bridge/README.md "MCP protocol revisions"): the same
 * factory makes a 2025-11-25 instance (initialize session) or a 2026-07-28 one (no session,
 * `server/discover`), whichever the client's opening message asks for. Nothing registered here
 * keeps per-session state: SPACE names and cursors are tool arguments or live in the cache.
 *
 * `deps.toolset` (bridge/toolsets.ts; SVC_TOOLS at the bridge, `?tools=` at the connector) keeps
 * the server to a set of tools: the others are not registered, and a call of one by name answers
 * how to turn it on. The server is made without the tools capability, which registering the
 * first tool declares, so that the toolset can wrap the tools/call handler the SDK installs then.
 *
 * `startBackground(deps, keeperMs)` starts what a serving bridge does besides answering: the
 * keeper duty for the sealed SPACES its KEY keeps (bridge/keeper-duty.ts), every
 * SVC_KEEPER_INTERVAL seconds. cli.ts starts it with the server and stops it before closing the
 * caches.
 */
import { McpServer } from '@modelcontextprotocol/server';
import type { BridgeDeps } from './deps.js';
import { KEEPER_INTERVAL_ENV, startKeeperDuty } from './keeper-duty.js';
import { withOutbox } from './outbox-tools.js';
import { createPosting, registerPosting, type Posting } from './posting.js';
import { PEER_MARKER_NOTE } from './render.js';
import { refusal } from './tools/answer.js';
import { ALL_TOOLS, keepToToolset, toolOff, toolsetSentence } from './toolsets.js';
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
import { SERVER_NAME } from './config-error-server.js';

/** The name the bridge gives itself in initialize (config-error-server.ts holds it, loadable on any Node). */
export { SERVER_NAME };

/** What both programs tell the model about reading the tools' arguments and answers. */
export const CONVENTIONS = [
  'Peer ids are 64 lowercase hex, post ids lowercase uuids, positions (after, before, seq) decimal strings; a read without after continues from your saved cursor.',
  'A refusal is a tool error with a code and a fix: act on the fix.',
  PEER_MARKER_NOTE,
].join(' ');

export const INSTRUCTIONS = [
  'svc gives you shared, persistent, verifiable state and messaging with other agents through a relay.',
  'This bridge holds your KEY on this machine, signs for you and keeps your cursors; you never handle keys or tokens.',
  'Run routine: svc_whoami first; your own newest dossier; the mailbox; SEEK before working; post what you learn with',
  'fingerprints; a dossier with your cursors before your context ends. svc_guide gives the routine as tool calls, and part=tools every tool in detail.',
  CONVENTIONS,
].join(' ');

/** What one program calls its server and tells the model about it. */
export interface ServerSurface {
  readonly name: string;
  readonly title: string;
  readonly instructions: string;
  /** Register `resources/subscribe` and the bridge's feed (bridge/subscriptions.ts). */
  readonly subscriptions: boolean;
}

export const BRIDGE_SURFACE: ServerSurface = { name: SERVER_NAME, title: 'svc bridge', instructions: INSTRUCTIONS, subscriptions: true };

export interface ToolServer {
  readonly server: McpServer;
  readonly posting: Posting;
}

export function createServer(deps: BridgeDeps): McpServer {
  return createToolServer(deps, BRIDGE_SURFACE).server;
}

/** Every tool, resource and prompt of the connector on one new server instance. */
export function createToolServer(deps: BridgeDeps, surface: ServerSurface): ToolServer {
  const toolset = deps.toolset ?? ALL_TOOLS;
  const served = deps.served ?? 'bridge';
  const instructions = [surface.instructions, toolsetSentence(toolset, served)].filter((s) => s !== undefined).join(' ');
  const server = new McpServer({ name: surface.name, title: surface.title, version: deps.version }, { capabilities: { resources: {} }, instructions });
  keepToToolset(server, toolset, (tool) => refusal(toolOff(tool, toolset, served), served === 'relay' ? 'relay' : 'bridge'));
  // Writes queued while the relay was away are sent, and their fate told, at every tool call.
  if (deps.outbox !== undefined) withOutbox(server, deps.outbox, deps.log);
  const posting = createPosting(deps);
  registerWhoami(server, deps, posting.verifier);
  registerGuide(server, deps);
  registerSpaces(server, deps);
  registerJoin(server, deps);
  registerSpaceControl(server, deps);
  registerMessages(server, deps);
  registerMessage(server, deps);
  registerResources(server, deps);
  registerPosting(server, posting, surface.subscriptions);
  registerTask(server, deps);
  registerOracle(server, posting);
  return { server, posting };
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
