import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalBytes,
  canonicalize,
  findForbiddenValue,
  readCanonical,
  readCanonicalObject,
} from '../../shared/canonical.js';
import { equalBytes, utf8 } from '../../shared/encoding.js';
import { SvcError, isSvcError } from '../../shared/errors.js';

/** JSON values over all of Unicode, minus the ones the protocol refuses anywhere. */
const allowedJson = fc
  .jsonValue({ stringUnit: 'grapheme', maxDepth: 4 })
  .filter((v) => findForbiddenValue(v) === undefined);

function refusedAsInvalid(run: () => unknown): boolean {
  try {
    run();
    return false;
  } catch (e) {
    if (isSvcError(e, 'INVALID_REQUEST')) return true;
    throw e;
  }
}

describe('canonical write, strict read', () => {
  it('round-trips any allowed JSON value, and the text is a fixed point', () => {
    fc.assert(
      fc.property(allowedJson, (value) => {
        const bytes = canonicalBytes(value);
        const read = readCanonical(bytes);
        // -0 is written as 0, so compare with the value as plain JSON would carry it.
        expect(read).toEqual(JSON.parse(JSON.stringify(value)));
        expect(equalBytes(canonicalBytes(read), bytes)).toBe(true);
        expect(readCanonical(canonicalize(value))).toEqual(read);
      }),
      { numRuns: 300 },
    );
  });

  it('changing any single byte is refused, or reads as a value whose canonical bytes are the changed ones', () => {
    const mutated = allowedJson
      .map((value) => canonicalBytes(value))
      .chain((bytes) =>
        fc.record({
          bytes: fc.constant(bytes),
          at: fc.nat({ max: bytes.length - 1 }),
          to: fc.integer({ min: 0, max: 255 }),
        }),
      )
      .filter(({ bytes, at, to }) => bytes[at] !== to);
    fc.assert(
      fc.property(mutated, ({ bytes, at, to }) => {
        const changed = Uint8Array.from(bytes);
        changed[at] = to;
        let read: unknown;
        try {
          read = readCanonical(changed);
        } catch (e) {
          expect(isSvcError(e, 'INVALID_REQUEST')).toBe(true);
          return;
        }
        const again = canonicalBytes(read);
        expect(equalBytes(again, changed)).toBe(true);
        expect(equalBytes(again, bytes)).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('any non-canonical spelling of a value (whitespace, member order) is refused', () => {
    const object = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.integer(), { minKeys: 2, maxKeys: 6 });
    fc.assert(
      fc.property(object, (obj) => {
        const canonical = canonicalize(obj);
        const spaced = JSON.stringify(obj, null, 1);
        if (spaced !== canonical) expect(refusedAsInvalid(() => readCanonical(spaced))).toBe(true);
        const reversed = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(canonical)).reverse()));
        if (reversed !== canonical) expect(refusedAsInvalid(() => readCanonical(reversed))).toBe(true);
      }),
    );
  });
});

describe('values refused anywhere', () => {
  const refusedTexts: [string, string][] = [
    ['an escaped U+0000 in a string', '["\\u0000"]'],
    ['an escaped U+0000 in a member name', '{"a\\u0000":1}'],
    ['a raw U+0000 byte', '["a\u0000"]'],
    ['an escaped lone high surrogate', '["\\ud800"]'],
    ['an escaped lone low surrogate in a member name', '{"\\udc00":1}'],
    ['a surrogate pair in the wrong order', '["\\udc00\\ud800"]'],
    ['the integer 2^53', '9007199254740992'],
    ['the integer -(2^53)', '-9007199254740992'],
    ['2^53 inside an object', '{"n":9007199254740992}'],
    ['the integer 10^21, as RFC 8785 writes it', '1e+21'],
    ['the integer -(10^300)', '-1e+300'],
    ['a large integer inside an array', '[1.2345678901234568e+23]'],
    ['a duplicate member', '{"a":1,"a":1}'],
    ['a duplicate member with another value', '{"a":1,"a":2}'],
    ['a nested duplicate member', '{"x":{"b":true,"b":true}}'],
    ['negative zero', '-0'],
    ['a trailing newline', '{}\n'],
  ];
  for (const [name, text] of refusedTexts) {
    it(`refuses ${name}`, () => {
      expect(refusedAsInvalid(() => readCanonical(utf8(text)))).toBe(true);
      expect(refusedAsInvalid(() => readCanonical(text))).toBe(true);
    });
  }

  it('refuses a byte-order mark as bytes and as text', () => {
    expect(refusedAsInvalid(() => readCanonical(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])))).toBe(true);
    expect(refusedAsInvalid(() => readCanonical('\uFEFF{}'))).toBe(true);
  });

  it('accepts the largest safe integers and a real surrogate pair', () => {
    expect(readCanonical('9007199254740991')).toBe(2 ** 53 - 1);
    expect(readCanonical('-9007199254740991')).toBe(-(2 ** 53 - 1));
    expect(readCanonical(utf8('["\u{1F600}"]'))).toEqual(['\u{1F600}']);
    expect(readCanonical('1.5e-7')).toBe(1.5e-7);
  });

  it('refuses the same values on the writing side', () => {
    for (const value of [{ n: 2 ** 53 }, [-(2 ** 53)], 1e21, -1e300, '\ud800', { '\u0000': 1 }, NaN, Infinity, undefined, () => 1]) {
      expect(() => canonicalize(value)).toThrow(SvcError);
    }
  });

  it('reads an object only where one is required', () => {
    expect(readCanonicalObject('{"a":[]}')).toEqual({ a: [] });
    for (const text of ['[]', '1', 'null', '"x"']) {
      expect(refusedAsInvalid(() => readCanonicalObject(text, 'statement'))).toBe(true);
    }
  });
});
