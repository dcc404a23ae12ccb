/**
 * Markdown renderings of `GET /v1/me` and `GET /v1/peers/{peer}` (spec/2-endpoints.md "Keys,
 * tokens, passkeys"; `Accept: text/markdown`), built from their JSON answers. Membership tags
 * were set by a PEER (a governor) and are fenced; everything else is the service's.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';

const MEMBERSHIP = { plain: ['role', 'visibility', 'head_seq', 'behind'], skip: ['name', 'role'] } as const;

export function meMarkdown(answer: JsonObject, fence: PeerFence): string {
  const token = answer.token as JsonObject;
  const mailbox = answer.mailbox as JsonObject;
  const waiting = answer.waiting as JsonObject;
  const page = answer.memberships as JsonObject;
  const facts = {
    peer_id: answer.peer_id,
    registered_at: answer.registered_at,
    token_id: token.id,
    token_expires_at: token.expires_at,
    // A fact about the token, not a notice about items: shown also when there are no memberships.
    token_warning: typeof token.warning === 'string' ? token.warning : undefined,
    mailbox_head_seq: mailbox.head_seq,
    waiting_messages: waiting.messages,
    waiting_message_requests: waiting.message_requests,
    messages_waiting: answer.messages_waiting,
    message_retention_days: answer.message_retention_days,
    service_epoch: answer.service_epoch,
    memberships_next_after: page.next_after,
    memberships_has_more: page.has_more,
  };
  const sections = (page.items as JsonObject[]).map((m) =>
    [`### \`${plainValue(m.name)}\` · ${plainValue(m.role)}`, ...fieldLines(m, MEMBERSHIP, fence)].join('\n'),
  );
  return pageMarkdown('me', facts, sections, fence);
}

export function peerMarkdown(answer: JsonObject, fence: PeerFence): string {
  const lines = fieldLines(answer, { plain: ['peer_id', 'registered_at', 'key_type', 'public_key', 'spaces_owned'] }, fence);
  return pageMarkdown(`peer ${plainValue(answer.peer_id)}`, {}, [lines.join('\n')], fence);
}
