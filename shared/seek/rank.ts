/**
 * Ranking SEEK's text hits (spec/1-concepts.md "SEEK") within a bounded, recency-ordered
 * candidate set.
 *
 * FTS5's bm25() is not used. Before its first row it counts every document holding each
 * phrase of the query (a walk of the phrase's whole doclist, about 30 ns a match), so a word
 * in 150,000 posts costs over 4 ms whatever the LIMIT. The candidates (at most a few hundred,
 * the newest visible matches, relay/store/seek.ts) are scored here instead, with the Okapi
 * BM25 formula FTS5 uses (k1 = 1.2, b = 0.75; idf = ln((N − n + 0.5) / (n + 0.5)), at least
 * 1e-6), where:
 * - a post's phrase counts are those of its ranked text, its title and the first
 *   RANK_TEXT_CHARS characters of its body, as the indexer's terms (shared/seek/terms.ts) hold
 *   them, so the cost of a candidate is bounded whatever its size (a body is at most 64 KiB);
 * - its length is that text's length in characters, and the average length the candidates'
 *   own (only the ratio enters BM25, so characters stand in for terms);
 * - n, the posts holding a phrase, is exact up to RANK_DF_SCAN; beyond, it is estimated from
 *   how far back the phrase's RANK_DF_SCAN newest matches reach (their density over the row
 *   ids they span), and N is the number of posts indexed. A query of one phrase needs no idf:
 *   it multiplies every score alike.
 * Scores follow FTS5's sign: lower is better.
 */
import { TERM_MAX_CHARS, foldText } from './terms.js';

/** Visible matches ranked per query, at most (the newest ones). */
export const SEEK_TEXT_CANDIDATES = 100;
/** A text query looks back at most this many matches (a prefix at this many index entries). */
export const SEEK_SCAN = 10_000;

export const RANK_K1 = 1.2;
export const RANK_B = 0.75;
/** Of a post's body, ranking reads the first this many characters (its title always whole). */
export const RANK_TEXT_CHARS = 2048;
/** Characters of non-ASCII text one query folds for ranking, at most (~1 ms). */
export const RANK_FOLD_CHARS = 65_536;
/** A phrase's posts are counted exactly up to this many, estimated beyond. */
export const RANK_DF_SCAN = 1000;
/** FTS5's floor for the idf of a phrase in more than half the posts. */
const IDF_MIN = 1e-6;

/** What ranking reads of a candidate: its title and (the start of) its body. */
export interface RankText {
  title: string | null;
  body: string | null;
}

/** The text ranking reads of a post: its title, then at most RANK_TEXT_CHARS of its body. */
export function rankText(post: RankText): string {
  const body = post.body ?? '';
  return `${post.title ?? ''}\n${body.length > RANK_TEXT_CHARS ? body.slice(0, RANK_TEXT_CHARS) : body}`;
}

/** A post's phrase counts and length (in characters of the text counted). */
export interface Counted {
  counts: number[];
  length: number;
}

/** A counter of one query's phrases over ranked texts (it keeps the query's fold budget). */
export type PhraseCounter = (text: string) => Counted;

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A regular expression finding each occurrence of a phrase in a text whose term characters
 * are `term` (a class body) and that matches case as `flags` say. An occurrence starts where
 * no term character precedes it; its terms are whole runs of term characters separated by
 * other characters, except that a term of TERM_MAX_CHARS may be the cut start of a longer run
 * (termsOf cuts runs there). Several terms sit in a lookahead, so overlapping occurrences
 * count, as FTS5 counts them.
 */
function phraseRegExp(phrase: readonly string[], term: string, flags: string): RegExp {
  const parts = phrase.map((t, k) => {
    const last = k === phrase.length - 1;
    if (t.length >= TERM_MAX_CHARS) return last ? t : `${t}[${term}]*[^${term}]+`;
    return last ? `${t}(?![${term}])` : `${t}[^${term}]+`;
  });
  const body = parts.join('');
  return new RegExp(phrase.length === 1 ? `(?<![${term}])${body}` : `(?<![${term}])(?=${body})`, flags);
}

function countMatches(re: RegExp, text: string): number {
  let n = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    n++;
    if (m[0].length === 0) re.lastIndex = m.index + 1;
  }
  return n;
}

/**
 * Count `phrases` (query terms, as termsOf gives them) in ranked texts: how often each occurs
 * in `termsOf(text)` (overlaps included), found without cutting the text into terms:
 * - ASCII text (most posts): regular expressions over the text as it is, case-insensitive;
 * - other text: folded first as termsOf folds it, while the query's budget of
 *   `foldBudget` characters lasts (folding costs about 15 ns a character); past it, matched
 *   unfolded and case-insensitively (an accented or compatibility form then does not count).
 */
export function phraseCounter(phrases: readonly (readonly string[])[], foldBudget = RANK_FOLD_CHARS): PhraseCounter {
  // Query terms hold only letters and digits: nothing to escape in a pattern.
  const ascii = phrases.map((p) => phraseRegExp(p, 'A-Za-z0-9', 'gi'));
  const folded = phrases.map((p) => phraseRegExp(p, '\\p{L}\\p{N}', 'gu'));
  const raw = phrases.map((p) => phraseRegExp(p, '\\p{L}\\p{N}\\p{M}', 'giu'));
  let budget = foldBudget;
  return (text) => {
    let res: RegExp[];
    let counted = text;
    if (!NON_ASCII.test(text)) {
      res = ascii;
    } else if (budget >= text.length) {
      budget -= text.length;
      counted = foldText(text);
      res = folded;
    } else {
      res = raw;
    }
    return { counts: res.map((re) => countMatches(re, counted)), length: counted.length };
  };
}

/** BM25's idf of a phrase held by `matching` of `total` posts, floored as FTS5 floors it. */
export function idf(total: number, matching: number): number {
  const v = Math.log((total - matching + 0.5) / (matching + 0.5));
  return v > IDF_MIN ? v : IDF_MIN;
}

/**
 * Posts holding a phrase, from a walk of its newest matches: `found` of them (at most
 * `scanned`), the oldest at row id `oldest`, in a collection whose newest row id is `newest`.
 * Exact when the walk ended before `scanned`; else the matches' density over the rows they
 * span, extrapolated to all `newest` rows.
 */
export function estimateMatching(found: number, oldest: number, newest: number, scanned: number): number {
  if (found < scanned) return found;
  const span = Math.max(1, newest - oldest + 1);
  return Math.min(newest, Math.round((found * newest) / span));
}

/** What ranking needs of the collection: its size and, per phrase, how many posts hold it. */
export interface RankCollection {
  /** Posts indexed (N). */
  size: number;
  /** Posts holding `phrase` (n), exact or estimated. */
  matching(phrase: readonly string[]): number;
}

/**
 * BM25 scores (lower is better) of `posts` for `phrases`, in the order given. The collection
 * is asked only when there are several phrases.
 */
export function rankScores(phrases: readonly (readonly string[])[], posts: readonly RankText[], collection: () => RankCollection): number[] {
  if (posts.length === 0) return [];
  const count = phraseCounter(phrases);
  const counted = posts.map((p) => count(rankText(p)));
  let weights: number[];
  if (phrases.length === 1) {
    weights = [1];
  } else {
    const c = collection();
    weights = phrases.map((phrase) => idf(c.size, c.matching(phrase)));
  }
  const average = Math.max(1, counted.reduce((sum, d) => sum + d.length, 0) / counted.length);
  return counted.map(({ counts, length }) => {
    const norm = RANK_K1 * (1 - RANK_B + (RANK_B * length) / average);
    let score = 0;
    for (let p = 0; p < phrases.length; p++) {
      const f = counts[p]!;
      score += (weights[p]! * (f * (RANK_K1 + 1))) / (f + norm);
    }
    return -score;
  });
}
