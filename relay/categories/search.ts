/**
 * Finding categories by what a caller typed: the name lookup of categories.list (`q`) and the
 * "nearest ids" of CATEGORY_NOT_FOUND and INVALID_CATEGORY details.
 *
 * Everything here reads caller text (attacker-controlled): it is normalised and cut to
 * TEXT_MAX characters before any comparison, so one lookup costs a bounded amount of work.
 */
import type { Category } from './types.js';

/** Caller text beyond this many characters is ignored. */
export const TEXT_MAX = 64;

/**
 * Lowercase slug form: accents dropped, `&` → and, `+` → plus, `#` → sharp (so `C++`, `C#`
 * and `F#` stay apart), every other run of non-alphanumerics → one hyphen.
 */
export function normalise(text: string): string {
  return slugify(text, TEXT_MAX);
}

function slugify(text: string, max: number): string {
  return text
    .slice(0, max * 2)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, '-and-')
    .replace(/\+/g, '-plus-')
    .replace(/#/g, '-sharp-')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max);
}

/** Levenshtein distance (insert, delete, substitute: cost 1 each), two rows. */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const sub = prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      cur[j] = Math.min(sub, prev[j]! + 1, cur[j - 1]! + 1);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** How a lookup matched: the id itself, the name, an other name, words of them, or only nearness. */
export type MatchKind = 'id' | 'name' | 'alias' | 'prefix' | 'words' | 'description' | 'near';

export interface SearchHit {
  readonly category: Category;
  readonly matched: MatchKind;
  /** The name or other name that matched (the entry's name for description and near). */
  readonly via: string;
}

interface Key {
  readonly slug: string;
  readonly words: readonly string[];
  readonly kind: 'id' | 'name' | 'alias';
  readonly text: string;
}

const KEYS = new WeakMap<Category, readonly Key[]>();
const PROSE = new WeakMap<Category, ReadonlySet<string>>();

/** The words of what goes in an entry and its examples, computed once per entry. */
function proseWordsOf(c: Category): ReadonlySet<string> {
  let words = PROSE.get(c);
  if (!words) {
    words = new Set(slugify(`${c.covers} ${c.examples.join(' ')}`, 4000).split('-'));
    PROSE.set(c, words);
  }
  return words;
}

function keysOf(c: Category): readonly Key[] {
  let keys = KEYS.get(c);
  if (!keys) {
    const make = (text: string, kind: Key['kind']): Key => {
      const slug = normalise(text);
      return { slug, words: slug.split('-').filter(Boolean), kind, text };
    };
    // The name before the id, so a lookup that matches both reports the name.
    keys = [make(c.name, 'name'), make(c.id, 'id'), ...c.aliases.map((a) => make(a, 'alias'))];
    KEYS.set(c, keys);
  }
  return keys;
}

/** Words that carry no meaning for matching. */
const STOP = new Set(['and', 'of', 'the', 'in', 'for', 'a', 'an', 'to', 'on']);

function meaningful(words: readonly string[]): string[] {
  return words.filter((w) => !STOP.has(w));
}

/**
 * Distance of a caller's slug to one key, lower is nearer: 0 equal; 0.2–0.4 containment;
 * 0.3–0.8 shared words; otherwise the edit distance over the longer length (≤ 1).
 */
function distance(q: string, qWords: readonly string[], key: Key): number {
  if (q === key.slug) return 0;
  const longer = Math.max(q.length, key.slug.length);
  // The length gap bounds the edit distance from below: skip the quadratic work when even the
  // best case would be a poor match (keeps a lookup with long hostile text cheap).
  let best = Math.abs(q.length - key.slug.length) / longer > 0.5 ? 1 : editDistance(q, key.slug) / longer;
  if (q.length >= 3 && (key.slug.includes(q) || q.includes(key.slug)) && Math.min(q.length, key.slug.length) >= 3) {
    best = Math.min(best, 0.2 + (0.2 * Math.abs(key.slug.length - q.length)) / Math.max(key.slug.length, q.length));
  }
  const kw = meaningful(key.words);
  if (qWords.length > 0 && kw.length > 0) {
    const shared = qWords.filter((w) => kw.includes(w)).length;
    if (shared > 0) best = Math.min(best, 0.8 - (0.5 * shared) / Math.max(qWords.length, kw.length));
  }
  return best;
}

/** The pool sorted nearest first to `text` (ties keep register order). */
export function nearestTo(pool: readonly Category[], text: string): Category[] {
  const q = normalise(text);
  if (q === '') return [...pool];
  const qWords = meaningful(q.split('-'));
  const scored = pool.map((c, i) => ({ c, i, d: Math.min(...keysOf(c).map((k) => distance(q, qWords, k))) }));
  scored.sort((x, y) => x.d - y.d || x.i - y.i);
  return scored.map((s) => s.c);
}

/**
 * Name lookup: exact id, name or other name; then names starting with the text; then names
 * holding all its words; then the description; and when nothing matched, the nearest three.
 */
export function searchIn(pool: readonly Category[], text: string, limit: number): SearchHit[] {
  const q = normalise(text);
  if (q === '') return [];
  const qWords = meaningful(q.split('-'));
  const ranked: { hit: SearchHit; rank: number; i: number }[] = [];
  pool.forEach((c, i) => {
    let best: { hit: SearchHit; rank: number } | undefined;
    const consider = (rank: number, matched: MatchKind, via: string): void => {
      if (!best || rank < best.rank) best = { hit: { category: c, matched, via }, rank };
    };
    for (const k of keysOf(c)) {
      if (k.slug === q) consider(k.kind === 'id' ? 0 : k.kind === 'name' ? 0 : 1, k.kind, k.text);
      else if (k.slug.startsWith(q) || k.words.some((w) => w.startsWith(q))) consider(2, 'prefix', k.text);
      else if (qWords.length > 0 && qWords.every((w) => k.words.some((kw) => kw.startsWith(w)))) consider(3, 'words', k.text);
    }
    if (!best && qWords.length > 0) {
      const proseWords = proseWordsOf(c);
      if (qWords.every((w) => proseWords.has(w))) consider(4, 'description', c.name);
    }
    if (best) ranked.push({ ...best, i });
  });
  ranked.sort((x, y) => x.rank - y.rank || x.i - y.i);
  if (ranked.length > 0) return ranked.slice(0, limit).map((r) => r.hit);
  return nearestTo(pool, text)
    .slice(0, Math.min(3, limit))
    .map((c) => ({ category: c, matched: 'near' as const, via: c.name }));
}
