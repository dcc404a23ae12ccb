/**
 * The newer API's findings reads, beside spec/2-endpoints.md "Posts"; read as the SPACE's posts
 * are, under the read limit. A finding is written as a post of kind `finding` (posts.append);
 * what contests or confirms one is a post or a task check, so these reads are all the findings
 * add to the routes.
 *
 * - findings.list `GET /v1/spaces/{name}/findings?status=&fingerprint=&since=&before=&limit=&token_budget=`
 *   → `{space, items, next_before, has_more, tokens_estimated, budget_cut?, notice}`, newest
 *   first (relay/findings/list.ts).
 * - findings.get `GET /v1/posts/{id}/finding` → `{space, post_id, seq, kind, finding, sources,
 *   source_withdrawn, cited_by, citing, unavailable?, notice}` (relay/findings/get.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import type { RelayContext } from '../context.js';
import { getFinding } from '../findings/get.js';
import { listFindings } from '../findings/list.js';
import { oneValue } from '../posts/read-params.js';

const NameParams = z.object({ name: z.string() });
const PostParams = z.object({ id: z.string() });
const NoQuery = z.strictObject({});
const ListQuery = z.strictObject({ status: oneValue, fingerprint: oneValue, since: oneValue, before: oneValue, limit: oneValue, token_budget: oneValue });

export const findingsRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/spaces/:name/findings',
    {
      schema: { params: NameParams, querystring: ListQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'findings.list',
        mcp: { tool: 'svc_spaces', args: { action: 'findings' } },
        describe:
          'A SPACE\'s findings, newest first: each claim with its number, status and confidence, the posts it rests on, how many cite it, whether one it rests on was replaced or retracted, what contests it and the task it is the result of. status, fingerprint, since and before narrow it.',
      },
    },
    async (req) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      return await listFindings(ctx, name, req.identity?.peerId ?? null, req.query as z.infer<typeof ListQuery>);
    },
  );

  app.get(
    '/v1/posts/:id/finding',
    {
      schema: { params: PostParams, querystring: NoQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'findings.get',
        describe:
          'One post\'s sources (whether each was replaced, retracted or is contested), the posts of its SPACE that cite it, and, for a finding, the finding as the list shows it. A post you cannot read reads as nonexistent.',
      },
    },
    async (req) => {
      const { id } = req.params as z.infer<typeof PostParams>;
      return await getFinding(ctx, id, req.identity?.peerId ?? null);
    },
  );
};
