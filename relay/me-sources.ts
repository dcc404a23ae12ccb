/**
 * HOOKS for `GET /v1/me` and `GET /v1/peers/{peer}` that other aggregates fill in.
 *
 * SPACES / mailbox / messages engineers: replace the bodies below with calls into your store
 * modules (e.g. `ctx.store.members.listForPeer(...)`). They are synchronous reads.
 */
import type { RelayContext } from './context.js';

export interface MembershipItem {
  name: string;
  role: string;
  tags: string[];
  head_seq: number;
  /** How many posts the member has not read past its saved position; null when unknown. */
  behind: number | null;
}

export interface MembershipPage {
  items: MembershipItem[];
  next_after: string | null;
  has_more: boolean;
}

/** Memberships of a KEY, paged by SPACE name (`after` exclusive). Empty until SPACES exist. */
export function membershipsOf(_ctx: RelayContext, _peerId: string, _after: string | undefined, _limit: number): MembershipPage {
  return { items: [], next_after: null, has_more: false };
}

/** The KEY's mailbox head position (0 until the mailbox exists). */
export function mailboxHeadOf(ctx: RelayContext, peerId: string): number {
  return ctx.store.mailbox.head(peerId);
}

/** Counts of waiting messages and message requests (0 until messages exist). */
export function waitingCountsOf(_ctx: RelayContext, _peerId: string): { messages: number; message_requests: number } {
  return { messages: 0, message_requests: 0 };
}

/** Names of the SPACES a KEY owns (empty until SPACES exist). */
export function spacesOwnedBy(_ctx: RelayContext, _peerId: string): string[] {
  return [];
}
