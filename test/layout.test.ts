/**
 * The shape of the code (ARCHITECTURE.md "Layers"), read from the sources' own imports:
 *
 * - no import circle anywhere in shared/, tools/, relay/, bridge/, launch/, bench/ or scripts/,
 *   type-only imports included (a module and what it uses are read in one direction: a
 *   dependency a module needs back is an interface owned by the module that uses it);
 * - the layers: shared/ imports only shared/ (the protocol, pure); launch/ only itself and
 *   shared/; tools/ (the tool layer both programs serve) neither program; bridge/ not relay/;
 *   relay/ not bridge/, and of tools/ only from its connector (relay/connector/);
 * - no folder of bridge/ or tools/ holds more than 15 files at one level.
 *
 * The imports are read by a small scanner over each file's text (comments, strings, template
 * literals and regular expressions told apart), every relative specifier of `import`, `export
 * … from`, `import type`, `import('…')` and `require('…')`; each must name a file that exists,
 * so the scanner cannot quietly miss what it does not understand.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers/relay.js';

const SCANNED = ['shared', 'tools', 'relay', 'bridge', 'launch', 'bench', 'scripts'];
const CODE = /\.(ts|mts|cts|mjs|cjs|js)$/;
const FOLDER_FILES_MAX = 15;

/** Which of the scanned folders a repository path is in. */
const areaOf = (path: string): string => path.split('/')[0]!;

/** What each area may import besides itself (bench/ and scripts/ may import anything). */
const MAY_IMPORT: Record<string, readonly string[] | 'any'> = {
  shared: [],
  launch: ['shared'],
  tools: ['shared', 'launch'],
  bridge: ['shared', 'launch', 'tools'],
  relay: ['shared', 'launch', 'tools'],
  bench: 'any',
  scripts: 'any',
};

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

const KEYWORDS_BEFORE_REGEX = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);

/**
 * The text of a module with comments blanked, and the strings it holds where an import could
 * name one: every quoted string with its offset, in order.
 */
function lex(text: string): { code: string; strings: { at: number; value: string }[] } {
  let code = '';
  const strings: { at: number; value: string }[] = [];
  let last = ''; // the last significant character or word, to tell a regex from a division
  let i = 0;
  const braces: number[] = []; // template nesting: the brace depth at which each `${` opened
  let depth = 0;
  const readTemplate = (): void => {
    // At the character after ` (or after the } closing an interpolation).
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\') {
        code += '  ';
        i += 2;
      } else if (c === '`') {
        code += '`';
        i++;
        last = '`';
        return;
      } else if (c === '$' && text[i + 1] === '{') {
        code += '${';
        i += 2;
        braces.push(depth);
        depth++;
        last = '{';
        return;
      } else {
        code += c === '\n' ? '\n' : ' ';
        i++;
      }
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const n = text[i + 1];
    if (c === '/' && n === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && n === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end + 2;
      code += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c && text[j] !== '\n') {
        if (text[j] === '\\') {
          value += text[j + 1] ?? '';
          j += 2;
        } else value += text[j++];
      }
      strings.push({ at: code.length, value });
      code += c + ' '.repeat(Math.max(0, j - i - 1)) + c;
      i = j + 1;
      last = c;
      continue;
    }
    if (c === '`') {
      code += '`';
      i++;
      readTemplate();
      continue;
    }
    if (c === '}' && braces.length > 0 && braces[braces.length - 1] === depth - 1) {
      braces.pop();
      depth--;
      code += '}';
      i++;
      readTemplate();
      continue;
    }
    if (c === '/' && (last === '' || /[(,=:[!&|?{};+\-*%<>~^]/.test(last) || KEYWORDS_BEFORE_REGEX.has(last))) {
      // A regular expression literal: up to its closing slash, classes respected.
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n') {
        const d = text[j]!;
        if (d === '\\') j += 2;
        else {
          if (d === '[') inClass = true;
          else if (d === ']') inClass = false;
          else if (d === '/' && !inClass) break;
          j++;
        }
      }
      code += ' '.repeat(j + 1 - i);
      i = j + 1;
      while (i < text.length && /[a-z]/.test(text[i]!)) code += ' ', i++;
      last = 'regex';
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth--;
    if (/[A-Za-z_$]/.test(c)) {
      let j = i;
      while (j < text.length && /[\w$]/.test(text[j]!)) j++;
      last = text.slice(i, j);
      code += last;
      i = j;
      continue;
    }
    if (!/\s/.test(c)) last = c;
    code += c;
    i++;
  }
  return { code, strings };
}

const SPECIFIER_BEFORE = [/\bfrom\s*$/, /\bimport\s*$/, /\bimport\s*\(\s*$/, /\brequire\s*\(\s*$/];

/** The relative specifiers a module imports from, type-only ones included. */
export function relativeImports(text: string): string[] {
  const { code, strings } = lex(text);
  const out: string[] = [];
  for (const s of strings) {
    if (!s.value.startsWith('./') && !s.value.startsWith('../')) continue;
    const before = code.slice(Math.max(0, s.at - 40), s.at);
    if (SPECIFIER_BEFORE.some((re) => re.test(before))) out.push(s.value);
  }
  return out;
}

/** The file a specifier names: as written, or the .ts source of a .js name. */
function resolveSpecifier(from: string, spec: string, files: ReadonlySet<string>): string | undefined {
  const path = resolve(dirname(from), spec);
  if (files.has(path)) return path;
  for (const [written, source] of [['.js', '.ts'], ['.mjs', '.mts'], ['.cjs', '.cts']] as const) {
    if (path.endsWith(written) && files.has(path.slice(0, -written.length) + source)) return path.slice(0, -written.length) + source;
  }
  return undefined;
}

interface Graph {
  readonly files: string[];
  readonly edges: Map<string, string[]>;
  readonly unresolved: string[];
  readonly imports: number;
}

function readGraph(): Graph {
  const all = SCANNED.flatMap((d) => walk(join(REPO_ROOT, d)));
  const files = all.filter((f) => CODE.test(f) && !f.endsWith('.d.ts'));
  // bench/ drives the relay with the tests' helpers: they resolve, and are not scanned themselves.
  const known = new Set([...all, ...walk(join(REPO_ROOT, 'test'))]);
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  let imports = 0;
  for (const f of files) {
    const to: string[] = [];
    for (const spec of relativeImports(readFileSync(f, 'utf8'))) {
      imports++;
      const target = resolveSpecifier(f, spec, known);
      if (target === undefined) unresolved.push(`${rel(f)}: ${spec}`);
      else if (CODE.test(target)) to.push(target);
    }
    edges.set(f, to);
  }
  return { files, edges, unresolved, imports };
}

const rel = (path: string): string => relative(REPO_ROOT, path).split(sep).join('/');

/** Strongly connected components of more than one module, or a module importing itself (Tarjan). */
function circles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const root of edges.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; at: number }[] = [{ node: root, at: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = edges.get(top.node) ?? [];
      if (top.at < out.length) {
        const w = out[top.at++]!;
        if (!edges.has(w)) continue;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, at: 0 });
        } else if (onStack.has(w)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== top.node);
        if (component.length > 1 || out.includes(top.node)) found.push(component);
      }
    }
  }
  return found;
}

/** One circle through a component, as a path of imports back to where it started. */
function circleIn(component: readonly string[], edges: Map<string, string[]>): string {
  const inside = new Set(component);
  const start = [...component].sort()[0]!;
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let at = v; at !== start; at = from.get(at)!) path.splice(1, 0, at);
        return [...path, start].map(rel).join(' -> ');
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return component.map(rel).join(', ');
}

describe('the layout of the code', () => {
  const graph = readGraph();

  it('reads every relative import of every module, each naming a file that exists', () => {
    expect(graph.files.length).toBeGreaterThan(300);
    expect(graph.imports).toBeGreaterThan(1500);
    expect(graph.unresolved).toEqual([]);
  });

  it('has no import circle, type-only imports included', () => {
    const found = circles(graph.edges).map((c) => `${c.length} modules import each other, e.g. ${circleIn(c, graph.edges)}`);
    expect(found, found.join('\n')).toEqual([]);
  });

  it('keeps the layers: shared/ pure, tools/ apart from both programs, the programs apart from each other', () => {
    const broken: string[] = [];
    for (const [from, targets] of graph.edges) {
      const a = areaOf(rel(from));
      const may = MAY_IMPORT[a];
      for (const to of targets) {
        const b = areaOf(rel(to));
        if (b === a || may === 'any') continue;
        if (may === undefined || !may.includes(b)) broken.push(`${rel(from)} -> ${rel(to)} (${a}/ may not import ${b}/)`);
        else if (a === 'relay' && b === 'tools' && !rel(from).startsWith('relay/connector/')) broken.push(`${rel(from)} -> ${rel(to)} (only relay/connector/ serves the tool layer)`);
      }
    }
    expect(broken, broken.join('\n')).toEqual([]);
  });

  it(`keeps at most ${FOLDER_FILES_MAX} files at one level of any folder of bridge/ and tools/`, () => {
    const crowded: string[] = [];
    const folders = (dir: string): string[] => [dir, ...readdirSync(dir).map((n) => join(dir, n)).filter((p) => statSync(p).isDirectory()).flatMap(folders)];
    for (const dir of ['bridge', 'tools'].flatMap((d) => folders(join(REPO_ROOT, d)))) {
      const files = readdirSync(dir).filter((n) => statSync(join(dir, n)).isFile() && !n.endsWith('.md'));
      if (files.length > FOLDER_FILES_MAX) crowded.push(`${rel(dir)}/ holds ${files.length} files`);
    }
    expect(crowded, crowded.join('\n')).toEqual([]);
  });

  it('the scanner tells imports from what only looks like them', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export * from './c.js';",
      "import './d.js';",
      "const e = await import('./e.js');",
      "let f: import('./f.js').F;",
      "// import { x } from './comment.js';",
      "/* export * from './block.js' */",
      "const s = 'import { y } from \"./in-string.js\"';",
      "const t = `${'./t.js'} import('./in-template.js')`;",
      "const r = /from '.\\/regex.js'/;",
      "const q = n / 2; const from = './not-after-from.js';",
    ].join('\n');
    expect(relativeImports(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js']);
  });
});
