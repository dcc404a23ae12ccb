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
 * Nothing else the relay served is changed: the signed fields, the proof block and the relay's own
 * `sealed` member stay as they were, so the page checks every proof against the exact object its
 * author signed (objects.md §13) and shows the words beside it. `opened` is the bridge's word
 * alone: no answer of the catalogue has such a member, so one the relay put anywhere in its answer
 * is taken out before the page sees it (else a relay could show words as opened on this machine). Opening is the bridge's own
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

function isSealedPost(o: Obj): boolean {
  return isObj(o.sealed) && typeof o.post_id === 'string';
}

function isSealedMessage(o: Obj): boolean {
  return isObj(o.sealed) && typeof o.message_id === 'string' && typeof o.conversation_id === 'string';
}

/**
 * Every sealed post and message in `answer`, and whether the relay put an `opened` member
 * anywhere (each one is deleted here). A walk with its own stack: however deep the relay nests
 * its answer, the walk never runs out of call stack.
 */
function sealedItems(answer: unknown): { posts: Obj[]; messages: Obj[]; removed: boolean } {
  const posts: Obj[] = [];
  const messages: Obj[] = [];
  let removed = false;
  const stack: unknown[] = [answer];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push(value[i]);
      continue;
    }
    if (!isObj(value)) continue;
    if (Object.hasOwn(value, 'opened')) {
      delete value.opened;
      removed = true;
    }
    if (isSealedPost(value)) posts.push(value);
    else if (isSealedMessage(value)) messages.push(value);
    const nested = Object.values(value).filter((v) => typeof v === 'object' && v !== null);
    for (let i = nested.length - 1; i >= 0; i--) stack.push(nested[i]);
  }
  return { posts, messages, removed };
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
 * sealed item gets `opened`, and any `opened` the relay sent is taken out). Returns whether it
 * changed anything. Never throws for an item: one that cannot be opened says why in its `opened`.
 */
export async function openAnswer(answer: unknown, openers: Openers): Promise<boolean> {
  const { posts, messages, removed } = sealedItems(answer);
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
  return removed || posts.length + messages.length > 0;
}
