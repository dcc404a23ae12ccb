/**
 * A member's own state and positions (spec/1-concepts.md "States: Conversation";
 * spec/2-endpoints.md conversations.accept, decline, leave, clear, mark_read). Each runs under
 * the write lock in one savepoint of a group commit; a refusal changes nothing, and a call that
 * finds the state already there changes nothing and answers it.
 *
 * - accept: `requested` (or `declined`: the caller changed its mind) → `accepted`; a group it
 *   left is CONVERSATION_LEFT (nobody rejoins).
 * - decline: only a request (NOT_A_REQUEST otherwise); nobody is told, the starter still sees
 *   `requested`.
 * - leave: groups only (PAIR_CANNOT_BE_LEFT); final; the member keeps reading up to its leaving.
 * - clear: for the caller alone, everything up to the newest message is hidden from it and the
 *   conversation leaves its list until a later message brings it back.
 * - mark_read: `seq` or the newest; never moves back; beyond the head is INVALID_REQUEST naming
 *   the head.
 */
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { commitQueueFor } from '../posts/commit-queue.js';
import type { MemberState } from '../store/conversations.js';
import { notFound } from './send.js';
import { viewOf, type ConversationView } from './view.js';

export interface StateAnswer {
  conversation_id: string;
  state: MemberState;
  cleared_seq?: string;
}

/** The conversation as the caller sees it, or CONVERSATION_NOT_FOUND (also for a non-member). */
export async function membership(ctx: RelayContext, conversationId: string, me: string): Promise<ConversationView> {
  const c = await ctx.store.conversations.byId(conversationId);
  const mine = c === undefined ? undefined : await ctx.store.conversations.member(conversationId, me);
  if (c === undefined || mine === undefined) throw notFound();
  return viewOf(c, mine);
}

/** `work` in the group commit under the locks of the conversation and the caller's KEY. */
function underLock<T>(ctx: RelayContext, id: string, me: string, work: () => Promise<T>): Promise<T> {
  return commitQueueFor(ctx.store.db).enqueue(work, { conversations: [id], keys: [me] });
}

export function accept(ctx: RelayContext, id: string, me: string): Promise<StateAnswer> {
  return underLock(ctx, id, me, async () => {
    const { me: mine } = await membership(ctx, id, me);
    if (mine.state === 'left') throw new SvcError('CONVERSATION_LEFT', 'you left this group; nobody rejoins a group');
    if (mine.state !== 'accepted') await ctx.store.conversations.setState(id, me, 'accepted', ctx.clock());
    return { conversation_id: id, state: 'accepted' };
  });
}

export function decline(ctx: RelayContext, id: string, me: string): Promise<StateAnswer> {
  return underLock(ctx, id, me, async () => {
    const { me: mine } = await membership(ctx, id, me);
    if (mine.state === 'declined') return { conversation_id: id, state: 'declined' };
    if (mine.state !== 'requested') throw new SvcError('NOT_A_REQUEST', `this conversation is ${mine.state} for you, not a request`);
    await ctx.store.conversations.setState(id, me, 'declined', ctx.clock());
    return { conversation_id: id, state: 'declined' };
  });
}

export function leave(ctx: RelayContext, id: string, me: string): Promise<StateAnswer> {
  return underLock(ctx, id, me, async () => {
    const { conversation: c, me: mine } = await membership(ctx, id, me);
    if (c.kind === 'pair') throw new SvcError('PAIR_CANNOT_BE_LEFT', 'a pair cannot be left: clear it, or block the other KEY');
    if (mine.state !== 'left') await ctx.store.conversations.leave(c, me, ctx.clock());
    return { conversation_id: id, state: 'left' };
  });
}

export function clear(ctx: RelayContext, id: string, me: string): Promise<StateAnswer> {
  return underLock(ctx, id, me, async () => {
    const { me: mine, head: upTo } = await membership(ctx, id, me);
    await ctx.store.conversations.setCleared(id, me, upTo);
    await ctx.store.conversations.setRead(id, me, upTo);
    return { conversation_id: id, state: mine.state, cleared_seq: String(Math.max(mine.clearedSeq, upTo)) };
  });
}

export function markRead(ctx: RelayContext, id: string, me: string, seq: number | undefined): Promise<{ conversation_id: string; read_seq: string }> {
  return underLock(ctx, id, me, async () => {
    const { me: mine, head } = await membership(ctx, id, me);
    if (seq !== undefined && seq > head) throw new SvcError('INVALID_REQUEST', `seq: at most head_seq ${head}`);
    const to = seq ?? head;
    await ctx.store.conversations.setRead(id, me, to);
    return { conversation_id: id, read_seq: String(Math.max(mine.readSeq, to)) };
  });
}
