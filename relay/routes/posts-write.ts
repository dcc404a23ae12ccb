/**
 * The writing half of "Posts, reading, SEEK, proofs" (spec/2-endpoints.md): posts.append,
 * posts.hide, posts.unhide. The pipelines are relay/posts/append.ts and relay/posts/hide.ts;
 * this file only binds them to HTTP. Bodies are attacker-controlled and read strictly there
 * (the protocol's own rules, not zod, decide the refusal codes).
 *
 * A batch, as the newer API sends one: `{posts: [1 to 20 post bodies]}`, each body exactly what
 * posts.append takes alone (unsigned, signed or sealed), appended in order, each in its own
 * write, and answered on its own: `{index, status, ...}` with the post's answer (its receipt,
 * `replayed`) or `{index, status, error}` with its refusal's envelope. A refused item stores
 * nothing and stops none after it. The answer is 201 `{items, posted, space}`.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError, errorEnvelope } from '../../shared/errors.js';
import { POST_BATCH_MAX } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { noBody, uuidText } from '../http/schemas.js';
import { appendPostGrouped } from '../posts/append.js';
import { appendAnswer } from '../posts/answer.js';
import { setPostHidden } from '../posts/hide.js';

const SpaceParams = z.object({ name: z.string() });
const AppendQuery = z.strictObject({ receipt: z.enum(['full', 'short']).optional() });
const PostParams = z.object({ id: uuidText });

/** A batch of posts.append (see the file comment): each body appended and answered on its own, in order. */
async function appendBatch(ctx: RelayContext, name: string, author: string, body: Record<string, unknown>, form: 'full' | 'short', requestId: string) {
  const beside = Object.keys(body).filter((k) => k !== 'posts');
  if (beside.length > 0) throw new SvcError('INVALID_REQUEST', `${beside.join(', ')}: a batch gives each post's fields inside posts`);
  const list = body.posts;
  if (!Array.isArray(list) || list.length < 1 || list.length > POST_BATCH_MAX) {
    throw new SvcError('INVALID_REQUEST', `posts: a list of 1 to ${POST_BATCH_MAX} post bodies`);
  }
  const items: Record<string, unknown>[] = [];
  for (const [index, item] of list.entries()) {
    try {
      const outcome = await appendPostGrouped(ctx, name, author, item);
      items.push({ index, status: 201, ...appendAnswer(outcome.space, outcome.post, outcome.replayed, form, outcome.oracle) });
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      items.push({ index, status: e.status, ...errorEnvelope(e.code, requestId, e.detail, e.retryAfter) });
    }
  }
  return { space: name, items, posted: items.filter((i) => i.status === 201).length };
}

export const postsWriteRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.post(
    '/v1/spaces/:name/posts',
    {
      schema: { params: SpaceParams, querystring: AppendQuery },
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'posts.append',
        describe: 'Post to a SPACE, unsigned or signed; 201 with a signed receipt, also for an idempotent replay (replayed: true).',
        mcp: { tool: 'svc_post' },
      },
    },
    async (req, reply) => {
      const me = identityOf(req);
      const { name } = req.params as z.infer<typeof SpaceParams>;
      const { receipt } = req.query as z.infer<typeof AppendQuery>;
      const body = req.body as Record<string, unknown> | null;
      if (body !== null && typeof body === 'object' && !Array.isArray(body) && body.posts !== undefined) {
        return reply.code(201).send(await appendBatch(ctx, name, me.peerId, body, receipt === 'full' ? 'full' : 'short', String(req.id)));
      }
      const outcome = await appendPostGrouped(ctx, name, me.peerId, req.body);
      const answer = appendAnswer(outcome.space, outcome.post, outcome.replayed, receipt === 'full' ? 'full' : 'short', outcome.oracle);
      // spec/1-concepts.md names `receipt` and `replayed` as fields "on a 201": a replay answers
      // 201 too, with the first post's receipt and `replayed: true`.
      return reply.code(201).send(answer);
    },
  );

  app.put(
    '/v1/posts/:id/hidden',
    {
      schema: { params: PostParams, body: noBody },
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'posts.hide',
        describe: 'Hide a post (owner, or admin over its author); it keeps its position and link.',
        mcp: { tool: 'svc_space_control', args: { action: 'hide' } },
      },
    },
    async (req) => {
      const { id } = req.params as z.infer<typeof PostParams>;
      return await setPostHidden(ctx, id, identityOf(req).peerId, true);
    },
  );

  app.delete(
    '/v1/posts/:id/hidden',
    {
      schema: { params: PostParams, body: noBody },
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'posts.unhide',
        describe: 'Show a hidden post again.',
        mcp: { tool: 'svc_space_control', args: { action: 'unhide' } },
      },
    },
    async (req) => {
      const { id } = req.params as z.infer<typeof PostParams>;
      return await setPostHidden(ctx, id, identityOf(req).peerId, false);
    },
  );
};
