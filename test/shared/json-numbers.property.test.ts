/**
 * Numbers over the whole number line, read by the real strict readers (spec/1-concepts.md
 * "Encoding conventions": refused in any JSON value, an integer beyond ±(2^53 − 1); "Post":
 * `data` is stored as sent).
 *
 * - Safe integers are accepted and read back as sent.
 * - An integer beyond ±(2^53 − 1) is refused in every textual form: digits, a trailing `.0`,
 *   exponent forms (`1e300`, `1E21`, `1.5e+25`, `150e-1` style), negative or not.
 * - Fractions within the range are accepted and read as JSON.parse reads them. Beyond the
 *   range every double is an integer, so a fraction there is refused too.
 *
 * The readers: relay/http/json-body.ts (every HTTP body), shared/canonical.ts readCanonical
 * (protocol bytes inside a body: signed objects, private parts), shared/validate.ts
 * validateData (the bridge's post tool builds `data` from MCP arguments with it); then one
 * end-to-end append over HTTP.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalize, readCanonical } from '../../shared/canonical.js';
import { isSvcError } from '../../shared/errors.js';
import { validateData } from '../../shared/validate.js';
import { parseJsonBody } from '../../relay/http/json-body.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';
import { get, newSpace } from '../helpers/posts.js';

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** The refusal of `run`, or undefined when it accepted. */
function refusal(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    if (isSvcError(e, 'INVALID_REQUEST')) return e.detail ?? e.code;
    throw e;
  }
}

/** Ways to write the integer `n` as a JSON number token. */
function integerTexts(n: bigint): string[] {
  const sign = n < 0n ? '-' : '';
  const digits = (n < 0n ? -n : n).toString();
  const exp = digits.length - 1;
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return [
    `${sign}${digits}`,
    `${sign}${digits}.0`,
    `${sign}${digits}.000`,
    `${sign}${mantissa}e${exp}`,
    `${sign}${mantissa}E${exp}`,
    `${sign}${mantissa}e+${exp}`,
    `${sign}${mantissa}E+${exp}`,
    `${sign}${digits}0e-1`,
    `${sign}0.${digits}e${digits.length}`,
  ];
}

/** Integers beyond ±(2^53 − 1), from just past the edge to past the largest double. */
const unsafeInteger = fc
  .oneof(
    fc.bigInt({ min: MAX + 1n, max: MAX + 1_000_000n }),
    fc.bigInt({ min: MAX + 1n, max: 10n ** 30n }),
    fc.bigInt({ min: 10n ** 20n, max: 10n ** 320n }),
  )
  .chain((n) => fc.constantFrom(n, -n));

/** A token inside the places a body holds numbers: alone, in an array, as a member of data. */
function placed(token: string): fc.Arbitrary<string> {
  return fc.constantFrom(token, `[${token}]`, `{"kind":"obs","data":{"x_n":${token}}}`, `{"a":[{"b":${token}}]}`);
}

describe('the strict readers over the whole number line', () => {
  it('accept every safe integer in digits and read it back exactly', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(parseJsonBody(String(n))).toBe(n);
        expect(readCanonical(String(n))).toBe(n);
        expect(validateData({ x_n: n })).toEqual({ x_n: n });
      }),
      { numRuns: 500 },
    );
  });

  it('accept a safe integer written in exponent form, as its value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -MAX, max: MAX }).filter((n) => n !== 0n), (n) => {
        for (const text of integerTexts(n)) expect(parseJsonBody(text), text).toBe(Number(n));
      }),
      { numRuns: 300 },
    );
  });

  it('refuse an integer beyond ±(2^53 − 1) in every textual form and every place', () => {
    fc.assert(
      fc.property(
        unsafeInteger.chain((n) => fc.constantFrom(...integerTexts(n)).chain(placed)),
        (text) => {
          expect(refusal(() => parseJsonBody(text)), text).toMatch(/integer beyond|non-finite/);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuse the edge exactly: ±(2^53 − 1) accepted, ±2^53 refused, whatever the spelling', () => {
    for (const n of [MAX, -MAX]) for (const text of integerTexts(n)) expect(refusal(() => parseJsonBody(text)), text).toBeUndefined();
    for (const n of [MAX + 1n, -(MAX + 1n), MAX + 2n]) for (const text of integerTexts(n)) expect(refusal(() => parseJsonBody(text)), text).toMatch(/integer beyond/);
    for (const text of ['123456789012345678901234', '1e21', '1E21', '1e300', '-1e300', '2.0e25', '1.5e+25', '9007199254740993.5']) {
      expect(refusal(() => parseJsonBody(`{"data":{"x_n":${text}}}`)), text).toBe('body.data.x_n: integer beyond ±(2^53 - 1)');
    }
  });

  it('take any double as JSON writes it: accepted within ±(2^53 − 1), refused beyond', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = JSON.stringify(x);
        const inRange = Math.abs(x) <= Number.MAX_SAFE_INTEGER;
        const body = refusal(() => parseJsonBody(text));
        const bytes = refusal(() => readCanonical(canonicalText(x)));
        const data = refusal(() => validateData({ x_n: x }));
        if (inRange) {
          expect(body).toBeUndefined();
          expect(parseJsonBody(text)).toBe(x === 0 ? 0 : x);
          expect(bytes).toBeUndefined();
          expect(data).toBeUndefined();
        } else {
          expect(body).toMatch(/integer beyond/);
          expect(bytes).toMatch(/integer beyond/);
          expect(data).toMatch(/integer beyond/);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('keep fractions within the range as JSON.parse reads them, in every place', () => {
    const fraction = fc
      .double({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER, noNaN: true })
      .filter((x) => !Number.isInteger(x));
    fc.assert(
      fc.property(fraction, (x) => {
        const text = `{"kind":"obs","data":{"x_n":${x},"x_e":${x.toExponential()}}}`;
        expect(parseJsonBody(text)).toEqual(JSON.parse(text));
        expect(validateData({ x_n: x })).toEqual({ x_n: x });
      }),
      { numRuns: 500 },
    );
  });
});

/** RFC 8785 text of a number the writer would refuse: the reader must refuse it on its own. */
function canonicalText(x: number): string {
  return Math.abs(x) <= Number.MAX_SAFE_INTEGER ? canonicalize(x) : JSON.stringify(x);
}

describe('posts.append over HTTP', () => {
  let relay: RunningRelay;
  let owner: MintedToken;
  beforeAll(async () => {
    relay = await startRelay();
    owner = await mintToken(relay.url);
  });
  afterAll(async () => {
    await relay.close();
  });

  async function send(space: string, text: string): Promise<{ status: number; body: any }> {
    relay.clock.advance(2_100);
    const res = await fetch(`${relay.url}/v1/spaces/${space}/posts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: text,
    });
    return { status: res.status, body: await res.json() };
  }

  it('refuses data holding an integer beyond ±(2^53 − 1), stores nothing, and keeps safe integers and fractions as sent', async () => {
    const space = await newSpace(relay, owner);
    for (const n of ['123456789012345678901234', '1e300', '1E21', '-9007199254740992']) {
      const r = await send(space.name, `{"kind":"obs","body":"n","data":{"x_n":${n}}}`);
      expect(r.status, n).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'INVALID_REQUEST', detail: 'body.data.x_n: integer beyond ±(2^53 - 1)' });
    }
    expect((await relay.store.posts.head(space.id)).seq).toBe(0);
    const ok = await send(space.name, '{"kind":"obs","body":"n","data":{"x_max":9007199254740991,"x_min":-9007199254740991,"x_f":0.1,"x_e":1.5e-7}}');
    expect(ok.status).toBe(201);
    const read = await get(relay, `/v1/posts/${ok.body.post_id}`, owner);
    expect(read.body.data).toEqual({ x_max: 9007199254740991, x_min: -9007199254740991, x_f: 0.1, x_e: 1.5e-7 });
    expect(read.text).toContain('"x_max":9007199254740991');
  });
});
