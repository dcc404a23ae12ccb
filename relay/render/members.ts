/**
 * Markdown renderings of members.list and space_blocks.list (spec/2-endpoints.md "SPACES,
 * categories, members"; `Accept: text/markdown`), built from their JSON answers. Member tags
 * were written by a PEER and are fenced; peer ids, roles, link ids and times are plain.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';

const MEMBER = { plain: ['peer', 'role', 'brought_in_by', 'link_id', 'admitted_at', 'changed_at'], skip: ['peer', 'role'] } as const;
const BLOCK = { plain: ['peer', 'blocked_by', 'blocked_at'], skip: ['peer'] } as const;

export function membersMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const owner = answer.owner as JsonObject;
  const sections = (answer.items as JsonObject[]).map((m) =>
    [`### \`${plainValue(m.peer)}\` · ${plainValue(m.role)}`, ...fieldLines(m, MEMBER, fence)].join('\n'),
  );
  const facts = { owner: owner.peer, next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`${space}: members`, facts, sections, fence, plainValue(answer.notice));
}

export function blocksMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((b) => [`### \`${plainValue(b.peer)}\` blocked`, ...fieldLines(b, BLOCK, fence)].join('\n'));
  const facts = { next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`${space}: blocked KEYS`, facts, sections, fence);
}
