/**
 * Keep SQLite's planner from reading a statement's bound values, so a prepared statement stays
 * prepared.
 *
 * SQLite re-prepares a statement whose plan was made from a bound value: binding that parameter
 * again marks the statement expired, and its next step compiles it anew. With more than one table
 * in a query (any join), the planner takes a parameter compared by `=`, `==` or `IS` for a
 * constant it may propagate to other terms (WHERE-clause constant propagation), and a `LIMIT` or
 * `OFFSET` parameter for an integer it may use, and so marks the statement. Every call of such a
 * statement then costs a full compile. Measured with the SQLite better-sqlite3 builds (3.54.1,
 * with SQLITE_ENABLE_STAT4, though the relay's database has no statistics tables): one post by
 * id with its SPACE, author and joined extras ran in 50 µs against 7 µs once the parameter was
 * kept out of the plan; a miniature two-table join 22 µs against 1.2. (Node's own `node:sqlite`,
 * which the bridge uses, is built without STAT4 and does not do this.)
 *
 * A unary `+` keeps the value out of the plan and changes nothing else: `+?` has no affinity, as
 * `?` has none, so a comparison applies the column's affinity as before, and `column = +?` still
 * searches the column's index (`+` on the column's side would not). So before such a parameter
 * this adds a `+`, for positional (`?`, `?NNN`) and named (`@name`, `:name`, `$name`) parameters
 * alike, and leaves every other parameter as written: `IN (?, …)`, `<`, `LIKE ?` (whose prefix
 * optimisation reads the value on purpose), function arguments.
 *
 * Strings ('…'), quoted identifiers ("…", […], `…`) and comments are skipped whole, so nothing
 * inside them is read as a parameter or an operator.
 */

const WORD = /[A-Za-z0-9_$]/;
const OPERATOR = /[<>=!|&+\-*/%~]/;
/** What, written right before a parameter, lets the planner read its value. */
const BEFORE = new Set(['=', '==', 'IS', 'LIMIT', 'OFFSET']);
/** What, written right after a parameter (`? = column`), does the same. */
const AFTER = new Set(['=', '==', 'IS']);

interface Token {
  /** Uppercased word, operator run, or one other character; '' for the end of the text. */
  text: string;
  end: number;
}

/** The SQL with a `+` before each parameter SQLite's planner would otherwise read (above). */
export function keepParametersOutOfPlan(sql: string): string {
  let out = '';
  let from = 0;
  let previous = '';
  let i = 0;
  while (i < sql.length) {
    const start = skipSpace(sql, i);
    if (start >= sql.length) break;
    const param = parameterEnd(sql, start);
    if (param > start) {
      if (BEFORE.has(previous) || AFTER.has(next(sql, param).text)) {
        out += `${sql.slice(from, start)}+`;
        from = start;
      }
      previous = '?';
      i = param;
      continue;
    }
    const token = next(sql, start);
    previous = token.text;
    i = token.end;
  }
  return from === 0 ? sql : out + sql.slice(from);
}

/** The end of a parameter starting at `i`, or `i` when none starts there. */
function parameterEnd(sql: string, i: number): number {
  const c = sql[i];
  if (c === '?') {
    let end = i + 1;
    while (end < sql.length && sql[end]! >= '0' && sql[end]! <= '9') end++;
    return end;
  }
  if ((c === '@' || c === ':' || c === '$') && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
    let end = i + 1;
    while (end < sql.length && WORD.test(sql[end]!)) end++;
    return end;
  }
  return i;
}

/** The next token from `i`, past spaces and comments. */
function next(sql: string, i: number): Token {
  const start = skipSpace(sql, i);
  const c = sql[start];
  if (c === undefined) return { text: '', end: start };
  if (c === "'" || c === '"' || c === '`') return { text: c, end: skipQuoted(sql, start, c) };
  if (c === '[') {
    const close = sql.indexOf(']', start + 1);
    return { text: c, end: close < 0 ? sql.length : close + 1 };
  }
  let end = start + 1;
  if (WORD.test(c)) {
    while (end < sql.length && WORD.test(sql[end]!)) end++;
    return { text: sql.slice(start, end).toUpperCase(), end };
  }
  if (OPERATOR.test(c)) {
    // A run of operator characters is one operator, so `<=`, `>=` and `!=` are never `=`.
    while (end < sql.length && OPERATOR.test(sql[end]!) && !isCommentStart(sql, end)) end++;
    return { text: sql.slice(start, end), end };
  }
  return { text: c, end };
}

function skipSpace(sql: string, i: number): number {
  for (;;) {
    while (i < sql.length && /\s/.test(sql[i]!)) i++;
    if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i + 2);
      i = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else {
      return i;
    }
  }
}

function isCommentStart(sql: string, i: number): boolean {
  return sql.startsWith('--', i) || sql.startsWith('/*', i);
}

/** Past a quoted string or identifier opened at `i` (a doubled quote stays inside). */
function skipQuoted(sql: string, i: number, quote: string): number {
  let j = i + 1;
  for (;;) {
    const close = sql.indexOf(quote, j);
    if (close < 0) return sql.length;
    if (sql[close + 1] !== quote) return close + 1;
    j = close + 2;
  }
}
