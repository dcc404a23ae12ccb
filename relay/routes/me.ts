/**
 * `GET /v1/me` (spec/2-endpoints.md): peer id, token expiry (with a warning a week before),
 * mailbox position, waiting counts (`waiting` by kind, `messages_waiting` their sum), message
 * retention, memberships paged, service epoch.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { PAGE_LIMIT_MAX, TOKEN_EXPIRY_WARNING_SECONDS } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { negotiate } from '../http/markdown.js';
import { isoTime } from '../http/schemas.js';
import { mailboxHeadOf, membershipsOf, messageRetentionDaysOf, waitingCountsOf } from '../me-sources.js';
import { encryptionKeyView } from './encryption-key.js';
import { meMarkdown } from '../render/me.js';

const MeQuery = z.strictObject({
  after: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(50),
});

export const meRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/me',
    {
      schema: { querystring: MeQuery },
      config: { auth: 'req', limit: 'read', operation: 'me', describe: 'Own peer id, token expiry, mailbox position, waiting counts, memberships, service epoch.', mcp: { tool: 'svc_whoami' } },
    },
    async (req, reply) => {
      const me = identityOf(req);
      const q = req.query as z.infer<typeof MeQuery>;
      const now = ctx.clock();
      const key = await ctx.store.keys.get(me.peerId);
      const token: Record<string, unknown> = { id: me.tokenId, expires_at: isoTime(me.tokenExpiresAt) };
      const left = me.tokenExpiresAt - now;
      if (left <= TOKEN_EXPIRY_WARNING_SECONDS * 1000) {
        token.warning = `This token expires in ${Math.max(0, Math.floor(left / 3_600_000))} hours; mint a new one (challenge then verify) and replace it.`;
      }
      const waiting = await waitingCountsOf(ctx, me.peerId);
      const answer = {
        peer_id: me.peerId,
        registered_at: key ? isoTime(key.registeredAt) : null,
        encryption_key: encryptionKeyView(await ctx.store.encryptionKeys.get(me.peerId)),
        token,
        mailbox: { head_seq: await mailboxHeadOf(ctx, me.peerId) },
        waiting,
        // Direct messages: conversations with unread messages plus waiting requests, and the
        // retention of the messages this KEY sends (messages.set_retention).
        messages_waiting: waiting.messages + waiting.message_requests,
        message_retention_days: await messageRetentionDaysOf(ctx, me.peerId),
        memberships: await membershipsOf(ctx, me.peerId, q.after, q.limit),
        service_epoch: (await ctx.serviceEpoch()),
      };
      return negotiate(req, reply, ctx.random, answer, meMarkdown);
    },
  );
};
