/**
 * SEEK's terms and queries in PostgreSQL's full-text types, built by the relay itself so that
 * a term is exactly what shared/seek/terms.ts made it on both databases: no text search
 * configuration runs (it would stem, drop stop words and split `_s12` into `s12`, a term peer
 * text can produce).
 *
 * A document is a tsvector literal: each distinct term with the positions (1-based, in order)
 * it stands at, so phrases (`<->`) match where FTS5's do. PostgreSQL keeps at most 255
 * positions of one term and none past 16,383 (it clamps them); the same limits are applied
 * here, which only a body of over 16,383 terms, or one term repeated past 255 times, reaches:
 * a phrase is then not found past them (every term alone still is).
 *
 * A query is the FTS5 expression shared/seek/terms.ts builds (quoted phrases joined by AND,
 * parenthesised when narrowed to one SPACE), translated to a tsquery literal: a phrase is its
 * terms joined by `<->`, AND is `&`. The expression is the relay's own, never peer text, so
 * anything else in it is a mistake in the relay and throws.
 */

/** PostgreSQL's last tsvector position (later ones are clamped to it). */
export const LAST_POSITION = 16_383;
/** PostgreSQL keeps at most this many positions of one lexeme. */
export const POSITIONS_PER_TERM = 255;

/** A term as a quoted lexeme of a tsvector or tsquery literal. */
function lexeme(term: string): string {
  return `'${term.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The tsvector literal of a document's terms (shared/seek/terms.ts `postTerms`: terms separated by single spaces). */
export function tsvectorLiteral(terms: string): string {
  const positions = new Map<string, number[]>();
  let position = 0;
  for (const term of terms.split(' ')) {
    if (term === '') continue;
    position = Math.min(position + 1, LAST_POSITION);
    const at = positions.get(term);
    if (at === undefined) positions.set(term, [position]);
    else if (at.length < POSITIONS_PER_TERM && at[at.length - 1] !== position) at.push(position);
  }
  const parts: string[] = [];
  for (const [term, at] of positions) parts.push(`${lexeme(term)}:${at.join(',')}`);
  return parts.join(' ');
}

/** A term of the relay's own expressions: letters and digits, or a `_`-prefixed index token. */
const TERM = /^_?[\p{L}\p{N}]+$/u;

/** The tsquery literal of an FTS5 expression made by shared/seek/terms.ts (`"a b" AND ("c")`). */
export function tsqueryLiteral(expression: string): string {
  let out = '';
  let i = 0;
  const n = expression.length;
  while (i < n) {
    const c = expression[i]!;
    if (c === ' ') {
      i++;
    } else if (c === '(' || c === ')') {
      out += c;
      i++;
    } else if (c === '"') {
      const end = expression.indexOf('"', i + 1);
      if (end < 0) throw new Error(`SEEK expression: unclosed phrase in ${expression}`);
      const terms = expression.slice(i + 1, end).split(' ').filter((t) => t !== '');
      if (terms.length === 0 || !terms.every((t) => TERM.test(t))) throw new Error(`SEEK expression: not a phrase of terms in ${expression}`);
      out += terms.length === 1 ? lexeme(terms[0]!) : `(${terms.map(lexeme).join(' <-> ')})`;
      i = end + 1;
    } else if (expression.startsWith('AND', i) && (expression[i + 3] === ' ' || expression[i + 3] === '(' || expression[i + 3] === '"')) {
      out += ' & ';
      i += 3;
    } else {
      throw new Error(`SEEK expression: unexpected ${JSON.stringify(c)} in ${expression}`);
    }
  }
  if (out === '') throw new Error('SEEK expression: empty');
  return out;
}
