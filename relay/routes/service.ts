/**
 * Documents and service state (spec/2-endpoints.md): the guide, health, capabilities and the
 * recovery notices. All GET, auth none.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import type { RelayContext } from '../context.js';
import { buildCapabilities } from '../documents/capabilities.js';
import { primerIndex, primerMarkdown } from '../documents/primer.js';

/** `"<first 32 hex of SHA-256(body)>"` (api-notes §1). */
function etagOf(text: string): string {
  return `"${toHex(sha256(utf8(text))).slice(0, 32)}"`;
}

/** Send a document from memory with its ETag, or 304 when the client holds it. */
function sendDocument(req: FastifyRequest, reply: FastifyReply, text: string, type: string): FastifyReply {
  const etag = etagOf(text);
  reply.header('etag', etag).header('vary', 'Accept');
  if (req.headers['if-none-match'] === etag) return reply.code(304).send();
  return reply.type(type).send(text);
}

function wantsJson(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/markdown');
}

export const serviceRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  // Built on first use, after every plugin has registered its routes.
  let capabilities: string | undefined;
  let index: string | undefined;
  let primer: string | undefined;

  app.get(
    '/',
    { config: { auth: 'none', limit: 'none', operation: 'guide', describe: 'This primer; with Accept: application/json the operations index.', mcp: { tool: 'svc_guide', args: { part: 'primer' } } } },
    async (req, reply) => {
      if (wantsJson(req)) {
        index ??= JSON.stringify(primerIndex(ctx));
        return sendDocument(req, reply, index, 'application/json; charset=utf-8');
      }
      primer ??= primerMarkdown(ctx);
      return sendDocument(req, reply, primer, 'text/markdown; charset=utf-8');
    },
  );

  app.get(
    '/healthz',
    { config: { auth: 'none', limit: 'health', operation: 'health', describe: 'Liveness: 200 {ok:true}; 503 {ok:false, reason}.' } },
    async (_req, reply) => {
      if (!ctx.store.ping()) return reply.code(503).send({ ok: false, reason: 'database unreachable' });
      return { ok: true };
    },
  );

  app.get(
    '/v1/capabilities',
    { config: { auth: 'none', limit: 'none', operation: 'capabilities', describe: 'Limits, vocabulary, service keys and every operation.', mcp: { tool: 'svc_guide', args: { part: 'capabilities' } } } },
    async (req, reply) => {
      capabilities ??= JSON.stringify(buildCapabilities(ctx));
      return sendDocument(req, reply, capabilities, 'application/json; charset=utf-8');
    },
  );

  app.get(
    '/v1/recovery',
    { config: { auth: 'none', limit: 'read', operation: 'recovery.list', describe: 'Signed notices after each restore that lost links (none so far).' } },
    // No restore has lost links on this relay: the list is empty until restores exist.
    async () => ({ items: [], service_epoch: ctx.serviceEpoch }),
  );
};
