/**
 * `Accept: text/markdown` renderings of conversations.list and messages.read (spec/2-endpoints.md
 * "Common read parameters"; spec/1-concepts.md item 7 "Trust rule"), built from the JSON answer
 * so both carry the same facts. Words another KEY wrote are fenced as peer text
 * (shared/peer-markers.ts); the caller's own messages are fenced as its own (`⟦own …⟧`), still
 * evidence, never instructions. Peer ids, seqs, states and times have a grammar the relay
 * checked and are shown bare. A sealed message shows only its size: the relay holds no words.
 */
import type { JsonObject } from '../../shared/canonical.js';
import type { PeerFence } from '../http/markdown.js';

function str(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Fences for one answer: the answer's fence (relay/http/markdown.ts), which records the markers
 * used so the page's legend names them, and the reader whose words are fenced as its own.
 */
export interface MessageFences {
  readonly fence: PeerFence;
  readonly reader: string;
}

function fenced(f: MessageFences, field: string, value: unknown, author: unknown): string {
  return (author === f.reader ? f.fence.own : f.fence)(field, value);
}

/** One message (any detail) as a markdown section headed at `level`. */
export function messageMarkdown(m: JsonObject, f: MessageFences, level = 3): string {
  const h = '#'.repeat(level);
  const lines = [`${h} seq ${str(m.seq)} · ${str(m.sent_at)}`];
  const facts = [`message_id \`${str(m.message_id)}\``, `author \`${str(m.author)}\``];
  if (m.author === f.reader) facts.push('yours');
  lines.push(facts.join(' · '));
  const links: string[] = [];
  if (typeof m.reply_to === 'string') links.push(`reply_to \`${m.reply_to}\``);
  if (typeof m.about === 'string') links.push(`about SPACE \`${m.about}\``);
  if (links.length > 0) lines.push(links.join(' · '));
  const sealed = m.sealed as JsonObject | undefined;
  if (sealed !== undefined) {
    lines.push(`sealed: ${str(sealed.bytes)} bytes of ciphertext; only the pair's own software (the bridge) opens it.`);
  } else if (typeof m.body === 'string') {
    lines.push(fenced(f, 'body', m.body, m.author));
  } else if (typeof m.snippet === 'string') {
    lines.push(fenced(f, 'snippet', m.snippet, m.author) + (m.snippet_truncated === true ? '\n(snippet; the message goes on)' : ''));
  }
  return lines.join('\n');
}

/** One conversation of a list as a markdown section. */
export function conversationMarkdown(c: JsonObject, f: MessageFences): string {
  const lines = [`## ${str(c.kind)} \`${str(c.conversation_id)}\` · ${str(c.state)}${c.unread === true ? ' · unread' : ''}`];
  const members = (c.members as JsonObject[]).map((m) => `\`${str(m.peer_id)}\` ${str(m.state)}`);
  lines.push(`members: ${members.join(', ')}`);
  const facts = [`started_by \`${str(c.started_by)}\``, `head_seq ${str(c.head_seq)}`, `read_seq ${str(c.read_seq)}`];
  if (c.sealed === true) facts.push('sealed');
  if (typeof c.about === 'string') facts.push(`about SPACE \`${c.about}\``);
  lines.push(facts.join(' · '));
  if (c.latest !== null && typeof c.latest === 'object') lines.push(`latest:\n${messageMarkdown(c.latest as JsonObject, f, 3)}`);
  return lines.join('\n');
}
