/**
 * A conversation as one member sees it: the one rule every read of a conversation follows
 * (conversations.get and list, messages.read, mark_read, clear, a reply's target, mailbox
 * envelopes, and the markdown built from those answers). spec/1-concepts.md "States:
 * Conversation": a member who left reads up to its leaving only; the direct-message contract: a
 * declined member's `declined` is its own business.
 *
 * - Seqs: above the member's clear position and, once it left, at most its `left_seq`; the
 *   head is the newest of those.
 * - Members: each one's state and time of change; another member's `declined` reads as
 *   `requested`, changed when the conversation started (the only moment a member is
 *   requested). A member who left sees the members as they were when it left, so it learns
 *   nothing of the group's later life.
 * - List position and cursor (`listedAt`): the newest message, or for a member who left the
 *   newest as of its leaving; the list query orders by the same rule in SQL
 *   (relay/store/conversations.ts).
 */
import type { Store } from '../store/index.js';
import {
  listedAt,
  visibleRange,
  type ConversationRow,
  type MemberRow,
  type MemberState,
  type MemberStateRow,
} from '../store/conversations.js';

export interface ConversationView {
  readonly conversation: ConversationRow;
  readonly me: MemberRow;
  /** The member may read seqs above `from`, up to `head`. */
  readonly from: number;
  readonly head: number;
  /** Where the member's list places the conversation, and the time its cursor names. */
  readonly listedAt: number;
}

export function viewOf(c: ConversationRow, me: MemberRow): ConversationView {
  const range = visibleRange(me, c.lastSeq);
  return { conversation: c, me, from: range.from, head: range.to, listedAt: listedAt(c, me) };
}

/** Can the member of `v` read the message at `seq`? */
export function readable(v: ConversationView, seq: number): boolean {
  return seq > v.from && seq <= v.head;
}

/** A member's state as `reader` may see it. */
export function shownState(member: Pick<MemberRow, 'peerId' | 'state'>, reader: string): MemberState {
  return member.state === 'declined' && member.peerId !== reader ? 'requested' : member.state;
}

/** The members and their states (with the time of each) as the member of `v` sees them. */
export async function membersSeen(store: Store, v: ConversationView): Promise<MemberStateRow[]> {
  const c = v.conversation;
  const rows = v.me.leftSeq === null ? await store.conversations.members(c.conversationId) : await store.conversations.leftMembers(c.conversationId, v.me.peerId);
  return rows.map((m) => {
    const state = shownState(m, v.me.peerId);
    return { peerId: m.peerId, state, changedAt: state !== m.state ? c.createdAt : m.changedAt };
  });
}
