/**
 * Tokens of the calling KEY (spec/2-endpoints.md "Keys, tokens, passkeys"): list, revoke the
 * current one, one by id, or all. Another KEY's token id answers TOKEN_NOT_FOUND, exactly like
 * an id that never existed.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { isoTime, noBody } from '../http/schemas.js';

const IdParams = z.object({ id: z.string() });
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const tokensRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/tokens',
    { config: { auth: 'req', limit: 'read', operation: 'tokens.list', describe: 'Every live token of the KEY with id and label; an app token with its app and scope.' } },
    async (req) => {
      const me = identityOf(req);
      const items = (await ctx.store.tokens.listLive(me.peerId, ctx.clock())).map((t) => ({
        id: t.id,
        label: t.label,
        created_at: isoTime(t.createdAt),
        expires_at: isoTime(t.expiresAt),
        current: t.id === me.tokenId,
        // An app token (OAuth) names its app and what it may do; revoking it disconnects the app.
        ...(t.clientId !== null ? { app: { client_id: t.clientId, name: t.appName }, scope: t.scope === 'write' ? 'read write' : 'read' } : {}),
      }));
      return { items };
    },
  );

  app.delete(
    '/v1/tokens/current',
    {
      schema: { body: noBody },
      config: { auth: 'req', limit: 'write', operation: 'tokens.revoke', describe: 'Revoke the token in use.' },
    },
    async (req) => {
      const me = identityOf(req);
      const revoked = await ctx.store.tokens.revoke(me.peerId, me.tokenId, ctx.clock()) ? 1 : 0;
      if (revoked) ctx.tokenEvents.emit({ peerId: me.peerId, tokenId: me.tokenId });
      return { revoked };
    },
  );

  app.delete(
    '/v1/tokens/:id',
    {
      schema: { params: IdParams, body: noBody },
      config: { auth: 'req', limit: 'write', operation: 'tokens.revoke_one', describe: 'Revoke one token of the KEY by id.' },
    },
    async (req) => {
      const me = identityOf(req);
      const { id } = req.params as z.infer<typeof IdParams>;
      if (!UUID_RE.test(id) || !await ctx.store.tokens.revoke(me.peerId, id, ctx.clock())) {
        throw new SvcError('TOKEN_NOT_FOUND', 'id: no live token of this KEY has that id');
      }
      ctx.tokenEvents.emit({ peerId: me.peerId, tokenId: id });
      return { revoked: 1 };
    },
  );

  app.delete(
    '/v1/tokens',
    {
      schema: { body: noBody },
      config: { auth: 'req', limit: 'write', operation: 'tokens.revoke_all', describe: 'Revoke every token of the KEY, the current one too.' },
    },
    async (req) => {
      const me = identityOf(req);
      const revoked = await ctx.store.tokens.revokeAll(me.peerId, ctx.clock());
      ctx.tokenEvents.emit({ peerId: me.peerId, tokenId: null });
      return { revoked };
    },
  );
};
