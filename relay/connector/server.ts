/**
 * The connector's MCP server for one request (spec/1-concepts.md "Connector"; DESIGN.md "MCP"):
 * the bridge's one tool layer (tools/server.ts `createToolServer`), given deps that hold no KEY
 * (tools/deps.ts: `served: 'relay'`, no signer, salt, sealing or run id), the caller's identity,
 * the relay's in-process API for the caller (api.ts) and the KEY's in-memory cursors
 * (caches.ts). `/mcp/connect` adds the compatibility tools `search` and `fetch` (compat.ts).
 *
 * `createConnectorServer` is the factory the HTTP entry (routes.ts) calls for every request of
 * either protocol revision; the request's Caller comes in `authInfo.extra`. Anything a later
 * part of the connector adds to the server of a request (live updates) hooks in through
 * `ConnectorHooks.onServer`, which sees the server, the deps and the caller.
 */
import type { McpRequestContext, McpServer } from '@modelcontextprotocol/server';
import type { FastifyInstance } from 'fastify';
import type { BridgeDeps } from '../../tools/deps.js';
import { CONVENTIONS, createToolServer, type ServerSurface } from '../../tools/server.js';
import type { RelayContext } from '../context.js';
import { connectorApi } from './api.js';
import type { KeyCaches } from './caches.js';
import type { Caller } from './caller.js';
import type { PublicReads } from './public-reads.js';
import { registerCompat } from './compat.js';

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

/** Where later parts of the connector extend each request's server. */
export interface ConnectorHooks {
  onServer?(server: McpServer, deps: BridgeDeps, caller: Caller, era: McpRequestContext['era']): void;
}

/** The tool layer's deps for one caller at the relay. */
export function connectorDeps(base: ConnectorBase, caller: Caller): BridgeDeps {
  const peerId = caller.identity?.peerId;
  return {
    api: connectorApi(base.app, base.ctx, caller, base.publicReads),
    identity: { keyName: '', peerId: peerId ?? '', publicKey: '' },
    served: 'relay',
    cache: base.caches.of(peerId),
    version: base.version,
    now: base.ctx.clock,
    log: base.log,
    unsigned: true,
    readOnly: caller.identity?.app?.write === false,
    toolset: caller.toolset,
  };
}

/** The Caller routes.ts put in `authInfo.extra` (an anonymous one when none is there). */
export function callerFrom(request: McpRequestContext): Caller {
  const caller = request.authInfo?.extra?.caller as Caller | undefined;
  if (caller === undefined) throw new Error('connector: a request reached the MCP handler without its caller');
  return caller;
}

export function createConnectorServer(base: ConnectorBase, request: McpRequestContext, hooks: ConnectorHooks = {}): McpServer {
  const caller = callerFrom(request);
  const deps = connectorDeps(base, caller);
  const { server } = createToolServer(deps, CONNECTOR_SURFACE);
  if (caller.connect) registerCompat(server, deps);
  hooks.onServer?.(server, deps, caller, request.era);
  return server;
}
