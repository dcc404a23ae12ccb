/**
 * SEEK tokenising (spec/1-concepts.md "SEEK"): a path like `src/main.rs` must be findable by
 * its parts. Pure functions: the indexer runs them before it takes the write lock, and the
 * query side runs the same ones, so a document and a query always agree on what a term is.
 *
 * A term is a maximal run of letters and digits after Unicode compatibility decomposition,
 * with combining marks dropped and letters lowercased: `src/main.rs` gives `src main rs`,
 * `Crème_brûlée-2` gives `creme brulee 2`. Every other character separates terms, so `_`
 * never appears in a term; the index uses `_`-prefixed tokens of its own (`_s12`, one per
 * SPACE) that no peer text can produce.
 *
 * Peer text is attacker-controlled: terms are capped in length and number per document, and a
 * query is refused beyond SEEK_QUERY_BYTES or SEEK_QUERY_TERMS words.
 */
import { SvcError } from '../errors.js';
import { utf8Length } from '../encoding.js';
import { SEEK_QUERY_BYTES, SEEK_QUERY_TERMS } from '../limits.js';

/** Longer runs are cut (a run of 10,000 digits is not a useful term). */
export const TERM_MAX_CHARS = 64;
/** At most this many terms of one document are indexed (a 64 KiB body has fewer in practice). */
export const DOCUMENT_TERMS_MAX = 20_000;

const TERM_RE = /[\p{L}\p{N}]+/gu;
const MARKS_RE = /\p{M}+/gu;

/** A text as terms are cut from it: compatibility decomposition, combining marks dropped, lowercase. */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(MARKS_RE, '').toLowerCase();
}

const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * `termsOf` for ASCII text, the common case, in one pass over the character codes: for ASCII,
 * NFKD and dropping marks change nothing and the letters and digits are [a-z0-9] once
 * lowercased, so the answer is the same (a property test holds the two equal). About half the
 * time of the regular-expression path on an 8 KiB body.
 */
function asciiTerms(text: string, max: number): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0x20;
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(lower.slice(start, Math.min(i, start + TERM_MAX_CHARS)));
      start = -1;
      if (out.length >= max) break;
    }
  }
  return out;
}

/** The terms of a text, in order (repeats kept: positions matter for phrases). */
export function termsOf(text: string, max = DOCUMENT_TERMS_MAX): string[] {
  if (!NOT_ASCII.test(text)) return asciiTerms(text, max);
  return unicodeTerms(text, max);
}

/** `termsOf` for any text. */
export function unicodeTerms(text: string, max = DOCUMENT_TERMS_MAX): string[] {
  const folded = foldText(text);
  const out: string[] = [];
  for (const m of folded.matchAll(TERM_RE)) {
    out.push(m[0].length > TERM_MAX_CHARS ? m[0].slice(0, TERM_MAX_CHARS) : m[0]);
    if (out.length >= max) break;
  }
  return out;
}

/** The token that scopes a document to its SPACE inside the full-text index. */
export function spaceToken(spaceRowId: number): string {
  return `_s${spaceRowId}`;
}

/** The text stored for one post: its SPACE token, then title and body terms. */
export function documentTerms(spaceRowId: number, title: string | null, body: string | null): string {
  const terms = termsOf(`${title ?? ''}\n${body ?? ''}`);
  return [spaceToken(spaceRowId), ...terms].join(' ');
}

/** A post's stored text, or null when it has neither title nor body (nothing to find by words). */
export function postTerms(spaceRowId: number, title: string | null, body: string | null): string | null {
  const hasText = (title !== null && title !== '') || (body !== null && body !== '');
  return hasText ? documentTerms(spaceRowId, title, body) : null;
}

/** A parsed text query: its phrases (each one or more terms) and the FTS5 expression over them. */
export interface TextQuery {
  /** One entry per word of the query that has terms: the word's terms, in order. */
  phrases: string[][];
  /** The phrases, quoted, joined with AND. */
  expression: string;
}

/** One phrase as an FTS5 string: its terms hold only letters and digits, so quoting keeps FTS5 syntax out. */
export function phraseExpression(terms: readonly string[]): string {
  return `"${terms.join(' ')}"`;
}

/**
 * Parse a query `q` (attacker-controlled): each whitespace-separated word becomes its terms,
 * one term as itself and several as a phrase (`src/main.rs` → `"src main rs"`); words are
 * joined with AND. Answers undefined when `q` has no term at all.
 */
export function textQuery(q: string, field = 'q'): TextQuery | undefined {
  if (utf8Length(q) > SEEK_QUERY_BYTES) {
    throw new SvcError('INVALID_REQUEST', `${field}: at most ${SEEK_QUERY_BYTES} bytes`);
  }
  const words = q.split(/\s+/u).filter((w) => w !== '');
  if (words.length > SEEK_QUERY_TERMS) {
    throw new SvcError('INVALID_REQUEST', `${field}: at most ${SEEK_QUERY_TERMS} words, got ${words.length}`);
  }
  const phrases: string[][] = [];
  for (const word of words) {
    const terms = termsOf(word);
    if (terms.length > 0) phrases.push(terms);
  }
  return phrases.length === 0 ? undefined : { phrases, expression: phrases.map(phraseExpression).join(' AND ') };
}

/** A query `q` as an FTS5 expression (`textQuery`'s), or undefined when `q` has no term. */
export function queryExpression(q: string, field = 'q'): string | undefined {
  return textQuery(q, field)?.expression;
}

/** Narrow an expression to one SPACE. */
export function scopedExpression(expression: string, spaceRowId: number): string {
  return `"${spaceToken(spaceRowId)}" AND (${expression})`;
}
