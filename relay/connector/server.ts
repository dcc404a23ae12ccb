/**
 * The connector's MCP servers (spec/1-concepts.md "Connector"; DESIGN.md "MCP"): the bridge's
 * one tool layer (tools/server.ts `createToolServer`), given deps that hold no KEY
 * (tools/deps.ts: `served: 'relay'`, no signer, salt, sealing or run id); per caller, the
 * relay's in-process API for the caller (api.ts) and the KEY's in-memory cursors (caches.ts).
 * `/mcp/connect` adds the compatibility tools `search` and `fetch` (compat.ts).
 *
 * A server is built once and reused, one request after another. The SDK's handler
 * (`createMcpHandler`) asks its factory for an instance per request and connects it to that
 * request's transport; an instance still connected to another request is refused (the SDK
 * checks), and the negotiated revision lives on the instance. So `connectorServers` keeps the
 * instances not serving anything, per kind (revision era, `/mcp` or `/mcp/connect`, toolset:
 * what the server lists), hands an idle one to each request and takes it back when the SDK
 * closes it after the answer; it builds another only while every one of that kind is busy.
 * The caller is passed per request: the HTTP entry runs the request in its scope (scope.ts)
 * and the tools read the caller's deps through it. A 2025-11-25 `initialize` sets the
 * client's identity and capabilities on its instance, so that instance serves it alone and is
 * dropped. Anything a later part of the connector adds to each server (live updates) hooks in
 * through `ConnectorHooks.onServer`, once per instance built.
 */
import type { McpRequestContext, McpServer, RegisteredTool } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import { createPosting } from '../../tools/posts/posting.js';
import type { BridgeDeps } from '../../tools/deps.js';
import { CONVENTIONS, createToolServer, type ServerSurface, type ToolRegistered } from '../../tools/server.js';
import { ALL_TOOLS, type Toolset } from '../../tools/toolsets.js';
import type { RelayContext } from '../context.js';
import { connectorApi } from './api.js';
import type { KeyCaches } from './caches.js';
import type { Caller } from './caller.js';
import type { PublicReads } from './public-reads.js';
import { registerCompat } from './compat.js';
import { directTool, type ServerInfo } from './direct.js';
import { outsideScope, scopedDeps, scopedPosting, type CallerMembers, type CallerScope } from './scope.js';

export const CONNECTOR_NAME = 'svc-relay';

export const CONNECTOR_INSTRUCTIONS = [
  'svc gives you shared, persistent, verifiable state and messaging with other agents through this relay.',
  'This is the relay\'s own connector: it acts for the KEY whose token your app sent; it holds no KEY, so your posts are unsigned',
  '(origin-attested) and sealed SPACES and sealed pairs need svc-bridge on your machine (SEALED_NEEDS_BRIDGE).',
  'Cursors are saved per KEY in the relay\'s memory; keep them in your dossier too.',
  'Run routine: svc_whoami first; your own newest dossier; the mailbox; SEEK before working; post what you learn with',
  'fingerprints and one run_id for the run; a dossier before your context ends. svc_guide gives the routine as tool calls, and part=tools every tool in detail.',
  CONVENTIONS,
].join(' ');

export const CONNECTOR_SURFACE: ServerSurface = { name: CONNECTOR_NAME, title: 'svc relay connector', instructions: CONNECTOR_INSTRUCTIONS, subscriptions: false };

/** What every request's server is built from. */
export interface ConnectorBase {
  readonly app: FastifyInstance;
  readonly ctx: RelayContext;
  readonly caches: KeyCaches;
  /** The public documents every caller reads, kept for a moment (public-reads.ts). */
  readonly publicReads?: PublicReads;
  readonly version: string;
  readonly log: (line: string) => void;
}

/** Where later parts of the connector extend each server (once, when it is built). */
export interface ConnectorHooks {
  onServer?(server: McpServer, era: McpRequestContext['era']): void;
}

/** Idle servers kept per kind at most (more are built while that many are busy, then dropped). */
export const IDLE_SERVERS_MAX = 32;
/** Kinds kept at most (`?tools=` can name the sets in many orders): a request of another kind gets a server of its own. */
export const SERVER_KINDS_MAX = 16;

/** The tool layer's deps for one caller at the relay; `structuredOnly`: its client reads structured content alone (structured.ts). */
export function connectorDeps(base: ConnectorBase, caller: Caller, structuredOnly = false): BridgeDeps {
  const peerId = caller.identity?.peerId;
  return {
    ...fixedDeps(base, caller.toolset),
    api: connectorApi(base.app, base.ctx, caller, base.publicReads),
    identity: { keyName: '', peerId: peerId ?? '', publicKey: '' },
    cache: base.caches.of(peerId),
    readOnly: caller.identity?.app?.write === false,
    structuredOnly,
  };
}

/** What the deps of every caller of a server of this toolset share. */
function fixedDeps(base: ConnectorBase, toolset: Toolset | undefined): Omit<BridgeDeps, CallerMembers> {
  return { served: 'relay', version: base.version, now: base.ctx.clock, log: base.log, unsigned: true, toolset };
}

/** What one request's tools use: its caller's deps and a posting context of its own (verifier, SPACE ids). */
export function callerScope(base: ConnectorBase, caller: Caller, structuredOnly = false): CallerScope {
  const deps = connectorDeps(base, caller, structuredOnly);
  return { deps, posting: createPosting(deps) };
}

/** The Caller routes.ts put in `authInfo.extra` (an anonymous one when none is there). */
export function callerFrom(request: McpRequestContext): Caller {
  const caller = request.authInfo?.extra?.caller as Caller | undefined;
  if (caller === undefined) throw new Error('connector: a request reached the MCP handler without its caller');
  return caller;
}

/** Whether this request's instance must serve it alone: a 2025-11-25 `initialize` (see the header). */
export function servesAlone(request: McpRequestContext): boolean {
  return request.era === 'legacy' && request.authInfo?.extra?.alone === true;
}

/** One server of a kind, with the caller's members of its deps read from each request's scope. */
function buildServer(base: ConnectorBase, era: McpRequestContext['era'], connect: boolean, toolset: Toolset | undefined, hooks: ConnectorHooks, onTool?: ToolRegistered): McpServer {
  // Built outside the request's scope: nothing registered may hold on to one caller.
  return outsideScope(() => {
    const deps = scopedDeps(fixedDeps(base, toolset));
    const { server } = createToolServer(deps, CONNECTOR_SURFACE, scopedPosting(deps), onTool);
    if (connect) registerCompat(server, deps);
    hooks.onServer?.(server, era);
    return server;
  });
}

/** The identity the connector's servers answer with (the SDK stamps it on every 2026-07-28 result). */
export function connectorServerInfo(base: ConnectorBase): ServerInfo {
  return { name: CONNECTOR_NAME, title: CONNECTOR_SURFACE.title, version: base.version };
}

/**
 * The tools the direct lane (direct.ts) may call, per kind of server (`/mcp` or `/mcp/connect`,
 * toolset): each kind's tools come from a server built once for them and never connected, the
 * tools the toolset leaves out absent as on every server of that kind.
 */
export function connectorToolTables(base: ConnectorBase): (connect: boolean, toolset: Toolset | undefined) => ReadonlyMap<string, RegisteredTool> {
  const tables = new Map<string, ReadonlyMap<string, RegisteredTool>>();
  const none: ReadonlyMap<string, RegisteredTool> = new Map();
  return (connect, asked) => {
    const toolset = asked ?? ALL_TOOLS;
    const kind = kindOf(connect, toolset);
    const kept = tables.get(kind);
    if (kept !== undefined) return kept;
    // `?tools=` can name the sets in many orders: past the bound, a kind of its own takes the SDK's way.
    if (tables.size >= SERVER_KINDS_MAX) return none;
    const registered: [string, RegisteredTool][] = [];
    const server = buildServer(base, 'modern', connect, toolset, {}, (name, tool) => registered.push([name, tool]));
    const table = new Map(registered.filter(([name, tool]) => directTool(tool, server.toolInputSchemaJson(name))));
    tables.set(kind, table);
    return table;
  };
}

/** What a server of one kind lists: `/mcp` or `/mcp/connect`, and the toolset. */
function kindOf(connect: boolean, toolset: Toolset): string {
  return `${connect ? 'connect' : 'mcp'} ${toolset.sets.join(',')}`;
}

/** The factory the SDK's handler calls for each request: an idle server of the request's kind, or a new one. */
export function connectorServers(base: ConnectorBase, hooks: ConnectorHooks = {}): (request: McpRequestContext) => McpServer {
  const idle = new Map<string, McpServer[]>();
  const resting = new WeakSet<McpServer>();
  return (request) => {
    const caller = callerFrom(request);
    const toolset = caller.toolset ?? ALL_TOOLS;
    if (servesAlone(request)) return buildServer(base, request.era, caller.connect, toolset, hooks);
    const kind = `${request.era} ${kindOf(caller.connect, toolset)}`;
    let free = idle.get(kind);
    if (free === undefined) {
      if (idle.size >= SERVER_KINDS_MAX) return buildServer(base, request.era, caller.connect, toolset, hooks);
      idle.set(kind, (free = []));
    }
    const reused = free.pop();
    if (reused !== undefined) {
      resting.delete(reused);
      return reused;
    }
    const server = buildServer(base, request.era, caller.connect, toolset, hooks);
    const pool = free;
    // The SDK closes the instance once its request is answered (or its client left): it rests
    // until the next request of its kind. One the SDK gave up before connecting is simply dropped.
    server.server.onclose = () => {
      if (resting.has(server) || server.server.transport !== undefined || pool.length >= IDLE_SERVERS_MAX) return;
      resting.add(server);
      pool.push(server);
    };
    return server;
  };
}
