/**
 * The text of an oracle document (spec/1-concepts.md "Oracle document and version"): headings
 * `#`, `##`, `###` start sections; list items start `- `; fenced code blocks; inline code; links
 * `[[space-name]]`, `[[space-name/12]]`, `[[https://...]]`, `[[scheme:value]]`, each with an
 * optional label after a vertical bar. Anything else is text.
 *
 * Where the spec leaves the grammar open, this module decides (the relay's reference and the
 * service reviewer follow it):
 * - Lines end at `\n` (a `\r` before it is ignored). A heading is 1 to 3 `#` at the start of a
 *   line followed by a space, a tab or the end of the line; its text is the rest, trimmed. Four
 *   or more `#` are text (a problem: the grammar has three levels).
 * - Sections are flat and cover the text in order: a section runs from its heading line to the
 *   next heading of any level. Text before the first heading is the preamble, in no section.
 *   A section's `path` joins the headings above it by level with `/` (`Intro/Setup`).
 * - A fence opens at a line whose first non-space character (after at most 3 spaces) starts a
 *   run of 3 or more backticks or tildes (a backtick fence's info string holds no backtick) and
 *   closes at a line of the same character, at least as long, and nothing but spaces after.
 *   An unclosed fence runs to the end (a problem). Nothing inside a fence is a heading or link.
 * - Inline code lies within one line: a run of N backticks closes at the next run of exactly N
 *   on the same line; an opener with no closer is text. Nothing inside inline code is a link.
 * - A link lies within one line and one stretch between inline code: `[[` up to the next `]]`.
 *   A `[[` met again before `]]` leaves the first as text. Inside, the target is what comes
 *   before the first `|`, the label what follows (both trimmed; an empty label is none). The
 *   target is tried as a URL (`https://` and no white space), then `name/seq` (a SPACE name and a
 *   seq from 1, no leading zero), then a SPACE name, then `scheme:value` (the fingerprint scheme
 *   grammar, value 1 to 1,024 bytes). `http://` is not a link form (a problem: use https).
 *
 * Text is attacker-controlled (up to 64 KiB in a version post): one pass over the lines, each
 * character looked at a bounded number of times, no regular expression over unbounded text,
 * and parsing never throws on any string.
 */

export type ReferenceKind = 'space' | 'post' | 'url' | 'fingerprint';

export interface OracleSection {
  /** 1-based, in text order. */
  readonly number: number;
  readonly level: 1 | 2 | 3;
  /** The heading's text, trimmed (may be empty: a problem). */
  readonly heading: string;
  /** The headings above it by level, then its own, joined by `/`. */
  readonly path: string;
  /** 1-based line of the heading. */
  readonly line: number;
  /** Offsets in the string (UTF-16 code units): [start, end). */
  readonly start: number;
  readonly end: number;
  /** The same range in UTF-8 bytes. */
  readonly byteStart: number;
  readonly byteEnd: number;
}

export interface OracleReference {
  readonly kind: ReferenceKind;
  /** space: the name; post: `name/seq`; url: the address; fingerprint: `scheme:value`. */
  readonly target: string;
  readonly label: string | null;
  /** The section it stands in, or null in the preamble. */
  readonly section: number | null;
  /** 1-based line. */
  readonly line: number;
  /** space and post: the SPACE name linked. */
  readonly space?: string;
  /** post: its seq. */
  readonly seq?: number;
}

export type OracleProblemRule =
  | 'deep_heading'
  | 'empty_heading'
  | 'unclosed_fence'
  | 'unclosed_link'
  | 'malformed_link'
  | 'insecure_link';

/** Something the text holds that the grammar reads as plain text, though it looks meant. */
export interface OracleProblem {
  readonly rule: OracleProblemRule;
  /** 1-based line. */
  readonly line: number;
  readonly detail: string;
}

export interface OracleText {
  readonly sections: readonly OracleSection[];
  readonly references: readonly OracleReference[];
  readonly problems: readonly OracleProblem[];
  /** Where the preamble ends: the first section's start, or the text's length. */
  readonly preambleEnd: number;
  readonly preambleBytes: number;
  /** How many list items (`- ` lines outside fences). */
  readonly listItems: number;
}

/** A URL target's length bound (characters); longer is a malformed link. */
export const LINK_TARGET_MAX_CHARS = 2048;
const SCHEME_MAX_CHARS = 64;
const FINGERPRINT_VALUE_MAX_BYTES = 1024;
const SPACE_NAME_MAX_CHARS = 63;
const PROBLEM_SNIPPET_CHARS = 64;

const HASH = 0x23;
const SPACE = 0x20;
const TAB = 0x09;
const BACKTICK = 0x60;
const TILDE = 0x7e;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** UTF-8 length of text[start, end): a pair of surrogates is 4 bytes, a lone one 3 (as U+FFFD). */
export function utf8Length(text: string, start = 0, end = text.length): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/**
 * The first index of `code` in text[from, end), or -1. A loop bounded by the line, where
 * `indexOf` would search on to the end of the text each time (quadratic over many lines).
 */
function charWithin(text: string, code: number, from: number, end: number): number {
  for (let i = from; i < end; i++) if (text.charCodeAt(i) === code) return i;
  return -1;
}

/** The first index of two `code` in a row within text[from, end), or -1. */
function pairWithin(text: string, code: number, from: number, end: number): number {
  for (let i = from; i < end - 1; i++) if (text.charCodeAt(i) === code && text.charCodeAt(i + 1) === code) return i;
  return -1;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function isNameChar(c: number, first: boolean): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (!first && c === 0x2d);
}

/** spec "Space": `^[a-z0-9][a-z0-9-]{2,62}$`, checked by hand. */
export function isSpaceNameText(s: string): boolean {
  if (s.length < 3 || s.length > SPACE_NAME_MAX_CHARS) return false;
  for (let i = 0; i < s.length; i++) if (!isNameChar(s.charCodeAt(i), i === 0)) return false;
  return true;
}

/** The fingerprint scheme grammar (shared/validate.ts): `^[a-z][a-z0-9_.-]{0,63}$`. */
function isScheme(s: string): boolean {
  if (s.length < 1 || s.length > SCHEME_MAX_CHARS) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const letter = c >= 0x61 && c <= 0x7a;
    if (i === 0 ? !letter : !(letter || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2e || c === 0x2d)) return false;
  }
  return true;
}

/** A seq written as in a link: decimal, from 1, no leading zero, at most 2^53 - 1. */
function seqOf(s: string): number | undefined {
  if (s.length < 1 || s.length > 16 || s.charCodeAt(0) === 0x30) return undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

function hasWhiteSpace(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= SPACE || c === 0x7f || c === 0x85 || c === 0xa0 || c === 0x2028 || c === 0x2029) return true;
  }
  return false;
}

function snippet(s: string): string {
  return s.length <= PROBLEM_SNIPPET_CHARS ? s : `${s.slice(0, PROBLEM_SNIPPET_CHARS)}…`;
}

type Target =
  | { kind: ReferenceKind; target: string; space?: string; seq?: number }
  | { problem: OracleProblemRule; detail: string };

/** What a link's target is, by the order in the module comment. */
export function classifyTarget(raw: string): Target {
  const target = raw.trim();
  if (target === '') return { problem: 'malformed_link', detail: 'a link names nothing' };
  if (target.length > LINK_TARGET_MAX_CHARS) {
    return { problem: 'malformed_link', detail: `a link target longer than ${LINK_TARGET_MAX_CHARS} characters` };
  }
  if (target.startsWith('https://')) {
    if (target.length === 8 || hasWhiteSpace(target)) {
      return { problem: 'malformed_link', detail: `not a web address: ${snippet(target)}` };
    }
    return { kind: 'url', target };
  }
  if (target.startsWith('http://')) {
    return { problem: 'insecure_link', detail: `web links use https://: ${snippet(target)}` };
  }
  const slash = target.indexOf('/');
  if (slash > 0) {
    const name = target.slice(0, slash);
    const seq = seqOf(target.slice(slash + 1));
    if (isSpaceNameText(name) && seq !== undefined) return { kind: 'post', target: `${name}/${seq}`, space: name, seq };
  }
  if (isSpaceNameText(target)) return { kind: 'space', target, space: target };
  const colon = target.indexOf(':');
  if (colon > 0) {
    const value = target.slice(colon + 1);
    const bytes = utf8Length(value);
    if (isScheme(target.slice(0, colon)) && bytes >= 1 && bytes <= FINGERPRINT_VALUE_MAX_BYTES) {
      return { kind: 'fingerprint', target };
    }
  }
  return {
    problem: 'malformed_link',
    detail: `not a SPACE name, name/seq, https:// address or scheme:value: ${snippet(target)}`,
  };
}

/** A fence line's opener: the character, the run's length; undefined when it opens none. */
function fenceOpener(text: string, start: number, end: number): { char: number; length: number } | undefined {
  let i = start;
  while (i < end && i - start < 3 && text.charCodeAt(i) === SPACE) i++;
  const c = text.charCodeAt(i);
  if (c !== BACKTICK && c !== TILDE) return undefined;
  let j = i;
  while (j < end && text.charCodeAt(j) === c) j++;
  if (j - i < 3) return undefined;
  if (c === BACKTICK && charWithin(text, BACKTICK, j, end) !== -1) return undefined;
  return { char: c, length: j - i };
}

function closesFence(text: string, start: number, end: number, open: { char: number; length: number }): boolean {
  let i = start;
  while (i < end && i - start < 3 && text.charCodeAt(i) === SPACE) i++;
  let j = i;
  while (j < end && text.charCodeAt(j) === open.char) j++;
  if (j - i < open.length) return false;
  while (j < end && isBlank(text.charCodeAt(j))) j++;
  return j === end;
}

/**
 * The inline code spans of one line as [start, end) pairs (backticks included), in order.
 * Linear: each run of backticks finds its closer through the next run of the same length,
 * computed in one pass from the right.
 */
function codeSpans(text: string, start: number, end: number): number[] {
  const runs: number[] = []; // start, length, start, length, ...
  for (let i = start; i < end; ) {
    if (text.charCodeAt(i) !== BACKTICK) {
      const next = charWithin(text, BACKTICK, i, end);
      if (next === -1) break;
      i = next;
      continue;
    }
    let j = i;
    while (j < end && text.charCodeAt(j) === BACKTICK) j++;
    runs.push(i, j - i);
    i = j;
  }
  const count = runs.length / 2;
  if (count < 2) return [];
  const nextSame = new Int32Array(count).fill(-1);
  const lastByLength = new Map<number, number>();
  for (let r = count - 1; r >= 0; r--) {
    const len = runs[2 * r + 1]!;
    nextSame[r] = lastByLength.get(len) ?? -1;
    lastByLength.set(len, r);
  }
  const spans: number[] = [];
  for (let r = 0; r < count; ) {
    const close = nextSame[r]!;
    if (close === -1) {
      r++;
      continue;
    }
    spans.push(runs[2 * r]!, runs[2 * close]! + runs[2 * close + 1]!);
    r = close + 1;
  }
  return spans;
}

interface Collector {
  references: OracleReference[];
  problems: OracleProblem[];
  section: number | null;
  line: number;
}

/** The links in text[start, end), a stretch with no inline code. */
function scanLinks(text: string, start: number, end: number, out: Collector): void {
  let i = start;
  while (i < end - 1) {
    const open = pairWithin(text, OPEN_BRACKET, i, end);
    if (open === -1) return;
    let j = open + 2;
    let opener = open;
    let closed = -1;
    while (j < end - 1) {
      const c = text.charCodeAt(j);
      if (c === CLOSE_BRACKET && text.charCodeAt(j + 1) === CLOSE_BRACKET) {
        closed = j;
        break;
      }
      if (c === OPEN_BRACKET && text.charCodeAt(j + 1) === OPEN_BRACKET) {
        out.problems.push({ rule: 'unclosed_link', line: out.line, detail: `[[ with no ]] before the next [[: ${snippet(text.slice(opener, j))}` });
        opener = j;
        j += 2;
        continue;
      }
      j++;
    }
    if (closed === -1) {
      out.problems.push({ rule: 'unclosed_link', line: out.line, detail: `[[ with no ]] on its line: ${snippet(text.slice(opener, end))}` });
      return;
    }
    addLink(text.slice(opener + 2, closed), out);
    i = closed + 2;
  }
}

function addLink(inner: string, out: Collector): void {
  const bar = inner.indexOf('|');
  const rawTarget = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? null : inner.slice(bar + 1).trim() || null;
  const t = classifyTarget(rawTarget);
  if ('problem' in t) {
    out.problems.push({ rule: t.problem, line: out.line, detail: t.detail });
    return;
  }
  const ref: OracleReference = { kind: t.kind, target: t.target, label, section: out.section, line: out.line };
  if (t.space !== undefined) (ref as { space?: string }).space = t.space;
  if (t.seq !== undefined) (ref as { seq?: number }).seq = t.seq;
  out.references.push(ref);
}

/** Links of one line outside fences: between its inline code spans. */
function scanLine(text: string, start: number, end: number, out: Collector): void {
  if (pairWithin(text, OPEN_BRACKET, start, end) === -1) return;
  const spans = codeSpans(text, start, end);
  let from = start;
  for (let k = 0; k < spans.length; k += 2) {
    scanLinks(text, from, spans[k]!, out);
    from = spans[k + 1]!;
  }
  scanLinks(text, from, end, out);
}

/** A heading's level and text start, or a count of `#` past 3 (deep), or undefined. */
function headingOf(text: string, start: number, end: number): { level: number; textStart: number } | undefined {
  let i = start;
  while (i < end && text.charCodeAt(i) === HASH) i++;
  const level = i - start;
  if (level === 0) return undefined;
  if (i < end && !isBlank(text.charCodeAt(i))) return undefined;
  return { level, textStart: i };
}

/** Parse an oracle text. Never throws; linear in the text's length. */
export function parseOracleText(text: string): OracleText {
  const sections: OracleSection[] = [];
  const out: Collector = { references: [], problems: [], section: null, line: 0 };
  const path: string[] = [];
  let listItems = 0;
  let fence: { char: number; length: number; line: number } | undefined;
  let bytes = 0;
  let openSection: { number: number; level: 1 | 2 | 3; heading: string; path: string; line: number; start: number; byteStart: number } | undefined;
  const closeSection = (end: number, byteEnd: number): void => {
    if (openSection) sections.push({ ...openSection, end, byteEnd });
  };

  let lineStart = 0;
  while (lineStart <= text.length) {
    out.line += 1;
    const nl = text.indexOf('\n', lineStart);
    const next = nl === -1 ? text.length : nl;
    const end = next > lineStart && text.charCodeAt(next - 1) === 0x0d ? next - 1 : next;
    const lineBytes = utf8Length(text, lineStart, nl === -1 ? text.length : nl + 1);

    if (fence) {
      if (closesFence(text, lineStart, end, fence)) fence = undefined;
    } else {
      const opener = fenceOpener(text, lineStart, end);
      if (opener) {
        fence = { ...opener, line: out.line };
      } else {
        const h = headingOf(text, lineStart, end);
        if (h && h.level <= 3) {
          closeSection(lineStart, bytes);
          const level = h.level as 1 | 2 | 3;
          const heading = text.slice(h.textStart, end).trim();
          path.length = level;
          path[level - 1] = heading;
          const number = sections.length + 1;
          openSection = {
            number,
            level,
            heading,
            path: path.filter((p) => p !== undefined).join('/'),
            line: out.line,
            start: lineStart,
            byteStart: bytes,
          };
          out.section = number;
          if (heading === '') out.problems.push({ rule: 'empty_heading', line: out.line, detail: `a level ${level} heading with no text` });
        } else if (h) {
          out.problems.push({ rule: 'deep_heading', line: out.line, detail: `${h.level} # signs: headings have at most 3 levels` });
        } else {
          let i = lineStart;
          while (i < end && text.charCodeAt(i) === SPACE) i++;
          if (text.charCodeAt(i) === 0x2d && (i + 1 === end || isBlank(text.charCodeAt(i + 1)))) listItems += 1;
        }
        scanLine(text, lineStart, end, out);
      }
    }

    bytes += lineBytes;
    if (nl === -1) break;
    lineStart = nl + 1;
  }
  if (fence) out.problems.push({ rule: 'unclosed_fence', line: fence.line, detail: 'a code fence that never closes runs to the end' });
  closeSection(text.length, bytes);
  const preambleEnd = sections[0]?.start ?? text.length;
  return {
    sections,
    references: out.references,
    problems: out.problems,
    preambleEnd,
    preambleBytes: sections[0]?.byteStart ?? bytes,
    listItems,
  };
}

/** One section's text, its heading line included. */
export function sectionText(text: string, section: Pick<OracleSection, 'start' | 'end'>): string {
  return text.slice(section.start, section.end);
}

/**
 * The section a reader names: a number from 1 (all digits) when one has it, else the first whose
 * heading or path matches, ignoring case. Undefined when none does.
 */
export function findSection(sections: readonly OracleSection[], query: string): OracleSection | undefined {
  const q = query.trim();
  if (q !== '' && seqOf(q) !== undefined) {
    const byNumber = sections[Number(q) - 1];
    if (byNumber) return byNumber;
  }
  const lower = q.toLowerCase();
  return sections.find((s) => s.heading.toLowerCase() === lower) ?? sections.find((s) => s.path.toLowerCase() === lower);
}
