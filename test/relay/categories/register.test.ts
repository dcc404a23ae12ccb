/**
 * The category register and its rules (spec/1-concepts.md "Categories", "Versioning" item 4;
 * spec/3-errors.md INVALID_CATEGORY): the register's shape is checked against the words of
 * the spec, read at test time; filings are checked table-driven and by property.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HAVE_SHARED_DOCS, sharedDoc, WITHOUT_SHARED_DOCS } from '../../helpers/shared-docs.js';
import { DETAIL_MAX, SvcError } from '../../../shared/errors.js';
import {
  allCategories,
  categoriesCapability,
  categoryExists,
  categoryFilter,
  childrenOf,
  descendantsOf,
  getCategory,
  isInside,
  isRetired,
  levelOf,
  nearestIds,
  pathOf,
  REGISTER_LICENCE,
  REGISTER_RELEASE,
  searchCategories,
  TOP_IDS,
  validateFiling,
} from '../../../relay/categories/index.js';
import { editDistance, normalise } from '../../../relay/categories/search.js';
import { CATEGORY_ID_MAX, CATEGORY_ID_RE } from '../../../relay/categories/types.js';
import { loadOwnVector } from '../../helpers/vectors.js';

const concepts = sharedDoc('spec/1-concepts.md');
const section = concepts.slice(concepts.indexOf('### Categories'), concepts.indexOf('### Member'));
const ALL = allCategories();
const LIVE = ALL.filter((c) => c.replacedBy === null);

/** The INVALID_CATEGORY refusal `fn` throws (fails the test when it throws none or another). */
function refusal(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SvcError);
    return e as SvcError;
  }
  throw new Error('expected a refusal');
}

describe.skipIf(!HAVE_SHARED_DOCS)(`the register matches the spec${WITHOUT_SHARED_DOCS}`, () => {
  it('has the release, licence and size the spec names', () => {
    const m = /One register, release (\S+), licence (\S+), (\d+) categories/.exec(section);
    expect(m).not.toBeNull();
    expect(REGISTER_RELEASE).toBe(m![1]);
    expect(REGISTER_LICENCE).toBe(m![2]!.replace(/[;,]$/, ''));
    expect(ALL.length).toBe(Number(m![3]));
    expect(concepts).toContain(`Category register release ${REGISTER_RELEASE}; ids are stable.`);
    expect(categoriesCapability()).toMatchObject({ release: REGISTER_RELEASE, licence: REGISTER_LICENCE, count: ALL.length });
  });

  it('has exactly the top categories of the spec, in its order, and no other entry without a parent', () => {
    const line = /Top categories: `([^`]+)`/.exec(section);
    expect(line).not.toBeNull();
    const spec = line![1]!.split(/\s+/);
    expect([...TOP_IDS]).toEqual(spec);
    expect(ALL.filter((c) => c.parent === null).map((c) => c.id)).toEqual(spec);
    for (const id of spec) expect(childrenOf(id).length, id).toBeGreaterThan(0);
  });

  it('goes at most four levels deep under artificial intelligence, three in programming languages, two elsewhere', () => {
    const depth = new Map<string, number>();
    for (const c of ALL) {
      const path = pathOf(c.id);
      const top = path[0]!;
      const limit = top === 'artificial-intelligence' ? 4 : path.includes('programming-languages') ? 3 : 2;
      expect(path.length, `${c.id}: ${path.join(' > ')}`).toBeLessThanOrEqual(limit);
      const key = top === 'computing' && path.includes('programming-languages') ? 'programming-languages' : top;
      depth.set(key, Math.max(depth.get(key) ?? 0, path.length));
    }
    // Each branch uses the depth it is allowed, so the limits above are exercised.
    expect(depth.get('artificial-intelligence')).toBe(4);
    expect(depth.get('programming-languages')).toBe(3);
    expect(depth.get('science')).toBe(2);
    expect(levelOf('programming-languages')).toBe(2);
  });
});

describe('register invariants', () => {
  it('ids are unique, well formed and flat slugs', () => {
    const ids = ALL.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(CATEGORY_ID_RE.test(id), id).toBe(true);
      expect(id.length, id).toBeLessThanOrEqual(CATEGORY_ID_MAX);
    }
  });

  it('no name or other name of one entry is the id, name or other name of another', () => {
    const owner = new Map<string, string>();
    for (const c of ALL) {
      const mine = new Set([c.id, c.name, ...c.aliases].map(normalise));
      for (const key of mine) {
        expect(key, `${c.id}: empty key`).not.toBe('');
        const other = owner.get(key);
        expect(other === undefined || other === c.id, `${JSON.stringify(key)}: ${other} and ${c.id}`).toBe(true);
        owner.set(key, c.id);
      }
    }
  });

  it('every parent exists and following parents always reaches a top category', () => {
    for (const c of ALL) {
      if (c.parent !== null) expect(categoryExists(c.parent), `${c.id} -> ${c.parent}`).toBe(true);
      const seen = new Set<string>();
      let at: string | null = c.id;
      while (at !== null) {
        expect(seen.has(at), `cycle through ${at}`).toBe(false);
        seen.add(at);
        at = getCategory(at)!.parent;
      }
      expect(seen.size).toBeLessThanOrEqual(4);
    }
  });

  it('retired entries name a live replacement, hold no live children and exist in more than one branch', () => {
    const retired = ALL.filter((c) => c.replacedBy !== null);
    expect(retired.length).toBeGreaterThanOrEqual(2);
    expect(new Set(retired.map((c) => pathOf(c.id)[0])).size).toBeGreaterThanOrEqual(2);
    for (const c of retired) {
      const to = getCategory(c.replacedBy!);
      expect(to, c.id).toBeDefined();
      expect(to!.replacedBy, `${c.id} -> ${to!.id}`).toBeNull();
      expect(to!.id).not.toBe(c.id);
      expect(childrenOf(c.id)).toEqual([]);
      expect(isRetired(c.id)).toBe(true);
    }
  });

  it('every entry says what goes in it and gives examples; every pointer elsewhere names another live entry', () => {
    for (const c of ALL) {
      expect(c.name.trim().length, c.id).toBeGreaterThan(0);
      expect(c.covers.length, c.id).toBeGreaterThan(10);
      expect(c.examples.length, c.id).toBeGreaterThan(0);
      for (const e of c.elsewhere) {
        expect(getCategory(e.id)?.replacedBy, `${c.id}: elsewhere ${e.id}`).toBeNull();
        expect(e.id, c.id).not.toBe(c.id);
        expect(e.topic.length).toBeGreaterThan(0);
      }
    }
  });

  it('no id of the release pinned in test/vectors/category-ids.json ever disappears, and retired ones stay retired', () => {
    const pin = loadOwnVector<{ release: string; entries: { id: string; parent: string | null; replaced_by?: string }[] }>(
      'category-ids.json',
    );
    for (const p of pin.entries) {
      const c = getCategory(p.id);
      expect(c, p.id).toBeDefined();
      if (p.replaced_by !== undefined) expect(c!.replacedBy, p.id).not.toBeNull();
      if (pin.release === REGISTER_RELEASE) {
        expect(c!.parent, p.id).toBe(p.parent);
        expect(c!.replacedBy ?? undefined, p.id).toBe(p.replaced_by);
      }
    }
    if (pin.release === REGISTER_RELEASE) expect(ALL.length).toBe(pin.entries.length);
  });

  it('the entries are frozen: a caller cannot change the register', () => {
    const c = getCategory('computing')!;
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.aliases)).toBe(true);
    expect(Object.isFrozen(ALL)).toBe(true);
  });
});

describe('tree lookups', () => {
  it('descendantsOf includes the id itself, every level below, and retired entries redirected into the subtree', () => {
    expect(descendantsOf('rust-language')).toEqual(['rust-language']);
    const langs = descendantsOf('computing');
    expect(langs).toContain('computing');
    expect(langs).toContain('programming-languages');
    expect(langs).toContain('rust-language');
    expect(descendantsOf('artificial-intelligence')).toContain('speculative-decoding'); // level 4
    expect(descendantsOf('blockchain')).toEqual(expect.arrayContaining(['blockchain', 'web3']));
    expect(descendantsOf('ai-assistants')).toEqual(expect.arrayContaining(['ai-assistants', 'chatbots']));
    expect(descendantsOf('no-such-thing')).toEqual([]);
    const all = TOP_IDS.flatMap((t) => descendantsOf(t));
    expect(new Set(all).size).toBe(ALL.length); // the tops' subtrees cover the register
  });

  it('pathOf, levelOf and isInside agree with the parents', () => {
    expect(pathOf('transformers')).toEqual(['artificial-intelligence', 'machine-learning', 'deep-learning', 'transformers']);
    expect(levelOf('transformers')).toBe(4);
    expect(levelOf('nope')).toBe(0);
    expect(isInside('transformers', 'machine-learning')).toBe(true);
    expect(isInside('machine-learning', 'transformers')).toBe(false);
    expect(isInside('computing', 'computing')).toBe(false);
  });

  it('childrenOf lists live children in register order and retired ones only when asked', () => {
    const live = childrenOf('computing').map((c) => c.id);
    const withRetired = childrenOf('computing', { retired: true }).map((c) => c.id);
    expect(live).not.toContain('web3');
    expect(withRetired).toContain('web3');
    expect(withRetired.filter((id) => id !== 'web3' && id !== 'big-data')).toEqual(live);
  });
});

describe('validateFiling accepts', () => {
  const ok: [string, unknown, boolean, string[]][] = [
    ['no categories when none are required', undefined, false, []],
    ['null as none when none are required', null, false, []],
    ['an empty list when none are required', [], false, []],
    ['one top category', ['general'], true, ['general']],
    ['a level 4 entry', ['transformers'], true, ['transformers']],
    ['three ids in the caller’s order, main first', ['rust-language', 'machine-learning', 'cooking'], true, ['rust-language', 'machine-learning', 'cooking']],
    ['siblings under one parent', ['rust-language', 'go-language'], true, ['rust-language', 'go-language']],
    ['cousins in one branch', ['transformers', 'prompt-engineering'], true, ['transformers', 'prompt-engineering']],
  ];
  it.each(ok)('%s', (_name, ids, required, expected) => {
    expect(validateFiling(ids, { required })).toEqual(expected);
  });

  it('answers a copy, never the caller’s array', () => {
    const given = ['chess'];
    const out = validateFiling(given, { required: true });
    expect(out).toEqual(given);
    expect(out).not.toBe(given);
  });
});

describe('validateFiling refuses with INVALID_CATEGORY and names the nearest ids', () => {
  // [rule broken, value, required, detail must match, ids the detail must name]
  const bad: [string, unknown, boolean, RegExp, string[]][] = [
    ['no categories for a public SPACE', undefined, true, /^categories: a public or oracle SPACE needs 1 to 3 ids/, []],
    ['an empty list for a public SPACE', [], true, /needs 1 to 3 ids/, []],
    ['a string instead of a list', 'computing', false, /^categories: must be a list/, []],
    ['an object instead of a list', { 0: 'computing' }, true, /must be a list/, []],
    ['four ids', ['chess', 'cooking', 'physics', 'law'], true, /^categories: 4 ids; at most 3/, []],
    ['a number among the ids', ['chess', 42], true, /^categories\[1\]: must be a category id string/, []],
    ['a misspelt id', ['compting'], true, /^categories\[0\]: no category "compting"; nearest: computing/, ['computing']],
    ['a name instead of an id', ['Machine Learning'], true, /no category "Machine Learning"; nearest: machine-learning/, ['machine-learning']],
    ['an other name instead of an id', ['golang'], true, /nearest: go-language/, ['go-language']],
    ['an abbreviation', ['LLMs'], true, /nearest: large-language-models/, ['large-language-models']],
    ['an id in upper case', ['COMPUTING'], true, /nearest: computing/, ['computing']],
    ['a retired id', ['web3'], true, /^categories\[0\]: "web3" is retired; nearest: blockchain/, ['blockchain']],
    ['a retired id in second place', ['cooking', 'chatbots'], true, /^categories\[1\]: "chatbots" is retired; nearest: ai-assistants/, ['ai-assistants']],
    ['a repeated id', ['rust-language', 'chess', 'rust-language'], true, /^categories\[2\]: "rust-language" repeats categories\[0\]; nearest: /, []],
    ['a child after its parent', ['artificial-intelligence', 'transformers'], true, /^categories\[1\]: "transformers" is inside categories\[0\] "artificial-intelligence"; keep one of artificial-intelligence, transformers/, ['artificial-intelligence', 'transformers']],
    ['a parent after its child', ['transformers', 'machine-learning'], true, /^categories\[1\]: "machine-learning" contains categories\[0\] "transformers"/, ['machine-learning', 'transformers']],
    ['a grandchild three levels down', ['rust-language', 'computing'], false, /contains categories\[0\]/, ['computing', 'rust-language']],
  ];
  it.each(bad)('%s', (_rule, value, required, detail, names) => {
    const e = refusal(() => validateFiling(value, { required }));
    expect(e.code).toBe('INVALID_CATEGORY');
    expect(e.detail).toMatch(detail);
    for (const id of names) expect(e.detail).toContain(id);
    expect(e.detail!.length).toBeLessThanOrEqual(DETAIL_MAX);
  });

  it('a repeat names other nearby ids, not the repeated one again', () => {
    const e = refusal(() => validateFiling(['chess', 'chess'], { required: true }));
    const named = e.detail!.split('nearest: ')[1]!.split(', ');
    expect(named.length).toBe(3);
    expect(named).not.toContain('chess');
    for (const id of named) expect(categoryExists(id)).toBe(true);
  });

  it('a very long or hostile value is quoted short and still answered with nearest ids', () => {
    const e = refusal(() => validateFiling(['computing-' + 'x'.repeat(5000)], { required: true }));
    expect(e.detail!.length).toBeLessThanOrEqual(DETAIL_MAX);
    expect(e.detail).toContain('…');
    expect(e.detail).toMatch(/nearest: [a-z0-9-]+, [a-z0-9-]+, [a-z0-9-]+$/);
    const quote = refusal(() => validateFiling(['"}\n<script>'], { required: false }));
    expect(quote.detail).toContain(JSON.stringify('"}\n<script>'));
  });

  it('by property: an accepted filing has 0 to 3 distinct live ids, none inside another', () => {
    const ids = ALL.map((c) => c.id);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...ids), { maxLength: 4 }), fc.boolean(), (filing, required) => {
        let out: string[];
        try {
          out = validateFiling(filing, { required });
        } catch (e) {
          expect((e as SvcError).code).toBe('INVALID_CATEGORY');
          expect((e as SvcError).detail).toMatch(/categories/);
          return;
        }
        expect(out).toEqual(filing);
        expect(out.length).toBeLessThanOrEqual(3);
        if (required) expect(out.length).toBeGreaterThanOrEqual(1);
        expect(new Set(out).size).toBe(out.length);
        for (const a of out) {
          expect(isRetired(a)).toBe(false);
          for (const b of out) if (a !== b) expect(descendantsOf(b)).not.toContain(a);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('list and SEEK filters', () => {
  it('categoryFilter answers the id and its descendants, a retired id included', () => {
    expect(categoryFilter('programming-languages')).toEqual(descendantsOf('programming-languages'));
    expect(categoryFilter('web3')).toEqual(['web3']);
  });

  it('an unknown or malformed filter is INVALID_CATEGORY naming the field and the nearest ids', () => {
    const e = refusal(() => categoryFilter('rustlang'));
    expect(e.code).toBe('INVALID_CATEGORY');
    expect(e.detail).toMatch(/^category: no category "rustlang"; nearest: rust-language/);
    expect(refusal(() => categoryFilter(7)).detail).toMatch(/^category: must be a category id string/);
  });
});

describe('finding categories by what a caller typed', () => {
  it('normalise keeps C, C++, C# and F# apart and folds case, accents and punctuation', () => {
    expect(new Set(['C', 'C++', 'C#', 'F#'].map(normalise)).size).toBe(4);
    expect(normalise('  Café & Bar!! ')).toBe('cafe-and-bar');
    expect(normalise('x'.repeat(1000)).length).toBe(64);
  });

  it('editDistance counts single-character edits', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
  });

  const lookups: [string, string][] = [
    ['C++', 'cpp-language'],
    ['C#', 'csharp-language'],
    ['F#', 'ml-family-languages'],
    ['golang', 'go-language'],
    ['Kubernetes', 'devops'],
    ['rag', 'retrieval-augmented-generation'],
    ['MCP', 'model-context-protocol'],
    ['soccer', 'football'],
    ['Portugal', 'iberia'],
    ['prompt engineering', 'prompt-engineering'],
  ];
  it.each(lookups)('searchCategories(%j) answers %s first', (q, id) => {
    const hits = searchCategories(q);
    expect(hits[0]?.category.id).toBe(id);
  });

  it('searchCategories says how each hit matched and never answers retired entries', () => {
    expect(searchCategories('Golang')[0]).toMatchObject({ matched: 'alias', via: 'Golang' });
    expect(searchCategories('Chess')[0]).toMatchObject({ matched: 'name' });
    expect(searchCategories('lisbon')[0]).toMatchObject({ matched: 'description' });
    expect(searchCategories('chatbots').every((h) => h.category.replacedBy === null)).toBe(true);
    expect(searchCategories('')).toEqual([]);
    expect(searchCategories('learning', { limit: 2 }).length).toBe(2);
  });

  it('nearestIds answers n live ids, exact other names first, retired ones by their replacement', () => {
    expect(nearestIds('compting')[0]).toBe('computing');
    expect(nearestIds('LLM')[0]).toBe('large-language-models');
    expect(nearestIds('web 3')[0]).toBe('blockchain');
    expect(nearestIds('astronomy and space', 5)).toHaveLength(5);
    for (const text of ['zzzz', 'chat bots', '!!!', '']) {
      const near = nearestIds(text);
      expect(near).toHaveLength(3);
      for (const id of near) expect(LIVE.some((c) => c.id === id)).toBe(true);
    }
  });
});
