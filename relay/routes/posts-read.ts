/**
 * Reading a SPACE's stream (spec/2-endpoints.md "Posts, reading, SEEK, proofs": posts.read,
 * posts.standing; protocol/api-notes.md §4 page answers; objects.md §14 export).
 *
 * posts.read `GET /v1/spaces/{name}/posts`: `after` (cursor), `kind`, `author`, `reply_to`,
 * `limit` (1 to 200, default 50), `detail` (ids, headlines, snippets (default), full), `token_budget`,
 * `wait` (0 to 25 s with a KEY, ascending only), `order` (asc, or desc: a snapshot with
 * `next_after` null, paged by `before`), `proof=true` (with full). Answer
 * `{items, next_after, has_more, head_seq, tokens_estimated, budget_cut?, notice}`.
 * A cursor past the head is CURSOR_AHEAD (HISTORY_ROLLBACK in a closed SPACE: its lost
 * positions do not return). `Accept: application/x-ndjson` exports instead (KEY required).
 *
 * posts.standing `GET /v1/spaces/{name}/standing`: posts nobody superseded or retracted,
 * newest first; `kind`, `author`, `limit`, `detail`, `token_budget`; a snapshot.
 *
 * Both take the newer API's `detail=headlines` (relay/posts/headlines.ts): one short item a
 * post and the page's `authors`; `tokens_estimated` then counts the items and `authors`, and
 * each item's `open` says what reading that post whole would cost. Only when asked: the default
 * stays snippets.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { EXPORT_LINES_DEFAULT, EXPORT_LINES_MAX, PAGE_LIMIT_MAX, WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { validateAfter } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { recheckToken } from '../http/auth.js';
import { spaceForPosts, type SpaceAccess } from '../posts/access.js';
import { exportBody } from '../posts/export.js';
import { holdWhileEmpty } from '../posts/long-poll.js';
import { answerPeerContent, headlineMarkdown, postMarkdown, type PeerFence } from '../posts/markdown.js';
import { notifierFor } from '../posts/notify.js';
import {
  boolParam,
  budgetPage,
  intParam,
  kindsParam,
  listValue,
  pageDetailParam,
  oneValue,
  peerParam,
  tokenBudgetParam,
  uuidParam,
} from '../posts/read-params.js';
import { renderPost, type Detail } from '../posts/render.js';
import { headlineRelations, headlinesPage, type HeadlineRelations } from '../posts/headlines.js';
import { createPostReadStore, type ReadPost } from '../store/post-reads.js';

export const PAGE_LIMIT_DEFAULT = 50;

const NameParams = z.object({ name: z.string() });

const ReadQuery = z.strictObject({
  after: oneValue,
  before: oneValue,
  kind: listValue,
  author: oneValue,
  reply_to: oneValue,
  limit: oneValue,
  detail: oneValue,
  token_budget: oneValue,
  wait: oneValue,
  order: oneValue,
  proof: oneValue,
});
type ReadQueryT = z.infer<typeof ReadQuery>;

const StandingQuery = z.strictObject({
  kind: listValue,
  author: oneValue,
  limit: oneValue,
  detail: oneValue,
  token_budget: oneValue,
});
type StandingQueryT = z.infer<typeof StandingQuery>;

/** A position cursor as a number; past 2^53 it is past any head. */
function position(value: string | undefined, field: string): number {
  const n = validateAfter(value, field);
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

function orderParam(value: string | undefined): 'asc' | 'desc' {
  if (value === undefined || value === 'asc') return 'asc';
  if (value === 'desc') return 'desc';
  throw new SvcError('INVALID_REQUEST', 'order: asc or desc');
}

/** CURSOR_AHEAD, or HISTORY_ROLLBACK when a closed SPACE lost the positions (spec "Space status"). */
function checkCursor(access: SpaceAccess, after: number, head: number): void {
  if (after <= head) return;
  if (access.space.status === 'closed') {
    const next = access.space.replacedBy ? `; continues in ${access.space.replacedBy}` : '';
    throw new SvcError('HISTORY_ROLLBACK', `after: ${after} is past head_seq ${head} of this closed SPACE${next}`);
  }
  throw new SvcError('CURSOR_AHEAD', `after: ${after} is past head_seq ${head}`);
}

/** A page's items within the budget: posts rendered at `detail`, or headlines with their `authors`. */
interface PageItems {
  items: JsonObject[];
  authors?: Record<string, string>;
  tokensEstimated: number;
  budgetCut: boolean;
}

function pageOf(rows: ReadPost[], detail: Detail | 'headlines', proof: boolean, inside: boolean, budget: number | undefined, rel: HeadlineRelations | undefined): PageItems {
  if (detail === 'headlines') return headlinesPage(rows, rel!, inside, budget);
  return budgetPage(rows.map((r) => renderPost(r, { detail, proof, inside })), budget);
}

function sectionsOf(page: PageItems, fence: PeerFence): string[] {
  if (page.authors === undefined) return page.items.map((p) => postMarkdown(p, fence));
  return page.items.map((h) => headlineMarkdown(h, page.authors!, fence));
}

function wantsExport(req: FastifyRequest): boolean {
  return /application\/x-ndjson/i.test(req.headers.accept ?? '');
}

export const postsReadRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const reads = createPostReadStore(ctx.store.db);
  const notifier = notifierFor(ctx.store.db);
  // Stopping ends every held read of this database (SPACE reads, the mailbox, conversations):
  // each answers what it has, so a SIGTERM is not held up to 25 seconds by waiting clients.
  app.addHook('preClose', async () => notifier.close());

  async function exportAnswer(req: FastifyRequest, reply: FastifyReply, name: string, q: ReadQueryT) {
    const caller = req.identity?.peerId ?? null;
    if (caller === null) throw new SvcError('TOKEN_MISSING', 'the export needs a KEY, even for a public SPACE');
    if (q.detail !== undefined && q.detail !== 'full') throw new SvcError('INVALID_REQUEST', 'detail: the export is full detail only');
    for (const refused of ['reply_to', 'token_budget', 'wait', 'before'] as const) {
      if (q[refused] !== undefined) throw new SvcError('INVALID_REQUEST', `${refused}: not taken by the export`);
    }
    if (q.order !== undefined && q.order !== 'asc') throw new SvcError('INVALID_REQUEST', 'order: the export is ascending only');
    if (q.proof !== undefined && q.proof !== 'true') throw new SvcError('INVALID_REQUEST', 'proof: every export line carries its proof');
    const kinds = kindsParam(q.kind);
    const author = peerParam(q.author, 'author');
    const lineLimit = intParam(q.limit, 'limit', 1, EXPORT_LINES_MAX) ?? EXPORT_LINES_DEFAULT;
    const after = position(q.after, 'after');
    const access = await spaceForPosts(ctx, name, caller);
    const body = await reads.snapshot(async () => {
      const head = await reads.head(access.space.id);
      checkCursor(access, after, head);
      const rows = await reads.page(access.space.id, { after, order: 'asc', kinds, author, limit: lineLimit + 1 });
      return exportBody({ spaceId: access.space.spaceId, name: access.space.name, head, after, rows, lineLimit, inside: access.inside });
    });
    return reply.type('application/x-ndjson; charset=utf-8').header('cache-control', 'no-store').send(body);
  }

  app.get(
    '/v1/spaces/:name/posts',
    {
      schema: { params: NameParams, querystring: ReadQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'posts.read',
        describe: 'Read a SPACE stream by cursor; long-poll with wait; export with Accept: application/x-ndjson. detail=headlines: each post\'s title or start, flags and open (what reading it whole costs in tokens), and the page\'s authors.',
        mcp: { tool: 'svc_read_space' },
      },
    },
    async (req, reply) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const q = req.query as ReadQueryT;
      if (wantsExport(req)) return await exportAnswer(req, reply, name, q);
      const caller = req.identity?.peerId ?? null;
      const detail = pageDetailParam(q.detail, 'snippets');
      const proof = boolParam(q.proof, 'proof') ?? false;
      if (proof && detail !== 'full') throw new SvcError('INVALID_REQUEST', 'proof: only with detail=full');
      const order = orderParam(q.order);
      const wait = intParam(q.wait, 'wait', 0, WAIT_SECONDS_MAX) ?? 0;
      if (wait > 0 && caller === null) throw new SvcError('INVALID_REQUEST', 'wait: long polling needs a KEY');
      if (wait > 0 && order === 'desc') throw new SvcError('INVALID_REQUEST', 'wait: long polling reads ascending only');
      const after = position(q.after, 'after');
      const before = q.before === undefined ? undefined : position(q.before, 'before');
      if (before !== undefined && order !== 'desc') throw new SvcError('INVALID_REQUEST', 'before: only with order=desc');
      const kinds = kindsParam(q.kind);
      const author = peerParam(q.author, 'author');
      const replyTo = uuidParam(q.reply_to, 'reply_to');
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? PAGE_LIMIT_DEFAULT;
      const tokenBudget = tokenBudgetParam(q.token_budget);

      // Access is checked again on every read: a KEY removed while it waits reads nothing more.
      let spaceRowId = 0;
      const read = async (): Promise<{ access: SpaceAccess; head: number; rows: ReadPost[]; rel?: HeadlineRelations }> => {
        const access = await spaceForPosts(ctx, name, caller);
        spaceRowId = access.space.id;
        return await reads.snapshot(async () => {
          const head = await reads.head(access.space.id);
          checkCursor(access, after, head);
          const rows = await reads.page(access.space.id, { after, before, order, kinds, author, replyTo, limit: limit + 1 });
          // A headline's links and flags are read in the same snapshot as the posts.
          if (detail !== 'headlines') return { access, head, rows };
          return { access, head, rows, rel: await headlineRelations(reads, access.space.id, rows.slice(0, limit)) };
        });
      };
      const page = await holdWhileEmpty({
        notifier,
        peer: caller ?? '',
        seconds: wait,
        reply,
        recheck: async () => await recheckToken(req, ctx.store.tokens, ctx.clock()),
        read,
        isEmpty: (p) => p.rows.length === 0,
        next: (ms, signal) => notifier.waitSpace(spaceRowId, ms, signal),
      });

      const { access, head } = page;
      const more = page.rows.length > limit;
      const b = pageOf(page.rows.slice(0, limit), detail, proof, access.inside, tokenBudget, page.rel);
      const hasMore = more || b.budgetCut;
      const last = b.items.length > 0 ? Number(b.items[b.items.length - 1]!.seq) : undefined;
      const nextAfter = order === 'desc' ? null : String(hasMore && last !== undefined ? last : Math.max(after, head, last ?? 0));
      const answer: Record<string, unknown> = {
        items: b.items,
        next_after: nextAfter,
        has_more: hasMore,
        head_seq: String(head),
        tokens_estimated: b.tokensEstimated,
      };
      if (b.authors !== undefined) answer.authors = b.authors;
      if (order === 'desc') answer.next_before = hasMore && last !== undefined ? String(last) : null;
      return answerPeerContent(req, reply, ctx.random, answer, b.budgetCut, (fence) => ({
        title: `${access.space.name}: posts`,
        facts: { head_seq: answer.head_seq, next_after: nextAfter, has_more: hasMore, order, detail },
        sections: sectionsOf(b, fence),
      }));
    },
  );

  app.get(
    '/v1/spaces/:name/standing',
    {
      schema: { params: NameParams, querystring: StandingQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'posts.standing',
        describe: 'Posts nobody superseded or retracted, newest first (a snapshot); detail=headlines as posts.read takes it.',
        mcp: { tool: 'svc_read_space', args: { standing: true } },
      },
    },
    async (req, reply) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const q = req.query as StandingQueryT;
      const caller = req.identity?.peerId ?? null;
      const detail = pageDetailParam(q.detail, 'snippets');
      const kinds = kindsParam(q.kind);
      const author = peerParam(q.author, 'author');
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? PAGE_LIMIT_DEFAULT;
      const tokenBudget = tokenBudgetParam(q.token_budget);
      const access = await spaceForPosts(ctx, name, caller);
      const { head, rows, rel } = await reads.snapshot(async () => {
        const head = await reads.head(access.space.id);
        const rows = await reads.standing(access.space.id, { kinds, author, limit: limit + 1 });
        const rel = detail === 'headlines' ? await headlineRelations(reads, access.space.id, rows.slice(0, limit)) : undefined;
        return { head, rows, rel };
      });
      const b = pageOf(rows.slice(0, limit), detail, false, access.inside, tokenBudget, rel);
      const hasMore = rows.length > limit || b.budgetCut;
      const answer: Record<string, unknown> = {
        items: b.items,
        next_after: null,
        has_more: hasMore,
        head_seq: String(head),
        tokens_estimated: b.tokensEstimated,
      };
      if (b.authors !== undefined) answer.authors = b.authors;
      return answerPeerContent(req, reply, ctx.random, answer, b.budgetCut, (fence) => ({
        title: `${access.space.name}: standing posts`,
        facts: { head_seq: answer.head_seq, has_more: hasMore, detail },
        sections: sectionsOf(b, fence),
      }));
    },
  );
};
