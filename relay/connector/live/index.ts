/**
 * Connector live updates (spec/1-concepts.md "Connector live updates (revision 2026-07-28, with
 * a token)"), as the connector's HTTP entry (../routes.ts) uses them:
 *
 * - `answer` takes a request before the SDK does and answers it when it is a 2026-07-28
 *   `subscriptions/listen` (classified by the SDK's own `classifyInboundRequest`, so what counts
 *   as one is what the SDK would serve); anything else goes on to the SDK;
 * - `onServer` declares `resources.subscribe` on every 2026-07-28 server instance, so
 *   `server/discover` tells clients they may listen (2025-11-25 is served statelessly at the
 *   relay: no session to deliver updates on, so it declares none);
 * - the app's preClose hook ends every stream, telling its client to listen again, before the
 *   server waits for its connections to close.
 */
import { classifyInboundRequest, type McpRequestContext, type McpServer } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RelayContext } from '../../context.js';
import type { Caller } from '../caller.js';
import { listen } from './listen.js';
import { LiveStreams } from './streams.js';

export interface LiveUpdates {
  /** The stream for a `subscriptions/listen`, or undefined for any other request; `body`: the request's body parsed (undefined: none, or not JSON). */
  answer(req: FastifyRequest, body: unknown, caller: Caller, signal: AbortSignal): Promise<Response | undefined>;
  onServer(server: McpServer, era: McpRequestContext['era']): void;
  readonly streams: LiveStreams;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

export function liveUpdates(app: FastifyInstance, ctx: RelayContext, serverInfo: { name: string; version: string }): LiveUpdates {
  const streams = new LiveStreams(ctx);
  app.addHook('preClose', async () => streams.stop());
  return {
    streams,
    async answer(req, parsed, caller, signal) {
      const body = req.method === 'POST' ? parsed : undefined;
      // A body of JSON null, a number or a string is no message at all: the SDK answers it.
      if (body === null || typeof body !== 'object' || (body as { method?: unknown }).method !== 'subscriptions/listen') return undefined;
      const route = classifyInboundRequest({
        httpMethod: req.method,
        protocolVersionHeader: header(req, 'mcp-protocol-version'),
        mcpMethodHeader: header(req, 'mcp-method'),
        mcpNameHeader: header(req, 'mcp-name'),
        body,
      });
      if (route.kind !== 'modern' || route.messageKind !== 'request') return undefined;
      return await listen(ctx, streams, { message: route.message, caller, signal, requestId: req.id, serverInfo });
    },
    onServer(server, era) {
      if (era === 'modern') server.server.registerCapabilities({ resources: { subscribe: true } });
    },
  };
}
