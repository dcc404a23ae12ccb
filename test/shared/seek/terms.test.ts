/**
 * SEEK terms (shared/seek/terms.ts): ASCII text takes a one-pass path that must cut exactly the
 * terms the general Unicode path cuts, caps included; the general path folds accents and splits
 * paths into their parts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TERM_MAX_CHARS, termsOf, unicodeTerms } from '../../../shared/seek/terms.js';

/** ASCII text rich in what matters: letters of both cases, digits, separators, long runs. */
const asciiText = fc
  .array(
    fc.oneof(
      fc.string({ unit: fc.constantFrom(...'aZ09 _-/.\n\t'), maxLength: 12 }),
      fc.string({ unit: fc.mapToConstant({ num: 95, build: (v) => String.fromCharCode(0x20 + v) }), maxLength: 20 }),
      fc.string({ unit: fc.constantFrom('x', 'Y', '7'), minLength: 60, maxLength: 140 }),
      fc.string({ unit: fc.mapToConstant({ num: 128, build: (v) => String.fromCharCode(v) }), maxLength: 16 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

describe('SEEK terms', () => {
  it('of ASCII text are the same on the one-pass path as on the Unicode path, with any cap', () => {
    fc.assert(
      fc.property(asciiText, fc.integer({ min: 1, max: 40 }), (text, max) => {
        expect(termsOf(text)).toEqual(unicodeTerms(text));
        expect(termsOf(text, max)).toEqual(unicodeTerms(text, max));
      }),
      { numRuns: 2_000 },
    );
  });

  it('cut paths into parts, lowercase, and cap a long run at TERM_MAX_CHARS', () => {
    expect(termsOf('Panic in src/main.rs: Option_unwrap() -> None')).toEqual(['panic', 'in', 'src', 'main', 'rs', 'option', 'unwrap', 'none']);
    expect(termsOf('9'.repeat(100))).toEqual(['9'.repeat(TERM_MAX_CHARS)]);
    expect(termsOf('a b c d', 2)).toEqual(['a', 'b']);
  });

  it('of text beyond ASCII fold accents and compatibility forms the same way for documents and queries', () => {
    expect(termsOf('Crème_brûlée-2 ﬁnal Ｍａｉｎ')).toEqual(['creme', 'brulee', '2', 'final', 'main']);
    expect(termsOf('Straße Ωμέγα 東京')).toEqual(['straße', 'ωμεγα', '東京']);
  });
});
