/**
 * Markdown renderings of oracle.document, oracle.versions, links.list and watches.list
 * (spec/2-endpoints.md "Oracle spaces"; `Accept: text/markdown`), each built from its JSON
 * answer. Peer-written text is fenced with the answer's markers (shared/peer-markers.ts): the
 * document text, summaries, snippets and a veto's reason by who wrote them (the caller's own
 * as its own), headings, paths, labels and the targets of URL and fingerprint links as peer
 * text (the heading of a section may have been written by any earlier author). Values the
 * grammar or the service checked (SPACE names, `name/seq`, peer ids, post ids, states, times,
 * numbers) are shown bare.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { pageMarkdown, type PeerFence } from '../http/markdown.js';
import { plainValue } from './fields.js';

function str(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A reference target: SPACE names and `name/seq` passed the grammar; addresses and fingerprints are peer text. */
function targetText(ref: JsonObject, fence: PeerFence): string {
  return ref.kind === 'space' || ref.kind === 'post' ? `\`${str(ref.target)}\`` : fence('target', ref.target);
}

function labelText(label: unknown, fence: PeerFence): string {
  return typeof label === 'string' ? ` · label ${fence('label', label)}` : '';
}

export function documentMarkdown(answer: JsonObject, fence: PeerFence): string {
  const v = answer.version as JsonObject | null;
  const byAuthor = fence.by(v?.author);
  const facts: Record<string, unknown> = { space: answer.space };
  if (v !== null) {
    facts.version = v.post_id;
    facts.seq = v.seq;
    facts.author = v.author;
    facts.posted_at = v.posted_at;
    facts.state = v.state;
  } else {
    facts.version = null;
  }
  if (answer.section !== undefined) facts.section = answer.section;
  const sections: string[] = [];
  if (v !== null) {
    const un = v.unavailable as JsonObject | undefined;
    if (un) sections.push(`**unavailable**: ${str(un.state)} since ${str(un.since)}; the text is withheld, the version keeps its place.`);
    if (typeof v.summary === 'string') sections.push(`summary: ${byAuthor('summary', v.summary)}`);
    const outline = answer.sections as JsonObject[];
    if (outline.length > 0) {
      const lines = outline.map((s) => `${'  '.repeat(Number(s.level) - 1)}- ${str(s.number)}. ${fence('heading', s.heading)} (${str(s.bytes)} bytes)`);
      sections.push(['## Sections', ...lines].join('\n'));
    }
    if (answer.text !== '') sections.push(['## Text', byAuthor('text', answer.text)].join('\n'));
    const refs = answer.references as JsonObject[];
    if (refs.length > 0) {
      const lines = refs.map(
        (r) => `- ${str(r.kind)} ${targetText(r, fence)}${labelText(r.label, fence)} · section ${plainValue(r.section as number | null)}`,
      );
      sections.push(['## References', ...lines].join('\n'));
    }
  }
  return pageMarkdown(`Document of ${str(answer.space)}`, facts, sections, fence, str(answer.notice));
}

export function versionsMarkdown(answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map((item) => {
    const by = fence.by(item.author);
    const lines = [`### seq ${str(item.seq)} · ${str(item.state)} · ${str(item.posted_at)}`];
    lines.push(`post_id \`${str(item.post_id)}\` · author \`${str(item.author)}\`${typeof item.supersedes === 'string' ? ` · supersedes \`${item.supersedes}\`` : ''}`);
    const un = item.unavailable as JsonObject | undefined;
    if (un) lines.push(`**unavailable**: ${str(un.state)} since ${str(un.since)}; content withheld.`);
    if (typeof item.summary === 'string') lines.push(`summary: ${by('summary', item.summary)}`);
    if (typeof item.snippet === 'string' && item.snippet !== '') {
      lines.push(by('snippet', item.snippet) + (item.snippet_truncated === true ? '\n(snippet; the text goes on)' : ''));
    }
    const d = item.decision as JsonObject | null;
    if (d !== null) {
      const reason = typeof d.reason === 'string' ? ` · reason ${fence.by(d.by)('reason', d.reason)}` : '';
      lines.push(`decision: ${str(d.kind)} by \`${str(d.by)}\` at ${str(d.at)}${typeof d.post_id === 'string' ? ` (post \`${d.post_id}\`)` : ''}${reason}`);
    }
    return lines.join('\n');
  });
  const facts = { space: answer.space, next_before: answer.next_before, has_more: answer.has_more };
  return pageMarkdown(`Versions of ${str(answer.space)}`, facts, sections, fence, str(answer.notice));
}

export function linksMarkdown(answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map(
    (l) => `- \`${str(l.space)}\` · version \`${str(l.version)}\` · section ${plainValue(l.section as number | null)}${labelText(l.label, fence)}`,
  );
  const facts = { space: answer.space, post: answer.post, next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown(`Oracle texts linking to ${str(answer.space)}`, facts, sections.length > 0 ? [sections.join('\n')] : [], fence, str(answer.notice));
}

export function watchingMarkdown(answer: JsonObject, fence: PeerFence): string {
  const sections = (answer.items as JsonObject[]).map(
    (w) => `- \`${str(w.space)}\` · current ${w.current === null ? 'none yet' : `\`${str(w.current)}\``} · changed ${plainValue(w.changed_at as string | null)} · watched since ${str(w.watched_at)}`,
  );
  const facts = { next_after: answer.next_after, has_more: answer.has_more };
  return pageMarkdown('Documents you watch', facts, sections.length > 0 ? [sections.join('\n')] : [], fence, str(answer.notice));
}
