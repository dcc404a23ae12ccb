/**
 * Documents and service state (spec/2-endpoints.md): the guide, the reference, llms.txt,
 * robots.txt, the service reviewer's rules, health and capabilities (the recovery notices are routes/recovery.ts). All GET, auth none; documents are
 * built once, after every plugin has registered its routes, and served from memory with an ETag.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import type { RelayContext } from '../context.js';
import { createHealthCheck, relayVolumes } from '../health.js';
import { buildCapabilities } from '../documents/capabilities.js';
import { buildLlmsText } from '../documents/llms.js';
import { primerIndex, primerMarkdown } from '../documents/primer.js';
import { buildReference, lookupReference, type Reference } from '../documents/reference.js';
import { buildRobotsText } from '../documents/robots.js';
import { reviewerPeerId } from '../oracle/versions.js';
import { reviewerRulesMarkdown } from '../oracle/reviewer.js';

/** `"<first 32 hex of SHA-256(body)>"` (api-notes §1). */
export function etagOf(body: string | Uint8Array): string {
  return `"${toHex(sha256(typeof body === 'string' ? utf8(body) : body)).slice(0, 32)}"`;
}

/**
 * If-None-Match holds `etag` (RFC 9110 §13.1.2: `*`, or a list compared weakly, so a `W/`
 * prefix a proxy added still matches). The header is attacker-controlled: only compared.
 */
export function holds(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/**
 * Send a document from memory with its ETag, or 304 when the client holds it. `vary` for a
 * document whose form follows Accept (the guide).
 */
export function sendDocument(req: FastifyRequest, reply: FastifyReply, text: string | Buffer, type: string, vary = false): FastifyReply {
  const etag = etagOf(text);
  reply.header('etag', etag);
  if (vary) reply.header('vary', 'Accept');
  if (holds(req.headers['if-none-match'], etag)) return reply.code(304).send();
  return reply.type(type).send(text);
}

/** `section` or `operation`, each once (a repeated one is an array, refused). */
const ReferenceQuery = z.strictObject({ section: z.string().optional(), operation: z.string().optional() });

function wantsJson(req: FastifyRequest): boolean {
  const accept = req.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/markdown');
}

export const serviceRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  // Built on first use, after every plugin has registered its routes.
  let capabilities: string | undefined;
  let capabilitiesEpoch: string | undefined;
  let index: string | undefined;
  let primer: string | undefined;
  let reference: Reference | undefined;
  let llms: string | undefined;
  let robots: string | undefined;
  let reviewerRules: string | undefined;
  const probe = createHealthCheck({
    ping: ctx.store.ping,
    volumes: relayVolumes(ctx.config.dataDir, ctx.checkpointLog?.path),
    rule: ctx.config.minFreeDisk,
  });

  app.get(
    '/',
    { config: { auth: 'none', limit: 'none', operation: 'guide', describe: 'This primer; with Accept: application/json the operations index.', mcp: { tool: 'svc_guide', args: { part: 'primer' } } } },
    async (req, reply) => {
      if (wantsJson(req)) {
        index ??= JSON.stringify(primerIndex(ctx));
        return sendDocument(req, reply, index, 'application/json; charset=utf-8', true);
      }
      primer ??= primerMarkdown(ctx);
      return sendDocument(req, reply, primer, 'text/markdown; charset=utf-8', true);
    },
  );

  app.get(
    '/reference',
    {
      schema: { querystring: ReferenceQuery },
      config: { auth: 'none', limit: 'none', operation: 'reference', describe: 'The reference in markdown: authentication, operations, error codes, limits, encoding; query section (a heading) or operation (a name) narrows it.', mcp: { tool: 'svc_guide', args: { part: 'reference' } } },
    },
    async (req, reply) => {
      reference ??= await buildReference(ctx);
      const text = lookupReference(reference, req.query as z.infer<typeof ReferenceQuery>);
      return sendDocument(req, reply, text, 'text/markdown; charset=utf-8');
    },
  );

  app.get(
    '/llms.txt',
    { config: { auth: 'none', limit: 'none', operation: 'llms', describe: 'A plain-text index for language models: what the service is, its documents, every operation.' } },
    async (req, reply) => {
      llms ??= buildLlmsText(ctx);
      return sendDocument(req, reply, llms, 'text/plain; charset=utf-8');
    },
  );

  app.get(
    '/robots.txt',
    { config: { auth: 'none', limit: 'none', operation: 'robots', describe: 'Crawler rules: the documents allowed, the API paths not.' } },
    async (req, reply) => {
      robots ??= buildRobotsText(ctx.operations, ctx.baseUrl());
      return sendDocument(req, reply, robots, 'text/plain; charset=utf-8');
    },
  );

  app.get(
    '/reviewer-rules.md',
    {
      config: {
        auth: 'none',
        limit: 'none',
        operation: 'oracle.reviewer_rules',
        describe: "The service reviewer's rules for oracle proposals (markdown): what it declines and why; it never approves.",
        mcp: { tool: 'svc_guide', args: { part: 'reviewer_rules' } },
      },
    },
    async (req, reply) => {
      reviewerRules ??= reviewerRulesMarkdown(reviewerPeerId(ctx));
      return sendDocument(req, reply, reviewerRules, 'text/markdown; charset=utf-8');
    },
  );

  app.get(
    '/healthz',
    { config: { auth: 'none', limit: 'health', operation: 'health', describe: 'Liveness: 200 {ok:true}; 503 {ok:false, reason} when the database does not answer or a disk it writes to is nearly full.' } },
    async (_req, reply) => {
      const health = await probe.check();
      return health.ok ? health : reply.code(503).send(health);
    },
  );

  app.get(
    '/v1/capabilities',
    { config: { auth: 'none', limit: 'none', operation: 'capabilities', describe: 'Limits, vocabulary, service keys and every operation.', mcp: { tool: 'svc_guide', args: { part: 'capabilities' } } } },
    async (req, reply) => {
      // Built once per service epoch: a restore in another process may start a new one.
      if (capabilities === undefined || capabilitiesEpoch !== (await ctx.serviceEpoch())) {
        capabilitiesEpoch = (await ctx.serviceEpoch());
        capabilities = JSON.stringify(await buildCapabilities(ctx));
      }
      return sendDocument(req, reply, capabilities, 'application/json; charset=utf-8');
    },
  );
};
