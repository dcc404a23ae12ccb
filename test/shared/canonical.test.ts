import { describe, expect, it } from 'vitest';
import { canonicalize, findForbiddenValue, readCanonical, rfc8785Text } from '../../shared/canonical.js';
import { isSvcError } from '../../shared/errors.js';
import { JSON_DEPTH_MAX } from '../../shared/limits.js';
import { loadVector } from '../helpers/vectors.js';

const jcs = loadVector<{
  canonical: { name: string; input: string; output: string }[];
  not_canonical: { name: string; text: string }[];
}>('jcs-vectors.json');

describe('RFC 8785 vectors (jcs-vectors.json)', () => {
  for (const v of jcs.canonical) {
    it(`canonicalises: ${v.name}`, () => {
      expect(rfc8785Text(JSON.parse(v.input))).toBe(v.output);
      // Where a vector holds an integer beyond ±(2^53 − 1) (1e+21, 1e+30), the spec wins over
      // the vector: the protocol's writer and strict reader refuse it, naming the integer rule.
      if (findForbiddenValue(JSON.parse(v.output)) === undefined) {
        expect(canonicalize(JSON.parse(v.input))).toBe(v.output);
        expect(canonicalize(readCanonical(v.output))).toBe(v.output);
      } else {
        expect(() => canonicalize(JSON.parse(v.input))).toThrow(/integer beyond/);
        expect(() => readCanonical(v.output)).toThrow(/integer beyond/);
      }
    });
  }
  for (const v of jcs.not_canonical) {
    it(`refuses as canonical: ${v.name}`, () => {
      let err: unknown;
      try {
        readCanonical(Buffer.from(v.text, 'utf8'));
      } catch (e) {
        err = e;
      }
      expect(isSvcError(err, 'INVALID_REQUEST')).toBe(true);
    });
  }
});

describe('nesting', () => {
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  it('reads bytes nested exactly as deep as JSON_DEPTH_MAX', () => {
    expect(readCanonical(nested(JSON_DEPTH_MAX))).toBeDefined();
  });
  it('refuses one level deeper, and 30,000 levels, as INVALID_REQUEST instead of overflowing the stack', () => {
    for (const n of [JSON_DEPTH_MAX + 1, 30_000]) {
      expect(() => readCanonical(nested(n), 'private')).toThrow(/INVALID_REQUEST: private: arrays and objects nest more than/);
    }
  });
  it('does not count brackets inside strings', () => {
    expect(readCanonical(`["${'['.repeat(1_000)}"]`)).toEqual(['['.repeat(1_000)]);
  });
});
