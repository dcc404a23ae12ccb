/**
 * Markdown rendering of blocks.list (spec/2-endpoints.md "Mailbox, messages, blocks";
 * `Accept: text/markdown`), built from its JSON answer. Every field is the service's (peer ids
 * it checked, times it wrote), so nothing is fenced and the page carries no marker legend; a
 * field added later is fenced by default, and the legend then comes with it.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';

const BLOCK = { plain: ['peer_id', 'blocked_at'], skip: ['peer_id'] } as const;

export function messageBlocksMarkdown(answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((b) =>
    [`### \`${plainValue(b.peer_id)}\` blocked`, ...fieldLines(b, BLOCK, fence)].join('\n'),
  );
  const facts = { next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown('KEYS you block from messaging you', facts, sections, fence, plainValue(answer.notice));
}
