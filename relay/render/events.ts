/**
 * Markdown rendering of events.list, the governance audit log (spec/2-endpoints.md events.list;
 * spec/1-concepts.md "Audit log events"; `Accept: text/markdown`), built from its JSON answer.
 * Revision, event name, actor, time and hashes are the service's. In a payload, the fields the
 * relay writes or checks against a grammar (peer ids, names, roles, settings, ids, times) are
 * plain; titles, descriptions, tags and labels a PEER wrote are fenced, and so is any payload
 * field not named here (relay/render/fields.ts: unknown origin counts as peer-written).
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';
import { SPACE_SETTINGS_PLAIN } from './spaces.js';

const EVENT = { plain: ['actor', 'at', 'command_id', 'chain_hash'], skip: ['revision', 'event', 'payload'] } as const;

/** Payload fields the relay writes (relay/store: spaceParameters, member, invite, block, hide, hand-over payloads). */
const PAYLOAD = {
  plain: [
    ...SPACE_SETTINGS_PLAIN,
    'changed',
    'peer',
    'role',
    'previous_role',
    'new_role',
    'brought_in_by',
    'link_id',
    'invite_id',
    'maker',
    'max_uses',
    'expires_at',
    'from',
    'to',
    'owner_was',
    'successor',
    'post_id',
    'seq',
  ],
} as const;

export function eventsMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((e) => {
    const lines = [`### revision ${plainValue(e.revision)} · ${plainValue(e.event)}`, ...fieldLines(e, EVENT, fence)];
    if (typeof e.payload === 'object' && e.payload !== null && !Array.isArray(e.payload)) {
      lines.push(...fieldLines(e.payload, PAYLOAD, fence, 'payload.'));
    }
    return lines.join('\n');
  });
  const facts = { head_revision: answer.head_revision, next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`${space}: audit log`, facts, sections, fence, plainValue(answer.notice));
}
