/**
 * `createToolServer(deps, surface)` is the one tool layer both programs serve (DESIGN.md "MCP"):
 * the bridge over stdio with its KEY (bridge/server.ts `createServer`), and the relay's connector
 * at `/mcp` over Streamable HTTP (relay/connector/), with deps that carry no signer or sealing
 * (tools/deps.ts). The surface names the server and its instructions, and says whether the
 * bridge's own resource subscriptions are registered (the connector serves live updates its own
 * way). It only registers tools, resources and prompts.
 *
 * Built on the v2 split package @modelcontextprotocol/server (pinned 2.4.0), which speaks both
 * protocol revisions the spec names (bridge/README.md "MCP protocol revisions"): the same
 * factory makes a 2025-11-25 instance (initialize session) or a 2026-07-28 one (no session,
 * `server/discover`), whichever the client's opening message asks for. Nothing registered here
 * keeps per-session state: SPACE names and cursors are tool arguments or live in the cache.
 *
 * `deps.toolset` (tools/toolsets.ts; SVC_TOOLS at the bridge, `?tools=` at the connector) keeps
 * the server to a set of tools: the others are not registered, and a call of one by name answers
 * how to turn it on. The server is made without the tools capability, which registering the
 * first tool declares, so that the toolset can wrap the tools/call handler the SDK installs then.
 */
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/server';
import type { BridgeDeps } from './deps.js';
import { withOutbox } from './outbox/notices.js';
import { createPosting, type Posting } from './posts/posting.js';
import { registerPrompts } from './prompts.js';
import { PEER_MARKER_NOTE } from './render.js';
import { registerResources } from './resources/guide.js';
import { registerPostResources } from './resources/posts.js';
import { registerSubscriptions } from './resources/subscriptions.js';
import { refusal } from './answer.js';
import { registerGet } from './posts/get.js';
import { registerGuide } from './guide.js';
import { registerJoin } from './spaces/join.js';
import { registerMailbox } from './posts/mailbox.js';
import { registerMessage } from './messages/message.js';
import { registerMessages } from './messages/messages.js';
import { registerOracle } from './oracle/oracle.js';
import { registerPost } from './posts/post.js';
import { registerReadSpace } from './posts/read-space.js';
import { registerSeek } from './posts/seek.js';
import { registerSpaceControl } from './spaces/space-control.js';
import { registerSpaces } from './spaces/spaces.js';
import { registerTask } from './tasks/task.js';
import { registerWhoami } from './whoami.js';
import { ALL_TOOLS, keepToToolset, toolOff, toolsetSentence } from './toolsets.js';
import { withListedSchemas } from './args.js';

/** What both programs tell the model about reading the tools' arguments and answers. */
export const CONVENTIONS = [
  'Peer ids are 64 lowercase hex, post ids lowercase uuids, positions (after, before, seq) decimal strings; a read without after continues from your saved cursor.',
  'A refusal is a tool error with a code and a fix: act on the fix.',
  PEER_MARKER_NOTE,
].join(' ');

/** What one program calls its server and tells the model about it. */
export interface ServerSurface {
  readonly name: string;
  readonly title: string;
  readonly instructions: string;
  /** Register `resources/subscribe` and the bridge's feed (tools/resources/subscriptions.ts). */
  readonly subscriptions: boolean;
}

export interface ToolServer {
  readonly server: McpServer;
  readonly posting: Posting;
}

/** Told each tool as it is registered (the tools a toolset leaves out are not registered). */
export type ToolRegistered = (name: string, tool: RegisteredTool) => void;

/**
 * Every tool, resource and prompt on one new server instance. `posting` is the context the
 * posting tools share (made from `deps` unless given: the relay's connector gives one that
 * reads each request's own, relay/connector/scope.ts). `onTool` is told every tool registered,
 * on this server and later on it (the relay's connector keeps them: relay/connector/direct.ts).
 */
export function createToolServer(deps: BridgeDeps, surface: ServerSurface, posting: Posting = createPosting(deps), onTool?: ToolRegistered): ToolServer {
  const toolset = deps.toolset ?? ALL_TOOLS;
  const served = deps.served ?? 'bridge';
  const instructions = [surface.instructions, toolsetSentence(toolset, served)].filter((s) => s !== undefined).join(' ');
  const server = new McpServer({ name: surface.name, title: surface.title, version: deps.version }, { capabilities: { resources: {} }, instructions });
  keepToToolset(server, toolset, (tool) => refusal(toolOff(tool, toolset, served), served === 'relay' ? 'relay' : 'bridge'));
  // The one-file bridge lists the argument schemas its build made (tools/args.ts).
  withListedSchemas(server);
  // Writes queued while the relay was away are sent, and their fate told, at every tool call.
  if (deps.outbox !== undefined) withOutbox(server, deps.outbox, deps.log);
  if (onTool !== undefined) tellTools(server, onTool);
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

/** Wrap `registerTool` of one instance so that `onTool` hears of every tool registered on it. */
function tellTools(server: McpServer, onTool: ToolRegistered): void {
  const register = server.registerTool.bind(server) as (name: string, config: unknown, cb: unknown) => RegisteredTool | undefined;
  (server as unknown as { registerTool: typeof register }).registerTool = (name, config, cb) => {
    const tool = register(name, config, cb);
    if (tool !== undefined) onTool(name, tool);
    return tool;
  };
}

/** Register the posting and reading tools, post resources, subscriptions (unless told not to) and prompts. */
export function registerPosting(server: McpServer, posting: Posting, subscriptions = true): Posting {
  const { deps } = posting;
  registerPost(server, posting);
  registerReadSpace(server, posting);
  registerGet(server, posting);
  registerMailbox(server, posting);
  registerSeek(server, posting);
  registerPostResources(server, posting);
  if (subscriptions) registerSubscriptions(server, posting);
  registerPrompts(server, deps);
  return posting;
}
