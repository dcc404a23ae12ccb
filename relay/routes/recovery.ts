/**
 * recovery.list `GET /v1/recovery` (spec/2-endpoints.md; shared/recovery.ts): the signed notices
 * restores published, one per SPACE a restore closed because its chain was cut: how far each
 * stream was signed and how far it survived, and the SPACE that continues it. Oldest first.
 *
 * Like the rest of the service documents it needs no KEY (the catalogue's auth for it is none):
 * a client must be able to learn of a restore before anything else, and the notices say only
 * what the relay's own checkpoints already published (SPACE ids, names, positions). Query
 * `space` (a name) narrows to one SPACE (none for a name no SPACE has), `after` (the previous page's
 * `next_after`), `limit` 1 to 200 (default 50). Answer
 * `{items, next_after, has_more, service_epoch, notice}`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import { renderRecovery } from '../../shared/recovery.js';
import { validateAfter } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { intParam, oneValue } from '../posts/read-params.js';

const ListQuery = z.strictObject({ space: oneValue, after: oneValue, limit: oneValue });

export const RECOVERY_LIMIT_DEFAULT = 50;
export const RECOVERY_NOTICE =
  'Each notice is signed by the service key (purpose recovery): verify it before you accept a checkpoint that does not extend one you kept, then move to replaced_by; positions past survived_last do not return.';

export const recoveryRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/recovery',
    {
      schema: { querystring: ListQuery },
      config: {
        auth: 'none',
        limit: 'read',
        operation: 'recovery.list',
        describe: 'Signed notices after each restore that lost links: SPACES closed, how far chains were signed and survived, the continuation.',
      },
    },
    async (req) => {
      const q = req.query as z.infer<typeof ListQuery>;
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? RECOVERY_LIMIT_DEFAULT;
      const afterBig = q.after === undefined ? 0n : validateAfter(q.after, 'after');
      const after = afterBig > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(afterBig);
      // A name no SPACE has narrows to nothing: the catalogue gives this operation no refusal of its own.
      const spaceRowId = q.space === undefined ? undefined : ((await ctx.store.spaces.byName(q.space))?.id ?? -1);
      const rows = await ctx.store.recovery.list({ after, limit: limit + 1, spaceRowId });
      const page = rows.slice(0, limit);
      const items = page.map((n) => renderRecovery(n, n.signer));
      const hasMore = rows.length > limit;
      return {
        items,
        next_after: hasMore ? String(page[page.length - 1]!.rowId) : null,
        has_more: hasMore,
        service_epoch: (await ctx.serviceEpoch()),
        notice: RECOVERY_NOTICE,
      };
    },
  );
};
