import { describe, expect, it } from 'vitest';
import { canonicalize, readCanonical } from '../shared/canonical.js';
import { isSvcError } from '../shared/errors.js';
import { loadVector } from './vectors.js';

const jcs = loadVector<{
  canonical: { name: string; input: string; output: string }[];
  not_canonical: { name: string; text: string }[];
}>('jcs-vectors.json');

describe('RFC 8785 vectors (jcs-vectors.json)', () => {
  for (const v of jcs.canonical) {
    it(`canonicalises: ${v.name}`, () => {
      expect(canonicalize(JSON.parse(v.input))).toBe(v.output);
      expect(canonicalize(readCanonical(v.output))).toBe(v.output);
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
