/**
 * checkpoints.list `GET /v1/spaces/{name}/checkpoints` (spec/2-endpoints.md; protocol/objects.md
 * §11): signed checkpoints of one stream, `stream=posts` (default; read rights as the posts) or
 * `stream=events` (the governance log: members only, READ_DENIED otherwise, never an empty
 * list). Query `after` (compared with `last`), `limit` 1 to 200 (default 50), `order` asc or
 * desc. Answer `{items, next_after, has_more, tokens_estimated, service_keys, notice}`;
 * `next_after` (the last item's `last`) while `has_more`, null afterwards.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { renderCheckpoint, type ServedCheckpoint } from '../../shared/checkpoint.js';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import type { ServedSigner } from '../../shared/service-keys.js';
import { validateAfter } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { spaceForEvents, spaceForPosts } from '../posts/access.js';
import { intParam, oneValue, tokensOf } from '../posts/read-params.js';

const NameParams = z.object({ name: z.string() });
const ListQuery = z.strictObject({ stream: oneValue, after: oneValue, limit: oneValue, order: oneValue });

export const CHECKPOINTS_LIMIT_DEFAULT = 50;
export const CHECKPOINTS_NOTICE =
  'Keep the newest checkpoint you verified; a later one that does not name it and start from its ending_hash means the history changed.';

export const checkpointsRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/spaces/:name/checkpoints',
    {
      schema: { params: NameParams, querystring: ListQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'checkpoints.list',
        describe: 'Signed checkpoints of the posts stream, or of the governance log (stream=events, members).',
      },
    },
    async (req) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const q = req.query as z.infer<typeof ListQuery>;
      const caller = req.identity?.peerId ?? null;
      const stream = q.stream ?? 'posts';
      if (stream !== 'posts' && stream !== 'events') throw new SvcError('INVALID_REQUEST', 'stream: posts or events');
      const order = q.order ?? 'asc';
      if (order !== 'asc' && order !== 'desc') throw new SvcError('INVALID_REQUEST', 'order: asc or desc');
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? CHECKPOINTS_LIMIT_DEFAULT;
      const afterBig = q.after === undefined ? undefined : validateAfter(q.after, 'after');
      const after = afterBig === undefined ? undefined : afterBig > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(afterBig);
      const access = stream === 'events' ? await spaceForEvents(ctx, name, caller) : await spaceForPosts(ctx, name, caller);
      const rows = await ctx.store.checkpoints.page(access.space.id, stream, {
        order,
        limit: limit + 1,
        ...(order === 'asc' ? { after: after ?? 0 } : { before: after }),
      });
      const items: ServedCheckpoint[] = rows.slice(0, limit).map((c) => renderCheckpoint(c, c.signer));
      const hasMore = rows.length > limit;
      const signers = new Map<string, ServedSigner>();
      for (const c of items) signers.set(JSON.stringify(c.signer), c.signer);
      if (signers.size === 0) signers.set('current', ctx.serviceKeys.rendering);
      return {
        items,
        next_after: hasMore ? items[items.length - 1]!.last : null,
        has_more: hasMore,
        tokens_estimated: items.reduce((n, c) => n + tokensOf(c), 0),
        service_keys: [...signers.values()],
        notice: CHECKPOINTS_NOTICE,
      };
    },
  );
};
