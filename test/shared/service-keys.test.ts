import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../shared/canonical.js';
import { fromHex, toBase64url, toHex, utf8 } from '../../shared/encoding.js';
import { signerFromSeed, verifyEd25519 } from '../../shared/identity.js';
import {
  CLOCK_SKEW_MS,
  certificateBytes,
  certificateId,
  certificateSignatureMessage,
  createServiceSigner,
  readCertificate,
  readIsoMillis,
  readServedSigner,
  renderSigner,
  serviceKeyId,
  serviceSignerFromCertificate,
  signCertificate,
  verifyCertificate,
  verifyServiceSigner,
  type ServedSigner,
  type SignerCheck,
} from '../../shared/service-keys.js';
import { loadOwnVector } from '../helpers/vectors.js';
import { expectEvidenceRefused, flipHex } from '../helpers/refusals.js';

const pin = loadOwnVector('service.json');
const root = signerFromSeed(fromHex(pin.inputs.root_seed, 32));
const online = signerFromSeed(fromHex(pin.inputs.online_seed, 32));
const other = signerFromSeed(new Uint8Array(32).fill(7));
const NOT_BEFORE: string = pin.inputs.not_before;
const NOT_AFTER: string = pin.inputs.not_after;

const signer = createServiceSigner({ root, online, notBefore: NOT_BEFORE, notAfter: NOT_AFTER });
const devSigner = createServiceSigner({ root, online, notBefore: NOT_BEFORE, development: true });

const at = (ms: number) => new Date(ms).toISOString();
const check: SignerCheck = { trustedRoot: root.publicKey, purpose: 'checkpoint', at: '2026-10-01T00:00:00.000Z' };
const verifyServed = (served: unknown, c = check) => verifyServiceSigner(readServedSigner(served), c);

describe('service keys and certificates (pinned by the Python generator)', () => {
  it('seeds give the pinned root and online public keys and key id', () => {
    expect(toHex(root.publicKey)).toBe(pin.root_public_key);
    expect(toHex(online.publicKey)).toBe(pin.online_public_key);
    expect(toHex(serviceKeyId(online.publicKey))).toBe(pin.key_id);
    expect(signer.keyId).toBe(pin.key_id);
  });

  it('the certificate bytes, id and root signature equal the pin', () => {
    expect(Buffer.from(signer.certificate).toString('utf8')).toBe(pin.certificate.canonical_utf8);
    expect(toHex(certificateId(signer.certificate))).toBe(pin.certificate.certificate_id);
    expect(toHex(signer.certificateSignature)).toBe(pin.certificate.signature);
    expect(signer.development).toBe(false);
  });

  it('a development certificate has development true, no not_after, and matches the pin', () => {
    expect(Buffer.from(devSigner.certificate).toString('utf8')).toBe(pin.development_certificate.canonical_utf8);
    expect(toHex(certificateId(devSigner.certificate))).toBe(pin.development_certificate.certificate_id);
    expect(toHex(devSigner.certificateSignature)).toBe(pin.development_certificate.signature);
    expect(devSigner.development).toBe(true);
    expect(readCertificate(devSigner.certificate).notAfter).toBeUndefined();
  });

  it('the served signer rendering equals the pin', () => {
    expect(renderSigner(signer)).toEqual(pin.signer);
  });

  it('the service signer signs with the online key', () => {
    const message = utf8('statement');
    expect(verifyEd25519(online.publicKey, message, signer.sign(message))).toBe(true);
    expect(toHex(signer.publicKey)).toBe(pin.online_public_key);
  });

  it('the root signs the certificate-signature label and the certificate id', () => {
    const message = certificateSignatureMessage(signer.certificate);
    expect(verifyEd25519(root.publicKey, message, signer.certificateSignature)).toBe(true);
    expect(toHex(signCertificate(root, signer.certificate))).toBe(pin.certificate.signature);
  });
});

describe('reading a certificate strictly', () => {
  it('reads back what was built', () => {
    const cert = readCertificate(signer.certificate);
    expect(toHex(cert.key)).toBe(pin.online_public_key);
    expect(toHex(cert.root)).toBe(pin.root_public_key);
    expect(cert.notBefore).toBe(NOT_BEFORE);
    expect(cert.notAfter).toBe(NOT_AFTER);
    expect(cert.purposes).toEqual(['checkpoint', 'receipt', 'recovery']);
    expect(cert.development).toBe(false);
  });

  const base = {
    key: pin.online_public_key,
    not_before: NOT_BEFORE,
    purposes: ['checkpoint', 'receipt', 'recovery'],
    root: pin.root_public_key,
    v: 1,
  };
  const cases: [string, Uint8Array][] = [
    ['non-canonical bytes', utf8(JSON.stringify(base, null, 1))],
    ['development false', canonicalBytes({ ...base, development: false })],
    ['an extra member', canonicalBytes({ ...base, note: 'x' })],
    ['a missing root', canonicalBytes(Object.fromEntries(Object.entries(base).filter(([k]) => k !== 'root')))],
    ['version 2', canonicalBytes({ ...base, v: 2 })],
    ['not_after before not_before', canonicalBytes({ ...base, not_after: '2025-01-01T00:00:00.000Z' })],
    ['a time without milliseconds', canonicalBytes({ ...base, not_before: '2026-09-10T12:00:00Z' })],
    ['an impossible date', canonicalBytes({ ...base, not_before: '2026-02-30T12:00:00.000Z' })],
    ['uppercase hex', canonicalBytes({ ...base, key: pin.online_public_key.toUpperCase() })],
    ['repeated purposes', canonicalBytes({ ...base, purposes: ['receipt', 'receipt'] })],
    ['no purposes', canonicalBytes({ ...base, purposes: [] })],
  ];
  for (const [name, bytes] of cases) {
    it(`refuses a certificate with ${name}`, () => {
      expectEvidenceRefused(() => readCertificate(bytes));
    });
  }

  it('reads ISO times exactly as JavaScript writes them', () => {
    expect(readIsoMillis('2026-09-10T12:00:00.000Z', 't')).toBe(Date.UTC(2026, 8, 10, 12));
    expectEvidenceRefused(() => readIsoMillis('2026-09-10T12:00:00.000+00:00', 't'));
    expectEvidenceRefused(() => readIsoMillis(1757505600000, 't'));
  });

  it('a builder refuses a not_after that is not later than not_before', () => {
    expect(() => certificateBytes({ key: online.publicKey, root: root.publicKey, notBefore: NOT_BEFORE, notAfter: NOT_BEFORE })).toThrow(RangeError);
  });
});

describe('verifying a served signer (objects.md §13 step 6)', () => {
  it('accepts the pinned signer for a checkpoint inside its window', () => {
    const trusted = verifyServed(pin.signer);
    expect(trusted.keyId).toBe(pin.key_id);
    expect(trusted.development).toBe(false);
    expect(toHex(trusted.publicKey)).toBe(pin.online_public_key);
  });

  it('accepts a statement up to 60 s before not_before and refuses one a millisecond earlier', () => {
    const start = Date.parse(NOT_BEFORE) - CLOCK_SKEW_MS;
    expect(() => verifyServed(pin.signer, { ...check, at: at(start) })).not.toThrow();
    expectEvidenceRefused(() => verifyServed(pin.signer, { ...check, at: at(start - 1) }), /not valid before/);
  });

  it('accepts a statement a millisecond before not_after and refuses one at not_after (expired)', () => {
    const end = Date.parse(NOT_AFTER);
    expect(() => verifyServed(pin.signer, { ...check, at: at(end - 1) })).not.toThrow();
    expectEvidenceRefused(() => verifyServed(pin.signer, { ...check, at: NOT_AFTER }), /expired/);
  });

  it('refuses a signer whose root is not the trusted root', () => {
    expectEvidenceRefused(() => verifyServed(pin.signer, { ...check, trustedRoot: other.publicKey }), /trusted root/);
  });

  it('refuses a served signer that names another root than its certificate', () => {
    expectEvidenceRefused(() => verifyServed({ ...pin.signer, root_key: toHex(other.publicKey) }), /another root/);
  });

  it('refuses a certificate signature with one flipped byte', () => {
    for (const byte of [0, 31, 63]) {
      const served = { ...pin.signer, certificate_signature: flipHex(pin.signer.certificate_signature, byte) };
      expectEvidenceRefused(() => verifyServed(served), /certificate_signature/);
    }
  });

  it('refuses a certificate signed by another root key', () => {
    const forged = createServiceSigner({ root: other, online, notBefore: NOT_BEFORE });
    const served = { ...renderSigner(forged), root_key: pin.root_public_key };
    expectEvidenceRefused(() => verifyServed(served), /another root/);
    expectEvidenceRefused(() => verifyServed(renderSigner(forged)), /trusted root/);
  });

  it('refuses a key id that is not the formula of the public key', () => {
    expectEvidenceRefused(() => verifyServed({ ...pin.signer, key_id: flipHex(pin.key_id) }), /key_id/);
  });

  it('refuses a certificate that names another online key', () => {
    const otherKey = toHex(other.publicKey);
    expectEvidenceRefused(
      () => verifyServed({ ...pin.signer, public_key: otherKey, key_id: toHex(serviceKeyId(other.publicKey)) }),
      /names another key/,
    );
  });

  it('refuses a certificate that does not vouch for the purpose', () => {
    const narrow = canonicalBytes({
      key: pin.online_public_key,
      not_before: NOT_BEFORE,
      purposes: ['receipt'],
      root: pin.root_public_key,
      v: 1,
    });
    const served: ServedSigner = {
      ...pin.signer,
      certificate: toBase64url(narrow),
      certificate_signature: toHex(signCertificate(root, narrow)),
    };
    expect(() => verifyServed(served, { ...check, purpose: 'receipt' })).not.toThrow();
    expectEvidenceRefused(() => verifyServed(served), /does not vouch for checkpoint/);
  });

  it('reports a development certificate as development', () => {
    const trusted = verifyServed(renderSigner(devSigner), { ...check, at: '2030-01-01T00:00:00.000Z' });
    expect(trusted.development).toBe(true);
    expect(trusted.notAfter).toBeUndefined();
  });

  it('refuses a served development flag that hides the certificate one', () => {
    expectEvidenceRefused(() => verifyServed({ ...renderSigner(devSigner), development: false }), /development/);
    expectEvidenceRefused(() => verifyServed({ ...pin.signer, development: true }), /development/);
  });

  it('refuses served signers with missing, extra or mistyped members', () => {
    const { development: _omit, ...missing } = pin.signer;
    expectEvidenceRefused(() => readServedSigner(missing), /development: missing/);
    expectEvidenceRefused(() => readServedSigner({ ...pin.signer, added_at: NOT_BEFORE }), /unexpected member/);
    expectEvidenceRefused(() => readServedSigner({ ...pin.signer, development: 'false' }), /boolean/);
    expectEvidenceRefused(() => readServedSigner({ ...pin.signer, certificate: `${pin.signer.certificate}=` }), /certificate/);
    expectEvidenceRefused(() => readServedSigner({ ...pin.signer, public_key: pin.signer.public_key.slice(2) }), /public_key/);
    expectEvidenceRefused(() => readServedSigner(null));
  });
});

describe('a relay configured with a certificate the offline root signed', () => {
  it('accepts its own online key with that certificate', () => {
    const restored = serviceSignerFromCertificate(online, signer.certificate, signer.certificateSignature);
    expect(renderSigner(restored)).toEqual(pin.signer);
  });

  it('refuses a certificate for another key or with a bad root signature', () => {
    expectEvidenceRefused(() => serviceSignerFromCertificate(other, signer.certificate, signer.certificateSignature), /another key/);
    const bad = signer.certificateSignature.slice();
    bad[5]! ^= 0x80;
    expectEvidenceRefused(() => serviceSignerFromCertificate(online, signer.certificate, bad), /does not verify/);
  });
});

describe('verifying a certificate on its own', () => {
  it('accepts the pinned certificate and signature and reports development', () => {
    const cert = verifyCertificate(signer.certificate, signer.certificateSignature, check);
    expect(toHex(cert.key)).toBe(pin.online_public_key);
    expect(verifyCertificate(devSigner.certificate, devSigner.certificateSignature, check).development).toBe(true);
  });

  it('refuses another trusted root, a flipped signature byte, an expired window and a missing purpose', () => {
    expectEvidenceRefused(() => verifyCertificate(signer.certificate, signer.certificateSignature, { ...check, trustedRoot: other.publicKey }), /trusted root/);
    const bad = signer.certificateSignature.slice();
    bad[63]! ^= 1;
    expectEvidenceRefused(() => verifyCertificate(signer.certificate, bad, check), /certificate_signature: does not verify/);
    expectEvidenceRefused(() => verifyCertificate(signer.certificate, signer.certificateSignature, { ...check, at: NOT_AFTER }), /expired/);
    const narrow = canonicalBytes({ key: pin.online_public_key, not_before: NOT_BEFORE, purposes: ['recovery'], root: pin.root_public_key, v: 1 });
    expectEvidenceRefused(() => verifyCertificate(narrow, signCertificate(root, narrow), check), /does not vouch for checkpoint/);
  });
});
