/**
 * `Accept: text/markdown` renderings of the post reads (spec/2-endpoints.md "Common read
 * parameters"; spec/1-concepts.md item 7 "Trust rule": text renderings wrap peer-written fields
 * in delimiters, peer markers).
 *
 * Peer markers are defined once, in shared/peer-markers.ts (the bridge writes the same):
 * `⟦peer <field> <nonce>⟧<text as written>⟦/peer <nonce>⟧`, the nonce drawn fresh for each
 * answer and named in its legend. A post the authenticated caller's own KEY wrote is fenced as
 * its own, `⟦own <field> <nonce>⟧…⟦/own <nonce>⟧`: still evidence, never instructions (the same
 * KEY may be held by another program). Fields here: `title`, `body`, `snippet`, `fingerprint`,
 * `data`, `budget`, `message`. Values with a grammar the relay checked (peer ids, SPACE names,
 * seq, kinds, times) are shown bare.
 *
 * The markdown is rendered from the JSON rendering (relay/posts/render.ts), so both carry the
 * same facts. Refusals stay JSON. The per-answer fence, the page layout and content negotiation
 * live in relay/http/markdown.ts (re-exported here for the post routes).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonObject } from '../../shared/canonical.js';
import { MARKDOWN_TYPE, pageMarkdown, peerFence, wantsMarkdown, type PeerFence } from '../http/markdown.js';
import { PEER_CONTENT_NOTICE } from './read-params.js';

export { pageMarkdown, peerFence, wantsMarkdown, type PeerFence } from '../http/markdown.js';

function str(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** One post (any detail) as a markdown section headed at `level`; its words fenced by who wrote them. */
export function postMarkdown(post: JsonObject, answerFence: PeerFence, level = 3): string {
  const fence = answerFence.by(post.author);
  const h = '#'.repeat(level);
  const lines: string[] = [];
  lines.push(`${h} seq ${str(post.seq)} · ${str(post.kind)} · ${str(post.posted_at)}`);
  const facts = [`post_id \`${str(post.post_id)}\``, `space \`${str(post.space)}\``, `author \`${str(post.author)}\``];
  if (post.signed === true) facts.push('signed');
  if (post.signed === false) facts.push('unsigned (origin-attested)');
  if (post.no_role === true) facts.push('author had no role');
  if (post.mine === true) facts.push('yours');
  lines.push(facts.join(' · '));
  const un = post.unavailable as JsonObject | undefined;
  if (un) lines.push(`**unavailable**: ${str(un.state)} since ${str(un.since)}${un.reason ? ` (${str(un.reason)})` : ''}; content withheld, position kept.`);
  const links: string[] = [];
  if (Array.isArray(post.to) && post.to.length > 0) links.push(`to ${post.to.map((t) => `\`${str(t)}\``).join(', ')}`);
  for (const name of ['reply_to', 'supersedes', 'retracts'] as const) {
    if (typeof post[name] === 'string') links.push(`${name} \`${str(post[name])}\``);
  }
  for (const name of ['superseded_by', 'retracted_by'] as const) {
    const v = post[name];
    if (Array.isArray(v) && v.length > 0) links.push(`${name} ${v.map((t) => `\`${str(t)}\``).join(', ')}`);
  }
  if (typeof post.reply_count === 'number') links.push(`${post.reply_count} replies`);
  if (links.length > 0) lines.push(links.join(' · '));
  if (typeof post.title === 'string') lines.push(`title: ${fence('title', post.title)}`);
  const sealed = post.sealed as JsonObject | undefined;
  if (sealed !== undefined && sealed !== null) {
    lines.push(`sealed: generation ${str(sealed.generation)}, ${str(sealed.bytes)} bytes of ciphertext; only members' own software (the bridge) opens it.`);
  }
  if (Array.isArray(post.fingerprints) && post.fingerprints.length > 0) {
    const fps = (post.fingerprints as JsonObject[]).map((f) => fence('fingerprint', `${str(f.scheme)}:${str(f.value)}`));
    lines.push(`fingerprints (${str(post.fingerprint_count)}): ${fps.join(', ')}`);
  }
  if (Array.isArray(post.categories) && post.categories.length > 0) lines.push(`categories: ${post.categories.map(str).join(', ')}`);
  if (typeof post.body === 'string') {
    lines.push(post.body === '' ? '(no body)' : fence('body', post.body));
  } else if (typeof post.snippet === 'string') {
    lines.push(fence('snippet', post.snippet) + (post.snippet_truncated === true ? '\n(snippet; the body goes on)' : ''));
  }
  if (post.data !== undefined && post.data !== null) lines.push(`data: ${fence('data', post.data)}`);
  if (post.budget !== undefined && post.budget !== null) lines.push(`budget: ${fence('budget', post.budget)}`);
  if (post.proof !== undefined) lines.push(`proof: object_id \`${str(post.object_id)}\`; ask with Accept: application/json for the proof block.`);
  return lines.join('\n');
}

/**
 * One headline (relay/posts/headlines.ts) as a line: its place, author (peer id from the
 * page's `authors`), links by seq, its title or start fenced, its flags and what opening it costs.
 */
export function headlineMarkdown(item: JsonObject, authors: Record<string, string>, answerFence: PeerFence): string {
  const peer = typeof item.by === 'string' ? authors[item.by] : undefined;
  const fence = answerFence.by(peer);
  const parts = [`seq ${str(item.seq)}`, str(item.kind), `by \`${peer ?? str(item.by)}\``];
  for (const name of ['re', 'replaces', 'retracts'] as const) if (typeof item[name] === 'string') parts.push(`${name} seq ${str(item[name])}`);
  const lines = [`- ${parts.join(' · ')}`];
  if (typeof item.title === 'string') lines.push(`  title: ${fence('title', item.title)}`);
  else if (typeof item.start === 'string') lines.push(`  starts: ${fence('start', item.start)}`);
  if (typeof item.post_id === 'string') lines.push(`  sealed post \`${item.post_id}\`; only members' own software (the bridge) opens it.`);
  const flags = Array.isArray(item.flags) && item.flags.length > 0 ? `${item.flags.map(str).join(', ')} · ` : '';
  lines.push(`  ${flags}opening it costs about ${str(item.open)} tokens`);
  return lines.join('\n');
}

/** The markdown page of a peer-content answer: its title, service facts and one section per entry. */
export interface PeerPage {
  readonly title: string;
  readonly facts: Record<string, unknown>;
  readonly sections: string[];
}

/**
 * The close of every peer-content read (posts.read, posts.standing, posts.get, mailbox.read,
 * seek): mark a token budget cut, add the trust notice, then answer the JSON, or its markdown
 * page with a fresh fence when the request asks for markdown (spec/1-concepts.md item 7).
 * `page` runs after the notice is set, so it sees the answer as sent.
 */
export function answerPeerContent(
  req: Pick<FastifyRequest, 'headers' | 'identity'>,
  reply: FastifyReply,
  random: (n: number) => Uint8Array,
  answer: Record<string, unknown>,
  budgetCut: boolean,
  page: (fence: PeerFence) => PeerPage,
): Record<string, unknown> | FastifyReply {
  if (budgetCut) answer.budget_cut = true;
  answer.notice = PEER_CONTENT_NOTICE;
  if (!wantsMarkdown(req)) return answer;
  const fence = peerFence(random, req.identity?.peerId);
  const p = page(fence);
  return reply.type(MARKDOWN_TYPE).send(pageMarkdown(p.title, p.facts, p.sections, fence, PEER_CONTENT_NOTICE));
}
