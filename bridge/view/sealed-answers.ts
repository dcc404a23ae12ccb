/**
 * The sealed items of a relay's answer, opened for the people's view (`svc-bridge view`): every
 * sealed post (an object with `post_id` and a `sealed` member, wherever it sits: a page's items,
 * one post, a proof's `post`, a mailbox envelope) and every sealed pair message (`message_id`,
 * `conversation_id` and a `sealed` member: a conversation's messages, its `latest`, an envelope)
 * is opened on this machine and gets one member more, `opened`:
 *
 *   `{ok: true, title, body | snippet, snippet_truncated, fingerprints, fingerprint_count, data,
 *    budget, run_id}` (the members its content has) for a post, `{ok: true, body | snippet}`
 *   for a message; `{ok: false, why, retry, relay_refused?, fix?}` for an item that stayed shut.
 *
 * Nothing the relay served is changed: the signed fields, the proof block and the relay's own
 * `sealed` member stay as they were, so the page checks every proof against the exact object its
 * author signed (objects.md §13) and shows the words beside it. Opening is the bridge's own
 * (bridge/sealed/sealing.ts `openPosts`, bridge/sealed/pairs.ts `openMessages`), with every check
 * of the header against what the relay shows; the relay is asked only for key records, locks and
 * ciphertexts, never sent a word.
 */
import { failureWords } from '../../tools/errors.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How the sealed items are opened: the bridge's Sealing and sealed pairs. */
export interface Openers {
  /** Open the sealed posts of a list (Sealing.openPosts): each comes back opened or shut saying why. */
  openPosts(posts: readonly Obj[]): Promise<Obj[]>;
  /** Open sealed messages, all of conversation `conversationId`; each comes back opened or shut saying why. */
  openMessages(conversationId: string, messages: readonly Obj[]): Promise<Obj[]>;
}

/** The members an opened post's words may have. */
const POST_WORDS = ['title', 'body', 'snippet', 'snippet_truncated', 'fingerprints', 'fingerprint_count', 'data', 'budget', 'run_id'] as const;
const MESSAGE_WORDS = ['body', 'snippet', 'snippet_truncated'] as const;

/** Answers nest a few levels (envelope, post, proof); deeper than this is not an answer of the catalogue. */
const DEPTH_MAX = 16;

function isSealedPost(o: Obj): boolean {
  return isObj(o.sealed) && typeof o.post_id === 'string';
}

function isSealedMessage(o: Obj): boolean {
  return isObj(o.sealed) && typeof o.message_id === 'string' && typeof o.conversation_id === 'string';
}

/** Every sealed post and message in `value`, in document order. */
function sealedItems(value: unknown, posts: Obj[], messages: Obj[], depth = 0): void {
  if (depth > DEPTH_MAX) return;
  if (Array.isArray(value)) {
    for (const v of value) sealedItems(v, posts, messages, depth + 1);
    return;
  }
  if (!isObj(value)) return;
  if (isSealedPost(value)) posts.push(value);
  else if (isSealedMessage(value)) messages.push(value);
  for (const [k, v] of Object.entries(value)) {
    // A proof block holds the signed object as bytes; `opened` is ours.
    if (k === 'opened' || k === 'proof' || k === 'sealed') continue;
    if (typeof v === 'object' && v !== null) sealedItems(v, posts, messages, depth + 1);
  }
}

/** The `opened` member of one item from what the opener made of it. */
function openedMember(result: Obj | undefined, words: readonly string[]): Obj {
  const s = isObj(result?.sealed) ? result.sealed : {};
  if (result !== undefined && s.opened === true) {
    const out: Obj = { ok: true };
    for (const w of words) if (w in result) out[w] = result[w];
    return out;
  }
  const out: Obj = { ok: false, why: typeof s.not_opened === 'string' ? s.not_opened : 'it could not be opened', retry: s.retry === true };
  if (s.relay_refused === true) out.relay_refused = true;
  if (typeof s.fix === 'string') out.fix = s.fix;
  return out;
}

function shutAll(items: readonly Obj[], why: string): void {
  for (const item of items) item.opened = { ok: false, why, retry: true };
}

/**
 * Open every sealed item of `answer` (a parsed JSON answer of the relay, changed in place: each
 * sealed item gets `opened`). Returns how many items it looked at. Never throws for an item: one
 * that cannot be opened says why in its `opened`.
 */
export async function openAnswer(answer: unknown, openers: Openers): Promise<number> {
  const posts: Obj[] = [];
  const messages: Obj[] = [];
  sealedItems(answer, posts, messages);
  if (posts.length > 0) {
    try {
      const opened = await openers.openPosts(posts);
      posts.forEach((p, i) => (p.opened = openedMember(opened[i], POST_WORDS)));
    } catch (e) {
      shutAll(posts, failureWords(e));
    }
  }
  const byConversation = new Map<string, Obj[]>();
  for (const m of messages) {
    const id = m.conversation_id as string;
    byConversation.set(id, [...(byConversation.get(id) ?? []), m]);
  }
  for (const [id, list] of byConversation) {
    try {
      const opened = await openers.openMessages(id, list);
      list.forEach((m, i) => (m.opened = openedMember(opened[i], MESSAGE_WORDS)));
    } catch (e) {
      shutAll(list, failureWords(e));
    }
  }
  return posts.length + messages.length;
}
