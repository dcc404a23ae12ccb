/**
 * SEEK's terms and expressions as PostgreSQL full-text literals (relay/store/postgres/seek-text.ts):
 * the relay's own terms with their positions, never re-tokenised, and only the expressions
 * shared/seek/terms.ts builds.
 */
import { describe, expect, it } from 'vitest';
import { LAST_POSITION, POSITIONS_PER_TERM, tsqueryLiteral, tsvectorLiteral } from '../../relay/store/postgres/seek-text.js';
import { postTerms, queryExpression, scopedExpression } from '../../shared/seek/terms.js';

describe('a document as a tsvector literal', () => {
  it('keeps each term as the relay cut it, the SPACE token included, with its positions in order', () => {
    expect(tsvectorLiteral(postTerms(12, 'src/main.rs', 'main crème')!)).toBe("'_s12':1 'src':2 'main':3,5 'rs':4 'creme':6");
  });

  it('keeps at most PostgreSQL’s positions of one term, and none past its last position', () => {
    const many = Array.from({ length: 300 }, () => 'a').join(' ');
    expect(tsvectorLiteral(many).split(',')).toHaveLength(POSITIONS_PER_TERM);
    const long = [...Array.from({ length: LAST_POSITION + 5 }, (_, i) => `t${i}`)].join(' ');
    const literal = tsvectorLiteral(long);
    expect(literal).toContain(`'t${LAST_POSITION - 1}':${LAST_POSITION}`);
    expect(literal).toContain(`'t${LAST_POSITION + 4}':${LAST_POSITION}`);
  });
});

describe('an expression as a tsquery literal', () => {
  it('makes a phrase of several terms a chain of <-> and AND an &', () => {
    expect(tsqueryLiteral(queryExpression('src/main.rs panic')!)).toBe("('src' <-> 'main' <-> 'rs') & 'panic'");
    expect(tsqueryLiteral(scopedExpression(queryExpression('Crème')!, 7))).toBe("'_s7' & ('creme')");
  });

  it('refuses anything the relay never builds, so no peer text reaches PostgreSQL’s query syntax', () => {
    for (const bad of ['', 'panic', '"a" OR "b"', '"a', '"a:*"', '"a" & "b"', `"it's"`, '"a" NOT "b"']) {
      expect(() => tsqueryLiteral(bad), bad).toThrow(/SEEK expression/);
    }
  });
});
