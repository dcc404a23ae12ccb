/**
 * Markdown renderings of invites.list and requests.list (spec/2-endpoints.md "Invites,
 * joining"; `Accept: text/markdown`), built from their JSON answers. Link labels and tags and
 * join-request messages were written by a PEER and are fenced; ids, roles, counts, states and
 * times are plain.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';

const INVITE = {
  plain: ['invite_id', 'space', 'maker', 'role', 'uses', 'max_uses', 'created_at', 'expires_at', 'state', 'revoked_at'],
  skip: ['invite_id', 'space'],
} as const;

const REQUEST = {
  plain: ['request_id', 'space', 'requester', 'state', 'role', 'created_at', 'expires_at'],
  skip: ['request_id', 'space'],
} as const;

export function invitesMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((i) =>
    [`### link \`${plainValue(i.invite_id)}\` · ${plainValue(i.role)} · ${plainValue(i.state)}`, ...fieldLines(i, INVITE, fence)].join('\n'),
  );
  const facts = { scope: answer.scope, next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`${space}: invite links`, facts, sections, fence, plainValue(answer.notice));
}

export function requestsMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((r) =>
    [`### request \`${plainValue(r.request_id)}\` · ${plainValue(r.state)}`, ...fieldLines(r, REQUEST, fence)].join('\n'),
  );
  const facts = { waiting: answer.waiting, next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`${space}: join requests`, facts, sections, fence, plainValue(answer.notice));
}
