/**
 * Ranking SEEK's text candidates (shared/seek/rank.ts): phrase counts found without cutting a
 * text into terms must be the counts over the indexer's own terms (shared/seek/terms.ts), and
 * BM25 must order posts as the formula says.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RANK_TEXT_CHARS,
  estimateMatching,
  idf,
  phraseCounter,
  rankScores,
  rankText,
  type RankCollection,
} from '../../../shared/seek/rank.js';
import { TERM_MAX_CHARS, termsOf } from '../../../shared/seek/terms.js';

/** The reference: occurrences of each phrase as a run of consecutive terms (overlaps count). */
function countOverTerms(terms: readonly string[], phrases: readonly (readonly string[])[]): number[] {
  return phrases.map((phrase) => {
    let n = 0;
    for (let i = 0; i + phrase.length <= terms.length; i++) {
      if (phrase.every((t, k) => terms[i + k] === t)) n++;
    }
    return n;
  });
}

const noCollection = (): RankCollection => {
  throw new Error('a query of one phrase must not ask for phrase counts');
};

// Words in cases, accents (precomposed and combining), compatibility forms and scripts the
// indexer folds, runs longer than a term, digits; separators of every kind.
const WORDS = [
  'kernel', 'Kernel', 'KERNEL', 'panic', 'Panic', 'src', 'main', 'rs', 'crème', 'Crème', 'cre\u0300me', 'creme',
  'brûlée', 'ﬁle', 'file', 'Ｆｉｌｅ', 'straße', 'İstanbul', 'istanbul', '内核', '𝐀bc', 'abc', '42', '4２',
  'x'.repeat(TERM_MAX_CHARS), 'x'.repeat(TERM_MAX_CHARS + 5), 'X'.repeat(TERM_MAX_CHARS + 1) + 'y', 'a1b2',
];
const SEPARATORS = [' ', '  ', '/', '.', '_', '-', '\n', ', ', ' — ', '’', ' → ', '🚀', '\u0301 '];
const asciiWords = WORDS.filter((w) => /^[\x00-\x7f]*$/.test(w));
const asciiSeparators = SEPARATORS.filter((s) => /^[\x00-\x7f]*$/.test(s));

function textOf(words: readonly string[], seps: readonly string[]): string {
  return words.map((w, i) => `${w}${seps[i % seps.length]}`).join('');
}

/** Phrases to count: runs of the text's own terms, and some terms it may not hold. */
const phrasesArb = (pool: readonly string[]) =>
  fc.array(fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }).map((ws) =>
    ws.map((w) => termsOf(w.join(' '))).filter((p) => p.length > 0),
  );

describe('phrase counts', () => {
  /** Texts made of `words` joined by `separators`: phrase counts equal counts over the terms. */
  function assertCountsMatchTerms(words: readonly string[], separators: readonly string[]): void {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...words), { maxLength: 40 }),
        fc.array(fc.constantFrom(...separators), { minLength: 1, maxLength: 5 }),
        phrasesArb(WORDS),
        (ws, seps, phrases) => {
          fc.pre(phrases.length > 0);
          const text = textOf(ws, seps);
          expect(phraseCounter(phrases)(text).counts).toEqual(countOverTerms(termsOf(text), phrases));
        },
      ),
      { numRuns: 400 },
    );
  }

  it('equal the counts over the indexer’s terms for ASCII text (the fast path)', () => {
    assertCountsMatchTerms(asciiWords, asciiSeparators);
  });

  it('equal the counts over the indexer’s terms for any text within the fold budget', () => {
    assertCountsMatchTerms(WORDS, SEPARATORS);
  });

  it('count a phrase across any separators and overlapping repeats of it', () => {
    const count = phraseCounter([['src', 'main', 'rs'], ['a', 'a'], ['kernel']]);
    expect(count('Panic in SRC/main.rs, then src main rs; srcmain.rs; a a a; kernel kernels KERNEL').counts).toEqual([2, 2, 2]);
  });

  it('past the fold budget match non-ASCII text unfolded: case still ignored, accents no longer', () => {
    const text = 'Crème, CREME and creme — done';
    expect(phraseCounter([['creme']])(text).counts).toEqual([3]);
    const spent = phraseCounter([['creme']], text.length - 1);
    expect(spent(text).counts).toEqual([2]);
    // An ASCII text never spends the budget.
    const none = phraseCounter([['creme']], 0);
    expect(none('CREME creme').counts).toEqual([2]);
    expect(none(text).counts).toEqual([2]);
  });

  it('read a post’s title and only the start of its body', () => {
    const body = `${'filler '.repeat(RANK_TEXT_CHARS / 7)}kernel`;
    expect(body.length).toBeGreaterThan(RANK_TEXT_CHARS);
    const text = rankText({ title: 'kernel notes', body });
    expect(text.length).toBe('kernel notes\n'.length + RANK_TEXT_CHARS);
    expect(phraseCounter([['kernel']])(text).counts).toEqual([1]);
    expect(rankText({ title: null, body: null })).toBe('\n');
  });
});

describe('BM25 over the candidates', () => {
  it('computes the idf as FTS5 does, floored for a phrase in more than half the posts', () => {
    expect(idf(100, 10)).toBeCloseTo(Math.log(90.5 / 10.5), 12);
    expect(idf(100, 60)).toBe(1e-6);
    expect(idf(100, 0)).toBeCloseTo(Math.log(100.5 / 0.5), 12);
  });

  it('counts a phrase exactly below the walk’s bound and by density beyond it', () => {
    expect(estimateMatching(7, 3, 10_000, 1000)).toBe(7);
    // 1,000 matches within the newest 2,000 rows of 10,000: half the posts.
    expect(estimateMatching(1000, 8001, 10_000, 1000)).toBe(5000);
    // Dense enough to exceed the collection: capped at its size.
    expect(estimateMatching(1000, 9999, 10_000, 1000)).toBe(10_000);
  });

  it('ranks more occurrences first at equal length, the shorter post first at equal count, and needs no idf for one phrase', () => {
    const posts = [
      { title: null, body: 'kernel aaaaaa bbbbbb' },
      { title: null, body: 'kernel kernel kernel' },
      { title: null, body: 'kernel' },
    ];
    const scores = rankScores([['kernel']], posts, noCollection);
    expect(scores[1]!).toBeLessThan(scores[0]!);
    expect(scores[2]!).toBeLessThan(scores[0]!);
    expect([0, 1, 2].sort((a, b) => scores[a]! - scores[b]!)).toEqual([1, 2, 0]);
    expect(scores.every((s) => s < 0)).toBe(true);
    expect(rankScores([['kernel']], [], noCollection)).toEqual([]);
  });

  it('weighs the rarer phrase of a query more', () => {
    const posts = [
      { title: null, body: 'common common common rare filler' },
      { title: null, body: 'common rare rare rare filler' },
    ];
    const asked: string[] = [];
    const collection = (): RankCollection => ({
      size: 10_000,
      matching: (phrase) => {
        asked.push(phrase.join(' '));
        return phrase[0] === 'common' ? 4000 : 10;
      },
    });
    const [a, b] = rankScores([['common'], ['rare']], posts, collection);
    expect(b!).toBeLessThan(a!);
    expect(asked).toEqual(['common', 'rare']);
    // The other way round when the other word is the rare one.
    const [c, d] = rankScores([['common'], ['rare']], posts, () => ({ size: 10_000, matching: (p) => (p[0] === 'common' ? 10 : 4000) }));
    expect(c!).toBeLessThan(d!);
  });
});
