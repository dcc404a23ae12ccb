/**
 * categories.list and categories.get over the real HTTP server (spec/2-endpoints.md; spec
 * "Categories"; CATEGORY_NOT_FOUND), and the register in the capability document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allCategories, childrenOf, descendantsOf, levelOf, TOP_IDS } from '../../../relay/categories/index.js';
import { getJson, mintToken, postJson, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let alice: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  alice = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

const get = (path: string, init: RequestInit = {}) => getJson(`${relay.url}${path}`, init);

/** Every node of an outline answer, depth first. */
function flatten(items: any[]): any[] {
  return items.flatMap((n) => [n, ...(n.children ? flatten(n.children) : [])]);
}

async function createSpace(name: string, categories: string[]): Promise<void> {
  const r = await postJson(
    `${relay.url}/v1/spaces`,
    { name, title: name, categories, visibility: 'private' },
    { authorization: `Bearer ${alice.token}` },
  );
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

describe('categories.list outline', () => {
  it('lists the top categories in the spec order by default, one level deep, without a token', async () => {
    const r = await get('/v1/categories');
    expect(r.status).toBe(200);
    expect(r.body.items.map((n: any) => n.id)).toEqual([...TOP_IDS]);
    expect(r.body.depth).toBe(1);
    expect(r.body.under).toBeNull();
    expect(r.body.register).toEqual({ release: '2026-09-18', licence: 'CC0-1.0', count: allCategories().length });
    for (const n of r.body.items) {
      expect(n.children).toBeUndefined();
      expect(n.child_count).toBe(childrenOf(n.id).length);
      expect(n.level).toBe(1);
      expect(typeof n.covers).toBe('string');
      expect(n.spaces).toBeUndefined();
    }
  });

  it('depth=4 shows the whole live register and nothing retired', async () => {
    const r = await get('/v1/categories?depth=4');
    const nodes = flatten(r.body.items);
    const live = allCategories().filter((c) => c.replacedBy === null);
    expect(nodes.map((n) => n.id).sort()).toEqual(live.map((c) => c.id).sort());
    expect(nodes.some((n) => n.id === 'web3')).toBe(false);
  });

  it('depth=2 stops one level below the tops while child_count still tells what lies deeper', async () => {
    const r = await get('/v1/categories?depth=2');
    const nodes = flatten(r.body.items);
    expect(Math.max(...nodes.map((n) => n.level))).toBe(2);
    const ml = nodes.find((n) => n.id === 'machine-learning');
    expect(ml.children).toBeUndefined();
    expect(ml.child_count).toBeGreaterThan(0);
  });

  it('under starts the outline at a category’s children and depth counts from there', async () => {
    const one = await get('/v1/categories?under=programming-languages');
    expect(one.status).toBe(200);
    expect(one.body.under).toMatchObject({ id: 'programming-languages', name: 'Programming languages' });
    expect(one.body.items.map((n: any) => n.id)).toEqual(childrenOf('programming-languages').map((c) => c.id));
    expect(one.body.items.map((n: any) => n.id)).toContain('rust-language');

    const deep = await get('/v1/categories?under=artificial-intelligence&depth=3');
    const ids = flatten(deep.body.items).map((n) => n.id);
    expect(ids).toContain('transformers'); // level 4: three below the top
    expect(ids).not.toContain('artificial-intelligence');
    expect(ids.every((id) => levelOf(id) >= 2 && levelOf(id) <= 4)).toBe(true);
  });

  it('an unknown under is CATEGORY_NOT_FOUND naming the nearest ids', async () => {
    const r = await get('/v1/categories?under=machine-lerning');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('CATEGORY_NOT_FOUND');
    expect(r.body.error.detail).toMatch(/^under: /);
    expect(r.body.error.detail).toContain('machine-learning');
  });

  it('depth outside 1..4 and unknown parameters are INVALID_REQUEST', async () => {
    for (const q of ['depth=0', 'depth=5', 'depth=two', 'counts=yes', 'colour=red']) {
      const r = await get(`/v1/categories?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code, q).toBe('INVALID_REQUEST');
    }
  });
});

describe('categories.list name lookup', () => {
  it('q finds a category by an other name, exact matches first', async () => {
    const r = await get('/v1/categories?q=golang');
    expect(r.status).toBe(200);
    expect(r.body.q).toBe('golang');
    expect(r.body.items[0]).toMatchObject({ id: 'go-language', matched: 'alias', via: 'Golang' });
    expect(r.body.items[0].path).toEqual(['computing', 'programming-languages', 'go-language']);
  });

  it('q finds categories by name words and keeps them inside under when given', async () => {
    const all = await get('/v1/categories?q=learning');
    const ids = all.body.items.map((h: any) => h.id);
    expect(ids).toContain('machine-learning');
    expect(ids).toContain('language-learning');

    const inside = await get('/v1/categories?q=learning&under=artificial-intelligence');
    const insideIds: string[] = inside.body.items.map((h: any) => h.id);
    expect(insideIds).toContain('machine-learning');
    expect(insideIds).not.toContain('language-learning');
    const subtree = new Set(descendantsOf('artificial-intelligence'));
    expect(insideIds.every((id) => subtree.has(id))).toBe(true);
  });

  it('a misspelt q still answers the nearest categories, marked as near', async () => {
    const r = await get('/v1/categories?q=cybersecurty');
    expect(r.body.items.length).toBeGreaterThan(0);
    expect(r.body.items[0]).toMatchObject({ id: 'cybersecurity', matched: 'near' });
  });

  it('an empty q is INVALID_REQUEST', async () => {
    const r = await get('/v1/categories?q=');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
  });
});

describe('categories.list counts', () => {
  it('counts=true counts each SPACE once for every category it sits in or under', async () => {
    await createSpace('cat-rust-and-go', ['rust-language', 'go-language']);
    await createSpace('cat-rust-only', ['rust-language']);
    await createSpace('cat-ml', ['machine-learning', 'cooking']);
    await createSpace('cat-none', []);

    const tops = await get('/v1/categories?counts=true');
    const byId = new Map(tops.body.items.map((n: any) => [n.id, n.spaces]));
    expect(byId.get('computing')).toBe(2); // the two-language SPACE counts once
    expect(byId.get('artificial-intelligence')).toBe(1);
    expect(byId.get('everyday-life')).toBe(1);
    expect(byId.get('science')).toBe(0);

    const langs = await get('/v1/categories?under=programming-languages&counts=true');
    const langCounts = new Map(langs.body.items.map((n: any) => [n.id, n.spaces]));
    expect(langCounts.get('rust-language')).toBe(2);
    expect(langCounts.get('go-language')).toBe(1);
    expect(langCounts.get('python-language')).toBe(0);

    const lookup = await get('/v1/categories?q=rust&counts=true');
    expect(lookup.body.items[0]).toMatchObject({ id: 'rust-language', spaces: 2 });
  });
});

describe('categories.get', () => {
  it('answers the whole record: in, elsewhere, examples, other names, children and filters', async () => {
    const r = await get('/v1/categories/large-language-models');
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b).toMatchObject({ id: 'large-language-models', name: 'Large language models', status: 'live', replaced_by: null, parent: 'artificial-intelligence', level: 2 });
    expect(b.path.map((p: any) => p.id)).toEqual(['artificial-intelligence', 'large-language-models']);
    expect(b.covers.length).toBeGreaterThan(10);
    expect(b.elsewhere.map((e: any) => e.id)).toContain('ai-agents');
    expect(b.elsewhere.every((e: any) => typeof e.topic === 'string' && typeof e.name === 'string')).toBe(true);
    expect(b.examples.length).toBeGreaterThan(0);
    expect(b.other_names).toContain('LLMs');
    expect(b.children.map((c: any) => c.id)).toEqual(childrenOf('large-language-models').map((c) => c.id));
    expect(b.filters).toEqual({
      spaces: 'GET /v1/spaces?category=large-language-models',
      seek: 'GET /v1/seek?category=large-language-models',
      includes_descendants: true,
    });
    expect(b.register).toEqual({ release: '2026-09-18', licence: 'CC0-1.0' });
  });

  it('a retired entry answers with status retired and replaced_by', async () => {
    const r = await get('/v1/categories/web3');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: 'web3', status: 'retired', replaced_by: 'blockchain' });
  });

  it('an unknown id is CATEGORY_NOT_FOUND naming the nearest ids', async () => {
    const r = await get('/v1/categories/rust');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('CATEGORY_NOT_FOUND');
    expect(r.body.error.detail).toContain('rust-language');
    const odd = await get(`/v1/categories/${encodeURIComponent('Ma chine Learning!')}`);
    expect(odd.status).toBe(404);
    expect(odd.body.error.detail).toContain('machine-learning');
  });

  it('Accept: text/markdown answers the connector-style text with the same facts', async () => {
    const res = await fetch(`${relay.url}/v1/categories/rust-language`, { headers: { accept: 'text/markdown' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/markdown/);
    const text = await res.text();
    expect(text).toContain('# Rust `rust-language`');
    expect(text).toContain('`computing` › `programming-languages` › `rust-language`');
    expect(text).toContain('GET /v1/spaces?category=rust-language');

    const list = await fetch(`${relay.url}/v1/categories?depth=2`, { headers: { accept: 'text/markdown' } });
    const outline = await list.text();
    expect(outline).toContain('- **Computing** `computing`');
    expect(outline).toContain('  - **Programming languages** `programming-languages`');
  });
});

describe('limits and capabilities', () => {
  it('name lookups past 600 a minute from one address are BUSY with Retry-After', async () => {
    const fresh = await startRelay();
    try {
      // The bucket holds 600 and refills at 10 a second, so the first refusal comes after at
      // least 600 answers and well before 600 plus a few seconds' refill.
      let answered = 0;
      let refusal: { status: number; body: any; retryAfter: number } | undefined;
      while (refusal === undefined && answered < 1000) {
        const res = await fetch(`${fresh.url}/v1/categories?q=chess`);
        if (res.status === 200) {
          await res.arrayBuffer();
          answered++;
        } else {
          refusal = { status: res.status, body: await res.json(), retryAfter: Number(res.headers.get('retry-after')) };
        }
      }
      expect(answered).toBeGreaterThanOrEqual(600);
      expect(answered).toBeLessThan(800);
      expect(refusal).toMatchObject({ status: 503, body: { error: { code: 'BUSY' } } });
      expect(refusal!.retryAfter).toBeGreaterThan(0);
      // The outline is an ordinary read with its own budget: still answered.
      expect((await getJson(`${fresh.url}/v1/categories`)).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });

  it('the capability document names the register release, licence and size', async () => {
    const r = await get('/v1/capabilities');
    expect(r.body.categories).toMatchObject({ release: '2026-09-18', licence: 'CC0-1.0', count: allCategories().length });
    expect(r.body.categories.top).toEqual([...TOP_IDS]);
    expect(r.body.modules.categories.status).toBe('available');
    const ops = r.body.operations.map((o: any) => `${o.name} ${o.method} ${o.path} ${o.auth}`);
    expect(ops).toContain('categories.list GET /v1/categories none');
    expect(ops).toContain('categories.get GET /v1/categories/{id} none');
  });
});
