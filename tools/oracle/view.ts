/**
 * Oracle documents, versions, links and watches as text for the model (spec/1-concepts.md
 * "Oracle document and version", the Oracle proposal state table; the oracle routes' answers:
 * document `{space, version, text, sections, references}`, versions items `{post_id, seq,
 * author, posted_at, summary, snippet, state, supersedes, decision}`, links, watching).
 *
 * A document's words are its version author's: the text, the summary, every heading and every
 * reference label and target are fenced as that KEY's (as the caller's own when the caller
 * wrote the version). A decision's reason is its decider's. Relay-checked values (post ids,
 * seq, states, times, peer ids, SPACE names, numbers) are shown bare when they have their
 * grammar. The text of a long document is cut at the token budget with the way to read on.
 */
import { TOKEN_ESTIMATOR_BYTES_PER_TOKEN } from '../../shared/limits.js';
import type { PeerFence } from '../render.js';
import { isObject, items, plain, who } from '../action.js';

type Obj = Record<string, unknown>;

/** The version line of a document: id, seq, author, time, summary. */
function versionLines(fence: PeerFence, v: Obj): string[] {
  const written = fence.by(v.author);
  return [
    `version ${plain(fence, 'post_id', v.post_id)} · seq ${plain(fence, 'seq', v.seq)} · by ${who(fence, v.author, 'author')} · ${plain(fence, 'posted_at', v.posted_at)}`,
    `summary: ${typeof v.summary === 'string' && v.summary !== '' ? written('summary', v.summary) : '(none)'}`,
  ];
}

/** The outline: one line per section, indented by level, headings fenced as the author's. */
export function outlineLines(fence: PeerFence, author: unknown, sections: readonly Obj[]): string[] {
  const written = fence.by(author);
  return sections.map((s) => {
    const level = typeof s.level === 'number' && s.level >= 1 && s.level <= 3 ? s.level : 1;
    return `${'  '.repeat(level - 1)}${plain(fence, 'number', s.number)}. ${written('heading', s.heading)} (${plain(fence, 'bytes', s.bytes)} bytes)`;
  });
}

/** What the text links to: kind, target, label, section (all but kind are the author's words). */
export function referenceLines(fence: PeerFence, author: unknown, refs: readonly Obj[]): string[] {
  const written = fence.by(author);
  return refs.map((r) => {
    const parts = [`- ${plain(fence, 'kind', r.kind)} ${written('target', r.target)}`];
    if (typeof r.label === 'string') parts.push(`label ${written('label', r.label)}`);
    if (r.section !== null && r.section !== undefined) parts.push(`in section ${plain(fence, 'section', r.section)}`);
    return parts.join(' · ');
  });
}

/**
 * A document answer as text. `budget` (tokens) bounds the text shown; `section` is what was
 * asked for, so the lines say whether this is the whole text or one section.
 */
export function documentText(fence: PeerFence, space: string, d: Obj, opts: { section?: string | undefined; asked?: string | undefined; budget: number }): string {
  const s = plain(fence, 'space', space);
  const lines = [`# document of ${s}${opts.section !== undefined ? `, section ${JSON.stringify(opts.section)}` : ''}${opts.asked !== undefined ? ` (version ${plain(fence, 'version', opts.asked)})` : ''}`];
  const v = isObject(d.version) ? d.version : undefined;
  if (v === undefined) {
    lines.push(`No version yet: the document is empty. Write the first one with svc_oracle action=propose space=${s} text=... summary=...`);
    return lines.join('\n');
  }
  lines.push(...versionLines(fence, v));
  const sections = items(d.sections);
  if (sections.length > 0) lines.push(`sections (${sections.length}):`, ...outlineLines(fence, v.author, sections).map((l) => `  ${l}`));
  const refs = items(d.references);
  if (refs.length > 0) lines.push(`references (${refs.length}):`, ...referenceLines(fence, v.author, refs).map((l) => `  ${l}`));
  const text = typeof d.text === 'string' ? d.text : '';
  const maxChars = opts.budget * TOKEN_ESTIMATOR_BYTES_PER_TOKEN;
  const cut = text.length > maxChars;
  lines.push(`text${cut ? ` (the first ${maxChars} of ${text.length} characters: read one section with section=<number or heading>, or raise token_budget)` : ''}:`);
  lines.push(text === '' ? '(empty)' : fence.by(v.author)('text', cut ? text.slice(0, maxChars) : text));
  lines.push(
    `To change it: svc_oracle action=propose space=${s} section=<number or heading> text=<the section's new words> summary=<what changes and why>` +
      ' (or text=<the whole new text> without section). The owner and admins decide proposals by others; yours becomes current at once if you are one of them.',
  );
  return lines.join('\n');
}

/** What a version's state means, and who acts on it now. */
function versionHint(fence: PeerFence, space: string, v: Obj): string | undefined {
  const id = plain(fence, 'post_id', v.post_id);
  switch (v.state) {
    case 'waiting':
      return `Waiting for a decider (the owner, an admin, or the service reviewer): svc_oracle action=approve space=${plain(fence, 'space', space)} proposal=${id}, or action=decline proposal=${id} reason=...`;
    case 'out_of_date':
      return 'Out of date: another version became current while it waited. Read the document again and propose anew.';
    default:
      return undefined;
  }
}

/** One item of the version list. */
export function versionItemText(fence: PeerFence, space: string, v: Obj): string {
  const written = fence.by(v.author);
  const head = [`seq ${plain(fence, 'seq', v.seq)}`, plain(fence, 'state', v.state), `by ${who(fence, v.author, 'author')}`, plain(fence, 'posted_at', v.posted_at)];
  const lines = [`— ${head.join(' · ')}`];
  const ids = [`post_id ${plain(fence, 'post_id', v.post_id)}`];
  if (typeof v.supersedes === 'string') ids.push(`supersedes ${plain(fence, 'supersedes', v.supersedes)}`);
  lines.push(`  ${ids.join(' · ')}`);
  if (typeof v.summary === 'string' && v.summary !== '') lines.push(`  summary: ${written('summary', v.summary)}`);
  if (typeof v.snippet === 'string' && v.snippet !== '') lines.push(`  snippet: ${written('snippet', v.snippet)}`);
  if (isObject(v.decision)) {
    const dec = v.decision;
    const by = dec.by === null || dec.by === undefined ? 'the service reviewer' : who(fence, dec.by, 'by');
    const reason = typeof dec.reason === 'string' && dec.reason !== '' ? `: ${fence.by(dec.by)('reason', dec.reason)}` : '';
    lines.push(`  decision: ${plain(fence, 'kind', dec.kind)} by ${by} at ${plain(fence, 'at', dec.at)} (post_id ${plain(fence, 'post_id', dec.post_id)})${reason}`);
  }
  const hint = versionHint(fence, space, v);
  if (hint !== undefined) lines.push(`  ${hint}`);
  return lines.join('\n');
}

/** One link to a SPACE or post from an oracle space's current text. */
export function linkItemText(fence: PeerFence, l: Obj): string {
  const parts = [`- ${plain(fence, 'space', l.space)} (its current version ${plain(fence, 'version', l.version)})`];
  if (typeof l.section === 'number') parts.push(`section ${plain(fence, 'section', l.section)}`);
  else if (l.section !== null && l.section !== undefined) parts.push(`section ${fence('section', l.section)}`);
  if (typeof l.label === 'string') parts.push(`label ${fence('label', l.label)}`);
  return parts.join(' · ');
}

/** One watched document. */
export function watchItemText(fence: PeerFence, w: Obj): string {
  const current = w.current === null || w.current === undefined ? 'no version yet' : `current ${plain(fence, 'current', w.current)}`;
  return `- ${plain(fence, 'space', w.space)} · ${current} · changed ${plain(fence, 'changed_at', w.changed_at)}`;
}
