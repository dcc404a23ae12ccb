/**
 * The relay's SQL is written once for both databases with SQLite's parameters: positional `?`
 * or named `@name` (one object). PostgreSQL numbers its parameters (`$1`, `$2`, …), so each
 * statement is translated once, when it is prepared, by a small tokenizer that finds the
 * parameters and leaves alone everything that only looks like one:
 *
 * - '…' strings ('' inside), E'…' strings (backslash escapes too) and $tag$…$tag$ strings;
 * - "…" quoted identifiers ("" inside);
 * - -- line comments and /* … *\/ block comments (which nest in PostgreSQL);
 * - `@` that is part of an operator: `@@` (text search match), `@>`, and any `@` right after
 *   another `@`, `<` or `>` (so `a @@ b`, `x <@ y` stay operators); a parameter is `@` then a
 *   letter or underscore, where an operand can start.
 * - `::` casts need nothing: the tokenizer reads neither `:` nor `:name` parameters.
 *
 * A named parameter used twice maps to one `$n`. A statement mixing `?` and `@name` is refused
 * (SQLite would number them in one sequence; nothing here writes that, so it is a mistake).
 */

export interface TranslatedSql {
  /** The SQL with `$n` parameters. */
  readonly text: string;
  /** Named parameters in `$n` order, or undefined for positional ones. */
  readonly names: readonly string[] | undefined;
  /** How many positional `?` parameters the statement takes (0 for named). */
  readonly positional: number;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;

export function translateSql(sql: string): TranslatedSql {
  let out = '';
  let from = 0;
  let positional = 0;
  const names: string[] = [];
  const index = new Map<string, number>();
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "'") {
      const escapes = (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !IDENT_PART.test(sql[i - 2] ?? ' ');
      i = skipQuoted(sql, i, "'", escapes);
    } else if (c === '"') {
      i = skipQuoted(sql, i, '"', false);
    } else if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i + 2);
      i = end < 0 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      i = skipBlockComment(sql, i);
    } else if (c === '$' && (next === '$' || (next !== undefined && IDENT_START.test(next))) && !IDENT_PART.test(sql[i - 1] ?? ' ')) {
      i = skipDollarQuoted(sql, i);
    } else if (c === '?') {
      positional++;
      out += sql.slice(from, i) + '$' + positional;
      from = ++i;
    } else if (c === '@' && next !== undefined && IDENT_START.test(next) && !'@<>'.includes(sql[i - 1] ?? ' ')) {
      let end = i + 1;
      while (end < n && IDENT_PART.test(sql[end]!)) end++;
      const name = sql.slice(i + 1, end);
      let k = index.get(name);
      if (k === undefined) {
        names.push(name);
        k = names.length;
        index.set(name, k);
      }
      out += sql.slice(from, i) + '$' + k;
      from = i = end;
    } else if (IDENT_PART.test(c)) {
      // A whole word at once, so an `E` or `$` inside a name is never read as a quote's start.
      while (i < n && (IDENT_PART.test(sql[i]!) || sql[i] === '$')) i++;
    } else {
      i++;
    }
  }
  if (positional > 0 && names.length > 0) {
    throw new Error(`SQL mixes positional (?) and named (@name) parameters: ${sql}`);
  }
  return { text: out + sql.slice(from), names: names.length > 0 ? names : undefined, positional };
}

/** The values of one call in `$n` order. */
export function bindValues(sql: TranslatedSql, params: readonly unknown[]): unknown[] {
  if (sql.names === undefined) return params as unknown[];
  const first = params[0];
  if (params.length !== 1 || first === null || typeof first !== 'object' || Array.isArray(first) || ArrayBuffer.isView(first)) {
    throw new TypeError(`named parameters (@${sql.names[0]}) take one object: ${sql.text}`);
  }
  const record = first as Record<string, unknown>;
  return sql.names.map((name) => {
    if (!(name in record)) throw new RangeError(`missing named parameter @${name}: ${sql.text}`);
    return record[name];
  });
}

/** The index just past a quoted string or identifier opened at `start`. */
function skipQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return sql.length;
}

function skipBlockComment(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      i += 2;
      if (--depth === 0) return i;
    } else {
      i++;
    }
  }
  return sql.length;
}

/** `$tag$ … $tag$` (the tag may be empty); a `$` that opens no such string is skipped alone. */
function skipDollarQuoted(sql: string, start: number): number {
  let end = start + 1;
  while (end < sql.length && IDENT_PART.test(sql[end]!)) end++;
  if (sql[end] !== '$') return start + 1;
  const tag = sql.slice(start, end + 1);
  const close = sql.indexOf(tag, end + 1);
  return close < 0 ? sql.length : close + tag.length;
}
