/**
 * Lookups over the category register and the filing rules (spec/1-concepts.md "Categories";
 * spec/3-errors.md INVALID_CATEGORY, CATEGORY_NOT_FOUND).
 *
 * A filing is 0 to 3 ids (1 to 3 for a public or oracle SPACE), main first; each exists, none is
 * retired, none repeats, and none sits inside another of the same filing. Every refusal is
 * INVALID_CATEGORY with a detail that names the nearest ids.
 *
 * The register is fixed data, so every index below is built once at load and never changes.
 */
import { SvcError } from '../../shared/errors.js';
import { CATEGORIES_MAX, CATEGORIES_MIN } from '../../shared/limits.js';
import { REGISTER, REGISTER_LICENCE, REGISTER_RELEASE, TOP_IDS } from './register.js';
import { CATEGORY_ID_MAX, CATEGORY_ID_RE, type Category } from './types.js';
import { nearestTo, normalise, searchIn, type SearchHit } from './search.js';

export type { Category, Elsewhere } from './types.js';
export type { SearchHit } from './search.js';
export { REGISTER_LICENCE, REGISTER_RELEASE, TOP_IDS } from './register.js';

const BY_ID: ReadonlyMap<string, Category> = new Map(REGISTER.map((c) => [c.id, c]));

/** Children in data order, live and retired. */
const CHILDREN: ReadonlyMap<string, readonly Category[]> = (() => {
  const m = new Map<string, Category[]>();
  for (const c of REGISTER) {
    if (c.parent === null) continue;
    const list = m.get(c.parent) ?? [];
    list.push(c);
    m.set(c.parent, list);
  }
  return m;
})();

/** Retired entries by the live id their filings went to. */
const REDIRECTED: ReadonlyMap<string, readonly Category[]> = (() => {
  const m = new Map<string, Category[]>();
  for (const c of REGISTER) {
    if (c.replacedBy === null) continue;
    const list = m.get(c.replacedBy) ?? [];
    list.push(c);
    m.set(c.replacedBy, list);
  }
  return m;
})();

const LIVE: readonly Category[] = REGISTER.filter((c) => c.replacedBy === null);

/** Quote a caller's value for a detail, cut short (attacker-controlled text). */
function quote(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

export function categoryExists(id: string): boolean {
  return BY_ID.has(id);
}

export function getCategory(id: string): Category | undefined {
  return BY_ID.get(id);
}

export function isRetired(id: string): boolean {
  return (BY_ID.get(id)?.replacedBy ?? null) !== null;
}

/** Every entry, live and retired, in data order. */
export function allCategories(): readonly Category[] {
  return REGISTER;
}

/** The top categories, in the spec's order. */
export function topCategories(): Category[] {
  return TOP_IDS.map((id) => BY_ID.get(id)!);
}

/** Direct children of `id` in data order; live ones only unless `retired` is set. */
export function childrenOf(id: string, opts: { retired?: boolean } = {}): Category[] {
  const list = CHILDREN.get(id) ?? [];
  return opts.retired ? [...list] : list.filter((c) => c.replacedBy === null);
}

/** Ids from the top category down to `id` itself; [] for an unknown id. */
export function pathOf(id: string): string[] {
  const out: string[] = [];
  let c = BY_ID.get(id);
  while (c) {
    out.unshift(c.id);
    c = c.parent === null ? undefined : BY_ID.get(c.parent);
  }
  return out;
}

/** 1 for a top category, 2 for its children, and so on; 0 for an unknown id. */
export function levelOf(id: string): number {
  return pathOf(id).length;
}

/** Whether `inner` sits strictly inside `outer` in the tree. */
export function isInside(inner: string, outer: string): boolean {
  const path = pathOf(inner);
  return path.length > 0 && path.slice(0, -1).includes(outer);
}

/**
 * `id` and everything under it, for list and SEEK filters ("includes descendants"). Retired
 * entries whose filings now go into the subtree come along, so SPACES filed before a
 * retirement stay findable under the replacement. [] for an unknown id.
 */
export function descendantsOf(id: string): string[] {
  if (!BY_ID.has(id)) return [];
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    for (const c of CHILDREN.get(next) ?? []) stack.push(c.id);
    for (const c of REDIRECTED.get(next) ?? []) stack.push(c.id);
  }
  return [...seen];
}

/**
 * The `n` live ids nearest to a caller's text: exact id, name or other name first, then
 * containment, shared words and edit distance. Retired matches give their replacement.
 */
export function nearestIds(text: string, n = 3): string[] {
  const out: string[] = [];
  for (const c of nearestTo(REGISTER, text)) {
    const id = c.replacedBy ?? c.id;
    if (!out.includes(id)) out.push(id);
    if (out.length >= n) break;
  }
  return out;
}

/** Name and other-name lookup (categories.list `q`), best first; `under` limits it to a subtree. */
export function searchCategories(q: string, opts: { under?: string; limit?: number } = {}): SearchHit[] {
  const pool = opts.under === undefined ? LIVE : descendantsOf(opts.under).map((id) => BY_ID.get(id)!).filter((c) => c.replacedBy === null);
  return searchIn(pool, q, opts.limit ?? 25);
}

/** The CATEGORY_NOT_FOUND refusal for an id, naming the nearest ones. */
export function categoryNotFound(id: string, field = 'id'): SvcError {
  return new SvcError('CATEGORY_NOT_FOUND', `${field}: no category ${quote(id)}; nearest: ${nearestIds(id).join(', ')}`);
}

function invalid(detail: string): SvcError {
  return new SvcError('INVALID_CATEGORY', detail);
}

/** Check one id's form and existence; answers the entry. `field` names it in the detail. */
function knownId(value: unknown, field: string): Category {
  if (typeof value !== 'string') {
    throw invalid(`${field}: must be a category id string; nearest: ${TOP_IDS.slice(0, 3).join(', ')} (GET /v1/categories)`);
  }
  const c = value.length <= CATEGORY_ID_MAX && CATEGORY_ID_RE.test(value) ? BY_ID.get(value) : undefined;
  if (!c) throw invalid(`${field}: no category ${quote(value)}; nearest: ${nearestIds(value).join(', ')}`);
  return c;
}

/**
 * Validate a SPACE's filing (spaces.create, spaces.update, oracle.fork). `ids` is the caller's
 * value as parsed (attacker-controlled): undefined or null means none. `required` for a public
 * or oracle SPACE (1 to 3 ids). Answers the ids in the caller's order (main first).
 * Throws INVALID_CATEGORY whose detail names the field and the nearest ids.
 */
export function validateFiling(ids: unknown, opts: { required: boolean }): string[] {
  if (ids === undefined || ids === null) ids = [];
  if (!Array.isArray(ids)) {
    throw invalid(`categories: must be a list of 0 to ${CATEGORIES_MAX} category ids, main first`);
  }
  if (ids.length > CATEGORIES_MAX) {
    throw invalid(`categories: ${ids.length} ids; at most ${CATEGORIES_MAX}, main first`);
  }
  if (opts.required && ids.length < CATEGORIES_MIN) {
    throw invalid(`categories: a public or oracle SPACE needs ${CATEGORIES_MIN} to ${CATEGORIES_MAX} ids, main first; e.g. general`);
  }
  const out: string[] = [];
  ids.forEach((value: unknown, i) => {
    const field = `categories[${i}]`;
    const c = knownId(value, field);
    if (c.replacedBy !== null) {
      throw invalid(`${field}: ${quote(c.id)} is retired; nearest: ${c.replacedBy} (file there instead)`);
    }
    out.forEach((earlier, j) => {
      if (earlier === c.id) throw invalid(`${field}: ${quote(c.id)} repeats categories[${j}]; nearest: ${nearestIds(c.id, 4).filter((x) => x !== c.id).slice(0, 3).join(', ')}`);
      if (isInside(c.id, earlier)) {
        throw invalid(`${field}: ${quote(c.id)} is inside categories[${j}] ${quote(earlier)}; keep one of ${earlier}, ${c.id}`);
      }
      if (isInside(earlier, c.id)) {
        throw invalid(`${field}: ${quote(c.id)} contains categories[${j}] ${quote(earlier)}; keep one of ${earlier}, ${c.id}`);
      }
    });
    out.push(c.id);
  });
  return out;
}

/**
 * A list or SEEK `category` filter (spaces.list, seek): the id and its descendants. A retired id
 * is accepted here (older filings carry it). Unknown or malformed: INVALID_CATEGORY naming the
 * nearest ids.
 */
export function categoryFilter(value: unknown, field = 'category'): string[] {
  return descendantsOf(knownId(value, field).id);
}

/** The capability document's `categories` member. */
export function categoriesCapability(): { release: string; licence: string; count: number; top: string[]; list: string } {
  return {
    release: REGISTER_RELEASE,
    licence: REGISTER_LICENCE,
    count: REGISTER.length,
    top: [...TOP_IDS],
    list: 'GET /v1/categories',
  };
}

/** Normalised form used by the lookups (lowercase slug), exported for tests and the routes. */
export { normalise };
