/**
 * Markdown rendering of tasks.list (spec/2-endpoints.md "Tasks"; `Accept: text/markdown`),
 * built from its JSON answer. Title, body and tag were written by the KEY that added the task,
 * a rejection's reason by the KEY that rejected it: each is fenced as that KEY's, so the
 * caller's own words read as its own (`fence.by`) and another's as a peer's. Numbers, states,
 * peer ids, post ids and times are the service's and shown plainly. In a sealed SPACE task
 * words are not sealed: the rendering shows them like any other.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { plainValue } from './fields.js';

function confirmationsLine(task: JsonObject): string {
  const list = (task.confirmations as JsonObject[]).map((c) => `\`${plainValue(c.by)}\` at ${plainValue(c.at)}${c.post_id ? ` (post ${plainValue(c.post_id)})` : ''}`);
  return `- confirmations: ${list.length} of ${plainValue(task.confirmations_needed)} needed${list.length > 0 ? `: ${list.join(', ')}` : ''}`;
}

export function taskMarkdown(task: JsonObject, fence: PeerFence): string {
  const by = fence.by(task.created_by);
  const after = task.after as number[];
  const lines = [`### task ${plainValue(task.number)} · ${plainValue(task.state)}`, `- title: ${by('title', task.title)}`];
  if (task.tag !== null) lines.push(`- tag: ${by('tag', task.tag)}`);
  lines.push(`- after: ${after.length === 0 ? 'none' : after.join(', ')}`);
  if (task.holder !== null) lines.push(`- holder: \`${plainValue(task.holder)}\` until ${plainValue(task.claim_expires_at)}`);
  if (task.done_by !== null) lines.push(`- done_by: \`${plainValue(task.done_by)}\`, result post ${plainValue(task.result_post_id)}`);
  if (task.state === 'done' || task.state === 'accepted') lines.push(confirmationsLine(task));
  lines.push(`- cycle: ${plainValue(task.cycle)}`);
  const rejected = task.rejected as JsonObject | null;
  if (rejected !== null) {
    lines.push(`- rejected: by \`${plainValue(rejected.by)}\` at ${plainValue(rejected.at)}: ${fence.by(rejected.by)('reason', rejected.reason)}`);
  }
  lines.push(`- created_by: \`${plainValue(task.created_by)}\` at ${plainValue(task.created_at)}; updated ${plainValue(task.updated_at)}`);
  if (task.body !== '') lines.push(`- body: ${by('body', task.body)}`);
  return lines.join('\n');
}

export function tasksMarkdown(space: string, answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((t) => taskMarkdown(t, fence));
  const facts = { next_before: answer.next_before, has_more: answer.has_more };
  return pageMarkdown(`${space}: tasks`, facts, sections, fence, plainValue(answer.notice));
}
