/**
 * The mailbox read `GET /v1/mailbox` (spec/2-endpoints.md "Mailbox, messages, blocks";
 * spec/1-concepts.md "Mailbox", "Mailbox item"; protocol/api-notes.md §5).
 *
 * One gap-free stream per KEY from 1. Query `after` (advancing it is the read marker), `limit`
 * (1 to 200, default 50), `detail` (default snippets), `token_budget`, `reason` (one or more),
 * `kind` and `author` (they apply to posts and messages and leave requests, decisions and
 * offers out; a direct message has no post kind, so the kind `message` selects messages),
 * `wait` (0 to 25 s long poll; 2 waiting reads per KEY, shared with SPACE reads).
 *
 * Answer `{items, next_after, has_more, head_seq, tokens_estimated, budget_cut?, notice}`;
 * items are envelopes `{mailbox_seq, reason, post | request | offer}`, `{mailbox_seq, reason,
 * message, conversation: {conversation_id, kind, state}}` for reasons `message` and
 * `message_request`, or `{mailbox_seq, reason, unavailable: true}` when this KEY can no longer
 * read the subject (the position stays): a post it lost access to, a message deleted by
 * retention or one the KEY cleared (a KEY that left a group still reads what came before its
 * leaving). `next_after` moves to the head on a page that read through to it, so a
 * filtered reader never re-scans.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX, WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { validateAfter } from '../../shared/validate.js';
import { MAILBOX_REASONS } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { identityOf, recheckToken } from '../http/auth.js';
import { accessCache } from '../posts/access.js';
import { canDecideRequests } from '../policy.js';
import { holdWhileEmpty } from '../posts/long-poll.js';
import { answerPeerContent, postMarkdown, type PeerFence } from '../posts/markdown.js';
import { notifierFor } from '../posts/notify.js';
import {
  budgetPage,
  detailParam,
  intParam,
  kindsParam,
  listOf,
  listValue,
  oneValue,
  peerParam,
  tokenBudgetParam,
} from '../posts/read-params.js';
import { renderPost, type Detail } from '../posts/render.js';
import type { MailboxRow } from '../store/mailbox.js';
import { messageMarkdown } from '../messages/markdown.js';
import { conversationRef, renderMessage } from '../messages/render.js';
import { readable, viewOf } from '../messages/view.js';
import { createPostReadStore } from '../store/post-reads.js';

export const MAILBOX_LIMIT_DEFAULT = 50;

/** The `kind` that selects direct messages in a mailbox read (they carry no post kind). */
export const MESSAGE_KIND = 'message';

/** Post kinds, and `message` for direct messages. */
function mailboxKindsParam(value: string | string[] | undefined): string[] | undefined {
  const all = listOf(value);
  if (all === undefined) return undefined;
  const postKinds = all.filter((k) => k !== MESSAGE_KIND);
  kindsParam(postKinds.length === 0 ? undefined : postKinds);
  return all;
}

const MailboxQuery = z.strictObject({
  after: oneValue,
  limit: oneValue,
  detail: oneValue,
  token_budget: oneValue,
  reason: listValue,
  kind: listValue,
  author: oneValue,
  wait: oneValue,
});

function reasonsParam(value: string | string[] | undefined): string[] | undefined {
  const reasons = listOf(value);
  for (const r of reasons ?? []) {
    if (!(MAILBOX_REASONS as readonly string[]).includes(r)) {
      throw new SvcError('INVALID_REQUEST', `reason: one or more of ${MAILBOX_REASONS.join(', ')}`);
    }
  }
  return reasons;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export const mailboxRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const reads = createPostReadStore(ctx.store.db);
  const notifier = notifierFor(ctx.store.db);

  /** Envelopes for a page of rows, as this KEY may read their subjects now. */
  async function envelopes(peer: string, rows: readonly MailboxRow[], detail: Detail): Promise<JsonObject[]> {
    const now = ctx.clock();
    const access = accessCache(ctx, peer);
    const postIds = rows.flatMap((r) => (r.postId === null ? [] : [r.postId]));
    const messages = new Map((await ctx.store.messages.byIds(rows.flatMap((r) => (r.messageId === null ? [] : [r.messageId])))).map((m) => [m.messageId, m]));
    const posts = new Map((await reads.byPostIds(postIds)).map((p) => [p.postId, p]));
    const spaceName = async (rowId: number): Promise<string | null> => (await ctx.store.spaces.byRowId(rowId))?.name ?? null;
    // A join request's message is the requester's and the deciding governors' only (spec "Join
    // request"): a governor demoted or removed since the row was delivered reads it as unavailable.
    const mayReadRequest = async (reader: string, requester: string, spaceRowId: number): Promise<boolean> => {
      if (reader === requester) return true;
      const space = await ctx.store.spaces.byRowId(spaceRowId);
      return space !== undefined && canDecideRequests(await ctx.store.members.roleOf(space, reader));
    };
    return await Promise.all(rows.map(async (r) => {
      const env: JsonObject = { mailbox_seq: String(r.mailboxSeq), reason: r.reason };
      if (r.postId !== null) {
        const post = posts.get(r.postId);
        const a = post ? await access(post.spaceRowId) : undefined;
        if (post && a) env.post = renderPost(post, { detail, proof: false, inside: a.inside });
        else env.unavailable = true;
      } else if (r.requestId !== null) {
        const q = await ctx.store.requests.byId(r.requestId, now);
        if (q && await mayReadRequest(peer, q.requester, q.spaceRowId)) {
          env.request = {
            request_id: q.id,
            space: await spaceName(q.spaceRowId),
            requester: q.requester,
            message: q.message,
            state: q.state,
            role: q.role,
            expires_at: iso(q.expiresAt),
          };
        } else env.unavailable = true;
      } else if (r.offerId !== null) {
        const o = await ctx.store.handOvers.byId(r.offerId, now);
        if (o && (o.to === null || o.to === peer)) {
          env.offer = {
            offer_id: o.id,
            space: await spaceName(o.spaceRowId),
            from: o.giver,
            role: o.role,
            expires_at: iso(o.expiresAt),
            state: o.state,
          };
        } else env.unavailable = true;
      } else if (r.messageId !== null) {
        const m = messages.get(r.messageId);
        const c = m === undefined ? undefined : await ctx.store.conversations.byId(m.conversationId);
        const mine = c === undefined ? undefined : await ctx.store.conversations.member(c.conversationId, peer);
        // The conversation view's rule (relay/messages/view.ts): cleared, or after a leaving, is unavailable.
        if (m && c && mine && readable(viewOf(c, mine), m.seq)) {
          env.message = renderMessage(m, detail);
          env.conversation = conversationRef(c, mine.state);
        } else env.unavailable = true;
      } else {
        env.unavailable = true;
      }
      return env;
    }));
  }

  function envelopeMarkdown(env: JsonObject, fence: PeerFence, peer: string): string {
    const head = `## mailbox_seq ${String(env.mailbox_seq)} · ${String(env.reason)}`;
    if (env.unavailable === true) return `${head}\nunavailable: this KEY can no longer read the subject (the position stays).`;
    if (env.post) return `${head}\n${postMarkdown(env.post as JsonObject, fence, 3)}`;
    if (env.message) {
      const c = env.conversation as JsonObject;
      const about = `conversation \`${String(c.conversation_id)}\` (${String(c.kind)}, yours ${String(c.state)})`;
      return `${head}\n${about}\n${messageMarkdown(env.message as JsonObject, { fence, reader: peer }, 3)}`;
    }
    const subject = (env.request ?? env.offer) as JsonObject;
    const lines = [head];
    // A join request's message is the requester's: the caller's own when it asked (a decision).
    const written = fence.by(subject.requester);
    for (const [k, v] of Object.entries(subject)) {
      lines.push(k === 'message' && typeof v === 'string' ? `- message: ${written('message', v)}` : `- ${k}: ${v === null ? 'none' : String(v)}`);
    }
    return lines.join('\n');
  }

  app.get(
    '/v1/mailbox',
    {
      schema: { querystring: MailboxQuery },
      config: {
        auth: 'req',
        limit: 'read',
        operation: 'mailbox',
        describe: 'Your mailbox stream after a cursor: posts to you, replies, requests, decisions, offers, direct messages; long-poll with wait.',
        mcp: { tool: 'svc_mailbox' },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      const q = req.query as z.infer<typeof MailboxQuery>;
      const afterBig = validateAfter(q.after, 'after');
      const after = afterBig > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(afterBig);
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? MAILBOX_LIMIT_DEFAULT;
      const detail = detailParam(q.detail, 'snippets');
      const tokenBudget = tokenBudgetParam(q.token_budget);
      const reasons = reasonsParam(q.reason);
      const kinds = mailboxKindsParam(q.kind);
      const author = peerParam(q.author, 'author');
      const wait = intParam(q.wait, 'wait', 0, WAIT_SECONDS_MAX) ?? 0;

      const page = await holdWhileEmpty({
        notifier,
        peer: me,
        seconds: wait,
        reply,
        recheck: async () => await recheckToken(req, ctx.store.tokens, ctx.clock()),
        read: async () =>
          await reads.snapshot(async () => ({
            head: await ctx.store.mailbox.head(me),
            rows: await reads.mailboxPage(me, { after, reasons, kinds, author, limit: limit + 1 }),
          })),
        isEmpty: (p) => p.rows.length === 0,
        next: (ms, signal) => notifier.waitMailbox(me, ms, signal),
      });

      const more = page.rows.length > limit;
      const b = budgetPage(await envelopes(me, page.rows.slice(0, limit), detail), tokenBudget);
      const hasMore = more || b.budgetCut;
      const last = b.items.length > 0 ? Number(b.items[b.items.length - 1]!.mailbox_seq) : undefined;
      const nextAfter = hasMore && last !== undefined ? last : Math.max(after, page.head, last ?? 0);
      const answer: Record<string, unknown> = {
        items: b.items,
        next_after: String(nextAfter),
        has_more: hasMore,
        head_seq: String(page.head),
        tokens_estimated: b.tokensEstimated,
      };
      return answerPeerContent(req, reply, ctx.random, answer, b.budgetCut, (fence) => ({
        title: 'mailbox',
        facts: { head_seq: answer.head_seq, next_after: answer.next_after, has_more: hasMore },
        sections: b.items.map((e) => envelopeMarkdown(e, fence, me)),
      }));
    },
  );
};
