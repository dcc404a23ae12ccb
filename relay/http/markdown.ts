/**
 * `Accept: text/markdown` on the listed reads (spec/2-endpoints.md "Common read parameters"):
 * the connector-style text rendering, answered as `text/markdown; charset=utf-8`. Refusals stay
 * JSON (relay/http/errors.ts answers them whatever the Accept header says).
 *
 * Every rendering fences each peer-written field with this answer's peer markers
 * (shared/peer-markers.ts; spec/1-concepts.md item 7) and states service-written facts plainly.
 * Text the authenticated caller's own KEY wrote (its posts read back) is fenced as its own
 * (`⟦own …⟧`, `fence.by(author)`): still fenced, since what was posted is evidence, not
 * instruction. The fence is the bridge's (`answerFence`, one implementation for both programs).
 * A page's legend names only the markers it used, and a page with no items carries neither
 * legend nor notice (the JSON answer keeps its `notice`, api-notes §4).
 * Markdown is built from the JSON answer of the same read, so both carry the same facts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonObject } from '../../shared/canonical.js';
import { answerFence, nonceFrom, usedMarkerNotes, type AnswerFence } from '../../shared/peer-markers.js';

export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';

/**
 * Does the request ask for the markdown rendering? An Accept naming `application/x-ndjson` asks
 * for an export instead (posts, events), whatever else it names.
 */
export function wantsMarkdown(req: Pick<FastifyRequest, 'headers'>): boolean {
  const accept = req.headers.accept ?? '';
  return /\btext\/markdown\b/i.test(accept) && !/application\/x-ndjson/i.test(accept);
}

/** Send a markdown rendering (it differs by Accept, so caches must key on it). */
export function sendMarkdown(reply: FastifyReply, text: string): FastifyReply {
  return reply.type(MARKDOWN_TYPE).header('vary', 'Accept').send(text);
}

/**
 * Answer `answer` as JSON, or (when the request asks for markdown) its rendering with a fresh
 * fence. `answer` is the plain object the route would send as JSON.
 */
export function negotiate<T extends object>(
  req: Pick<FastifyRequest, 'headers' | 'identity'>,
  reply: FastifyReply,
  random: (n: number) => Uint8Array,
  answer: T,
  render: (answer: JsonObject, fence: PeerFence) => string,
): T | FastifyReply {
  if (!wantsMarkdown(req)) return answer;
  return sendMarkdown(reply, render(answer as unknown as JsonObject, peerFence(random, req.identity?.peerId)));
}

/** The fences of one answer (shared/peer-markers.ts `answerFence`). */
export type PeerFence = AnswerFence;

/**
 * The fences for one answer, the nonce drawn from the relay's randomness; `self` is the
 * authenticated caller's peer id (none when anonymous), whose text `fence.by` fences as its own.
 */
export function peerFence(random: (n: number) => Uint8Array, self?: string): PeerFence {
  return answerFence({ nonce: nonceFrom(random(4)), self });
}

/** A service-written value as text (JSON for anything but a string). */
export function plain(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/**
 * A whole answer: a title, service facts (`- name: value`), the legend of the markers the
 * sections used, the page's notice, then the sections. Call it after the sections were rendered
 * (the legend reads what `fence` used). A page with no sections says so and carries neither
 * legend nor notice: nothing on it is peer content.
 */
export function pageMarkdown(title: string, facts: Record<string, unknown>, sections: string[], fence: PeerFence, notice?: string): string {
  const lines = [`# ${title}`, ''];
  for (const [k, v] of Object.entries(facts)) {
    if (v === undefined) continue;
    lines.push(`- ${k}: ${v === null ? 'none' : plain(v)}`);
  }
  if (lines.length > 2) lines.push('');
  if (sections.length === 0) {
    lines.push('(nothing here)');
    return `${lines.join('\n')}\n`;
  }
  const preface = [...usedMarkerNotes(fence), ...(notice ? [notice] : [])];
  if (preface.length > 0) lines.push(...preface, '');
  lines.push(sections.join('\n\n'));
  return `${lines.join('\n')}\n`;
}
