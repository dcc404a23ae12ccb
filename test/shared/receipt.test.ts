import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical.js';
import { fromHex, toBase64url, toHex } from '../../shared/encoding.js';
import { signerFromSeed, verifyEd25519 } from '../../shared/identity.js';
import {
  fullReceipt,
  readReceipt,
  receiptBytes,
  receiptId,
  receiptSignatureMessage,
  shortReceipt,
  signReceipt,
  verifyReceipt,
  type ReceiptFields,
} from '../../shared/receipt.js';
import { createServiceSigner, serviceKeyId } from '../../shared/service-keys.js';
import { loadOwnVector } from '../helpers/vectors.js';
import { expectEvidenceRefused, flipHex } from '../helpers/refusals.js';

const pin = loadOwnVector('service.json');
const root = signerFromSeed(fromHex(pin.inputs.root_seed, 32));
const online = signerFromSeed(fromHex(pin.inputs.online_seed, 32));
const other = signerFromSeed(new Uint8Array(32).fill(9));
const signer = createServiceSigner({ root, online, notBefore: pin.inputs.not_before, notAfter: pin.inputs.not_after });

type PinReceipt = { fields: ReceiptFields & { v: 1 }; canonical_utf8: string; receipt_id: string; signature: string; short: unknown; full: unknown };
const receipts = pin.receipts as PinReceipt[];
const first = receipts[0]!;

function sign(r: PinReceipt) {
  const { service_epoch, signer_key_id: _k, v: _v, ...post } = r.fields;
  return signReceipt(signer, post, service_epoch);
}

/** A post answer as the relay gives it (api-notes posts.append), carrying `receipt`. */
function answer(r: PinReceipt, receipt: unknown): Record<string, unknown> {
  return {
    post_id: r.fields.post_id,
    seq: r.fields.seq,
    posted_at: r.fields.posted_at,
    replayed: false,
    space_id: r.fields.space_id,
    object_id: r.fields.object_id,
    chain_hash: r.fields.chain_hash,
    signed: true,
    sealed: false,
    receipt,
  };
}

describe('receipts (pinned by the Python generator)', () => {
  for (const r of receipts) {
    it(`seq ${r.fields.seq}: bytes, id, signature, short and full forms equal the pin`, () => {
      const signed = sign(r);
      expect(Buffer.from(signed.canonical).toString('utf8')).toBe(r.canonical_utf8);
      expect(toHex(signed.id)).toBe(r.receipt_id);
      expect(toHex(receiptId(receiptBytes(signed.fields)))).toBe(r.receipt_id);
      expect(toHex(signed.signature)).toBe(r.signature);
      expect(shortReceipt(signed)).toEqual(r.short);
      expect(fullReceipt(signed)).toEqual(r.full);
    });
  }

  it('the online key signs the receipt-signature label and the receipt id', () => {
    const signed = sign(first);
    expect(verifyEd25519(online.publicKey, receiptSignatureMessage(signed.canonical), signed.signature)).toBe(true);
    expect(signed.fields.signer_key_id).toBe(toHex(serviceKeyId(online.publicKey)));
  });

  it('keeps posted_at as an opaque string and service_epoch as null when there is none', () => {
    const r = receipts[1]!;
    const { v: _v, ...rest } = r.fields;
    expect(readReceipt(sign(r).canonical)).toEqual(rest);
    expect(rest.service_epoch).toBeNull();
    expect(rest.posted_at).toBe('2026-09-10T12:34:57.123456+00:00');
  });
});

describe('verifying the receipt of a post answer', () => {
  for (const r of receipts) {
    it(`seq ${r.fields.seq}: the short form is rebuilt from the answer and verifies`, () => {
      const fields = verifyReceipt(answer(r, r.short), online.publicKey);
      expect(fields.seq).toBe(r.fields.seq);
      expect(fields.service_epoch).toBe(r.fields.service_epoch);
    });

    it(`seq ${r.fields.seq}: the full form verifies`, () => {
      expect(verifyReceipt(answer(r, r.full), online.publicKey).object_id).toBe(r.fields.object_id);
    });
  }

  it('refuses a short receipt with one flipped signature byte', () => {
    for (const byte of [0, 32, 63]) {
      const short = { ...(first.short as object), signature: flipHex(first.signature, byte) };
      expectEvidenceRefused(() => verifyReceipt(answer(first, short), online.publicKey), /signature: does not verify/);
    }
  });

  it('refuses a full receipt with one flipped signature byte', () => {
    const full = { ...(first.full as object), signature: flipHex(first.signature, 7) };
    expectEvidenceRefused(() => verifyReceipt(answer(first, full), online.publicKey), /does not verify/);
  });

  for (const name of ['seq', 'object_id', 'chain_hash', 'posted_at', 'post_id', 'space_id'] as const) {
    const changed: Record<string, string> = {
      seq: '70',
      object_id: flipHex(first.fields.object_id),
      chain_hash: flipHex(first.fields.chain_hash),
      posted_at: '2026-09-10T12:34:56.790Z',
      post_id: '0199dddd-eeee-7fff-8000-000000000009',
      space_id: '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee',
    };
    it(`refuses a short receipt when the answer's ${name} was changed`, () => {
      const a = { ...answer(first, first.short), [name]: changed[name] };
      expectEvidenceRefused(() => verifyReceipt(a, online.publicKey), /does not verify/);
    });
    it(`refuses a full receipt whose signed ${name} differs from the answer's`, () => {
      const a = { ...answer(first, first.full), [name]: changed[name] };
      expectEvidenceRefused(() => verifyReceipt(a, online.publicKey), new RegExp(`${name} differs`));
    });
  }

  it('refuses a short receipt whose service_epoch was changed', () => {
    const short = { ...(first.short as object), service_epoch: null };
    expectEvidenceRefused(() => verifyReceipt(answer(first, short), online.publicKey), /does not verify/);
  });

  it('refuses a receipt checked against another signer key', () => {
    expectEvidenceRefused(() => verifyReceipt(answer(first, first.short), other.publicKey), /key id of the given signer/);
  });

  it('refuses a receipt signed by another key that names that key', () => {
    const forger = createServiceSigner({ root, online: other, notBefore: pin.inputs.not_before });
    const { service_epoch, signer_key_id: _k, v: _v, ...post } = first.fields;
    const forged = shortReceipt(signReceipt(forger, post, service_epoch));
    expectEvidenceRefused(() => verifyReceipt(answer(first, forged), online.publicKey), /key id/);
  });

  it('refuses malformed receipts naming the member', () => {
    const short = first.short as Record<string, unknown>;
    expectEvidenceRefused(() => verifyReceipt(answer(first, { ...short, v: 2 }), online.publicKey), /receipt\.v/);
    expectEvidenceRefused(() => verifyReceipt(answer(first, { ...short, extra: 1 }), online.publicKey), /extra: unexpected/);
    expectEvidenceRefused(() => verifyReceipt(answer(first, { ...short, signature: 'ab' }), online.publicKey), /receipt\.signature/);
    expectEvidenceRefused(() => verifyReceipt(answer(first, null), online.publicKey), /receipt: expected an object/);
    expectEvidenceRefused(() => verifyReceipt({ ...answer(first, short), seq: 7 }, online.publicKey), /seq/);
    const nonCanonical = { ...(first.full as object), canonical: toBase64url(Buffer.from(JSON.stringify(first.fields, null, 1))) };
    expectEvidenceRefused(() => verifyReceipt(answer(first, nonCanonical), online.publicKey), /receipt\.canonical/);
    const extraMember = { ...(first.full as object), canonical: toBase64url(canonicalBytes({ ...first.fields, note: 'x' })) };
    expectEvidenceRefused(() => verifyReceipt(answer(first, extraMember), online.publicKey), /note: unexpected/);
  });
});
