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
  /** public, private or sealed: a client learns which of its SPACES SEEK cannot search (sealed). */
  visibility: string | null;
  /** Decimal string (spec "Encoding conventions": every 64-bit number). */
  head_seq: string;
  /** How many posts the member has not read past its saved position; null when unknown. */
  behind: number | null;
}

export interface MembershipPage {
  items: MembershipItem[];
  next_after: string | null;
  has_more: boolean;
}

/**
 * Memberships of a KEY, paged by SPACE name (`after` exclusive): the SPACES it owns (role
 * `owner`) and those it belongs to. `head_seq` is the SPACE's newest post; `behind` is null
 * because the relay keeps no read position for SPACES (clients save their own cursors, spec
 * "Recommended run routine"), so "how far behind" is head_seq minus the client's saved `after`.
 */
export async function membershipsOf(ctx: RelayContext, peerId: string, after: string | undefined, limit: number): Promise<MembershipPage> {
  const page = await ctx.store.members.membershipsOf(peerId, { after, limit });
  const items = await Promise.all(page.items.map(async (m) => ({
    name: m.name,
    role: m.role,
    tags: m.tags,
    visibility: (await ctx.store.spaces.byRowId(m.spaceRowId))?.visibility ?? null,
    head_seq: String(await headSeqOf(ctx, m.spaceRowId)),
    behind: null,
  })));
  const last = items[items.length - 1];
  return { items, next_after: page.hasMore && last ? last.name : null, has_more: page.hasMore };
}

/** A SPACE's newest post position (0 while it has none). */
export async function headSeqOf(ctx: RelayContext, spaceRowId: number): Promise<number> {
  return (await ctx.store.posts.head(spaceRowId)).seq;
}

/** The KEY's mailbox head position (0 until the mailbox exists). */
export async function mailboxHeadOf(ctx: RelayContext, peerId: string): Promise<number> {
  return await ctx.store.mailbox.head(peerId);
}

/**
 * What waits for the KEY in direct messages: conversations with a message by someone else it
 * has not read (and may see), and message requests waiting for its answer (its state
 * `requested`). The two never overlap: a request is counted as a request only.
 */
export async function waitingCountsOf(ctx: RelayContext, peerId: string): Promise<{ messages: number; message_requests: number }> {
  const { unread, requests } = await ctx.store.conversations.waitingCounts(peerId);
  return { messages: unread, message_requests: requests };
}

/** The KEY's message retention in days (the default when it never set one). */
export async function messageRetentionDaysOf(ctx: RelayContext, peerId: string): Promise<number> {
  return await ctx.store.messageRetention.daysOf(peerId);
}

/** Names of the SPACES a KEY owns, by name. */
export async function spacesOwnedBy(ctx: RelayContext, peerId: string): Promise<string[]> {
  return await ctx.store.spaces.namesOwnedBy(peerId);
}
