/**
 * Documents and service state (spec/2-endpoints.md): health, capabilities, the guide and the
 * recovery notices. All GET, auth none.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { RelayContext } from '../context.js';

export const serviceRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/healthz',
    { config: { auth: 'none', limit: 'health', operation: 'health', describe: 'Liveness: 200 {ok:true}, 503 {ok:false, reason}.' } },
    async (_req, reply) => {
      if (!ctx.store.ping()) return reply.code(503).send({ ok: false, reason: 'database unreachable' });
      return { ok: true };
    },
  );
};
