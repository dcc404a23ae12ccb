/**
 * categories.list and categories.get (spec/2-endpoints.md "SPACES, categories, members";
 * spec/1-concepts.md "Categories"; spec/3-errors.md CATEGORY_NOT_FOUND). No authentication.
 *
 * `GET /v1/categories`: the outline of the top categories. `under` (an id) starts the outline
 * at that category's children; `depth` (1 to 4, default 1) is how many levels to show below
 * the starting point; `q` looks categories up by name and other names (within `under` when
 * given); `counts=true` adds `spaces`, the SPACES filed in each category or below it.
 *
 * Limits (spec "Limits"): a lookup by name (`q`) spends the category lookup bucket, 600 a
 * minute per address (BUSY beyond); every other call is an ordinary read.
 *
 * `under`, `q` and `{id}` are caller text (attacker-controlled): bounded by the schema, then
 * normalised and cut again inside the lookups.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import {
  allCategories,
  categoryNotFound,
  childrenOf,
  descendantsOf,
  getCategory,
  searchCategories,
  topCategories,
} from '../categories/index.js';
import {
  categoryRecord,
  listMarkdown,
  outlineNode,
  recordMarkdown,
  registerInfo,
  searchHit,
  wantsMarkdown,
} from '../categories/render.js';
import type { Category } from '../categories/types.js';
import type { RelayContext } from '../context.js';
import { applyRouteLimit } from '../http/rate-limit.js';

/** Deepest outline: the register goes four levels down (under artificial-intelligence). */
export const DEPTH_MAX = 4;

const ListQuery = z.strictObject({
  under: z.string().max(200).optional(),
  depth: z.coerce.number().int().min(1).max(DEPTH_MAX).default(1),
  q: z.string().min(1).max(200).optional(),
  counts: z.enum(['true', 'false']).default('false'),
});

const IdParams = z.object({ id: z.string().max(200) });

/** The category named by `under` or `{id}`, or CATEGORY_NOT_FOUND naming the nearest ids. */
function categoryAt(id: string, field: string): Category {
  const c = getCategory(id);
  if (!c) throw categoryNotFound(id, field);
  return c;
}

/** Every id shown by an outline of `roots` `depth` levels deep. */
function shownIds(roots: readonly Category[], depth: number): string[] {
  const out: string[] = [];
  const walk = (c: Category, left: number): void => {
    out.push(c.id);
    if (left > 1) for (const k of childrenOf(c.id)) walk(k, left - 1);
  };
  for (const r of roots) walk(r, depth);
  return out;
}

/**
 * Limit by kind of call, before validation: a name lookup spends its own bucket (600 a minute
 * per address, BUSY); anything else is an ordinary read. The raw query is only peeked at.
 */
async function limitCategoryRead(ctx: RelayContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const raw = req.query as Record<string, unknown> | undefined;
  if (raw !== undefined && raw.q !== undefined) await ctx.limiter.take('categoryLookup', req.ip, { code: 'BUSY' });
  else await applyRouteLimit(ctx.limiter, 'read', req, reply, undefined);
}

export const categoriesRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  /** SPACES per id, each counting its descendants' filings once per SPACE. */
  const countsFor = async (ids: readonly string[]): Promise<Map<string, number>> =>
    await ctx.store.categoryCounts.spacesIn(new Map(ids.map((id) => [id, descendantsOf(id)])));

  app.get(
    '/v1/categories',
    {
      schema: { querystring: ListQuery },
      config: {
        auth: 'none',
        limit: 'none',
        operation: 'categories.list',
        // Its own onRequest hook (the lookup limit): the tools call it through app.inject.
        inProcess: false,
        describe: 'The category register: outline of top categories; under, depth, q (name lookup), counts=true.',
        mcp: { tool: 'svc_spaces', args: { action: 'categories' } },
      },
      onRequest: (req, reply) => limitCategoryRead(ctx, req, reply),
    },
    async (req, reply) => {
      const query = req.query as z.infer<typeof ListQuery>;
      const under = query.under === undefined ? undefined : categoryAt(query.under, 'under');
      const withCounts = query.counts === 'true';
      const answer: JsonObject = {
        register: registerInfo(allCategories().length),
        under: under ? { id: under.id, name: under.name, replaced_by: under.replacedBy } : null,
      };
      if (query.q !== undefined) {
        const hits = searchCategories(query.q, under ? { under: under.id } : {});
        const counts = withCounts ? await countsFor(hits.map((h) => h.category.id)) : undefined;
        answer.q = query.q;
        answer.items = hits.map((h) => searchHit(h, counts));
      } else {
        const roots = under ? childrenOf(under.id) : topCategories();
        const counts = withCounts ? await countsFor(shownIds(roots, query.depth)) : undefined;
        answer.depth = query.depth;
        answer.items = roots.map((c) => outlineNode(c, query.depth, counts));
      }
      if (wantsMarkdown(req)) return reply.type('text/markdown; charset=utf-8').send(listMarkdown(answer));
      return answer;
    },
  );

  app.get(
    '/v1/categories/:id',
    {
      schema: { params: IdParams },
      config: {
        auth: 'none',
        limit: 'read',
        operation: 'categories.get',
        describe: 'One category: what goes in it and elsewhere, examples, other names, children, filters.',
        mcp: { tool: 'svc_spaces', args: { action: 'categories' } },
      },
    },
    async (req, reply) => {
      const { id } = req.params as z.infer<typeof IdParams>;
      const record = categoryRecord(categoryAt(id, 'id'));
      if (wantsMarkdown(req)) return reply.type('text/markdown; charset=utf-8').send(recordMarkdown(record));
      return record;
    },
  );
};
