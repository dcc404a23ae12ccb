/**
 * messages.set_retention `PUT /v1/messages/retention` (spec/2-endpoints.md "Mailbox, messages,
 * blocks"; spec/1-concepts.md item 9 "Retention"): body `{"days": 1..720}` (the spec leaves the
 * field name unshown; protocol/api-notes.md §6 names it `days`), answer `{days}`.
 *
 * The setting reaches messages already sent: the next hourly pass of the retention job
 * (relay/jobs/message-retention.ts) deletes the caller's messages older than it. `GET /v1/me`
 * shows it as `message_retention_days`.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { MESSAGE_RETENTION_DAYS } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';

const RetentionBody = z.strictObject({
  days: z.number().int().min(MESSAGE_RETENTION_DAYS.min).max(MESSAGE_RETENTION_DAYS.max),
});

export const messageRetentionRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.put(
    '/v1/messages/retention',
    {
      schema: { body: RetentionBody },
      config: {
        auth: 'req',
        operation: 'messages.set_retention',
        describe: `Keep the messages you send ${MESSAGE_RETENTION_DAYS.min} to ${MESSAGE_RETENTION_DAYS.max} days (default ${MESSAGE_RETENTION_DAYS.default}); applies to messages already sent.`,
        mcp: { tool: 'svc_message', args: { action: 'set_retention' } },
      },
    },
    async (req) => {
      const me = identityOf(req);
      const { days } = req.body as z.infer<typeof RetentionBody>;
      await ctx.store.messageRetention.set(me.peerId, days);
      return { days };
    },
  );
};
