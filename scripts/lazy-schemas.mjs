/**
 * The MCP SDK's zod schemas, built when first used instead of when the bridge starts
 * (scripts/bundle-bridge.mjs applies this to the bundle only; the sources and the relay use the
 * SDK as published).
 *
 * `@modelcontextprotocol/core` builds about 180 zod schemas as its modules load: every type of
 * every protocol revision, OAuth's metadata, tasks; the server module builds the tables of
 * elicitation from some of them. A server reads a handful (the JSON-RPC envelope, a request's
 * params); each protocol revision parses its messages with wire schemas of its own, which the SDK
 * builds on first use already. Building all of them was the largest part of the bridge's start
 * after V8 loaded its code, and most of what its first garbage collections copied.
 *
 * The rewrite works on the published files' tokens: a small JavaScript tokenizer (strings,
 * template literals, comments, regular expressions, brackets) finds top-level declarations and
 * the identifiers that refer to them. A declaration `const NAME = <expression>;` made lazy becomes
 *
 *   var NAME$value;
 *   function NAME$lazy() { return NAME$value ??= <expression>; }
 *
 * and every reference to NAME in the module calls NAME$lazy(): the expression is evaluated once,
 * when first needed, and every reader gets the same object, as from the `const`. Anything the
 * rewrite does not expect (another kind of statement, a name declared twice, a shorthand
 * property naming a lazy declaration, a pattern that is not found exactly once) throws, so that a
 * new SDK whose files changed shape fails the build instead of bundling a module that differs.
 */

const ID_START = /[A-Za-z_$]/;
const ID_PART = /[A-Za-z0-9_$]/;
/** Tokens after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(['(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^', '=>', '&&', '||', '??', '==', '===', '!=', '!==', '<=', '>=', '+=', '-=', '*=', '??=', 'return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await']);
const PUNCTUATORS = ['...', '===', '!==', '??=', '**=', '>>>', '=>', '?.', '??', '&&', '||', '==', '!=', '<=', '>=', '+=', '-=', '*=', '/=', '++', '--'];

/**
 * The tokens of `text`: `{ kind, text }`, kind one of id, punct, string, template, number, regex,
 * comment, space; their texts joined are `text`. A template literal is one token unless it holds
 * `${…}`: then its parts are tokens of their own (the first ending in `${`, the next starting
 * with `}`), and what is between them is tokenized as code.
 */
export function tokenize(text) {
  const tokens = [];
  let i = 0;
  /** For each open `${`: the brace depth at which its template resumes. */
  const templates = [];
  let braces = 0;
  let last;
  const push = (kind, start) => {
    const t = { kind, text: text.slice(start, i) };
    tokens.push(t);
    if (kind !== 'space' && kind !== 'comment') last = t;
  };
  /** Scan template text from `i` to its closing backtick or its next `${`. */
  const templatePart = (start) => {
    while (i < text.length) {
      if (text[i] === '\\') i += 2;
      else if (text[i] === '`') {
        i++;
        return push('template', start);
      } else if (text[i] === '$' && text[i + 1] === '{') {
        i += 2;
        templates.push(braces);
        return push('template', start);
      } else i++;
    }
    throw new Error('unterminated template literal');
  };
  while (i < text.length) {
    const c = text[i];
    const start = i;
    if (/\s/.test(c)) {
      while (i < text.length && /\s/.test(text[i])) i++;
      push('space', start);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      push('comment', start);
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw new Error('unterminated comment');
      i = end + 2;
      push('comment', start);
    } else if (c === '"' || c === "'") {
      i++;
      while (text[i] !== c) {
        if (i >= text.length || text[i] === '\n') throw new Error('unterminated string');
        i += text[i] === '\\' ? 2 : 1;
      }
      i++;
      push('string', start);
    } else if (c === '`') {
      i++;
      templatePart(start);
    } else if (c === '}' && templates.length > 0 && templates[templates.length - 1] === braces) {
      templates.pop();
      i++;
      templatePart(start);
    } else if (ID_START.test(c)) {
      while (i < text.length && ID_PART.test(text[i])) i++;
      push('id', start);
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      while (i < text.length && /[0-9A-Za-z_.]/.test(text[i])) i++;
      push('number', start);
    } else if (c === '/' && (last === undefined || BEFORE_REGEX.has(last.text))) {
      i++;
      let inClass = false;
      while (inClass || text[i] !== '/') {
        if (i >= text.length || text[i] === '\n') throw new Error('unterminated regular expression');
        if (text[i] === '\\') i++;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i++;
      }
      i++;
      while (i < text.length && ID_PART.test(text[i])) i++;
      push('regex', start);
    } else {
      const op = PUNCTUATORS.find((p) => text.startsWith(p, i)) ?? c;
      if (op === '{') braces++;
      if (op === '}') braces--;
      i += op.length;
      push('punct', start);
    }
  }
  if (templates.length > 0) throw new Error('unterminated template literal');
  return tokens;
}

const OPENS = new Set(['(', '[', '{']);
const CLOSES = new Set([')', ']', '}']);

/**
 * A module's text as tokens with what the rewrites need: `sig`, the indexes of its significant
 * tokens (no space, no comment), and for each of those its bracket depth and, for an opening
 * bracket, the position in `sig` of its closing one. `out` holds each token's text, to be
 * replaced; `text()` joins it.
 */
function parse(text) {
  const tokens = tokenize(text);
  const sig = [];
  tokens.forEach((t, k) => {
    if (t.kind !== 'space' && t.kind !== 'comment') sig.push(k);
  });
  const depth = [];
  const closer = [];
  const open = [];
  sig.forEach((k, s) => {
    const t = tokens[k];
    const opens = (t.kind === 'punct' && OPENS.has(t.text)) || (t.kind === 'template' && t.text.endsWith('${'));
    const closes = (t.kind === 'punct' && CLOSES.has(t.text)) || (t.kind === 'template' && t.text.startsWith('}'));
    if (closes) {
      if (open.length === 0) throw new Error('unbalanced brackets');
      closer[open.pop()] = s;
    }
    depth[s] = open.length;
    if (opens) open.push(s);
  });
  if (open.length > 0) throw new Error('unbalanced brackets');
  const out = tokens.map((t) => t.text);
  return {
    tokens,
    sig,
    depth,
    closer,
    out,
    /** The text of significant token `s`. */
    at: (s) => (s >= 0 && s < sig.length ? tokens[sig[s]].text : ''),
    kind: (s) => tokens[sig[s]]?.kind,
    /** Replace the text of significant token `s`. */
    set(s, replacement) {
      out[sig[s]] = replacement;
    },
    text: () => out.join(''),
  };
}

/**
 * The `const NAME = …;` declarations at depth `depth` between significant tokens `from` and `to`:
 * `{ name, at, eq, end }` (positions of `const`, `=` and the closing `;`).
 */
function declarations(p, from, to, depth) {
  const found = [];
  for (let s = from; s < to; s++) {
    if (p.depth[s] !== depth || p.at(s) !== 'const') continue;
    if (p.kind(s + 1) !== 'id' || p.at(s + 2) !== '=') throw new Error(`an unexpected declaration after const: ${p.at(s + 1)} ${p.at(s + 2)}`);
    let end = s + 3;
    while (end < to && !(p.depth[end] === depth && (p.at(end) === ';' || p.at(end) === ','))) end++;
    if (p.at(end) !== ';') throw new Error(`${p.at(s + 1)}: a declaration of several names, or without its semicolon`);
    found.push({ name: p.at(s + 1), at: s, eq: s + 2, end });
    s = end;
  }
  return found;
}

/** Make declaration `d` lazy (see above). */
function makeLazy(p, d) {
  p.set(d.at, 'var');
  p.set(d.at + 1, `${d.name}$value;\nfunction ${d.name}$lazy() {\n\treturn ${d.name}$value`);
  p.set(d.eq, '??=');
  p.set(d.end, ';\n}');
}

/**
 * Replace every reference to a name in `lazy` between `from` and `to` by a call of its getter. A
 * property (`.name`), an object key (`name:`), a name in an export list (`name as alias`) or the
 * declared name itself is no reference; a shorthand property (`{ name }`) is refused.
 */
function rewriteReferences(p, from, to, lazy, declaredAt) {
  for (let s = from; s < to; s++) {
    const name = p.at(s);
    if (p.kind(s) !== 'id' || !lazy.has(name) || declaredAt.has(s)) continue;
    const before = p.at(s - 1);
    const after = p.at(s + 1);
    if (before === '.' || before === '?.' || before === 'get' || before === 'set' || after === 'as') continue;
    if (after === ':' && (before === '{' || before === ',')) continue;
    if (after === '(' && (before === '{' || before === ',')) continue;
    if ((before === '{' || before === ',') && (after === ',' || after === '}')) {
      let b = s - 1;
      while (b >= 0 && !(OPENS.has(p.at(b)) && p.depth[b] === p.depth[s] - 1)) b--;
      if (p.at(b) === '{') throw new Error(`${name} as a shorthand property`);
    }
    p.set(s, `${name}$lazy()`);
  }
}

/**
 * Make the top-level declarations of `text` that `isLazy` names lazy, references throughout
 * the module rewritten; `expected` names that must be among them (a rewrite that finds none of
 * what it was written for is refused).
 */
export function lazyTopLevel(text, isLazy, expected = []) {
  const p = parse(text);
  const lazy = lazyDeclarations(p, -1, isLazy, expected);
  return { text: p.text(), lazy: [...lazy] };
}

/**
 * Make the declarations directly inside the braces at `open` (-1: the module's top level) that
 * `isLazy` names lazy, and rewrite the references to them inside; `skip` holds positions that
 * are no reference (shorthand entries `objectToGetters` turns into getters). Returns the names.
 */
function lazyDeclarations(p, open, isLazy, expected = [], skip = new Set()) {
  const [from, to, depth] = open < 0 ? [0, p.sig.length, 0] : [open + 1, p.closer[open], p.depth[open] + 1];
  const lazy = new Set();
  const seen = new Set();
  const declaredAt = new Set(skip);
  for (const d of declarations(p, from, to, depth)) {
    if (seen.has(d.name)) throw new Error(`${d.name} declared twice`);
    seen.add(d.name);
    if (!isLazy(d.name)) continue;
    lazy.add(d.name);
    declaredAt.add(d.at + 1);
    makeLazy(p, d);
  }
  for (const name of expected) if (!lazy.has(name)) throw new Error(`no declaration of ${name}`);
  rewriteReferences(p, from, to, lazy, declaredAt);
  return lazy;
}

/** The entries of the object literal whose `{` is at `open`: `{ key, at, end, shorthand }` (`end`: the position after its value). */
function objectEntries(p, open) {
  if (p.at(open) !== '{') throw new Error(`an object literal expected, not ${p.at(open)}`);
  const close = p.closer[open];
  const depth = p.depth[open] + 1;
  const entries = [];
  for (let s = open + 1; s < close; ) {
    let end = s;
    while (end < close && !(p.depth[end] === depth && p.at(end) === ',')) end++;
    const kind = p.kind(s);
    if (end === s + 1 && kind === 'id') entries.push({ key: p.at(s), at: s, end, shorthand: true });
    else if ((kind === 'id' || kind === 'string') && p.at(s + 1) === ':' && end > s + 2) {
      entries.push({ key: kind === 'string' ? JSON.parse(p.at(s).replace(/^'|'$/g, '"')) : p.at(s), at: s, end, shorthand: false });
    } else throw new Error(`an object entry other than a key and its value: ${p.at(s)} ${p.at(s + 1)}`);
    s = end + 1;
  }
  return entries;
}

/**
 * Turn each entry of the object literal at `open` into a getter that evaluates its value when
 * first read and then keeps it as the object's own plain property, as the literal made it
 * (references to `lazy` names already rewritten; a shorthand entry's name is read through its
 * getter).
 */
function objectToGetters(p, open, lazy) {
  for (const e of objectEntries(p, open)) {
    const key = p.at(e.at);
    const keep = `;\n\t\tObject.defineProperty(this, ${JSON.stringify(e.key)}, { value: built$, writable: true, enumerable: true, configurable: true });\n\t\treturn built$;\n\t}`;
    if (e.shorthand) p.set(e.at, `get ${key}() {\n\t\tconst built$ = ${lazy.has(key) ? `${key}$lazy()` : key}${keep}`);
    else {
      p.set(e.at, `get ${key}() {\n\t\tconst built$ =`);
      p.set(e.at + 1, '');
      p.out[p.sig[e.end - 1]] += keep;
    }
  }
}

/** The positions of the braces of the body of the one top-level `function NAME(…) {`. */
function functionBody(p, name) {
  const found = [];
  for (let s = 0; s + 2 < p.sig.length; s++) {
    if (p.depth[s] === 0 && p.at(s) === 'function' && p.at(s + 1) === name && p.at(s + 2) === '(') found.push(p.closer[s + 2] + 1);
  }
  if (found.length !== 1 || p.at(found[0]) !== '{') throw new Error(`no single function ${name}`);
  return found[0];
}

/** The `{` of the object literal after `return` (or after `NAME =`) directly inside the braces at `open`. */
function objectAfter(p, open, words) {
  const depth = p.depth[open] + 1;
  for (let s = open + 1; s < p.closer[open]; s++) {
    if (p.depth[s] === depth && words.every((w, k) => p.at(s + k) === w) && p.at(s + words.length) === '{') return s + words.length;
  }
  throw new Error(`no ${words.join(' ')} {…} in the function`);
}

/**
 * The function `name` that builds a protocol revision's wire schemas and returns them as one
 * object, with every declaration in it made lazy, the object it returns (and the objects in
 * `objects`, declared in it, of schemas by method) made of getters: the SDK calls it on the first
 * message of its revision, and then reads the schemas of the methods it meets.
 */
function lazyWireSchemas(p, name, objects = []) {
  const body = functionBody(p, name);
  const returned = objectAfter(p, body, ['return']);
  const maps = objects.map((o) => objectAfter(p, body, ['const', o, '=']));
  const skip = new Set([returned, ...maps].flatMap((o) => objectEntries(p, o).filter((e) => e.shorthand).map((e) => e.at)));
  const lazy = lazyDeclarations(p, body, () => true, objects, skip);
  for (const o of [returned, ...maps]) objectToGetters(p, o, lazy);
}

/**
 * A schema module of the SDK (a namespace import of zod, top-level `const`s, one export list) as
 * a CommonJS module whose exports are getters: its `…Schema` declarations made lazy (the other
 * declarations, protocol versions and error codes, stay as they are), the export list turned into
 * properties. The bundler reads a CommonJS module's named imports as properties at every use, so
 * the rest of the SDK reads each schema through its getter, and the first reader builds it.
 * Returns the module text, the names made lazy and, for each module it imports as a namespace,
 * the members it reads of it (`z.object`, …): the bundle gives the module only those, as the
 * original import let the bundler keep only those.
 */
export function lazySchemaModule(text) {
  const original = parse(text);
  for (let s = 0; s < original.sig.length; s++) {
    // Each top-level statement starts after the previous one's semicolon.
    if (!['import', 'const', 'export'].includes(original.at(s))) throw new Error(`an unexpected top-level statement: ${original.at(s)} ${original.at(s + 1)}`);
    while (s < original.sig.length && !(original.depth[s] === 0 && original.at(s) === ';')) s++;
  }
  const made = lazyTopLevel(text, (name) => /Schema$/.test(name));
  const p = parse(made.text);
  const namespaces = new Map();
  let exported;
  for (let s = 0; s < p.sig.length; s++) {
    if (p.depth[s] !== 0) continue;
    const word = p.at(s);
    if (word === 'import') {
      if (p.at(s + 1) !== '*' || p.at(s + 2) !== 'as' || p.at(s + 4) !== 'from' || p.kind(s + 5) !== 'string' || p.at(s + 6) !== ';') throw new Error('an import other than a namespace import');
      namespaces.set(p.at(s + 3), JSON.parse(p.at(s + 5).replace(/^'|'$/g, '"')));
      p.set(s, 'const');
      p.set(s + 1, '');
      p.set(s + 2, '');
      p.set(s + 4, '=');
      p.set(s + 5, `require(${p.at(s + 5)})`);
    } else if (word === 'export') {
      if (exported !== undefined) throw new Error('two export statements');
      if (p.at(s + 1) !== '{') throw new Error('an export other than a list');
      const close = p.closer[s + 1];
      if (p.at(close + 1) !== ';') throw new Error('an export list without its semicolon');
      exported = [];
      for (let k = s + 2; k < close; k++) {
        const local = p.at(k);
        let alias = local;
        if (p.at(k + 1) === 'as') {
          alias = p.at(k + 2);
          k += 2;
        }
        exported.push({ local, alias, lazy: made.lazy.includes(local) });
        if (p.at(k + 1) === ',') k++;
      }
      for (let k = s; k <= close + 1; k++) p.set(k, '');
      s = close + 1;
    }
  }
  if (exported === undefined) throw new Error('no export statement');
  const properties = exported.map(({ local, alias, lazy }) => `\t${JSON.stringify(alias)}: { enumerable: true, ${lazy ? `get: ${local}$lazy` : `value: ${local}`} }`);
  // What the module reads of each namespace (`z.object`, …).
  const members = new Map([...namespaces.values()].map((specifier) => [specifier, new Set()]));
  for (let s = 0; s + 2 < p.sig.length; s++) {
    if (p.kind(s) === 'id' && namespaces.has(p.at(s)) && p.at(s - 1) !== '.' && p.at(s + 1) === '.' && p.kind(s + 2) === 'id') members.get(namespaces.get(p.at(s))).add(p.at(s + 2));
  }
  return {
    text: `${p.text()}\nObject.defineProperties(exports, {\n${properties.join(',\n')}\n});\n`,
    lazy: made.lazy,
    members: new Map([...members].map(([specifier, used]) => [specifier, [...used].sort()])),
  };
}

/** `text` with its function `name` rewritten by `lazyWireSchemas`. */
export function lazyFunction(text, name, objects = []) {
  const p = parse(text);
  lazyWireSchemas(p, name, objects);
  return p.text();
}

/** `text` with `from` replaced by `to`, where `from` occurs exactly once. */
function replaceOnce(text, from, to, what) {
  if (text.split(from).length !== 2) throw new Error(`the SDK module does not hold ${what} as expected`);
  return text.replace(from, () => to);
}

/** The elicitation tables of the SDK's server module, made from schemas when it loads. */
const ELICITATION_TABLES = ['ROOT_KEYS', 'PROPERTY_KEYS_BY_TYPE', 'SUPPORTED_STRING_FORMATS'];

/**
 * The SDK's server module (the one that holds `specTypeSchemas`) with its schemas read when
 * first needed:
 * - `specTypeSchemas` (every spec type's schema by name, which tools/params.ts reads to check a
 *   request's params) and `isSpecType`: the SDK fills them by reading every schema in turn, which
 *   would build all of them; each entry becomes a getter of the same schema, and each of
 *   `isSpecType`'s functions reads its schema when called;
 * - the tables of elicitation's requested schemas, made lazy as `lazyTopLevel` makes them;
 * - each protocol revision's wire schemas: the SDK builds all of a revision's at its first
 *   message; here each when the SDK first reads it (`lazyWireSchemas`), and the 2025-11-25
 *   registry's tables by method read them when a method is looked up.
 */
export function lazyServerModule(text) {
  const auth = /\nconst authSchemas = \{\n((?:\t[A-Za-z_$][\w$]*,?\n)+)\};\n/.exec(text);
  if (auth === null) throw new Error('the SDK module holds no authSchemas list of names');
  const names = auth[1]
    .split('\n')
    .map((l) => l.trim().replace(/,$/, ''))
    .filter((l) => l !== '');
  let out = replaceOnce(text, auth[0], `\nconst authSchemas = {\n${names.map((n) => `\tget ${n}() {\n\t\treturn ${n};\n\t}`).join(',\n')}\n};\n`, 'authSchemas');
  out = replaceOnce(
    out,
    [
      'function register(key, schema) {',
      '\tconst name = key.slice(0, -6);',
      '\t_specTypeSchemas[name] = schema;',
      '\t_isSpecType[name] = (v) => schema.safeParse(v).success;',
      '}',
      'for (const key of SPEC_SCHEMA_KEYS) register(key, schemas_exports[key]);',
      'for (const [key, schema] of Object.entries(authSchemas)) register(key, schema);',
    ].join('\n'),
    [
      'function register(key, get) {',
      '\tconst name = key.slice(0, -6);',
      '\tObject.defineProperty(_specTypeSchemas, name, { get, enumerable: true });',
      '\t_isSpecType[name] = (v) => get().safeParse(v).success;',
      '}',
      'for (const key of SPEC_SCHEMA_KEYS) register(key, () => schemas_exports[key]);',
      'for (const key of Object.keys(authSchemas)) register(key, () => authSchemas[key]);',
    ].join('\n'),
    'the filling of specTypeSchemas',
  );
  const p = parse(out);
  lazyDeclarations(p, -1, (name) => ELICITATION_TABLES.includes(name), ELICITATION_TABLES);
  // Revision 2025-11-25: its schemas, and the registry's tables of them by method.
  lazyWireSchemas(p, 'build$1');
  const registry = functionBody(p, 'registryMaps');
  const tables = objectAfter(p, registry, ['maps$1', '=']);
  for (const e of objectEntries(p, tables)) objectToGetters(p, e.at + 2, new Set());
  // Revision 2026-07-28: its schemas, with its tables by method inside.
  lazyWireSchemas(p, 'build', ['dispatchRequestSchemas', 'dispatchResultSchemas', 'notificationSchemas2026']);
  return p.text();
}
