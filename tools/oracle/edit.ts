/**
 * Editing an oracle document for a proposal (spec/1-concepts.md "Oracle document and version";
 * protocol/api-notes.md §6: propose reads the document, edits the section, posts the whole text).
 *
 * Sections are found exactly as the relay finds them: shared/oracle-text.ts parses the text
 * (headings `#`, `##`, `###`; a section runs from its heading to the next heading of any level;
 * headings inside code fences are text) and numbers the sections 1, 2, ... in text order, as the
 * document answer numbers them.
 *
 * - `planEdit` names the part of the base text a proposal replaces: one section (by number, then
 *   by heading, then by path, ignoring case, as the relay's `section=` reads it), or the whole text. A heading that names several sections
 *   is refused with their numbers and paths: a write must not guess.
 * - `applyEdit` puts the new words in: a section's new text that opens with a heading line
 *   replaces the heading too (a rename, or one section split into several); otherwise the old
 *   heading line stays and the words replace what follows it. The blank lines that ended the old
 *   section end the new one, so the sections after it keep their spacing.
 * - `replan` finds the same part in a newer text (for a retry after VERSION_CHANGED): the
 *   section with the same path and level, alone; or the whole text. The retry goes ahead only
 *   when that part's words are unchanged, so a proposal never overwrites a change it did not see.
 *
 * The texts are attacker-controlled (any member's version): everything here is pure and linear.
 */
import { SvcError } from '../../shared/errors.js';
import { parseOracleText, sectionText, type OracleSection } from '../../shared/oracle-text.js';

export type EditTarget =
  | { readonly whole: true }
  | { readonly whole: false; readonly section: OracleSection; readonly query: string };

/** What a proposal replaces, found in `base`. */
export interface EditPlan {
  readonly target: EditTarget;
  /** The replaced part's words in the base text (the whole text, or the section with its heading). */
  readonly before: string;
}

/** How many headings a refusal lists before it says "…". */
const HEADINGS_LISTED = 20;

function headingList(sections: readonly OracleSection[]): string {
  const shown = sections.slice(0, HEADINGS_LISTED).map((s) => `${s.number} ${JSON.stringify(s.path)}`);
  return `${shown.join(', ')}${sections.length > HEADINGS_LISTED ? ', …' : ''}`;
}

/** The sections whose heading or path is `query` (ignoring case), or the one it numbers. */
function matches(sections: readonly OracleSection[], query: string): OracleSection[] {
  const q = query.trim();
  if (/^[1-9][0-9]{0,8}$/.test(q)) {
    const s = sections[Number(q) - 1];
    if (s !== undefined) return [s];
  }
  const lower = q.toLowerCase();
  const byHeading = sections.filter((s) => s.heading.toLowerCase() === lower);
  if (byHeading.length > 0) return byHeading;
  return sections.filter((s) => s.path.toLowerCase() === lower);
}

/** The part of `base` a proposal replaces: section `query`, or (undefined) the whole text. */
export function planEdit(base: string, query: string | undefined): EditPlan {
  if (query === undefined) return { target: { whole: true }, before: base };
  const { sections } = parseOracleText(base);
  if (sections.length === 0) {
    throw new SvcError('INVALID_REQUEST', 'section: the document has no sections (no # headings) yet; send the whole text without section');
  }
  const found = matches(sections, query);
  if (found.length === 0) throw new SvcError('INVALID_REQUEST', `section: no section ${JSON.stringify(query)}; the sections are ${headingList(sections)}`);
  if (found.length > 1) {
    throw new SvcError('INVALID_REQUEST', `section: ${JSON.stringify(query)} names ${found.length} sections (${headingList(found)}); name one by its number or path`);
  }
  const section = found[0]!;
  return { target: { whole: false, section, query }, before: sectionText(base, section) };
}

/** Does `words` open with a heading line (1 to 3 `#`, then a blank or the end of the line)? */
function opensWithHeading(words: string): boolean {
  return /^#{1,3}(?:[ \t]|\r?\n|$)/.test(words);
}

/** `text` with its trailing white space cut, and that white space. */
function splitTrailing(text: string): { core: string; tail: string } {
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1]!)) end--;
  return { core: text.slice(0, end), tail: text.slice(end) };
}

/** The whole new text: `base` with the planned part replaced by `words`. */
export function applyEdit(base: string, plan: EditPlan, words: string): string {
  if (plan.target.whole) return words;
  const { section } = plan.target;
  const old = sectionText(base, section);
  const { tail } = splitTrailing(old);
  const newline = old.indexOf('\n');
  const headingLine = newline === -1 ? old : old.slice(0, newline);
  const body = splitTrailing(words).core;
  const replacement = opensWithHeading(body) ? body : body === '' ? headingLine : `${headingLine}\n${body}`;
  // A section that ended the text without a newline gets none; one followed by more text keeps its separation.
  const separation = tail !== '' ? tail : section.end < base.length ? '\n' : '';
  return base.slice(0, section.start) + replacement + separation + base.slice(section.end);
}

/**
 * The same part in a newer text (for a retry): the whole text, or the section with the same
 * path and level, appearing once (its number may have moved); undefined when it is gone.
 */
export function replan(current: string, plan: EditPlan): EditPlan | undefined {
  if (plan.target.whole) return { target: plan.target, before: current };
  const { section, query } = plan.target;
  const same = parseOracleText(current).sections.filter((s) => s.path === section.path && s.level === section.level);
  if (same.length !== 1) return undefined;
  return { target: { whole: false, section: same[0]!, query }, before: sectionText(current, same[0]!) };
}
