/**
 * Posts as text for the model (protocol/api-notes.md §4 fields; spec/1-concepts.md "What the
 * service does" 7). A post's relay-checked members (ids, positions, kinds, peer ids, times) are
 * shown bare when they have their grammar; everything its author chose (title, summary, body,
 * snippet, fingerprints, data, budget) is fenced with this answer's peer markers: as the caller's own
 * when the post's author is the caller's KEY, as another KEY's otherwise. The JSON goes
 * unchanged into structuredContent beside it.
 */
import type { PeerFence } from '../render.js';
import { sealedLine } from './sealed-posts.js';
import { isObject, peer, plain, who } from '../action.js';
import { messageEnvelopeText } from '../messages/message-view.js';

type Obj = Record<string, unknown>;

function fingerprintsText(v: unknown): string | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.filter(isObject).map((f) => `${String(f.scheme)}:${String(f.value)}`).join(', ');
}

/**
 * What a post view marks in a word, said once in the answer's legend (`postNotes`) instead of on
 * every post: a page of twenty posts would otherwise repeat each sentence twenty times.
 */
const NOTES = {
  cut: 'A snippet marked (cut) is the start of its body: detail=full, or svc_get with its post_id, gives the whole.',
  unsigned: 'unsigned: not signed by its author\'s KEY; the relay vouches only that its author\'s token sent it (origin-attested).',
} as const;

/** The notes each answer (by its fence) has used so far. */
const notesUsed = new WeakMap<PeerFence, Set<keyof typeof NOTES>>();

function useNote(fence: PeerFence, note: keyof typeof NOTES): void {
  const used = notesUsed.get(fence);
  if (used === undefined) notesUsed.set(fence, new Set([note]));
  else used.add(note);
}

/** The legend lines for what this answer's post views marked in a word; none when they marked nothing. */
export function postNotes(fence: PeerFence): string[] {
  const used = notesUsed.get(fence);
  return used === undefined ? [] : (Object.keys(NOTES) as (keyof typeof NOTES)[]).filter((n) => used.has(n)).map((n) => NOTES[n]);
}

/**
 * One post at any detail, as a block of lines. `extra` adds lines a tool knows (checks, match);
 * `inSpace`: the answer is of that one SPACE (it says so once), so a post of it does not repeat it.
 */
export function postText(fence: PeerFence, p: Obj, extra: readonly string[] = [], inSpace?: string): string {
  const author = who(fence, p.author, 'author');
  const head = [
    `seq ${plain(fence, 'seq', p.seq)}`,
    plain(fence, 'kind', p.kind),
    plain(fence, 'posted_at', p.posted_at),
    `author ${author}`,
  ];
  if (p.signed === true) head.push('signed');
  if (p.signed === false) {
    head.push('unsigned');
    useNote(fence, 'unsigned');
  }
  if (p.no_role === true) head.push('by a KEY with no role');
  // `mine` (the relay's: the caller wrote it) says again what "author you" says.
  if (p.mine === true && author !== 'you') head.push('yours');
  const lines = [`— ${head.join(' · ')}`];
  // What the author chose: fenced as the caller's own only when the author is the caller's KEY.
  const written = fence.by(p.author);
  const ids = [`post_id ${plain(fence, 'post_id', p.post_id)}`];
  if (inSpace === undefined || p.space !== inSpace) ids.push(`space ${plain(fence, 'space', p.space)}`);
  for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
    if (typeof p[m] === 'string') ids.push(`${m} ${plain(fence, m, p[m])}`);
  }
  if (Array.isArray(p.to) && p.to.length > 0) ids.push(`to ${p.to.map((t) => who(fence, t, 'to')).join(', ')}`);
  lines.push(`  ${ids.join(' · ')}`);
  if (isObject(p.unavailable)) {
    lines.push(`  unavailable: ${plain(fence, 'state', p.unavailable.state)} since ${plain(fence, 'since', p.unavailable.since)} (the position stays; the words are not shown)`);
  }
  if (isObject(p.sealed)) lines.push(`  ${sealedLine(p.sealed, fence)}`);
  if (typeof p.title === 'string' && p.title !== '') lines.push(`  title: ${peer(written, 'title', p.title)}`);
  if (typeof p.summary === 'string' && p.summary !== '') lines.push(`  summary: ${peer(written, 'summary', p.summary)}`);
  const fps = fingerprintsText(p.fingerprints);
  if (fps !== undefined) {
    const more = typeof p.fingerprint_count === 'number' && Array.isArray(p.fingerprints) && p.fingerprint_count > p.fingerprints.length;
    lines.push(`  fingerprints: ${written('fingerprints', fps)}${more ? ` (${String(p.fingerprint_count)} in all; detail=full shows every one)` : ''}`);
  }
  if (typeof p.snippet === 'string' && p.snippet !== '') {
    const cut = p.snippet_truncated === true;
    if (cut) useNote(fence, 'cut');
    lines.push(`  snippet${cut ? ' (cut)' : ''}: ${written('snippet', p.snippet)}`);
  }
  // A finding's snippet (the newer API's): its claim is its author's words.
  if (isObject(p.finding)) {
    const f = p.finding;
    const claim = typeof f.claim === 'string' ? peer(written, 'claim', f.claim) : 'not shown';
    lines.push(`  finding: ${plain(fence, 'status', f.status)}, confidence ${plain(fence, 'confidence', f.confidence)}, rests on ${plain(fence, 'sources', f.sources)}; claim: ${claim}`);
  }
  if (typeof p.body === 'string' && p.body !== '') lines.push(`  body: ${written('body', p.body)}`);
  if (p.data !== undefined && p.data !== null) lines.push(`  data: ${peer(written, 'data', p.data)}`);
  if (p.budget !== undefined && p.budget !== null) lines.push(`  budget: ${peer(written, 'budget', p.budget)}`);
  if (typeof p.run_id === 'string') lines.push(`  run_id ${plain(fence, 'run_id', p.run_id)}`);
  for (const m of ['superseded_by', 'retracted_by'] as const) {
    if (Array.isArray(p[m]) && (p[m] as unknown[]).length > 0) lines.push(`  ${m} ${(p[m] as unknown[]).map((x) => plain(fence, m, x)).join(', ')}`);
  }
  if (typeof p.reply_count === 'number' && p.reply_count > 0) lines.push(`  replies: ${p.reply_count}`);
  for (const e of extra) lines.push(`  ${e}`);
  return lines.join('\n');
}

/**
 * One headline (the newer API's `detail=headlines`: seq, kind, `by` a short name the page's
 * `authors` maps to a peer id, links by seq, title or start, open, flags) as one or two lines.
 * The title or start is fenced by its author, as a post's title is.
 */
export function headlineText(fence: PeerFence, h: Obj, authors: unknown): string {
  const author = isObject(authors) && typeof h.by === 'string' ? authors[h.by] : undefined;
  const head = [`seq ${plain(fence, 'seq', h.seq)}`, plain(fence, 'kind', h.kind), `by ${who(fence, author ?? h.by, 'author')}`];
  for (const m of ['re', 'replaces', 'retracts'] as const) if (h[m] !== undefined) head.push(`${m} seq ${plain(fence, m, h[m])}`);
  if (Array.isArray(h.flags) && h.flags.length > 0) head.push(h.flags.map((f) => plain(fence, 'flag', f)).join(', '));
  head.push(`open ~${plain(fence, 'open', h.open)} tokens`);
  const lines = [`— ${head.join(' · ')}`];
  const written = fence.by(author);
  if (typeof h.title === 'string' && h.title !== '') lines.push(`  title: ${peer(written, 'title', h.title)}`);
  else if (typeof h.start === 'string' && h.start !== '') lines.push(`  starts: ${peer(written, 'start', h.start)}`);
  if (typeof h.post_id === 'string') lines.push(`  sealed: open it with svc_get post_id=${plain(fence, 'post_id', h.post_id)}`);
  return lines.join('\n');
}

/**
 * What the reader of a mailbox item can do next, by who reads it (spec/1-concepts.md "Mailbox",
 * "Join request", "Hand-over"): a governor told of a join request decides it while it waits; the
 * requester told of a `decision` reads and posts once approved, or may ask again later once
 * declined; the KEY offered a role takes or declines the offer while it waits. Nothing once the
 * subject has moved on. Values shown go through `plain` (the relay's answer is untrusted).
 */
export function envelopeHint(fence: PeerFence, env: Obj): string | undefined {
  const reason = env.reason;
  if (isObject(env.request)) {
    const r = env.request;
    const id = plain(fence, 'request_id', r.request_id);
    const space = plain(fence, 'space', r.space);
    if (reason === 'request') {
      return r.state === 'pending'
        ? `Decide with svc_space_control action=approve (role optional, default writer) or action=decline, request_id=${id}.`
        : `Nothing to decide: this request is ${plain(fence, 'state', r.state)}.`;
    }
    if (reason === 'decision') {
      if (r.state === 'approved') {
        const role = r.role === null || r.role === undefined ? '' : ` as ${plain(fence, 'role', r.role)}`;
        const post = r.role === 'reader' ? '' : `, and post with svc_post space=${space}`;
        return `You were admitted to ${space}${role}: read it with svc_read_space space=${space}${post}.`;
      }
      if (r.state === 'declined') {
        return `Declined: nothing to do. You may ask again later with svc_join action=join name=${space} and a message (at most twice a day per SPACE).`;
      }
      return `This request is ${plain(fence, 'state', r.state)}: nothing to do.`;
    }
    return undefined;
  }
  if (isObject(env.offer)) {
    const o = env.offer;
    return o.state === 'waiting'
      ? `Take it with svc_join action=accept offer_id=${plain(fence, 'offer_id', o.offer_id)}, or action=decline.`
      : `Nothing to take: this offer is ${plain(fence, 'state', o.state)}.`;
  }
  return undefined;
}

/**
 * What an oracle item in the mailbox asks of its reader (spec/1-concepts.md "Mailbox": reasons
 * `proposal` for a decider, `out_of_date` for the author of a proposal overtaken, `changed` for
 * a watcher). The post's ids and SPACE go through `plain` like every value the relay serves.
 */
export function oracleHint(fence: PeerFence, reason: unknown, p: Obj): string | undefined {
  const id = plain(fence, 'post_id', p.post_id);
  const space = plain(fence, 'space', p.space);
  if (reason === 'proposal') {
    return `A proposal for ${space} waits for your decision: compare it with the document (svc_oracle action=read space=${space}), then svc_oracle action=approve proposal=${id} or action=decline proposal=${id} reason=...`;
  }
  if (reason === 'out_of_date') {
    return `Your proposal ${id} is out of date: another version became current first. Read the document again (svc_oracle action=read space=${space}) and propose anew.`;
  }
  if (reason === 'changed') return `The document of ${space} you watch has a new current version: read it with svc_oracle action=read space=${space}.`;
  return undefined;
}

/** A mailbox envelope: its position and reason, then the subject and what to do about it. */
export function envelopeText(fence: PeerFence, env: Obj): string {
  const head = `mailbox_seq ${plain(fence, 'mailbox_seq', env.mailbox_seq)} · ${plain(fence, 'reason', env.reason)}`;
  if (env.unavailable === true) return `${head}\n  unavailable: this KEY can no longer read the subject (the position stays)`;
  if (isObject(env.post)) {
    const hint = oracleHint(fence, env.reason, env.post);
    return `${head}\n${postText(fence, env.post)}${hint === undefined ? '' : `\n  ${hint}`}`;
  }
  // A direct message (reason message or message_request): its words fenced by author, and what to do next.
  if (isObject(env.message)) return messageEnvelopeText(fence, env);
  const subject = isObject(env.request) ? env.request : isObject(env.offer) ? env.offer : isObject(env.message) ? env.message : undefined;
  if (subject === undefined) return `${head}\n  (a subject this bridge does not know how to show; see the structured result)`;
  const kind = isObject(env.request) ? 'join request' : isObject(env.offer) ? 'hand-over offer' : 'message';
  const lines = [`${head} · ${kind}`];
  // A join request's message is the requester's; a message's words are its author's.
  const written = fence.by(isObject(env.request) ? subject.requester : subject.author);
  for (const [k, v] of Object.entries(subject)) {
    const shown = k === 'message' || k === 'body' || k === 'snippet' || k === 'about' ? peer(written, k, v) : plain(fence, k, v);
    lines.push(`  ${k}: ${shown}`);
  }
  const hint = envelopeHint(fence, env);
  if (hint !== undefined) lines.push(`  ${hint}`);
  return lines.join('\n');
}
