/**
 * Keep SQLite's planner from reading a statement's bound values, so a prepared statement stays
 * prepared.
 *
 * SQLite re-prepares a statement whose plan was made from a bound value: binding that parameter
 * again marks the statement expired, and its next step compiles it anew. Measured, in any query
 * of more than one table (any join): a parameter compared by `=`, `==` or `IS` (on either side),
 * or a `LIMIT` or `OFFSET` parameter, is read so, and every call of the statement costs a full
 * compile; a parameter in `<`, `<>`, `IN (…)` or a function's arguments is not. (Which of the
 * planner's steps reads it, constant propagation or the integer a LIMIT is, we did not trace.)
 * Measured with the SQLite better-sqlite3 builds (3.54.1, with SQLITE_ENABLE_STAT4, though the
 * relay's database has no statistics tables): one post by
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

/**
 * What the scan stops at: '…' strings, "…", […] and `…` identifiers (skipped whole), -- and
 * /* *\/ comments (1), and parameters (2), a `?` with optional digits or `@`, `:` or `$` and a
 * name, not inside a word. The text between is only words, operators and spaces, which the
 * scan passes over natively: every statement the store prepares goes through here when the
 * relay starts (about 57,000 characters).
 */
const SCAN = /'(?:[^']|'')*'?|"(?:[^"]|"")*"?|`[^`]*`?|\[[^\]]*\]?|(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|(?<![\w$:])(\?\d*|[@:$][A-Za-z_][\w$]*)/g;
/** Text ending with what lets the planner read the parameter after it: `=`, `==` (never `<=`, `>=`, `!=`), IS, LIMIT, OFFSET. */
const BEFORE = /(?:(?:^|[^<>!=])==?|(?:^|[^\w$])(?:IS|LIMIT|OFFSET))$/i;
/** Text starting with what does the same for the parameter before it (`? = column`). */
const AFTER = /^(?:==?(?![=<>])|IS(?![\w$]))/i;

/** The SQL with a `+` before each parameter SQLite's planner would otherwise read (above). */
export function keepParametersOutOfPlan(sql: string): string {
  const marks: number[] = [];
  /** The text since the last string, identifier or parameter, comments left out. */
  let before = '';
  let end = 0;
  /** Where the last parameter starts, while the text after it is not yet known. */
  let pending = -1;
  SCAN.lastIndex = 0;
  for (let m = SCAN.exec(sql); m !== null; m = SCAN.exec(sql)) {
    const gap = sql.slice(end, m.index);
    end = m.index + m[0].length;
    if (pending >= 0 && AFTER.test(gap.trimStart())) marks.push(pending);
    pending = -1;
    if (m[1] !== undefined) {
      before += `${gap} `;
      continue;
    }
    before += gap;
    if (m[2] !== undefined) {
      if (BEFORE.test(before.trimEnd())) marks.push(m.index);
      else pending = m.index;
    }
    before = '';
  }
  if (pending >= 0 && AFTER.test(sql.slice(end).trimStart())) marks.push(pending);
  if (marks.length === 0) return sql;
  let out = '';
  let from = 0;
  for (const at of marks) {
    out += `${sql.slice(from, at)}+`;
    from = at;
  }
  return out + sql.slice(from);
}
