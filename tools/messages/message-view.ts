/**
 * Conversations and messages as text for the model (spec/1-concepts.md "Conversation and
 * message", the Conversation state table, "Mailbox"; protocol/api-notes.md §5 message shape).
 *
 * Relay-checked values (ids, seq, peer ids, states, times) are shown bare when they have their
 * grammar; a message's words (body, snippet) and anything else free are fenced: as the caller's
 * own when the author is the caller's KEY, as another KEY's otherwise. Each conversation and
 * envelope ends with what the caller can do next, by its own state and the others':
 *
 * - a request to the caller (its state `requested`): accept, decline (nobody is told) or reply
 *   (a reply accepts it);
 * - the caller started it and a member is still `requested`: it is held, and sends nothing more
 *   into it nor starts anything including that KEY until it accepts or replies;
 * - another member of a group is still `requested`: the caller writes on, and that member is
 *   told of none of it until it accepts (it reads the conversation then);
 * - declined, left: what that means and what is left to do;
 * - otherwise: how to reply, and that a sealed conversation is sealed by this bridge.
 */
import type { PeerFence } from '../render.js';
import { isObject, plain, who } from '../action.js';

type Obj = Record<string, unknown>;

function members(c: Obj): Obj[] {
  return Array.isArray(c.members) ? c.members.filter(isObject) : [];
}

/** The line a message shows for its sealed part. */
export function sealedMessageLine(fence: PeerFence, s: Obj): string {
  if (s.opened === true) return 'sealed: opened on this machine; the relay holds only the ciphertext';
  if (s.opened === false) {
    return `sealed: COULD NOT BE OPENED, nothing of it is shown${s.retry === true ? ' (it may open on a later read)' : ''}. Why: ${fence('not_opened', typeof s.not_opened === 'string' ? s.not_opened : 'unknown')}`;
  }
  return `sealed: ${typeof s.bytes === 'number' ? s.bytes : '?'} bytes of ciphertext, not opened`;
}

/** One message at any detail, as a block of lines. */
export function messageText(fence: PeerFence, m: Obj, indent = ''): string {
  const head = [`seq ${plain(fence, 'seq', m.seq)}`, plain(fence, 'sent_at', m.sent_at), `author ${who(fence, m.author, 'author')}`];
  const lines = [`${indent}— ${head.join(' · ')}`];
  const ids = [`message_id ${plain(fence, 'message_id', m.message_id)}`];
  if (typeof m.reply_to === 'string') ids.push(`reply_to ${plain(fence, 'reply_to', m.reply_to)}`);
  if (typeof m.about === 'string') ids.push(`about SPACE ${plain(fence, 'about', m.about)}`);
  lines.push(`${indent}  ${ids.join(' · ')}`);
  if (m.unavailable === true || isObject(m.unavailable)) lines.push(`${indent}  unavailable: deleted by retention or no longer readable (the position stays)`);
  if (isObject(m.sealed)) lines.push(`${indent}  ${sealedMessageLine(fence, m.sealed)}`);
  const written = fence.by(m.author);
  if (typeof m.snippet === 'string') {
    lines.push(`${indent}  snippet${m.snippet_truncated === true ? ' (cut; svc_messages action=read gives the whole body)' : ''}: ${written('snippet', m.snippet)}`);
  }
  if (typeof m.body === 'string') lines.push(`${indent}  body: ${written('body', m.body)}`);
  return lines.join('\n');
}

/** What the caller can do next in conversation `c` (its record, or the {conversation_id, kind, state} of an envelope). */
export function conversationHint(fence: PeerFence, c: Obj): string {
  const id = plain(fence, 'conversation_id', c.conversation_id);
  const me = fence.self;
  const state = c.state;
  if (state === 'requested') {
    const from = c.started_by === undefined ? '' : ` from ${plain(fence, 'started_by', c.started_by)}`;
    return `A message request${from}: accept it (svc_message action=accept conversation_id=${id}), decline it (action=decline; nobody is told), or reply (action=send conversation_id=${id} body=...; a reply accepts it).`;
  }
  if (state === 'declined') return `You declined this request (nobody was told); its sender still sees it as waiting. Nothing to do.`;
  if (state === 'left') return `You left this group: you see its messages up to your leaving, and nobody rejoins a group. svc_message action=clear conversation_id=${id} removes it from your list.`;
  const waiting = members(c).filter((m) => m.state === 'requested' && m.peer_id !== me);
  if (c.started_by === me && waiting.length > 0) {
    return `Waiting for ${waiting.map((m) => plain(fence, 'peer_id', m.peer_id)).join(', ')} to accept your message request: send nothing more into it, and start nothing that includes ${waiting.length > 1 ? 'them' : 'that KEY'}, until it accepts or replies (MESSAGE_REQUEST_WAITING otherwise).`;
  }
  const sealed = c.sealed === true ? ' It is sealed: this bridge seals what you send and opens what you read.' : '';
  const unanswered = waiting.length === 0 ? '' : ` ${notYetAcceptedLine(fence, waiting.map((m) => m.peer_id))}`;
  return `Reply with svc_message action=send conversation_id=${id} body=... (reply_to=<message_id> to answer one message).${sealed}${unanswered}`;
}

/**
 * What a sender needs to know of members whose message request still waits: nothing sent into
 * the conversation reaches them until they accept, and then they read it there.
 */
export function notYetAcceptedLine(fence: PeerFence, peers: readonly unknown[]): string {
  const one = peers.length === 1;
  return `${peers.map((p) => plain(fence, 'peer_id', p)).join(', ')} ${one ? 'has' : 'have'} not accepted ${one ? 'its' : 'their'} message request yet: ${one ? 'it is' : 'they are'} told of nothing sent here until ${one ? 'it accepts' : 'they accept'}, and will see it in the conversation then.`;
}

/**
 * A conversation (list item or get) as a block: kind, sealed, the caller's state, who is in it
 * and their states (with `changed_at` when the record shows it), positions, the latest message
 * and what to do next.
 */
export function conversationText(fence: PeerFence, c: Obj, opts: { latest?: Obj | undefined } = {}): string {
  const head = [
    `conversation ${plain(fence, 'conversation_id', c.conversation_id)}`,
    plain(fence, 'kind', c.kind),
    c.sealed === true ? 'SEALED' : 'not sealed',
    `your state ${plain(fence, 'state', c.state)}`,
  ];
  if (c.unread === true) head.push('UNREAD');
  const lines = [`## ${head.join(' · ')}`];
  const facts = [`started by ${who(fence, c.started_by, 'started_by')}`];
  if (c.created_at !== undefined) facts.push(`at ${plain(fence, 'created_at', c.created_at)}`);
  if (typeof c.about === 'string') facts.push(`about SPACE ${plain(fence, 'about', c.about)}`);
  facts.push(`head_seq ${plain(fence, 'head_seq', c.head_seq)}`, `your read_seq ${plain(fence, 'read_seq', c.read_seq)}`);
  lines.push(`  ${facts.join(' · ')}`);
  const ms = members(c);
  if (ms.length > 0) {
    lines.push(
      `  members: ${ms
        .map((m) => `${who(fence, m.peer_id)} ${plain(fence, 'state', m.state)}${m.changed_at === undefined ? '' : ` since ${plain(fence, 'changed_at', m.changed_at)}`}`)
        .join('; ')}`,
    );
  }
  const latest = opts.latest ?? (isObject(c.latest) ? c.latest : undefined);
  if (latest !== undefined) lines.push('  latest:', messageText(fence, latest, '  '));
  lines.push(`  ${conversationHint(fence, c)}`);
  return lines.join('\n');
}

/** A mailbox envelope carrying a message (reason `message` or `message_request`). */
export function messageEnvelopeText(fence: PeerFence, env: Obj): string {
  const c = isObject(env.conversation) ? env.conversation : {};
  const m = env.message as Obj;
  const request = env.reason === 'message_request';
  const head = [
    `mailbox_seq ${plain(fence, 'mailbox_seq', env.mailbox_seq)}`,
    plain(fence, 'reason', env.reason),
    `conversation ${plain(fence, 'conversation_id', c.conversation_id ?? m.conversation_id)} (${plain(fence, 'kind', c.kind)}, your state ${plain(fence, 'state', c.state)})`,
  ];
  const lines = [head.join(' · '), messageText(fence, m, '  ')];
  const id = plain(fence, 'conversation_id', c.conversation_id ?? m.conversation_id);
  if (request && (c.state === 'requested' || c.state === undefined)) {
    lines.push(`  ${conversationHint(fence, { ...c, state: 'requested', started_by: m.author })}`);
  } else if (request) {
    lines.push(`  This request is now ${plain(fence, 'state', c.state)} for you. Read the conversation with svc_messages action=read conversation_id=${id}.`);
  } else {
    lines.push(`  Read the conversation with svc_messages action=read conversation_id=${id}; reply with svc_message action=send conversation_id=${id} body=...`);
  }
  return lines.join('\n');
}

/** A block (`{peer_id, blocked_at}`). */
export function blockText(fence: PeerFence, b: Obj): string {
  return `- ${plain(fence, 'peer_id', b.peer_id)} blocked at ${plain(fence, 'blocked_at', b.blocked_at)}`;
}
