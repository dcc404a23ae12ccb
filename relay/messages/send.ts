/**
 * conversations.start and messages.send (spec/2-endpoints.md "Mailbox, messages, blocks";
 * spec/1-concepts.md "Conversation and message", "States: Conversation", "Mailbox", Limits).
 *
 * 1. Outside the write lock: read the body (relay/messages/input.ts, sealed parts with
 *    relay/messages/sealed.ts).
 * 2. Under the write lock, one savepoint of a group commit (relay/posts/commit-queue.ts; the
 *    answer waits for its COMMIT), synchronous:
 *    - replay: the KEY's idempotency key, across all its conversations, answers the first
 *      message when the request is the same, else IDEMPOTENCY_CONFLICT;
 *    - start: each recipient registered (RECIPIENT_NOT_REGISTERED), not blocked by the caller
 *      (BLOCKED_BY_YOU) and not blocking it (MESSAGES_NOT_ACCEPTED, all it learns), no request
 *      of the caller still waiting for it (MESSAGE_REQUEST_WAITING); a pair that exists takes
 *      the message instead of a new one; a sealed pair needs both encryption keys
 *      (ENCRYPTION_KEY_MISSING), acquaintance (SEALED_NEEDS_ACQUAINTANCE) and no sealed pair
 *      yet (SEALED_CONVERSATION_EXISTS). A recipient that does not know the caller gets a
 *      message request (state `requested`), counted against 20 a day (5 on the caller's first
 *      day; MESSAGE_REQUEST_LIMIT with the wait); a recipient already holding 200 waiting
 *      requests sees its oldest lapse (declined, nobody told);
 *    - send: the caller a member (CONVERSATION_NOT_FOUND otherwise, as for no conversation),
 *      not gone (CONVERSATION_LEFT), body or sealed as the conversation takes
 *      (CONVERSATION_SEALED / CONVERSATION_NOT_SEALED), `about` a SPACE (SPACE_NOT_FOUND),
 *      `reply_to` a live message it can read there (MESSAGE_NOT_FOUND), the sealed header
 *      (SEALED_HEADER_MISMATCH), the other members as above; replying where the caller's
 *      state is `requested` (or `declined`) accepts;
 *    - seq = last_seq + 1, the message, the idempotency key, mailbox rows: `message` to
 *      accepted members; `message_request` to requested ones for the message that makes the
 *      request (the start) and for nothing after it; none to the author, declined or gone
 *      members, nor past 200 an hour from one KEY to another.
 * A refusal rolls its savepoint back: nothing written.
 *
 * A member whose request waits (`requested`, or `declined`, which the others see as requested)
 * receives nothing more from anyone in that conversation until it accepts or replies (spec
 * "States: Conversation": a request waits for an answer; the starter is the one the spec holds
 * back). In a group the members who accepted carry on: their messages are taken (201) and kept in
 * the conversation, where the waiting member reads them once it accepts (or before, in its
 * request), and no mailbox item tells it of each. So a group is no way around the request limits:
 * the one item a stranger gets is the starter's request, counted against the starter. A send
 * answer names these members (`not_yet_accepted`, when there are any): who has not been told.
 */
import { SvcError } from '../../shared/errors.js';
import { RATE_LIMITS } from '../../shared/limits.js';
import { WAITING_MESSAGE_REQUESTS_PER_KEY } from '../../shared/limits.js';
import type { MailboxReason } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { newUuid } from '../ids.js';
import { mayNotify } from '../joining.js';
import { commitQueueFor } from '../posts/commit-queue.js';
import { notifierFor } from '../posts/notify.js';
import { pairKeyOf, type ConversationRow, type MemberRow, type MemberState, type NewMember } from '../store/conversations.js';
import type { MessageRow } from '../store/messages.js';
import { heldBy, knows } from './acquaintance.js';
import { readSend, readStart, type MessageContent, type SendInput, type StartInput } from './input.js';
import { checkSealedHeader } from './sealed.js';
import { readable, viewOf } from './view.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface SendOutcome {
  conversation: ConversationRow;
  message: MessageRow;
  /** The caller's state after the send. */
  state: MemberState;
  replayed: boolean;
  /**
   * The other members still asked to accept (their state `requested`, or `declined`, which the
   * sender sees as requested), in peer id order: the message is kept for them, not delivered.
   */
  notYetAccepted: string[];
}

/** The members other than `me`, not gone, whose request still waits as `me` sees it. */
function notYetAccepted(members: readonly Pick<MemberRow, 'peerId' | 'state'>[], me: string): string[] {
  return members.filter((m) => m.peerId !== me && (m.state === 'requested' || m.state === 'declined')).map((m) => m.peerId).sort();
}

export function startConversation(ctx: RelayContext, me: string, body: Record<string, unknown>): Promise<SendOutcome> {
  const input = readStart(body, me);
  return commitQueueFor(ctx.store.db).enqueue(async () => await startUnderLock(ctx, me, input));
}

export function sendMessage(ctx: RelayContext, me: string, conversationId: string, body: Record<string, unknown>): Promise<SendOutcome> {
  const input = readSend(body, conversationId);
  // The conversation (its message seq and members) and the sender (its idempotency keys span
  // conversations); deliveries lock their KEYS before COMMIT. Starting one, above, may send into
  // an existing pair found under the lock: it takes the wide lock.
  return commitQueueFor(ctx.store.db).enqueue(async () => {
    const replay = await replayOf(ctx, me, input);
    if (replay) return replay;
    const c = await ctx.store.conversations.byId(conversationId);
    const mine = c === undefined ? undefined : await ctx.store.conversations.member(conversationId, me);
    if (c === undefined || mine === undefined) throw notFound();
    return await sendInto(ctx, me, c, mine, input, input.replyTo);
  }, { conversations: [conversationId], keys: [me] });
}

/** A conversation the caller is not in reads exactly as one that never existed. */
export function notFound(): SvcError {
  return new SvcError('CONVERSATION_NOT_FOUND', 'conversation_id: no conversation of yours has this id');
}

async function replayOf(ctx: RelayContext, me: string, input: MessageContent & { requestHash: string }): Promise<SendOutcome | undefined> {
  if (input.idempotencyKey === undefined) return undefined;
  const prior = await ctx.store.messages.idempotency(me, input.idempotencyKey);
  if (prior === undefined) return undefined;
  if (prior.requestHash !== input.requestHash) {
    throw new SvcError('IDEMPOTENCY_CONFLICT', 'idempotency_key: already used with different content (keys are yours across all conversations)');
  }
  const message = await ctx.store.messages.byId(prior.messageId);
  const c = await ctx.store.conversations.byId(prior.conversationId);
  const mine = await ctx.store.conversations.member(prior.conversationId, me);
  if (message === undefined || c === undefined || mine === undefined) {
    throw new SvcError('IDEMPOTENCY_CONFLICT', 'idempotency_key: the message it first sent is no longer kept; use a new key');
  }
  const members = await ctx.store.conversations.members(c.conversationId);
  return { conversation: c, message, state: mine.state, replayed: true, notYetAccepted: notYetAccepted(members, me) };
}

/**
 * Recipients or members the caller may write to, by the rules every send shares, asked in one
 * query for all of them; the first that fails, in the order given, is the refusal.
 */
async function checkPeers(ctx: RelayContext, me: string, peers: readonly string[], field: (i: number, peer: string) => string): Promise<void> {
  if (peers.length === 0) return;
  const reach = await ctx.store.messageBlocks.reach(me, peers);
  peers.forEach((peer, i) => {
    const r = reach.get(peer);
    if (r === undefined || !r.registered) {
      throw new SvcError('RECIPIENT_NOT_REGISTERED', `${field(i, peer)}: no KEY that can be written to is registered with this peer id`);
    }
    if (r.blockedBySender) throw new SvcError('BLOCKED_BY_YOU', peer);
    if (r.blocksSender) throw new SvcError('MESSAGES_NOT_ACCEPTED', peer);
  });
}

async function checkAbout(ctx: RelayContext, about: string | undefined): Promise<void> {
  if (about !== undefined && await ctx.store.spaces.byName(about) === undefined) {
    throw new SvcError('SPACE_NOT_FOUND', `about: no SPACE is called ${about}`);
  }
}

async function startUnderLock(ctx: RelayContext, me: string, input: StartInput): Promise<SendOutcome> {
  const { store } = ctx;
  const replay = await replayOf(ctx, me, input);
  if (replay) return replay;
  await checkAbout(ctx, input.about);
  await checkPeers(ctx, me, input.to, (i) => `to[${i}]`);

  if (input.sealedStart !== undefined) {
    const peer = input.to[0]!;
    for (const k of [me, peer]) {
      if (await store.encryptionKeys.get(k) === undefined) {
        throw new SvcError('ENCRYPTION_KEY_MISSING', `${k}: this KEY must publish an encryption key first`);
      }
    }
    const existing = await store.conversations.pair(me, peer, true);
    if (existing !== undefined) throw new SvcError('SEALED_CONVERSATION_EXISTS', existing.conversationId);
    if (!await knows(store, peer, me)) {
      throw new SvcError('SEALED_NEEDS_ACQUAINTANCE', `${peer}: does not know you yet; a sealed pair is never a message request`);
    }
  } else if (input.to.length === 1) {
    const existing = await store.conversations.pair(me, input.to[0]!, false);
    if (existing !== undefined) {
      // A pair is unique per two KEYS: starting again sends into it.
      const mine = (await store.conversations.member(existing.conversationId, me))!;
      return await sendInto(ctx, me, existing, mine, input, undefined);
    }
  }
  for (const peer of input.to) {
    if (await heldBy(store, me, peer) !== undefined) throw new SvcError('MESSAGE_REQUEST_WAITING', peer);
  }

  const now = ctx.clock();
  const states = await Promise.all(input.to.map(async (peer): Promise<NewMember> => ({ peerId: peer, state: await knows(store, peer, me) ? 'accepted' : 'requested' })));
  const requested = states.filter((m) => m.state === 'requested').map((m) => m.peerId);
  await checkRequestLimit(ctx, me, requested.length, now);

  const conversationId = newUuid(ctx.random);
  const sealedStart = input.sealedStart;
  const members = [{ peerId: me, state: 'accepted' } as NewMember, ...states].map(
    (m): NewMember => (sealedStart === undefined ? m : { ...m, lock: sealedStart.locks.get(m.peerId)!, lockSender: me }),
  );
  for (const peer of requested) {
    await lapseOldest(ctx, peer, now);
    await store.conversations.recordRequest(me, peer, conversationId, now);
  }
  await store.conversations.insert(
    {
      conversationId,
      kind: input.to.length === 1 ? 'pair' : 'group',
      startedBy: me,
      pairKey: input.to.length === 1 ? pairKeyOf(me, input.to[0]!) : null,
      sealed: sealedStart !== undefined,
      commitment: sealedStart?.commitment ?? null,
      about: input.about ?? null,
      now,
    },
    members,
  );
  const c = (await store.conversations.byId(conversationId))!;
  const message = await append(ctx, me, c, members, input, undefined, now, true);
  return { conversation: c, message, state: 'accepted', replayed: false, notYetAccepted: notYetAccepted(members, me) };
}

/**
 * 20 requests a day per KEY, 5 in its first 24 hours (spec Limits), counted from the requests
 * it sent in the last 24 hours inside the write transaction, so the count is exact and survives
 * a restart. The wait is until enough of them are a day old (or the first day ends).
 */
async function checkRequestLimit(ctx: RelayContext, me: string, wanted: number, now: number): Promise<void> {
  if (wanted === 0) return;
  const key = (await ctx.store.keys.get(me))!;
  const rate = RATE_LIMITS.messageRequests;
  const firstDay = now - key.registeredAt < DAY_MS;
  const limit = firstDay ? rate.firstDay : rate.limit;
  const sent = await ctx.store.conversations.requestsSentSince(me, now - DAY_MS);
  if (sent.count + wanted <= limit) return;
  const untilOldest = sent.oldest === null ? Number.POSITIVE_INFINITY : sent.oldest + DAY_MS - now;
  const untilSecondDay = firstDay ? key.registeredAt + DAY_MS - now : Number.POSITIVE_INFINITY;
  const waitMs = Math.min(untilOldest, untilSecondDay);
  const wait = Math.max(1, Math.ceil((Number.isFinite(waitMs) ? waitMs : DAY_MS) / 1000));
  throw new SvcError(
    'MESSAGE_REQUEST_LIMIT',
    `${limit} message requests a day${firstDay ? ' on a KEY\'s first day' : ''}; ${sent.count} sent in the last 24 hours, ${wanted} more asked`,
    wait,
  );
}

/** At most 200 requests wait per recipient: a new one makes the oldest lapse (declined, nobody told). */
async function lapseOldest(ctx: RelayContext, recipient: string, now: number): Promise<void> {
  const c = ctx.store.conversations;
  while (await c.waitingFor(recipient) >= WAITING_MESSAGE_REQUESTS_PER_KEY) {
    const oldest = await c.oldestWaitingFor(recipient);
    if (oldest === undefined) return;
    await c.setState(oldest, recipient, 'declined', now);
  }
}

async function sendInto(ctx: RelayContext, me: string, c: ConversationRow, mine: MemberRow, input: MessageContent, replyTo: string | undefined): Promise<SendOutcome> {
  const { store } = ctx;
  if (mine.state === 'left') throw new SvcError('CONVERSATION_LEFT', 'you left this group; nobody rejoins a group');
  if (c.sealed && input.body !== undefined) throw new SvcError('CONVERSATION_SEALED', 'body: this pair is sealed; seal the message and send sealed');
  if (!c.sealed && input.sealed !== undefined) throw new SvcError('CONVERSATION_NOT_SEALED', 'sealed: this conversation is not sealed; send body');
  await checkAbout(ctx, input.about);
  if (replyTo !== undefined) {
    const target = await store.messages.byId(replyTo);
    if (target === undefined || target.conversationId !== c.conversationId || !readable(viewOf(c, mine), target.seq)) {
      throw new SvcError('MESSAGE_NOT_FOUND', 'reply_to: no live message with this id in this conversation');
    }
  }
  const members = await store.conversations.members(c.conversationId);
  if (input.sealed !== undefined) {
    const [a, b] = c.pairKey!.split(':') as [string, string];
    checkSealedHeader(input.sealed, { pair: [a, b], author: me, replyTo, about: input.about });
  }
  const others = members.filter((m) => m.peerId !== me && m.state !== 'left');
  await checkPeers(ctx, me, others.map((m) => m.peerId), (_, peer) => `member ${peer}`);
  if (c.startedBy === me) {
    for (const m of others) {
      if ((m.state === 'requested' || m.state === 'declined') && !await knows(store, m.peerId, me)) {
        throw new SvcError('MESSAGE_REQUEST_WAITING', m.peerId);
      }
    }
  }
  const now = ctx.clock();
  let state = mine.state;
  // Replying to a request accepts it (spec "States: Conversation").
  if (state === 'requested' || state === 'declined') {
    await store.conversations.setState(c.conversationId, me, 'accepted', now);
    state = 'accepted';
  }
  const message = await append(ctx, me, c, members, input, replyTo, now, false);
  return { conversation: (await store.conversations.byId(c.conversationId))!, message, state, replayed: false, notYetAccepted: notYetAccepted(members, me) };
}

/**
 * The message at last_seq + 1, its idempotency key and its mailbox rows, one per member in
 * `members` (the members as this same transaction read them) by its state: `message` to an
 * accepted member; `message_request` to a requested one only when `opening` (the start that
 * makes the request), since a waiting request receives nothing more until it is answered.
 */
async function append(
  ctx: RelayContext,
  me: string,
  c: ConversationRow,
  members: readonly Pick<MemberRow, 'peerId' | 'state'>[],
  input: MessageContent & { requestHash?: string },
  replyTo: string | undefined,
  now: number,
  opening: boolean,
): Promise<MessageRow> {
  const { store } = ctx;
  const seq = c.lastSeq + 1;
  const message: MessageRow = {
    messageId: newUuid(ctx.random),
    conversationId: c.conversationId,
    seq,
    author: me,
    sentAt: now,
    replyTo: replyTo ?? null,
    about: input.about ?? null,
    body: input.body ?? null,
    sealedHeader: input.sealed?.header ?? null,
    sealedCiphertext: input.sealed?.ciphertext ?? null,
  };
  await store.messages.insert(message);
  await store.conversations.advance(c.conversationId, seq, now);
  if (input.idempotencyKey !== undefined && input.requestHash !== undefined) {
    await store.messages.recordIdempotency(me, input.idempotencyKey, { conversationId: c.conversationId, messageId: message.messageId, requestHash: input.requestHash }, now);
  }
  const deliveries: { peer: string; reason: MailboxReason }[] = [];
  for (const m of members) {
    if (m.peerId === me) continue;
    const reason: MailboxReason | undefined = m.state === 'accepted' ? 'message' : m.state === 'requested' && opening ? 'message_request' : undefined;
    if (reason !== undefined && await mayNotify(ctx, me, m.peerId)) deliveries.push({ peer: m.peerId, reason });
  }
  await store.mailbox.deliverEach(deliveries, { messageId: message.messageId }, now);
  // Long-polling conversation reads wake on a later turn, after the commit (notify.ts).
  notifierFor(store.db).conversation(c.conversationId);
  return message;
}

export type { SendInput, StartInput };
