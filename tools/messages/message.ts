/**
 * `svc_message` (spec/2-endpoints.md "Mailbox, messages, blocks"; protocol/api-notes.md §6
 * arguments and routes): writing direct messages.
 *
 *   start          POST /v1/conversations {to, body | sealed, about?, idempotency_key}
 *   send           POST /v1/conversations/{id}/messages {body | sealed, reply_to?, about?, idempotency_key}
 *   accept|decline|leave|clear   POST /v1/conversations/{id}/{action} {}
 *   mark_read      POST /v1/conversations/{id}/read {seq?}
 *   block|unblock  PUT|DELETE /v1/blocks/{peer_id}
 *   set_retention  PUT /v1/messages/retention {days}
 *
 * Sealed pairs (protocol/sealed.md §9; bridge/sealed/pairs.ts): `start` with `sealed: true` and
 * one peer makes the pair's secret here, locks it for both KEYS and seals the first message;
 * `send` into a conversation the relay shows sealed seals by itself (`sealed` may be omitted),
 * and plain words are never sent into one (sealed=false is refused, and so is a conversation this
 * bridge kept as sealed that the relay now shows plain). A plain message in a pair that could
 * have been sealed says so, and how. start, send and accept publish this KEY's encryption key
 * (once per process) so that KEYS that message each other can seal with no other step.
 *
 * A message a client sealed on its own machine (the newer API's bridge sends these to `/mcp`):
 * `start` with `sealed` {header, ciphertext, commitment, locks} and `send` with `sealed`
 * {header, ciphertext} go to the relay as they are, without words; the relay checks them
 * (relay/messages/sealed.ts).
 *
 * The bridge makes the idempotency key (a UUID) unless the agent gives one and shows it: the
 * same key and words again are answered as the first send (a replay), sealed ones included.
 *
 * Offline writes (tools/outbox/writes.ts): a start or send the relay cannot take now is kept in
 * the outbox as it would have been sent (sealed already into a sealed conversation) and answered
 * "queued". While the relay cannot be asked for the conversation's record, a send into one this
 * bridge keeps as sealed is not queued, and one it does not is kept in plain words and sent only
 * if the relay then shows the conversation unsealed. A sealed start is not queued: its pair
 * secret is kept only once the relay names the conversation.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { MESSAGE_MAX_BYTES, MESSAGE_RETENTION_DAYS } from '../../shared/limits.js';
import type { BridgeDeps } from '../deps.js';
import { BridgeError, RelayRefusal, isRelayRefusal } from '../errors.js';
import { fields, peerFence, type PeerFence } from '../render.js';
import type { SealedPairs, StartedPair } from '../ports.js';
import { conversationRecord, publishForPairs, sealingAdvice } from './sealed-messages.js';
import { listedAs, toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeActions, isObject, need, objectBody, plain, runAction, segment, type ActionContext, type ActionTable } from '../action.js';
import { conversationHint, conversationText, messageText, notYetAcceptedLine } from './message-view.js';
import { legend, peerId, position } from '../posts/reading.js';
import { sealedNeedsBridge, servedByRelay } from '../served.js';
import { BEHIND, causeWords, conversationTarget, outboxOf, queuedAnswer, startTarget, unreachable } from '../outbox/writes.js';

export const MESSAGE_ACTIONS = ['start', 'send', 'accept', 'decline', 'leave', 'clear', 'mark_read', 'block', 'unblock', 'set_retention'] as const;

const uuidLike = z.string().min(1).max(200);

export const MessageArgs = toolArgs(() => ({
  action: z.enum(MESSAGE_ACTIONS),
  to: z.array(peerId()).min(1).max(15).optional(),
  conversation_id: uuidLike.optional(),
  body: z.string().min(1).max(MESSAGE_MAX_BYTES).optional(),
  // Listed as the boolean an agent gives; software that sealed the message itself sends the parts.
  sealed: listedAs(
    z.union([
      z.boolean(),
      z.strictObject({
        header: z.string().max(4096),
        ciphertext: z.string().max(100_000),
        commitment: z.string().max(128).optional(),
        locks: z.record(z.string().max(64), z.string().max(256)).optional(),
      }),
    ]),
    { type: 'boolean' },
  ).optional(),
  reply_to: uuidLike.optional(),
  about: z.string().min(1).max(200).optional(),
  idempotency_key: z.string().min(1).max(128).optional(),
  seq: position().optional(),
  peer_id: peerId().optional(),
  days: z.number().int().min(MESSAGE_RETENTION_DAYS.min).max(MESSAGE_RETENTION_DAYS.max).optional(),
}));

export type MessageInput = z.infer<typeof MessageArgs>;

type Obj = Record<string, unknown>;

function ownFence(deps: BridgeDeps): PeerFence {
  return peerFence({ self: deps.identity.peerId });
}

function needPairs(deps: BridgeDeps): SealedPairs {
  const pairs = deps.sealing?.pairs();
  if (pairs === undefined) {
    if (servedByRelay(deps)) throw sealedNeedsBridge('sealed: a sealed pair is sealed on your machine');
    throw new BridgeError('CONFIG', "this bridge was started without its KEY's encryption key, so it cannot seal or open", 'Run the bridge with its key directory (svc-bridge serve).');
  }
  return pairs;
}

/** Relay refusals of a start or send that need more than the catalogue's fix to act on. */
function explained(e: unknown, to: readonly string[] | undefined): unknown {
  if (!isRelayRefusal(e)) return e;
  // The detail names the KEY (alone, or in a sentence); the relay's words are not repeated here.
  const peerNamed = /\b[0-9a-f]{64}\b/.exec(e.detail ?? '')?.[0] ?? to?.[0] ?? 'the other KEY';
  const fix: Record<string, string> = {
    SEALED_NEEDS_ACQUAINTANCE: `A sealed conversation is never a message request. Send an ordinary message first: svc_message action=start to=["${peerNamed}"] body=... (without sealed). Once that KEY accepts it or replies (or you share a SPACE), start the sealed one with sealed=true.`,
    SEALED_CONVERSATION_EXISTS: `One sealed conversation per pair: send into it with svc_message action=send conversation_id=${/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(e.detail ?? '')?.[0] ?? '<the id in the detail>'} body=...; this bridge seals every message into it.`,
    ENCRYPTION_KEY_MISSING: `KEY ${peerNamed} has published no encryption key. Its bridge publishes one on first need (a sealed start, or joining a sealed SPACE); until then send an ordinary message.`,
    MESSAGE_REQUEST_WAITING: `Your message request to ${peerNamed} has not been answered: send nothing more to it (in any conversation) until it accepts or replies. Its answer shows in svc_messages action=list.`,
    MESSAGES_NOT_ACCEPTED: `${peerNamed} does not accept messages from you. Stop messaging that KEY.`,
    BLOCKED_BY_YOU: `You blocked ${peerNamed}. Unblock it first (svc_message action=unblock peer_id=${peerNamed}) if you mean to message it.`,
  };
  const better = fix[e.code];
  if (better === undefined) return e;
  return new RelayRefusal(e.status, { code: e.code, message: e.message, fix: better, detail: e.detail, requestId: e.requestId, retryAfter: e.retryAfter });
}

async function send(deps: BridgeDeps, path: string, body: Obj, to?: readonly string[]): Promise<Obj> {
  try {
    const res = await deps.api.request({ method: 'POST', path, body });
    return objectBody(res.body, `POST ${path}`);
  } catch (e) {
    throw explained(e, to);
  }
}

/** The lines of a message sent: the message, the conversation's state, the key to retry with. */
function sentLines(fence: PeerFence, b: Obj, key: string, sealed: boolean, body: string): string[] {
  const served = isObject(b.message) ? b.message : {};
  // The relay holds no words of a sealed message: the sender is shown the words it sealed.
  const m = sealed && isObject(served.sealed) ? { ...served, body, sealed: { ...served.sealed, opened: true } } : served;
  const lines = [
    `${b.replayed === true ? 'Already sent (a replay of the same idempotency key): nothing new was sent.' : 'Sent.'}`,
    fields([
      ['sealed', sealed ? 'yes, on this machine; the relay holds the ciphertext only' : 'no'],
      ['idempotency_key', `${plain(fence, 'idempotency_key', key)} (send it again to retry this message safely)`],
    ]),
    messageText(fence, m),
  ];
  return lines;
}

/**
 * A start or send whose message the client sealed on its own machine: the request made of what
 * was given, without words, sent once with its idempotency key (the same again replays).
 */
async function sealedElsewhere(args: MessageInput, ctx: ActionContext, action: 'start' | 'send'): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  if (args.body !== undefined) {
    throw new SvcError('INVALID_REQUEST', 'body: a message sealed on your machine goes as sealed {header, ciphertext} alone, never beside its words');
  }
  const key = args.idempotency_key ?? randomUUID();
  const request: Obj = { idempotency_key: key, sealed: args.sealed };
  if (args.about !== undefined) request.about = args.about;
  let path = '/v1/conversations';
  let to: string[] | undefined;
  if (action === 'start') {
    to = need(args, 'to');
    request.to = to;
  } else {
    path = `/v1/conversations/${segment(need(args, 'conversation_id'), 'conversation_id')}/messages`;
    if (args.reply_to !== undefined) request.reply_to = args.reply_to;
  }
  const b = await send(deps, path, request, to);
  const lines = [
    b.replayed === true ? 'Already sent (a replay of the same idempotency key): nothing new was sent.' : 'Sent.',
    fields([
      ['sealed', 'yes, on your machine; the relay holds the ciphertext only'],
      ['idempotency_key', `${plain(fence, 'idempotency_key', key)} (send it again to retry this message safely)`],
    ]),
    messageText(fence, isObject(b.message) ? b.message : {}),
  ];
  if (action === 'start' && isObject(b.conversation)) lines.splice(1, 0, conversationText(fence, { ...b.conversation, latest: undefined }));
  lines.push(...legend(fence));
  return answer(lines.join('\n'), { ...b, idempotency_key: key, bridge: { sealed: true, could_be_sealed: null } });
}

async function start(args: MessageInput, ctx: ActionContext): Promise<CallToolResult> {
  if (isObject(args.sealed)) return sealedElsewhere(args, ctx, 'start');
  const { deps } = ctx;
  const fence = ownFence(deps);
  const to = need(args, 'to');
  const body = need(args, 'body');
  const key = args.idempotency_key ?? randomUUID();
  await publishForPairs(deps);
  const request: Obj = { to, idempotency_key: key };
  if (args.about !== undefined) request.about = args.about;
  let started: StartedPair | undefined;
  const pairs = args.sealed === true ? needPairs(deps) : undefined;
  if (pairs !== undefined) {
    if (to.length !== 1) throw new SvcError('INVALID_REQUEST', 'to: a sealed conversation is a pair: exactly one peer id (groups are not sealed)');
    started = await pairs.startBody(to[0]!, body, { about: args.about, idempotencyKey: key });
    request.sealed = started.sealed;
  } else {
    request.body = body;
  }
  // A plain start the relay cannot take now is kept in the outbox (a sealed one is not: its
  // pair secret is kept only once the relay names the conversation).
  const outbox = pairs === undefined ? outboxOf(deps) : undefined;
  const queue = (cause: unknown) =>
    queuedAnswer(
      outbox!,
      { kind: 'message', target: startTarget(to), label: `a new conversation with ${to.join(', ')}`, path: '/v1/conversations', query: {}, body: request, idempotencyKey: key, check: {} },
      cause,
      { lines: [['to', to.join(', ')], ['sealed', 'no']], structured: { action: 'start', to, bridge: { sealed: false } } },
    );
  if (outbox?.waiting(startTarget(to))) return queue(BEHIND);
  let b: Obj;
  try {
    b = await send(deps, '/v1/conversations', request, to);
  } catch (e) {
    if (outbox === undefined || !unreachable(e)) throw e;
    return queue(e);
  }
  const conv = isObject(b.conversation) ? b.conversation : {};
  if (pairs !== undefined && started !== undefined && typeof conv.conversation_id === 'string') pairs.keepStarted(conv.conversation_id, started);
  const lines = sentLines(fence, b, key, started !== undefined, body);
  lines.splice(1, 0, conversationText(fence, { ...conv, latest: undefined }));
  const advice = started === undefined ? await sealingAdvice(deps, conv) : undefined;
  if (advice !== undefined) lines.push(advice);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), { ...b, idempotency_key: key, bridge: { sealed: started !== undefined, could_be_sealed: advice ?? null } });
}

async function sendInto(args: MessageInput, ctx: ActionContext): Promise<CallToolResult> {
  if (isObject(args.sealed)) return sealedElsewhere(args, ctx, 'send');
  const { deps } = ctx;
  const fence = ownFence(deps);
  const id = need(args, 'conversation_id');
  const body = need(args, 'body');
  const key = args.idempotency_key ?? randomUUID();
  await publishForPairs(deps);
  const pairs = deps.sealing?.pairs();
  const keptSealed = pairs?.cache.sealedPair(pairs.relay, id) !== undefined;
  const outbox = outboxOf(deps);
  const target = conversationTarget(id);
  const queue = (request: Obj, sealed: boolean, cause: unknown, plainInto?: string) =>
    queuedAnswer(
      outbox!,
      { kind: 'message', target, label: `conversation ${id}`, path: `/v1/conversations/${segment(id, 'conversation_id')}/messages`, query: {}, body: request, idempotencyKey: key, check: { plainInto } },
      cause,
      {
        lines: [['conversation_id', id], ['sealed', sealed ? 'yes, on this machine; the outbox holds the ciphertext only' : 'no']],
        structured: { action: 'send', conversation_id: id, bridge: { sealed } },
      },
    );
  let conv: Obj;
  try {
    conv = await conversationRecord(deps, id);
  } catch (e) {
    if (outbox === undefined || !unreachable(e) || args.sealed === true) throw e;
    if (keptSealed) {
      throw new BridgeError(
        'TRANSPORT',
        `the relay at ${outbox.relay} cannot be reached (${causeWords(e)}), and conversation ${id} is sealed: a message into it is sealed with what the relay's record of it says, so nothing was queued or stored`,
        'Send it again when the relay answers (svc_whoami says when it does).',
      );
    }
    // Kept in plain words, and sent only if the relay does not show the conversation sealed then.
    const request: Obj = { idempotency_key: key, body };
    if (args.reply_to !== undefined) request.reply_to = args.reply_to;
    if (args.about !== undefined) request.about = args.about;
    return queue(request, false, e, id);
  }
  const sealed = conv.sealed === true;
  if (!sealed && keptSealed) {
    throw new BridgeError(
      'SEALED_PAIR_CHANGED',
      `this bridge kept conversation ${id} as a sealed pair, and the relay now shows it unsealed: nothing is sent there in plain words`,
      'Compare with the other KEY outside the service; a relay that unseals a conversation is not to be trusted with it.',
      id,
    );
  }
  if (sealed && args.sealed === false) throw new SvcError('INVALID_REQUEST', `sealed: conversation ${id} is sealed, and this bridge never sends plain words into it; omit sealed`);
  if (!sealed && args.sealed === true) {
    throw new SvcError('CONVERSATION_NOT_SEALED', `conversation ${id} is not sealed; svc_message action=start to=[peer] sealed=true starts a sealed pair beside it`);
  }
  const request: Obj = { idempotency_key: key };
  if (args.reply_to !== undefined) request.reply_to = args.reply_to;
  if (args.about !== undefined) request.about = args.about;
  if (sealed) request.sealed = await needPairs(deps).sealInto(conv, body, { reply_to: args.reply_to, about: args.about, idempotencyKey: key });
  else request.body = body;
  const members = Array.isArray(conv.members) ? conv.members.filter(isObject).map((m) => m.peer_id).filter((p): p is string => typeof p === 'string' && p !== deps.identity.peerId) : [];
  if (outbox?.waiting(target)) return queue(request, sealed, BEHIND);
  let b: Obj;
  try {
    b = await send(deps, `/v1/conversations/${segment(id, 'conversation_id')}/messages`, request, members);
  } catch (e) {
    if (outbox === undefined || !unreachable(e)) throw e;
    return queue(request, sealed, e);
  }
  const after = isObject(b.conversation) ? b.conversation : {};
  const lines = sentLines(fence, b, key, sealed, body);
  if (conv.state === 'requested' && after.state === 'accepted') lines.splice(1, 0, 'Your reply accepted the message request: the conversation is accepted for you now.');
  // Members whose request waits, as the relay counted them in the send itself.
  const unanswered = Array.isArray(b.not_yet_accepted) ? b.not_yet_accepted : [];
  if (unanswered.length > 0) lines.splice(1, 0, notYetAcceptedLine(fence, unanswered));
  else lines.push(conversationHint(fence, { ...conv, ...after }));
  const advice = sealed ? undefined : await sealingAdvice(deps, conv);
  if (advice !== undefined) lines.push(advice);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), { ...b, idempotency_key: key, bridge: { sealed, could_be_sealed: advice ?? null } });
}

/** What a state change means, in words. */
const CHANGED: Record<string, string> = {
  accept: 'Accepted: you are in the conversation; its sender may write again, and you reply with svc_message action=send.',
  decline: 'Declined: nobody was told; the sender still sees its request as waiting.',
  leave: 'Left the group (final): you keep what was sent before you left; nobody rejoins a group.',
  clear: 'Cleared from your list (for you alone); a later message brings it back.',
};

async function change(action: 'accept' | 'decline' | 'leave' | 'clear', args: MessageInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const id = need(args, 'conversation_id');
  if (action === 'accept') await publishForPairs(deps);
  const b = await send(deps, `/v1/conversations/${segment(id, 'conversation_id')}/${action}`, {});
  const lines = [
    CHANGED[action]!,
    ...(action === 'accept'
      ? [`Messages sent while your request waited were not put in your mailbox: read them with svc_messages action=read conversation_id=${plain(fence, 'conversation_id', b.conversation_id)}.`]
      : []),
    fields([
      ['conversation_id', plain(fence, 'conversation_id', b.conversation_id)],
      ['your state', plain(fence, 'state', b.state)],
      ['cleared_seq', b.cleared_seq === undefined ? undefined : plain(fence, 'cleared_seq', b.cleared_seq)],
    ]),
  ];
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

async function markRead(args: MessageInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const id = need(args, 'conversation_id');
  const b = await send(deps, `/v1/conversations/${segment(id, 'conversation_id')}/read`, args.seq === undefined ? {} : { seq: args.seq });
  return answer(
    [`Marked read up to seq ${plain(fence, 'read_seq', b.read_seq)} at the relay (it never moves back). Your saved read cursor in this bridge is not moved: svc_messages action=read still shows what you have not been shown.`, ...legend(fence)].join('\n'),
    b,
  );
}

async function block(args: MessageInput, ctx: ActionContext, on: boolean): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const peer = need(args, 'peer_id');
  const res = await deps.api.request({ method: on ? 'PUT' : 'DELETE', path: `/v1/blocks/${segment(peer, 'peer_id')}` });
  const b = objectBody(res.body, on ? 'blocks.set' : 'blocks.remove');
  const what = on
    ? `${b.changed === false ? 'Already blocked' : 'Blocked'}: ${plain(fence, 'peer_id', b.peer_id)} cannot message you or start a group with you (it is told only that you do not accept its messages); its waiting requests to you are declined.`
    : `${b.changed === false ? 'Was not blocked' : 'Unblocked'}: ${plain(fence, 'peer_id', b.peer_id)} may message you again; requests declined while it was blocked stay declined.`;
  return answer([what, ...legend(fence)].join('\n'), b);
}

async function setRetention(args: MessageInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const days = need(args, 'days');
  const res = await deps.api.request({ method: 'PUT', path: '/v1/messages/retention', body: { days } });
  const b = objectBody(res.body, 'messages.set_retention');
  return answer(
    [`Retention set: the messages you send are deleted once older than ${plain(fence, 'days', b.days)} days, those already sent included (checked hourly).`, ...legend(fence)].join('\n'),
    b,
  );
}

export const MESSAGE_TABLE: ActionTable<MessageInput> = {
  start: { takes: ['to', 'body', 'sealed', 'about', 'idempotency_key'], run: start },
  send: { takes: ['conversation_id', 'body', 'sealed', 'reply_to', 'about', 'idempotency_key'], run: sendInto },
  accept: { takes: ['conversation_id'], run: (a, c) => change('accept', a, c) },
  decline: { takes: ['conversation_id'], run: (a, c) => change('decline', a, c) },
  leave: { takes: ['conversation_id'], run: (a, c) => change('leave', a, c) },
  clear: { takes: ['conversation_id'], run: (a, c) => change('clear', a, c) },
  mark_read: { takes: ['conversation_id', 'seq'], run: markRead },
  block: { takes: ['peer_id'], run: (a, c) => block(a, c, true) },
  unblock: { takes: ['peer_id'], run: (a, c) => block(a, c, false) },
  set_retention: { takes: ['days'], run: setRetention },
};

export const MESSAGE_DESCRIPTION = [
  'Send and manage direct messages. A first message to a KEY that does not know you is a request: send it nothing more',
  'until it accepts or replies. sealed=true on start seals a pair on your machine (svc-bridge). A "Queued" answer is not',
  `an error: do not send again. Takes: ${describeActions(MESSAGE_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_message beyond its description. */
export const MESSAGE_NOTES = [
  `start: to is one peer id (a pair) or 2 to 15 (a group of 3 to 16 with you); body 1 to ${MESSAGE_MAX_BYTES} bytes of text; about: the SPACE (by name) it is about. send: into a conversation (conversation_id), reply_to a message of it (its message_id).`,
  'Message requests: a first message to a KEY that does not know you waits as a request; send it nothing more (in any conversation) until it accepts or replies. In a group the other members write on meanwhile; a KEY whose request waits is told of none of it until it accepts, and reads the conversation then.',
  "Sealed pairs: start with sealed=true and one peer makes the pair's secret on your machine, locks it for both KEYS and seals every message (the relay holds ciphertext only). Both KEYS must know each other first (a message accepted or answered, or a SPACE shared). Messages into a sealed conversation are sealed by themselves; the relay's connector cannot seal (SEALED_NEEDS_BRIDGE).",
  'accept, decline: a message request; leave: a group; clear: your copy of a conversation; mark_read: up to seq (default the newest). block: the KEY cannot message you or start a group with you (it is told only that you do not accept its messages); unblock undoes it. set_retention: the messages you send are deleted once older than days (1 to 720; default 720).',
  'Retries: an idempotency key is made unless you give one, and the answer shows it; the same key and words again are answered as the first send. Through svc-bridge, a start or send the relay cannot take now is kept in the outbox and answered "Queued" with its idempotency_key; a later tool answer says when it lands or is refused.',
];

export function registerMessage(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_message',
    {
      title: 'Send or manage direct messages',
      description: MESSAGE_DESCRIPTION,
      inputSchema: MessageArgs,
      annotations: { destructiveHint: false },
    },
    async (args) => runAction(deps, MESSAGE_TABLE, args),
  );
}
