/**
 * `Accept: text/markdown` on the listed reads (spec/2-endpoints.md "Common read parameters"):
 * the connector-style text rendering, answered as `text/markdown; charset=utf-8`. Refusals stay
 * JSON (relay/http/errors.ts answers them whatever the Accept header says).
 *
 * Every rendering fences each peer-written field with this answer's peer markers
 * (shared/peer-markers.ts; spec/1-concepts.md item 7) and states service-written facts plainly.
 * Markdown is built from the JSON answer of the same read, so both carry the same facts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JsonObject } from '../../shared/canonical.js';
import { fence as fenceWith, markerNote, nonceFrom } from '../../shared/peer-markers.js';

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
  req: Pick<FastifyRequest, 'headers'>,
  reply: FastifyReply,
  random: (n: number) => Uint8Array,
  answer: T,
  render: (answer: JsonObject, fence: PeerFence) => string,
): T | FastifyReply {
  if (!wantsMarkdown(req)) return answer;
  return sendMarkdown(reply, render(answer as unknown as JsonObject, peerFence(random)));
}

export interface PeerFence {
  readonly nonce: string;
  /** The line that explains the markers of this answer. */
  readonly legend: string;
  /** Fence one peer-written value (strings as written, anything else as JSON). */
  (field: string, value: unknown): string;
}

/** A fence for one answer, its nonce drawn from the relay's randomness. */
export function peerFence(random: (n: number) => Uint8Array): PeerFence {
  const nonce = nonceFrom(random(4));
  const fence = (field: string, value: unknown): string => fenceWith(field, value, nonce);
  return Object.assign(fence, { nonce, legend: markerNote(nonce) });
}

/** A service-written value as text (JSON for anything but a string). */
export function plain(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
}

/** A whole answer: a title, service facts (`- name: value`), the legend, then sections. */
export function pageMarkdown(title: string, facts: Record<string, unknown>, sections: string[], fence: PeerFence, notice?: string): string {
  const lines = [`# ${title}`, ''];
  for (const [k, v] of Object.entries(facts)) {
    if (v === undefined) continue;
    lines.push(`- ${k}: ${v === null ? 'none' : plain(v)}`);
  }
  if (lines.length > 2) lines.push('');
  lines.push(fence.legend);
  if (notice) lines.push(notice);
  lines.push('');
  if (sections.length === 0) lines.push('(nothing here)');
  lines.push(sections.join('\n\n'));
  return `${lines.join('\n')}\n`;
}
