/**
 * scripts/lazy-schemas.mjs: the MCP SDK's zod schemas built when first used in the one-file
 * bridge. Each of the SDK's schema modules, rewritten, is evaluated here beside the module as
 * published: it must build nothing when it loads, build a schema when it is first read (the same
 * object ever after), and give for every export what the published module gives. The rewrite
 * must refuse what it was not written for.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { REPO_ROOT } from '../helpers/relay.js';
import { lazyFunction, lazySchemaModule, lazyServerModule, lazyTopLevel, tokenize } from '../../scripts/lazy-schemas.mjs';

const CORE = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/core/dist');
const SCHEMA_FILES = readdirSync(CORE).filter((f) => /^(schemas|auth)-[\w-]+\.mjs$/.test(f));

/**
 * Evaluate a rewritten module (CommonJS) with `zod/v4` given as zod's namespace through a proxy
 * that counts the calls made of it: what the module built.
 */
function evaluate(text: string): { exports: Record<string, unknown>; calls: () => number } {
  let calls = 0;
  const counted = new Proxy(z as Record<string, unknown>, {
    get(target, key) {
      const v = target[key as string];
      return typeof v === 'function'
        ? (...args: unknown[]) => {
            calls++;
            return (v as (...a: unknown[]) => unknown)(...args);
          }
        : v;
    },
  });
  const exports: Record<string, unknown> = {};
  const required: string[] = [];
  new Function('exports', 'require', text)(exports, (specifier: string) => {
    required.push(specifier);
    return counted;
  });
  expect(required).toEqual(['zod/v4']);
  return { exports, calls: () => calls };
}

/** What a schema says of itself, to compare two builds of it: its JSON Schema (or why it has none) and a few parses. */
function describeSchema(s: z.ZodType): unknown {
  let json: unknown;
  try {
    json = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' });
  } catch (e) {
    json = `throws ${(e as Error).message}`;
  }
  const samples = [undefined, null, {}, [], 'x', 1, { jsonrpc: '2.0', id: 1, method: 'ping' }, { method: 'tools/list', params: {} }];
  return { json, parses: samples.map((v) => s.safeParse(v).success) };
}

describe('the SDK schema modules, rewritten', () => {
  it('finds the SDK files it was written for', () => {
    expect(SCHEMA_FILES.map((f) => f.replace(/-[\w-]+\.mjs$/, '')).sort()).toEqual(['auth', 'schemas']);
  });

  for (const file of SCHEMA_FILES) {
    it(`${file}: builds nothing when it loads, each schema when first read and once, the same exports as published`, async () => {
      const text = readFileSync(join(CORE, file), 'utf8');
      const made = lazySchemaModule(text);
      expect(made.lazy.length).toBeGreaterThan(10);
      expect(made.members.get('zod/v4')).toEqual(expect.arrayContaining(['object', 'string']));

      const lazy = evaluate(made.text);
      expect(lazy.calls()).toBe(0);
      const published = (await import(pathToFileURL(join(CORE, file)).href)) as Record<string, unknown>;
      expect(Object.keys(lazy.exports).sort()).toEqual(Object.keys(published).sort());

      const first = made.lazy[made.lazy.length - 1]!;
      const alias = Object.keys(published).find((k) => Object.getOwnPropertyDescriptor(lazy.exports, k)?.get?.name === `${first}$lazy`)!;
      const built = lazy.exports[alias];
      expect(lazy.calls()).toBeGreaterThan(0);
      const after = lazy.calls();
      expect(lazy.exports[alias]).toBe(built);
      expect(lazy.calls()).toBe(after);

      for (const key of Object.keys(published)) {
        const mine = lazy.exports[key];
        const theirs = published[key];
        if (theirs instanceof z.ZodType) {
          expect(mine, key).toBeInstanceOf(z.ZodType);
          expect(describeSchema(mine as z.ZodType), key).toEqual(describeSchema(theirs));
        } else expect(mine, key).toEqual(theirs);
      }
    });
  }

  it('the server module reads each spec type schema when asked for, and builds the elicitation tables when first used', () => {
    const dist = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server/dist');
    const [server] = readdirSync(dist).filter((f) => /^src-[\w-]+\.mjs$/.test(f));
    const text = readFileSync(join(dist, server!), 'utf8');
    const out = lazyServerModule(text);
    expect(out).toContain('Object.defineProperty(_specTypeSchemas, name, { get, enumerable: true });');
    expect(out).not.toContain('register(key, schemas_exports[key])');
    for (const table of ['ROOT_KEYS', 'PROPERTY_KEYS_BY_TYPE', 'SUPPORTED_STRING_FORMATS']) {
      expect(out).toContain(`function ${table}$lazy()`);
      expect(out).not.toMatch(new RegExp(`[^.\\w$]${table}[^\\w$]`));
    }
    // Each revision's wire schemas, and the 2025-11-25 registry's tables by method.
    expect(out).toMatch(/function PingRequestSchema\$1\$lazy\(\)/);
    expect(out).toMatch(/get PingRequestSchema\(\) \{\n\t\tconst built\$ = PingRequestSchema\$1\$lazy\(\)/);
    expect(out).toMatch(/get ping\(\) \{\n\t\tconst built\$ = s\.PingRequestSchema;/);
    expect(out).toMatch(/get "tools\/list"\(\) \{\n\t\tconst built\$ = /);
    expect(() => lazyServerModule(text.replace('for (const key of SPEC_SCHEMA_KEYS)', 'for (const k of SPEC_SCHEMA_KEYS)'))).toThrow(/specTypeSchemas/);
  });

  it("each protocol revision's wire schemas, built when first read, are the ones the SDK builds, key by key, and so are the 2025-11-25 registry's tables", async () => {
    const dist = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server/dist');
    const [server] = readdirSync(dist).filter((f) => /^src-[\w-]+\.mjs$/.test(f));
    const text = readFileSync(join(dist, server!), 'utf8');
    // Both modules beside the published one, so that their imports resolve as its do, each with the builders exported.
    const expose = '\nexport { buildSchemas2025 as svcBuild2025, buildSchemas2026 as svcBuild2026, registryMaps as svcRegistry2025 };\n';
    const files = [join(dist, `.svc-test-${process.pid}-published.mjs`), join(dist, `.svc-test-${process.pid}-lazy.mjs`)] as const;
    writeFileSync(files[0], text + expose);
    writeFileSync(files[1], lazyServerModule(text) + expose);
    try {
      const [published, lazy] = (await Promise.all(files.map((f) => import(pathToFileURL(f).href)))) as Record<string, () => Record<string, unknown>>[];
      const same = (mine: unknown, theirs: unknown, at: string): void => {
        if (theirs instanceof z.ZodType) {
          expect(mine, at).toBeInstanceOf(z.ZodType);
          expect(describeSchema(mine as z.ZodType), at).toEqual(describeSchema(theirs));
        } else if (theirs !== null && typeof theirs === 'object' && !Array.isArray(theirs)) {
          expect(Object.keys(mine as object), at).toEqual(Object.keys(theirs));
          for (const k of Object.keys(theirs)) same((mine as Record<string, unknown>)[k], (theirs as Record<string, unknown>)[k], `${at}.${k}`);
        } else expect(mine, at).toEqual(theirs);
      };
      let compared = 0;
      for (const builder of ['svcBuild2025', 'svcBuild2026', 'svcRegistry2025']) {
        const theirs = published![builder]!();
        const mine = lazy![builder]!();
        expect(mine, builder).toBe(lazy![builder]!());
        same(mine, theirs, builder);
        compared += Object.keys(theirs).length;
      }
      expect(compared).toBeGreaterThan(200);
    } finally {
      for (const f of files) rmSync(f, { force: true });
    }
  });

  it("a revision's schema builder: each declaration evaluated when first read, once; the object it returns and its tables made of getters that keep what they return", () => {
    const source = [
      'function build() {',
      '	const A = made("A");',
      '	const B = made("B", A);',
      '	function twice(x) {',
      '		return [x, x];',
      '	}',
      '	const byName = { "b/c": B, a: A };',
      '	return {',
      '		A,',
      '		pair: twice(B),',
      '		byName',
      '	};',
      '}',
    ].join('\n');
    const rewritten = lazyFunction(source, 'build', ['byName']);
    const made: string[] = [];
    const build = new Function('made', `${rewritten}\nreturn build;`)((name: string, ...deps: unknown[]) => {
      made.push(name);
      return { name, deps };
    }) as () => Record<string, any>;
    const s = build();
    expect(made).toEqual([]);
    expect(s.byName['b/c'].name).toBe('B');
    expect(made).toEqual(['A', 'B']);
    expect(s.byName['b/c']).toBe(s.byName['b/c']);
    expect(s.A).toBe(s.byName.a);
    expect(s.pair).toBe(s.pair);
    expect(s.pair).toEqual([s.byName['b/c'], s.byName['b/c']]);
    expect(made).toEqual(['A', 'B']);
    expect(Object.getOwnPropertyDescriptor(s, 'pair')).toEqual({ value: s.pair, writable: true, enumerable: true, configurable: true });
    expect(Object.keys(s)).toEqual(['A', 'pair', 'byName']);
    expect(() => lazyFunction(source.replace(', a: A }', ', ...A }'), 'build', ['byName'])).toThrow(/object entry/);
    expect(() => lazyFunction(source, 'missing')).toThrow(/no single function missing/);
  });
});

describe('the rewrite refuses what it was not written for', () => {
  const module = (body: string) => `import * as z from "zod/v4";\n${body}\nexport { ASchema as a };\n`;

  it('rewrites references in code, not in strings, comments, keys or properties', () => {
    const made = lazySchemaModule(module('const ASchema = z.string();\nconst BSchema = z.object({ ASchema: ASchema, "ASchema": ASchema.optional(), t: `ASchema ${ASchema.description}` }); // ASchema\n'));
    const body = made.text;
    expect(body).toContain('z.object({ ASchema: ASchema$lazy(), "ASchema": ASchema$lazy().optional(), t: `ASchema ${ASchema$lazy().description}` })');
    expect(body).toContain('// ASchema\n');
    expect(made.lazy).toEqual(['ASchema', 'BSchema']);
  });

  it('a shorthand property, a declaration of several names, another statement, another import', () => {
    expect(() => lazySchemaModule(module('const ASchema = z.string();\nconst BSchema = z.object({ ASchema });'))).toThrow(/shorthand/);
    expect(() => lazySchemaModule(module('const ASchema = z.string(), BSchema = z.number();'))).toThrow(/several names/);
    expect(() => lazySchemaModule(module('const ASchema = z.string();\nlet x = 1;'))).toThrow(/unexpected top-level statement/);
    expect(() => lazySchemaModule(`import { string } from "zod/v4";\nconst ASchema = string();\nexport { ASchema as a };\n`)).toThrow(/namespace import/);
    expect(() => lazyTopLevel('const A = 1;\n', () => false, ['B'])).toThrow(/no declaration of B/);
  });

  it('tokenizes regular expressions, divisions and template literals as JavaScript does', () => {
    const kinds = (text: string) => tokenize(text).filter((t) => t.kind !== 'space').map((t) => `${t.kind}:${t.text}`);
    expect(kinds('a = b / c / d;')).toEqual(['id:a', 'punct:=', 'id:b', 'punct:/', 'id:c', 'punct:/', 'id:d', 'punct:;']);
    expect(kinds('x = /a[/]b/g.test(y);')).toEqual(['id:x', 'punct:=', 'regex:/a[/]b/g', 'punct:.', 'id:test', 'punct:(', 'id:y', 'punct:)', 'punct:;']);
    expect(kinds('`a${ {b: 1}.b }c`')).toEqual(['template:`a${', 'punct:{', 'id:b', 'punct::', 'number:1', 'punct:}', 'punct:.', 'id:b', 'template:}c`']);
    expect(tokenize('const a = "x";\n// c\n').map((t) => t.text).join('')).toBe('const a = "x";\n// c\n');
  });
});
