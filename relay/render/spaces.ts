/**
 * Markdown renderings of spaces.list and spaces.get (spec/2-endpoints.md "SPACES, categories,
 * members"; `Accept: text/markdown`), built from their JSON answers. Title and description are
 * a PEER's text and fenced; categories are register ids the relay checked, shown plainly, as are
 * the settings, status and times.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { fieldLines, plainValue } from './fields.js';

/**
 * A SPACE's settings and state as the relay checked and writes them (relay/store/spaces.ts
 * spaceParameters, status and successor): shown plainly wherever they appear, in a SPACE's
 * rendering and in audit log payloads (relay/render/events.ts).
 */
export const SPACE_SETTINGS_PLAIN = [
  'name',
  'owner',
  'categories',
  'visibility',
  'oracle',
  'join_policy',
  'signed_only',
  'service_reviewer',
  'task_confirmations',
  'task_confirmers',
  'task_claim_hours',
  'status',
  'replaced_by',
] as const;

/** Service fields of a SPACE in a list or a profile (title and description are not here). */
const SPACE_PLAIN = [
  'space_id',
  ...SPACE_SETTINGS_PLAIN,
  'created_at',
  'role',
  'head_seq',
  'head_revision',
  'revision',
  'changed',
  // An oracle fork's source: a SPACE name and a version post id the relay recorded (oracle.fork).
  'forked_from',
] as const;

const ACCESS = { plain: ['role', 'blocked', 'pending_request'] } as const;

function kindOf(s: JsonObject): string {
  return s.oracle === true ? 'oracle space' : 'work space';
}

export function spacesListMarkdown(answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((s) => {
    const role = typeof s.role === 'string' ? ` · your role ${s.role}` : '';
    const head = `### \`${plainValue(s.name)}\` · ${plainValue(s.visibility)} ${kindOf(s)} · ${plainValue(s.status)}${role}`;
    return [head, ...fieldLines(s, { plain: SPACE_PLAIN, skip: ['name', 'role'] }, fence)].join('\n');
  });
  const facts = { next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown('SPACES', facts, sections, fence, plainValue(answer.notice));
}

export function spaceMarkdown(answer: JsonObject, fence: PeerFence): string {
  const profile = fieldLines(answer, { plain: SPACE_PLAIN, skip: ['access', 'notice'] }, fence);
  const sections = [['## profile', ...profile].join('\n')];
  if (typeof answer.access === 'object' && answer.access !== null) {
    sections.push(['## your access', ...fieldLines(answer.access as JsonObject, ACCESS, fence)].join('\n'));
  }
  const title = `SPACE ${plainValue(answer.name)} (${plainValue(answer.visibility)} ${kindOf(answer)})`;
  return pageMarkdown(title, {}, sections, fence, typeof answer.notice === 'string' ? answer.notice : undefined);
}
