/**
 * Sealed suite 1 underneath the formats: RFC 9180 A.1 in full (both modes), every Wycheproof
 * X25519 case and every Wycheproof AES-128-GCM case, read from test/vectors/published/.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromHex, toHex } from '../../../shared/encoding.js';
import { aesGcmOpen, aesGcmSeal } from '../../../shared/sealed/aes-gcm.js';
import { isSealedError } from '../../../shared/sealed/errors.js';
import { hkdf, hkdfExpand, hkdfExtract } from '../../../shared/sealed/hkdf.js';
import {
  authDecap,
  authEncap,
  computeNonce,
  contextOpen,
  contextSeal,
  decap,
  deriveKeyPair,
  encap,
  keySchedule,
  MODE_AUTH,
  MODE_BASE,
  openAuth,
  openBase,
  sealAuth,
  sealBase,
} from '../../../shared/sealed/hpke.js';
import { x25519, x25519PublicKey } from '../../../shared/sealed/x25519.js';
import { loadVector } from '../../helpers/vectors.js';

interface HpkeVector {
  mode: number;
  info: string;
  ikmE: string;
  ikmR: string;
  ikmS?: string;
  skEm: string;
  pkEm: string;
  skRm: string;
  pkRm: string;
  skSm?: string;
  pkSm?: string;
  enc: string;
  shared_secret: string;
  key_schedule_context: string;
  secret: string;
  key: string;
  base_nonce: string;
  exporter_secret: string;
  encryptions: { aad: string; ct: string; nonce: string; pt: string }[];
}

const hpke = loadVector<{ vectors: HpkeVector[] }>('hpke-rfc9180-a1.json').vectors;
const h = (s: string): Uint8Array => fromHex(s);

describe('RFC 5869 HKDF-SHA256 built on HMAC', () => {
  it('reproduces RFC 5869 A.1 (test case 1) and A.3 (empty salt and info)', () => {
    const ikm = new Uint8Array(22).fill(0x0b);
    const prk = hkdfExtract(h('000102030405060708090a0b0c'), ikm);
    expect(toHex(prk)).toBe('077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5');
    expect(toHex(hkdfExpand(prk, h('f0f1f2f3f4f5f6f7f8f9'), 42))).toBe(
      '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
    );
    expect(toHex(hkdf(new Uint8Array(0), ikm, new Uint8Array(0), 42))).toBe(
      '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
    );
  });
});

describe.each(hpke)('RFC 9180 A.1, mode $mode', (v) => {
  const auth = v.mode === MODE_AUTH;

  it('DeriveKeyPair gives the listed ephemeral, recipient and sender key pairs', () => {
    const e = deriveKeyPair(h(v.ikmE));
    expect([toHex(e.privateKey), toHex(e.publicKey)]).toEqual([v.skEm, v.pkEm]);
    const r = deriveKeyPair(h(v.ikmR));
    expect([toHex(r.privateKey), toHex(r.publicKey)]).toEqual([v.skRm, v.pkRm]);
    if (auth) {
      const s = deriveKeyPair(h(v.ikmS!));
      expect([toHex(s.privateKey), toHex(s.publicKey)]).toEqual([v.skSm, v.pkSm]);
    }
  });

  it('Encap (or AuthEncap) with the derived ephemeral key gives enc and the shared secret, and Decap agrees', () => {
    const out = auth ? authEncap(h(v.pkRm), h(v.skSm!), h(v.ikmE)) : encap(h(v.pkRm), h(v.ikmE));
    expect(toHex(out.enc)).toBe(v.enc);
    expect(toHex(out.sharedSecret)).toBe(v.shared_secret);
    const back = auth ? authDecap(h(v.enc), h(v.skRm), h(v.pkSm!)) : decap(h(v.enc), h(v.skRm));
    expect(toHex(back)).toBe(v.shared_secret);
  });

  it('KeySchedule gives the context, secret, key, base nonce and exporter secret', () => {
    const ks = keySchedule(auth ? MODE_AUTH : MODE_BASE, h(v.shared_secret), h(v.info));
    expect(toHex(ks.keyScheduleContext)).toBe(v.key_schedule_context);
    expect(toHex(ks.secret)).toBe(v.secret);
    expect(toHex(ks.key)).toBe(v.key);
    expect(toHex(ks.baseNonce)).toBe(v.base_nonce);
    expect(toHex(ks.exporterSecret)).toBe(v.exporter_secret);
  });

  it('sealing each plaintext at its sequence number gives the listed nonce and ciphertext, and opening gives it back', () => {
    expect(v.encryptions).toHaveLength(4);
    const ks = keySchedule(auth ? MODE_AUTH : MODE_BASE, h(v.shared_secret), h(v.info));
    v.encryptions.forEach((e, seq) => {
      expect(toHex(computeNonce(ks.baseNonce, seq))).toBe(e.nonce);
      expect(toHex(contextSeal(ks, seq, h(e.aad), h(e.pt)))).toBe(e.ct);
      expect(toHex(contextOpen(ks, seq, h(e.aad), h(e.ct)))).toBe(e.pt);
    });
  });

  it('the single-shot API at sequence 0 reproduces the first encryption and opens it', () => {
    const e0 = v.encryptions[0]!;
    const sealed = auth
      ? sealAuth({ pkR: h(v.pkRm), info: h(v.info), aad: h(e0.aad), pt: h(e0.pt), skS: h(v.skSm!), ikmE: h(v.ikmE) })
      : sealBase({ pkR: h(v.pkRm), info: h(v.info), aad: h(e0.aad), pt: h(e0.pt), ikmE: h(v.ikmE) });
    expect(toHex(sealed.enc)).toBe(v.enc);
    expect(toHex(sealed.ct)).toBe(e0.ct);
    const pt = auth
      ? openAuth({ enc: sealed.enc, skR: h(v.skRm), info: h(v.info), aad: h(e0.aad), ct: sealed.ct, pkS: h(v.pkSm!) })
      : openBase({ enc: sealed.enc, skR: h(v.skRm), info: h(v.info), aad: h(e0.aad), ct: sealed.ct });
    expect(toHex(pt)).toBe(e0.pt);
  });
});

describe('OpenAuth refusals', () => {
  const v = hpke.find((x) => x.mode === MODE_AUTH)!;
  const e0 = v.encryptions[0]!;
  const base = { enc: h(v.enc), skR: h(v.skRm), info: h(v.info), aad: h(e0.aad), ct: h(e0.ct), pkS: h(v.pkSm!) };

  it('a ciphertext sealed by another sender does not open under the expected sender', () => {
    const other = deriveKeyPair(new Uint8Array(32).fill(7));
    expect(() => openAuth({ ...base, pkS: other.publicKey })).toThrow(expect.objectContaining({ reason: 'aead-open' }));
  });

  it('a changed byte anywhere in enc, ciphertext, aad or info is refused', () => {
    const flip = (b: Uint8Array, i: number): Uint8Array => b.map((x, j) => (j === i ? x ^ 1 : x));
    for (const field of ['enc', 'ct', 'aad', 'info'] as const) {
      for (const i of [0, base[field].length - 1]) {
        let err: unknown;
        try {
          openAuth({ ...base, [field]: flip(base[field], i) });
        } catch (e) {
          err = e;
        }
        expect(isSealedError(err), `${field}[${i}]`).toBe(true);
      }
    }
  });
});

describe('Wycheproof X25519', () => {
  const cases = loadVector<{ tests: { tcId: number; comment: string; public: string; private: string; shared: string }[] }>(
    'wycheproof-x25519.json',
  ).tests;

  it('holds 87 cases, 28 of them with an all-zero shared secret', () => {
    expect(cases).toHaveLength(87);
    expect(cases.filter((c) => /^0+$/.test(c.shared))).toHaveLength(28);
  });

  it.each(cases)('case $tcId ($comment): equal to the listed secret, or refused when that is all zero', (c) => {
    if (/^0+$/.test(c.shared)) {
      expect(() => x25519(h(c.private), h(c.public))).toThrow(expect.objectContaining({ reason: 'x25519-zero' }));
    } else {
      expect(toHex(x25519(h(c.private), h(c.public)))).toBe(c.shared);
    }
  });

  it('an all-zero result also stops DHKEM: Encap to a low-order key is refused', () => {
    const lowOrder = cases.find((c) => /^0+$/.test(c.shared))!;
    expect(() => encap(h(lowOrder.public), new Uint8Array(32).fill(1))).toThrow(
      expect.objectContaining({ reason: 'x25519-zero' }),
    );
  });

  it('X25519 is symmetric between two derived key pairs', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
        const pa = x25519PublicKey(a);
        const pb = x25519PublicKey(b);
        expect(toHex(x25519(a, pb))).toBe(toHex(x25519(b, pa)));
      }),
      { numRuns: 50 },
    );
  });
});

describe('Wycheproof AES-128-GCM', () => {
  const group = loadVector<{
    testGroups: {
      ivSize: number;
      keySize: number;
      tagSize: number;
      tests: { tcId: number; comment: string; key: string; iv: string; aad: string; msg: string; ct: string; tag: string; result: string }[];
    }[];
  }>('wycheproof-aes128-gcm.json').testGroups;
  const cases = group.flatMap((g) => g.tests);

  it('holds one group of 96-bit nonces, 128-bit keys and tags: 22 valid and 27 invalid cases', () => {
    expect(group.map((g) => [g.ivSize, g.keySize, g.tagSize])).toEqual([[96, 128, 128]]);
    expect(cases.filter((c) => c.result === 'valid')).toHaveLength(22);
    expect(cases.filter((c) => c.result === 'invalid')).toHaveLength(27);
  });

  it.each(cases)('case $tcId ($result $comment): valid seals to ct || tag and opens; invalid is refused', (c) => {
    const sealed = fromHex(c.ct + c.tag);
    const opened = aesGcmOpen(h(c.key), h(c.iv), sealed, h(c.aad));
    if (c.result === 'valid') {
      expect(toHex(aesGcmSeal(h(c.key), h(c.iv), h(c.msg), h(c.aad)))).toBe(c.ct + c.tag);
      expect(opened && toHex(opened)).toBe(c.msg);
    } else {
      expect(opened).toBeUndefined();
    }
  });

  it('a sealed value shorter than the tag is refused, not thrown', () => {
    expect(aesGcmOpen(new Uint8Array(16), new Uint8Array(12), new Uint8Array(15), new Uint8Array(0))).toBeUndefined();
  });
});
