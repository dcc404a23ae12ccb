/**
 * Messages and conversations as reads return them (protocol/api-notes.md §5; the direct-message
 * contract's wire shapes). One rendering for messages.read, conversations.list/get, the
 * start/send answers and mailbox envelopes.
 *
 *   message   ids:      message_id, conversation_id, seq, author, sent_at, reply_to, about
 *             snippets: + snippet (first 280 characters), snippet_truncated
 *             full:     + body
 *   A sealed pair's message has no words: `body` null (snippet null at snippets) and
 *   `sealed: {bytes}`, at full also `header` and `ciphertext` (b64u) that the members'
 *   software opens.
 *
 *   conversation  conversation_id, kind, sealed, state (the caller's), started_by, created_at,
 *                 members [{peer_id, state}], head_seq, read_seq, unread, latest, about?;
 *                 sealed pairs add commitment and the caller's own lock {lock, sender}.
 *
 * What the caller sees of a conversation (its seqs, head, the members' states, list position) is
 * its view (relay/messages/view.ts): a declined member reads as requested to the others, and a
 * member who left sees the conversation as it was when it left.
 *
 * Every position is a decimal string, as for posts; times ISO with ms and Z.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { toBase64url } from '../../shared/encoding.js';
import { snippetOf, type Detail } from '../posts/render.js';
import type { ConversationRow, MemberState } from '../store/conversations.js';
import type { MessageRow } from '../store/messages.js';
import type { Store } from '../store/index.js';
import { membersSeen, type ConversationView } from './view.js';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function renderMessage(m: MessageRow, detail: Detail): JsonObject {
  const out: JsonObject = {
    message_id: m.messageId,
    conversation_id: m.conversationId,
    seq: String(m.seq),
    author: m.author,
    sent_at: iso(m.sentAt),
    reply_to: m.replyTo,
    about: m.about,
  };
  if (detail === 'ids') return out;
  const sealed = m.sealedCiphertext !== null && m.sealedHeader !== null;
  if (detail === 'snippets') {
    if (sealed || m.body === null) {
      out.snippet = null;
      out.snippet_truncated = false;
    } else {
      const s = snippetOf(m.body);
      out.snippet = s.snippet;
      out.snippet_truncated = s.truncated;
    }
  } else {
    out.body = sealed ? null : m.body;
  }
  if (sealed) {
    out.sealed =
      detail === 'full'
        ? { header: toBase64url(m.sealedHeader!), ciphertext: toBase64url(m.sealedCiphertext!), bytes: m.sealedCiphertext!.length }
        : { bytes: m.sealedCiphertext!.length };
  }
  return out;
}

/** A conversation as its member sees it (`v`); `withChangedAt` for conversations.get. */
export async function renderConversation(store: Store, v: ConversationView, withChangedAt = false): Promise<JsonObject> {
  const { conversation: c, me } = v;
  const members = (await membersSeen(store, v)).map((m): JsonObject => {
    const entry: JsonObject = { peer_id: m.peerId, state: m.state };
    if (withChangedAt) entry.changed_at = iso(m.changedAt);
    return entry;
  });
  const latest = await store.messages.latest(c.conversationId, v.from, v.head);
  const out: JsonObject = {
    conversation_id: c.conversationId,
    kind: c.kind,
    sealed: c.sealed,
    state: me.state,
    started_by: c.startedBy,
    created_at: iso(c.createdAt),
    members,
    head_seq: String(v.head),
    read_seq: String(me.readSeq),
    unread: await store.messages.hasFromOthers(c.conversationId, me.peerId, Math.max(me.readSeq, v.from), v.head),
    latest: latest === undefined ? null : renderMessage(latest, 'snippets'),
  };
  if (c.about !== null) out.about = c.about;
  if (c.sealed) {
    out.commitment = c.commitment;
    out.lock = me.lock === null ? null : { lock: me.lock, sender: me.lockSender };
  }
  return out;
}

/** The short conversation object of a send answer and a mailbox envelope. */
export function conversationRef(c: Pick<ConversationRow, 'conversationId' | 'kind'>, state: MemberState): JsonObject {
  return { conversation_id: c.conversationId, kind: c.kind, state };
}
