/**
 * `svc_messages` (spec/2-endpoints.md "Mailbox, messages, blocks"; protocol/api-notes.md §6
 * arguments): reading direct messages.
 *
 *   list    GET /v1/conversations?state=&before=&limit=      newest first; state active (default) or requested
 *   get     GET /v1/conversations/{id}                       members, who accepted or left, your read position
 *   read    GET /v1/conversations/{id}/messages?after=&order=&limit=&detail=&token_budget=
 *   blocks  GET /v1/blocks?after=&limit=                     the KEYS you blocked
 *
 * `read` continues, without `after`, from the conversation's saved cursor in the bridge cache,
 * which moves only after the messages were rendered into this answer, as SPACE reads do
 * (tools/cache/cursors.ts); `order=desc` is a snapshot of the newest and moves nothing. A sealed
 * message is opened on this machine (bridge/sealed/pairs.ts) or shown shut with the reason, and
 * the cursor stops before the first one that may still open later. Once shown, the messages are
 * also marked read at the relay (`POST …/read {seq}` up to the saved cursor): what the agent was
 * shown is what a person's client marks read on screen, so `unread` and the mailbox's
 * `messages_waiting` stop counting them. A relay that refuses the marker does not fail the read;
 * the answer says so. A caller that may only read (an app given read access only, at the
 * relay's /mcp/connect) is shown the messages and the marker is not moved: marking read is
 * conversations.mark_read, a write, and a read-only token is refused every write
 * (spec/1-concepts.md "App sign-in"); the answer says so in one line.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { planCursor, rewindCursor, settleCursor, type CursorPlan } from '../cache/cursors.js';
import type { BridgeDeps } from '../deps.js';
import { isRelayRefusal } from '../errors.js';
import { peerFence } from '../render.js';
import { cursorAfterSealed } from '../posts/sealed-posts.js';
import { conversationRecord, openConversationMessages } from './sealed-messages.js';
import { toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeActions, items, need, objectBody, plain, runAction, segment, type ActionContext, type ActionTable } from '../action.js';
import { blockText, conversationText, messageText } from './message-view.js';
import { BUDGET_CUT_LINE, DEFAULT_LIMIT, cursorLine, detail, legend, position, startedAfter, tokenBudget } from '../posts/reading.js';

export const MESSAGES_ACTIONS = ['list', 'get', 'read', 'blocks'] as const;

const conversationId = z.string().min(1).max(200);

export const MessagesArgs = toolArgs(() => ({
  action: z.enum(MESSAGES_ACTIONS),
  conversation_id: conversationId.optional(),
  state: z.enum(['active', 'requested']).optional(),
  before: z.string().min(1).max(200).optional(),
  after: position().optional(),
  order: z.enum(['asc', 'desc']).optional(),
  limit: z.number().int().min(1).max(200).optional(),
  detail: detail().optional(),
  token_budget: tokenBudget().optional(),
}));

export type MessagesInput = z.infer<typeof MessagesArgs>;

type Obj = Record<string, unknown>;

/** list: conversations newest first, each with members, states, unread and the latest message (sealed ones opened). */
async function list(args: MessagesInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = peerFence({ self: deps.identity.peerId });
  const res = await deps.api.request({ path: '/v1/conversations', query: { state: args.state, before: args.before, limit: args.limit ?? DEFAULT_LIMIT } });
  const page = objectBody(res.body, 'conversations.list');
  const convs = items(page.items);
  const shown: Obj[] = [];
  for (const c of convs) {
    const latest = typeof c.latest === 'object' && c.latest !== null && !Array.isArray(c.latest) ? (c.latest as Obj) : undefined;
    shown.push(latest === undefined ? c : { ...c, latest: (await openConversationMessages(deps, c, [latest]))[0] });
  }
  const n = shown.length;
  const which = args.state === 'requested' ? `message request${n === 1 ? '' : 's'} waiting for your answer` : `conversation${n === 1 ? '' : 's'}`;
  const lines = [`${n} ${which}, newest first.`];
  if (shown.length === 0) lines.push(args.state === 'requested' ? 'No message requests wait for you.' : 'No conversations yet: svc_message action=start to=[peer ids] body=... starts one.');
  for (const c of shown) lines.push(conversationText(fence, c));
  if (page.has_more === true && typeof page.next_before === 'string') lines.push(`older: call again with before=${plain(fence, 'next_before', page.next_before)}`);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), { ...page, items: shown });
}

async function get(args: MessagesInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = peerFence({ self: deps.identity.peerId });
  const c = await conversationRecord(deps, need(args, 'conversation_id'));
  const latest = typeof c.latest === 'object' && c.latest !== null && !Array.isArray(c.latest) ? (c.latest as Obj) : undefined;
  const shown = latest === undefined ? c : { ...c, latest: (await openConversationMessages(deps, c, [latest]))[0] };
  return answer([conversationText(fence, shown), ...legend(fence)].join('\n'), shown);
}

/** What a read-only caller's answer says instead of moving the read marker. */
export const READ_ONLY_MARKER_LINE = 'read-only access: messages not marked read (this app may only read; unread counts stay as they were).';

/** Mark read at the relay up to `seq` when it is past the caller's read_seq; a line when it could not. */
async function markRead(deps: BridgeDeps, id: string, seq: string | undefined, readSeq: unknown): Promise<{ line?: string; readSeq?: string }> {
  if (seq === undefined || seq === '0') return {};
  if (typeof readSeq === 'string' && /^[0-9]{1,20}$/.test(readSeq) && BigInt(readSeq) >= BigInt(seq)) return { readSeq };
  try {
    const res = await deps.api.request({ method: 'POST', path: `/v1/conversations/${segment(id, 'conversation_id')}/read`, body: { seq } });
    const b = objectBody(res.body, 'conversations.mark_read');
    return { readSeq: typeof b.read_seq === 'string' ? b.read_seq : seq };
  } catch (e) {
    return { line: `read marker: not moved at the relay (${isRelayRefusal(e) ? e.code : (e as Error).message}); svc_message action=mark_read conversation_id=${id} moves it.` };
  }
}

async function read(args: MessagesInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = peerFence({ self: deps.identity.peerId });
  const id = need(args, 'conversation_id');
  const desc = args.order === 'desc';
  if (desc && args.after !== undefined) throw new SvcError('INVALID_REQUEST', 'after: order=desc reads the newest messages and takes no after');
  const conv = await conversationRecord(deps, id);
  const scope = { kind: 'conversation' as const, conversation: id };
  let plan: CursorPlan | undefined = desc ? undefined : planCursor(deps, scope, args.after, false);
  const notices: string[] = [];
  const fetch = (after: string | undefined) =>
    deps.api.request({
      path: `/v1/conversations/${segment(id, 'conversation_id')}/messages`,
      query: { after, order: args.order, limit: args.limit ?? DEFAULT_LIMIT, detail: args.detail, token_budget: args.token_budget },
    });
  let res;
  try {
    res = await fetch(plan?.after);
  } catch (e) {
    // The saved cursor is past the head: the relay lost messages (a restore). Set it back.
    if (plan?.from !== 'saved' || !isRelayRefusal(e, 'CURSOR_AHEAD')) throw e;
    const head = typeof conv.head_seq === 'string' && /^[0-9]{1,20}$/.test(conv.head_seq) ? conv.head_seq : '0';
    notices.push(`NOTICE: your saved cursor ${plan.after} for this conversation is past its head_seq ${head}: the relay lost messages ${BigInt(head) + 1n}-${plan.after}. Cursor set back to ${head}.`);
    rewindCursor(deps, scope, head);
    plan = planCursor(deps, scope, undefined, false);
    res = await fetch(plan.after);
  }
  const page = objectBody(res.body, 'messages.read');
  const messages = await openConversationMessages(deps, conv, items(page.items));

  const lines = [...notices, conversationText(fence, { ...conv, latest: undefined })];
  const from = desc ? 'newest first (a snapshot; your cursor is not moved)' : startedAfter(plan!);
  lines.push(`${messages.length} message${messages.length === 1 ? '' : 's'} ${from}; head_seq ${plain(fence, 'head_seq', page.head_seq)}.`);
  for (const m of messages) lines.push(messageText(fence, m));
  // Rendered: now the cursor may move, though not past a sealed message that may still open.
  let saved: string | undefined;
  let moved = false;
  let marked: { line?: string; readSeq?: string } = {};
  if (plan !== undefined) {
    const before = deps.cache.cursor(deps.api.base.origin, scope);
    const hold = cursorAfterSealed(messages, page.next_after);
    saved = settleCursor(deps, scope, plan, hold.nextAfter);
    moved = saved !== before;
    if (plan.advances && hold.heldAt !== undefined && BigInt(saved ?? '0') < BigInt(hold.heldAt)) {
      lines.push(`cursor: held before seq ${hold.heldAt}: a sealed message there could not be opened yet (see above); the next read starts with it.`);
    }
    if (plan.advances && messages.length > 0) marked = deps.readOnly === true ? { line: READ_ONLY_MARKER_LINE } : await markRead(deps, id, saved, conv.read_seq);
    if (page.budget_cut === true) lines.push(BUDGET_CUT_LINE);
    lines.push(cursorLine(fence, plan, { saved, moved, filtered: false, hasMore: page.has_more === true, nextAfter: page.next_after, what: 'messages' }));
  } else if (page.has_more === true) {
    lines.push('older: raise limit to see more, or read from the start with after="0".');
  }
  if (marked.line !== undefined) lines.push(marked.line);
  else if (marked.readSeq !== undefined) lines.push(`read marker: read_seq ${marked.readSeq} at the relay (what you were shown counts as read).`);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), {
    ...page,
    items: messages,
    conversation: conv,
    bridge: {
      after_sent: plan?.after ?? null,
      cursor_from: plan?.from ?? null,
      saved_cursor: saved ?? null,
      cursor_moved: moved,
      read_seq: marked.readSeq ?? null,
      ...(deps.readOnly === true ? { read_only: true } : {}),
      notices,
    },
  });
}

async function blocks(args: MessagesInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = peerFence({ self: deps.identity.peerId });
  const res = await deps.api.request({ path: '/v1/blocks', query: { after: args.after, limit: args.limit ?? DEFAULT_LIMIT } });
  const page = objectBody(res.body, 'blocks.list');
  const list = items(page.items);
  const lines = [list.length === 0 ? 'You have blocked no KEY.' : `${list.length} blocked KEY${list.length === 1 ? '' : 'S'} (they cannot message you or add you to a group):`];
  for (const b of list) lines.push(blockText(fence, b));
  if (page.has_more === true && typeof page.next_after === 'string') lines.push(`more: call again with after=${plain(fence, 'next_after', page.next_after)}`);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), page);
}

export const MESSAGES_TABLE: ActionTable<MessagesInput> = {
  list: { takes: ['state', 'before', 'limit'], run: list },
  get: { takes: ['conversation_id'], run: get },
  read: { takes: ['conversation_id', 'after', 'order', 'limit', 'detail', 'token_budget'], run: read },
  blocks: { takes: ['after', 'limit'], run: blocks },
};

export const MESSAGES_DESCRIPTION = [
  'Read direct messages: list your conversations (state=requested: requests waiting for your answer), get one, read its',
  'messages from your saved cursor (marked read once shown), or list the KEYS you blocked. Write with svc_message. Takes:',
  `${describeActions(MESSAGES_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_messages beyond its description. */
export const MESSAGES_NOTES = [
  'list: newest first, with who is in each conversation, their states and unread marks; state active (default: conversations you are in) or requested; before (the next_before of an answer) pages back.',
  `read: after (a seq, "0" for the start) or, left out, your saved cursor for that conversation, which moves once the messages were shown and marks them read at the relay (not for an app allowed to read only, which moves nothing); order=desc reads the newest, a snapshot that moves nothing. limit 1 to 200 (default ${DEFAULT_LIMIT}); detail full (default), snippets or ids; token_budget bounds the page.`,
  'blocks: after is the next_after of the previous page.',
  'Sealed messages are opened by svc-bridge on your machine, or shown shut with the reason; the cursor waits before one that may still open.',
];

export function registerMessages(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_messages',
    {
      title: 'Read direct messages',
      description: MESSAGES_DESCRIPTION,
      inputSchema: MessagesArgs,
      annotations: { destructiveHint: false },
    },
    async (args) => runAction(deps, MESSAGES_TABLE, args),
  );
}
