import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  I64_MAX,
  concatBytes,
  equalBytes,
  fromBase64url,
  fromHex,
  fromUtf8,
  isHex,
  isUuid,
  parseDecimal,
  readU64,
  toBase64url,
  toDecimal,
  toHex,
  u64,
  utf8,
  utf8Length,
  uuid16,
  uuidFromBytes,
} from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { loadVector } from '../helpers/vectors.js';

const U64_MAX = (1n << 64n) - 1n;

/** The refusal `run` throws: INVALID_REQUEST with a detail naming `field`. */
function expectRefused(run: () => unknown, field: string): void {
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  expect(err, 'should have been refused').toBeInstanceOf(SvcError);
  expect((err as SvcError).code).toBe('INVALID_REQUEST');
  expect((err as SvcError).detail?.startsWith(`${field}: `)).toBe(true);
}

describe('lowercase hex', () => {
  it('round-trips any bytes, at any declared size', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const hex = toHex(bytes);
        expect(hex).toMatch(/^[0-9a-f]*$/);
        expect(hex).toHaveLength(bytes.length * 2);
        expect(isHex(hex)).toBe(true);
        expect(isHex(hex, bytes.length)).toBe(true);
        expect(equalBytes(fromHex(hex, bytes.length), bytes)).toBe(true);
      }),
    );
  });

  it('hexes a view into a larger buffer by its own bytes only', () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5]);
    expect(toHex(backing.subarray(1, 3))).toBe('0203');
  });

  it('refuses uppercase, odd length, other characters, the wrong size and non-strings', () => {
    expectRefused(() => fromHex('ABCD', undefined, 'peer_id'), 'peer_id');
    expectRefused(() => fromHex('abC0'), 'hex');
    expectRefused(() => fromHex('abc'), 'hex');
    expectRefused(() => fromHex('zz'), 'hex');
    expectRefused(() => fromHex('0x00'), 'hex');
    expectRefused(() => fromHex(' 00'), 'hex');
    expectRefused(() => fromHex('00'.repeat(31), 32, 'public_key'), 'public_key');
    expectRefused(() => fromHex('00'.repeat(33), 32, 'public_key'), 'public_key');
    expectRefused(() => fromHex(42), 'hex');
    expect(isHex('AB')).toBe(false);
    expect(isHex('abc')).toBe(false);
    expect(isHex('ab', 2)).toBe(false);
    expect(isHex(null)).toBe(false);
  });

  it('names the uppercase problem in the detail', () => {
    expect(() => fromHex('ABCD', undefined, 'signature')).toThrow('signature: hex must be lowercase');
    expect(() => fromHex('zz', undefined, 'signature')).toThrow('signature: not hex');
  });

  it('any hex text with an uppercase letter is refused', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 32 }), fc.nat(), (bytes, at) => {
        const hex = toHex(bytes);
        const letters = [...hex].map((c, i) => [c, i] as const).filter(([c]) => /[a-f]/.test(c));
        fc.pre(letters.length > 0);
        const [, i] = letters[at % letters.length]!;
        const upper = hex.slice(0, i) + hex[i]!.toUpperCase() + hex.slice(i + 1);
        expect(() => fromHex(upper)).toThrow(SvcError);
      }),
    );
  });
});

describe('unpadded base64url', () => {
  it('round-trips any bytes and never writes padding or the standard alphabet', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = toBase64url(bytes);
        expect(text).toMatch(/^[A-Za-z0-9_-]*$/);
        expect(text.length % 4).not.toBe(1);
        expect(equalBytes(fromBase64url(text), bytes)).toBe(true);
      }),
    );
  });

  it('agrees with the published base64url of the protocol-v1 canonical object', () => {
    const v = loadVector('protocol-v1-vectors.json');
    expect(toBase64url(utf8(v.object.canonical_utf8))).toBe(v.object.canonical_base64url);
    expect(fromUtf8(fromBase64url(v.control.canonical_base64url))).toBe(v.control.canonical_utf8);
  });

  it('refuses padding, + and /, a length of 1 mod 4, whitespace and non-strings', () => {
    expectRefused(() => fromBase64url('AA==', 'canonical'), 'canonical');
    expectRefused(() => fromBase64url('AAA='), 'base64url');
    expectRefused(() => fromBase64url('ab+c'), 'base64url');
    expectRefused(() => fromBase64url('ab/c'), 'base64url');
    expectRefused(() => fromBase64url('AAAAA'), 'base64url');
    expectRefused(() => fromBase64url('A'), 'base64url');
    expectRefused(() => fromBase64url('AA AA'), 'base64url');
    expectRefused(() => fromBase64url('AAAA\n'), 'base64url');
    expectRefused(() => fromBase64url(null), 'base64url');
  });

  it('refuses non-zero trailing bits, so every byte string has one accepted text', () => {
    expectRefused(() => fromBase64url('AB'), 'base64url'); // 0x00 is "AA"
    expectRefused(() => fromBase64url('AAB'), 'base64url'); // 0x00 0x00 is "AAA"
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }).filter((b) => b.length % 3 !== 0), fc.integer({ min: 1, max: 15 }), (bytes, bits) => {
        const text = toBase64url(bytes);
        // The last character carries 4 (one byte left over) or 2 (two left over) unused bits.
        const unused = bytes.length % 3 === 1 ? 4 : 2;
        const flip = bits & ((1 << unused) - 1);
        fc.pre(flip !== 0);
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
        const last = alphabet.indexOf(text.at(-1)!);
        const tampered = text.slice(0, -1) + alphabet[last ^ flip]!;
        expect(() => fromBase64url(tampered)).toThrow(SvcError);
      }),
    );
  });
});

describe('u64', () => {
  it('round-trips every value from 0 to 2^64 - 1, big-endian', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), (n) => {
        const b = u64(n);
        expect(b).toHaveLength(8);
        expect(readU64(b)).toBe(n);
        expect(BigInt(`0x${toHex(b)}`)).toBe(n);
      }),
    );
    expect(toHex(u64(1))).toBe('0000000000000001');
    expect(toHex(u64(U64_MAX))).toBe('ffffffffffffffff');
    expect(toHex(u64(258))).toBe('0000000000000102');
  });

  it('reads at an offset inside a larger buffer', () => {
    const joined = concatBytes(new Uint8Array([9, 9, 9]), u64(0x0102030405060708n));
    expect(readU64(joined, 3)).toBe(0x0102030405060708n);
    expect(readU64(joined.subarray(3))).toBe(0x0102030405060708n);
  });

  it('refuses values out of range and buffers too short', () => {
    expect(() => u64(-1)).toThrow(RangeError);
    expect(() => u64(U64_MAX + 1n)).toThrow(RangeError);
    expect(() => readU64(new Uint8Array(7))).toThrow(RangeError);
    expect(() => readU64(new Uint8Array(8), 1)).toThrow(RangeError);
  });
});

describe('uuids', () => {
  it('round-trips any sixteen bytes through the lowercase text form', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const text = uuidFromBytes(bytes);
        expect(isUuid(text)).toBe(true);
        expect(equalBytes(uuid16(text), bytes)).toBe(true);
      }),
    );
  });

  it('gives the sixteen bytes in text order', () => {
    expect(toHex(uuid16('00112233-4455-6677-8899-aabbccddeeff'))).toBe('00112233445566778899aabbccddeeff');
    fc.assert(
      fc.property(fc.uuid(), (u) => {
        expect(toHex(uuid16(u))).toBe(u.replaceAll('-', ''));
      }),
    );
  });

  it('refuses uppercase, missing hyphens, braces and the wrong length', () => {
    const u = '0190d5c4-2f3b-7cde-8f00-0123456789ab';
    expectRefused(() => uuid16(u.toUpperCase(), 'space_id'), 'space_id');
    expectRefused(() => uuid16(u.replaceAll('-', '')), 'uuid');
    expectRefused(() => uuid16(`{${u}}`), 'uuid');
    expectRefused(() => uuid16(u.slice(1)), 'uuid');
    expectRefused(() => uuid16(`${u}0`), 'uuid');
    expect(isUuid(42)).toBe(false);
    expect(() => uuidFromBytes(new Uint8Array(15))).toThrow(RangeError);
  });
});

describe('64-bit decimal strings', () => {
  it('round-trips every value from 0 to 2^63 - 1', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: I64_MAX }), (n) => {
        const text = toDecimal(n);
        expect(text).toMatch(/^(0|[1-9][0-9]*)$/);
        expect(parseDecimal(text)).toBe(n);
      }),
    );
    expect(toDecimal(0)).toBe('0');
    expect(toDecimal(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
  });

  it('refuses leading zeros, signs, fractions, exponents, spaces, empty text and numbers', () => {
    for (const bad of ['01', '00', '+1', '-1', '-0', '1.0', '1e3', ' 1', '1 ', '', '0x10', '１']) {
      expectRefused(() => parseDecimal(bad, 'seq'), 'seq');
    }
    expectRefused(() => parseDecimal(5, 'seq'), 'seq');
    expectRefused(() => parseDecimal(null, 'seq'), 'seq');
  });

  it('refuses values out of range, by default beyond 2^63 - 1 and within a given range', () => {
    expectRefused(() => parseDecimal((I64_MAX + 1n).toString(), 'seq'), 'seq');
    expectRefused(() => parseDecimal(U64_MAX.toString(), 'seq'), 'seq');
    expectRefused(() => parseDecimal('1'.repeat(21), 'seq'), 'seq');
    expectRefused(() => parseDecimal('0', 'seq', 1n), 'seq');
    expectRefused(() => parseDecimal('11', 'seq', 0n, 10n), 'seq');
    expect(parseDecimal(U64_MAX.toString(), 'n', 0n, U64_MAX)).toBe(U64_MAX);
    expect(parseDecimal('10', 'seq', 0n, 10n)).toBe(10n);
  });

  it('refuses to write a number that is not a safe integer', () => {
    expect(() => toDecimal(2 ** 53)).toThrow(RangeError);
    expect(() => toDecimal(1.5)).toThrow(RangeError);
    expect(toDecimal(2n ** 53n)).toBe('9007199254740992');
  });
});

describe('UTF-8 and byte helpers', () => {
  it('round-trips any well-formed text and measures it in bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const bytes = utf8(text);
        expect(fromUtf8(bytes)).toBe(text);
        expect(utf8Length(text)).toBe(bytes.length);
      }),
    );
  });

  it('refuses invalid UTF-8 (stray bytes, overlong forms, encoded surrogates, truncation)', () => {
    for (const hex of ['ff', 'c080', 'eda080', 'e282', 'f4908080']) {
      expectRefused(() => fromUtf8(fromHex(hex), 'canonical'), 'canonical');
    }
  });

  it('keeps a byte-order mark as U+FEFF instead of dropping it', () => {
    expect(fromUtf8(fromHex('efbbbf41'))).toBe('\uFEFFA');
  });

  it('concatenates and compares bytes', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 16 }), { maxLength: 5 }), (parts) => {
        const joined = concatBytes(...parts);
        expect(toHex(joined)).toBe(parts.map(toHex).join(''));
        expect(equalBytes(joined, Uint8Array.from(joined))).toBe(true);
      }),
    );
    expect(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(equalBytes(new Uint8Array([1]), new Uint8Array([1, 0]))).toBe(false);
  });
});
