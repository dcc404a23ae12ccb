import { describe, expect, it } from 'vitest';
import { canonicalize, findForbiddenValue, readCanonical, rfc8785Text } from '../shared/canonical.js';
import { isSvcError } from '../shared/errors.js';
import { loadVector } from './vectors.js';

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
