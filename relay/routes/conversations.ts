/**
 * Direct messages: the "Mailbox, messages, blocks" section of spec/2-endpoints.md without the
 * mailbox read (relay/routes/mailbox.ts), blocks and retention (their own routes):
 * conversations.start, list, get, messages.read, messages.send, accept, decline, leave, clear,
 * mark_read. The pipelines are relay/messages/; this file binds them to HTTP.
 *
 * Wire shapes (protocol/api-notes.md §5 and the direct-message contract):
 * - `POST /v1/conversations` → 201 `{conversation, message, replayed}`;
 * - `GET /v1/conversations?state=active|requested&before=&limit=` → `{items, next_before,
 *   has_more, notice}`, newest first by last message (for a group the caller left, the last
 *   before its leaving); `active` lists what the caller accepted
 *   and groups it left (until cleared), `requested` its waiting requests;
 * - `GET /v1/conversations/{id}` → the conversation with each member's `changed_at`;
 * - `GET /v1/conversations/{id}/messages?after=&limit=&order=desc&detail=&token_budget=&wait=`
 *   → `{items, next_after, has_more, head_seq, tokens_estimated, notice}` (CURSOR_AHEAD past the
 *   head; `wait` long-polls an empty ascending read, 0 to 25 s);
 * - `POST /v1/conversations/{id}/messages` → 201 `{message, conversation: {conversation_id,
 *   kind, state}, replayed, not_yet_accepted?}`, the last (only when there are any) the members
 *   whose request still waits: the message is kept for them and reaches no mailbox of theirs
 *   (relay/messages/send.ts);
 * - `POST /v1/conversations/{id}/accept|decline|leave|clear` → `{conversation_id, state}`
 *   (+ `cleared_seq`); `POST /v1/conversations/{id}/read` `{seq?}` → `{conversation_id, read_seq}`.
 *
 * A conversation id that is malformed, unknown, or not the caller's is CONVERSATION_NOT_FOUND,
 * the same answer for each. Start and send spend the direct-message bucket (60 a minute per
 * KEY; BUSY with Retry-After and the RateLimit headers) instead of the general write bucket.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX, WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { isUuid } from '../../shared/encoding.js';
import { validateAfter } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { identityOf, recheckToken } from '../http/auth.js';
import { pageMarkdown, peerFence, sendMarkdown, wantsMarkdown } from '../http/markdown.js';
import { noBody } from '../http/schemas.js';
import { holdWhileEmpty } from '../posts/long-poll.js';
import { notifierFor } from '../posts/notify.js';
import { budgetPage, detailParam, intParam, oneValue, tokenBudgetParam, PEER_CONTENT_NOTICE } from '../posts/read-params.js';
import { conversationMarkdown, messageMarkdown, type MessageFences } from '../messages/markdown.js';
import { conversationRef, renderConversation, renderMessage } from '../messages/render.js';
import { notFound, sendMessage, startConversation, type SendOutcome } from '../messages/send.js';
import { accept, clear, decline, leave, markRead, membership } from '../messages/states.js';
import { viewOf } from '../messages/view.js';
import type { ListCursor, MemberState } from '../store/conversations.js';

export const CONVERSATIONS_LIMIT_DEFAULT = 50;
export const MESSAGES_LIMIT_DEFAULT = 50;

const IdParams = z.object({ id: z.string() });

const StartBody = z.strictObject({
  to: z.unknown().optional(),
  body: z.unknown().optional(),
  sealed: z.unknown().optional(),
  about: z.unknown().optional(),
  idempotency_key: z.unknown().optional(),
});
const SendBody = z.strictObject({
  body: z.unknown().optional(),
  sealed: z.unknown().optional(),
  reply_to: z.unknown().optional(),
  about: z.unknown().optional(),
  idempotency_key: z.unknown().optional(),
});
const ReadBody = z.strictObject({ seq: z.unknown().optional() }).optional();

const ListQuery = z.strictObject({ state: oneValue, before: oneValue, limit: oneValue });
const MessagesQuery = z.strictObject({
  after: oneValue,
  limit: oneValue,
  order: oneValue,
  detail: oneValue,
  token_budget: oneValue,
  wait: oneValue,
});

/** The list cursor: `<listed at ms>_<conversation id>` (relay/messages/view.ts), as next_before gives it. */
const BEFORE_RE = /^(0|[1-9][0-9]{0,15})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function beforeParam(value: string | undefined): ListCursor | undefined {
  if (value === undefined) return undefined;
  const m = BEFORE_RE.exec(value);
  if (!m) throw new SvcError('INVALID_REQUEST', 'before: the next_before of an earlier page');
  return { listedAt: Number(m[1]), conversationId: m[2]! };
}

/** The states each list shows (contract: active = accepted, or a group left until cleared). */
const LIST_STATES: Record<string, MemberState[]> = { active: ['accepted', 'left'], requested: ['requested'] };

function conversationId(req: FastifyRequest): string {
  const { id } = req.params as z.infer<typeof IdParams>;
  // A malformed id names no conversation: the same answer as an unknown or foreign one.
  if (!isUuid(id)) throw notFound();
  return id;
}

function position(value: string | undefined, field: string): number {
  const n = validateAfter(value, field);
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

export const conversationsRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const notifier = notifierFor(ctx.store.db);

  /** 60 direct messages a minute per KEY (spec Limits), refused BUSY like the other buckets. */
  async function spendMessage(me: string): Promise<void> {
    await ctx.limiter.take('directMessages', me, { code: 'BUSY' });
  }

  function sendAnswer(o: SendOutcome): JsonObject {
    const answer: JsonObject = { message: renderMessage(o.message, 'full'), conversation: conversationRef(o.conversation, o.state), replayed: o.replayed };
    if (o.notYetAccepted.length > 0) answer.not_yet_accepted = o.notYetAccepted;
    return answer;
  }

  /** Markdown whose legend names the markers the page used (the caller's words fenced as its own). */
  function answerPage(req: FastifyRequest, reply: FastifyReply, answer: Record<string, unknown>, me: string, title: string, facts: Record<string, unknown>, sections: (f: MessageFences) => string[]) {
    answer.notice = PEER_CONTENT_NOTICE;
    if (!wantsMarkdown(req)) return answer;
    const f: MessageFences = { fence: peerFence(ctx.random, me), reader: me };
    const body = sections(f);
    return sendMarkdown(reply, pageMarkdown(title, facts, body, f.fence, PEER_CONTENT_NOTICE));
  }

  app.post(
    '/v1/conversations',
    {
      schema: { body: StartBody },
      config: {
        auth: 'req',
        limit: 'none',
        operation: 'conversations.start',
        describe: 'Start a pair (one peer) or a group (2 to 15 peers) with a first message; a pair that exists takes the message.',
        mcp: { tool: 'svc_message', args: { action: 'start' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      await spendMessage(me);
      const o = await startConversation(ctx, me, req.body as Record<string, unknown>);
      const c = (await ctx.store.conversations.byId(o.conversation.conversationId))!;
      const mine = (await ctx.store.conversations.member(c.conversationId, me))!;
      return reply.code(201).send({ conversation: await renderConversation(ctx.store, viewOf(c, mine)), message: renderMessage(o.message, 'full'), replayed: o.replayed });
    },
  );

  app.get(
    '/v1/conversations',
    {
      schema: { querystring: ListQuery },
      config: {
        auth: 'req',
        operation: 'conversations.list',
        describe: 'Your conversations, newest first, with members, unread flag and latest message; state=requested lists waiting requests.',
        mcp: { tool: 'svc_messages', args: { action: 'list' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      const q = req.query as z.infer<typeof ListQuery>;
      const stateName = q.state ?? 'active';
      // An own property only: `state=__proto__` or `constructor` names no list.
      const states = Object.hasOwn(LIST_STATES, stateName) ? LIST_STATES[stateName] : undefined;
      if (states === undefined) throw new SvcError('INVALID_REQUEST', 'state: active or requested');
      const before = beforeParam(q.before);
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? CONVERSATIONS_LIMIT_DEFAULT;
      const rows = await ctx.store.conversations.listFor(me, states, before, limit + 1);
      const more = rows.length > limit;
      const page = rows.slice(0, limit).map((r) => viewOf(r.conversation, r.me));
      const last = page[page.length - 1];
      const answer: Record<string, unknown> = {
        items: await Promise.all(page.map(async (v) => await renderConversation(ctx.store, v))),
        next_before: more && last ? `${last.listedAt}_${last.conversation.conversationId}` : null,
        has_more: more,
      };
      return answerPage(req, reply, answer, me, `conversations (${stateName})`, { has_more: more, next_before: answer.next_before }, (f) =>
        (answer.items as JsonObject[]).map((c) => conversationMarkdown(c, f)),
      );
    },
  );

  app.get(
    '/v1/conversations/:id',
    {
      schema: { params: IdParams },
      config: {
        auth: 'req',
        operation: 'conversations.get',
        describe: 'One conversation: members, who accepted or left and when, your read position.',
        mcp: { tool: 'svc_messages', args: { action: 'get' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      return await renderConversation(ctx.store, await membership(ctx, conversationId(req), me), true);
    },
  );

  app.get(
    '/v1/conversations/:id/messages',
    {
      schema: { params: IdParams, querystring: MessagesQuery },
      config: {
        auth: 'req',
        operation: 'messages.read',
        describe: 'Messages of a conversation after a cursor, or the newest with order=desc; long-poll with wait.',
        mcp: { tool: 'svc_messages', args: { action: 'read' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      const id = conversationId(req);
      const q = req.query as z.infer<typeof MessagesQuery>;
      const after = position(q.after, 'after');
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? MESSAGES_LIMIT_DEFAULT;
      if (q.order !== undefined && q.order !== 'asc' && q.order !== 'desc') throw new SvcError('INVALID_REQUEST', 'order: asc or desc');
      const order = q.order === 'desc' ? 'desc' : 'asc';
      const detail = detailParam(q.detail, 'full');
      const tokenBudget = tokenBudgetParam(q.token_budget);
      const wait = intParam(q.wait, 'wait', 0, WAIT_SECONDS_MAX) ?? 0;
      if (wait > 0 && order === 'desc') throw new SvcError('INVALID_REQUEST', 'wait: long polling reads ascending only');

      const read = async () => {
        const { from: cleared, head } = await membership(ctx, id, me);
        if (after > head) throw new SvcError('CURSOR_AHEAD', `after: head_seq is ${head}`);
        const from = Math.max(after, cleared);
        const rows = await ctx.store.messages.page({ conversationId: id, after: from, upTo: head, order, limit: limit + 1 });
        return { head, rows };
      };
      const page = await holdWhileEmpty({
        notifier,
        peer: me,
        seconds: wait,
        reply,
        recheck: async () => await recheckToken(req, ctx.store.tokens, ctx.clock()),
        read,
        isEmpty: (p) => p.rows.length === 0,
        next: (ms, signal) => notifier.waitConversation(id, ms, signal),
      });
      const more = page.rows.length > limit;
      const b = budgetPage(page.rows.slice(0, limit).map((m) => renderMessage(m, detail)), tokenBudget);
      const hasMore = more || b.budgetCut;
      const last = b.items[b.items.length - 1];
      const nextAfter = order === 'desc' ? null : hasMore && last ? String(last.seq) : String(Math.max(after, page.head));
      const answer: Record<string, unknown> = {
        items: b.items,
        next_after: nextAfter,
        has_more: hasMore,
        head_seq: String(page.head),
        tokens_estimated: b.tokensEstimated,
      };
      if (b.budgetCut) answer.budget_cut = true;
      return answerPage(req, reply, answer, me, `conversation ${id}`, { head_seq: answer.head_seq, next_after: nextAfter, has_more: hasMore }, (f) =>
        b.items.map((m) => messageMarkdown(m, f)),
      );
    },
  );

  app.post(
    '/v1/conversations/:id/messages',
    {
      schema: { params: IdParams, body: SendBody },
      config: {
        auth: 'req',
        limit: 'none',
        operation: 'messages.send',
        describe: 'Send a message into a conversation (body, or sealed in a sealed pair); replying to a request accepts it.',
        mcp: { tool: 'svc_message', args: { action: 'send' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      await spendMessage(me);
      const o = await sendMessage(ctx, me, conversationId(req), req.body as Record<string, unknown>);
      return reply.code(201).send(sendAnswer(o));
    },
  );

  const actions = [
    ['accept', 'conversations.accept', 'Accept a message request (also a conversation you declined).', accept],
    ['decline', 'conversations.decline', 'Decline a message request; nobody is told.', decline],
    ['leave', 'conversations.leave', 'Leave a group for good (pairs cannot be left).', leave],
    ['clear', 'conversations.clear', 'Clear a conversation for yourself alone; a later message brings it back.', clear],
  ] as const;
  for (const [path, operation, describe, run] of actions) {
    app.post(
      `/v1/conversations/:id/${path}`,
      {
        schema: { params: IdParams, body: noBody },
        config: { auth: 'req', limit: 'write', operation, describe, mcp: { tool: 'svc_message', args: { action: path } } },
      },
      async (req) => run(ctx, conversationId(req), identityOf(req).peerId),
    );
  }

  app.post(
    '/v1/conversations/:id/read',
    {
      schema: { params: IdParams, body: ReadBody },
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'conversations.mark_read',
        describe: 'Mark a conversation read up to a seq, or up to the newest message.',
        mcp: { tool: 'svc_message', args: { action: 'mark_read' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const id = conversationId(req);
      const body = (req.body ?? {}) as { seq?: unknown };
      const seq = body.seq === undefined || body.seq === null ? undefined : position(seqText(body.seq), 'seq');
      return markRead(ctx, id, me, seq);
    },
  );
};

/** `seq` as JSON sends it: a decimal string or a whole number. */
function seqText(v: unknown): string {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string') return v;
  throw new SvcError('INVALID_REQUEST', 'seq: a position, a decimal string or a whole number');
}
