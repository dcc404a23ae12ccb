/**
 * The service's keys (protocol/objects.md §9, labels.md "What the service signs").
 *
 *   key_id         = H(L("service-key") ‖ online_pk32)
 *   certificate    = canonical({"development"?: true, "key", "not_after"?, "not_before",
 *                               "purposes": ["checkpoint","receipt","recovery"], "root", "v": 1})
 *   certificate_id = H(L("service-certificate") ‖ certificate)
 *   root signs       L("service-certificate-signature") ‖ certificate_id
 *
 * The root key stays offline; the online key signs checkpoints, receipts and recovery notices.
 * A signer is trusted for a statement created from not_before − 60 s up to, not including,
 * not_after. `development: true` marks a key pair a relay made for itself: readers must say so.
 *
 * Everything read here (served signers, certificate bytes) is attacker-controlled evidence:
 * readers and verifiers throw SvcError('CHECKPOINT_INVALID') with a detail naming the field.
 */
import { canonicalBytes, readCanonicalObject, type JsonObject } from './canonical.js';
import { concatBytes, equalBytes, fromBase64url, fromHex, isHex, toBase64url, toHex } from './encoding.js';
import { SvcError, isSvcError } from './errors.js';
import { ED25519_SIGNATURE_BYTES, verifyEd25519, type Signer } from './identity.js';
import { label, labelledHash } from './labels.js';

/** What a service certificate vouches for; every certificate we make names all three. */
export const SERVICE_PURPOSES = ['checkpoint', 'receipt', 'recovery'] as const;
export type ServicePurpose = (typeof SERVICE_PURPOSES)[number];

/** A statement may be created up to this long before `not_before` (objects.md §9). */
export const CLOCK_SKEW_MS = 60_000;

// ---- evidence helpers (shared by receipt.ts and checkpoint.ts) --------------------------

/** The one refusal of service evidence: a checkpoint, proof, certificate or receipt that fails. */
export function evidenceError(detail: string): SvcError {
  return new SvcError('CHECKPOINT_INVALID', detail);
}

/** Run a reader and turn its INVALID_REQUEST (malformed wire value) into CHECKPOINT_INVALID. */
export function asEvidence<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (isSvcError(e, 'INVALID_REQUEST')) throw evidenceError(e.detail ?? 'malformed');
    throw e;
  }
}

/** A plain JSON object whose member names are exactly `required` plus any of `optional`. */
export function readMembers(
  value: unknown,
  field: string,
  required: readonly string[],
  optional: readonly string[] = [],
): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw evidenceError(`${field}: expected an object`);
  }
  const obj = value as Record<string, unknown>;
  for (const name of required) {
    if (!Object.hasOwn(obj, name)) throw evidenceError(`${field}.${name}: missing`);
  }
  for (const name of Object.keys(obj)) {
    if (!required.includes(name) && !optional.includes(name)) throw evidenceError(`${field}.${name}: unexpected member`);
  }
  return obj;
}

export function readHexMember(value: unknown, bytes: number, field: string): Uint8Array {
  return asEvidence(() => fromHex(value, bytes, field));
}

export function readStringMember(value: unknown, field: string): string {
  if (typeof value !== 'string') throw evidenceError(`${field}: expected a string`);
  return value;
}

const ISO_MILLIS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A JavaScript ISO time with milliseconds and `Z` (`2026-09-10T12:00:00.000Z`), read strictly:
 * the text must be exactly what `Date.prototype.toISOString` writes for it. Returns epoch ms.
 */
export function readIsoMillis(value: unknown, field: string): number {
  if (typeof value !== 'string' || !ISO_MILLIS_RE.test(value)) {
    throw evidenceError(`${field}: expected an ISO time like 2026-09-10T12:00:00.000Z`);
  }
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== value) throw evidenceError(`${field}: not a real time`);
  return ms;
}

// ---- key id and certificate --------------------------------------------------------------

/** key_id = H(L("service-key") ‖ online_pk32). */
export function serviceKeyId(publicKey: Uint8Array): Uint8Array {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new TypeError('publicKey must be 32 bytes');
  return labelledHash('service-key', publicKey);
}

export interface CertificateInput {
  /** Online public key, 32 bytes. */
  readonly key: Uint8Array;
  /** Root public key, 32 bytes. */
  readonly root: Uint8Array;
  readonly notBefore: string;
  readonly notAfter?: string | undefined;
  readonly development?: boolean | undefined;
}

/** A certificate read back from its bytes. */
export interface ServiceCertificate {
  readonly key: Uint8Array;
  readonly root: Uint8Array;
  readonly notBefore: string;
  readonly notAfter: string | undefined;
  readonly purposes: readonly string[];
  readonly development: boolean;
}

/** The certificate's canonical bytes (objects.md §9). Members absent when not set. */
export function certificateBytes(input: CertificateInput): Uint8Array {
  const notBefore = isoMillisArgument(input.notBefore, 'notBefore');
  if (input.notAfter !== undefined && isoMillisArgument(input.notAfter, 'notAfter') <= notBefore) {
    throw new RangeError('not_after must be later than not_before');
  }
  const cert: JsonObject = {
    key: toHex(checked32(input.key, 'key')),
    not_before: input.notBefore,
    purposes: [...SERVICE_PURPOSES],
    root: toHex(checked32(input.root, 'root')),
    v: 1,
  };
  if (input.notAfter !== undefined) cert.not_after = input.notAfter;
  if (input.development === true) cert.development = true;
  return canonicalBytes(cert);
}

/** A builder's own time argument: a RangeError (caller's mistake), not evidence. */
export function isoMillisArgument(value: string, name: string): number {
  try {
    return readIsoMillis(value, name);
  } catch {
    throw new RangeError(`${name} must be an ISO time like 2026-09-10T12:00:00.000Z`);
  }
}

function checked32(bytes: Uint8Array, name: string): Uint8Array {
  if (!(bytes instanceof Uint8Array) || bytes.length !== 32) throw new TypeError(`${name} must be 32 bytes`);
  return bytes;
}

/** certificate_id = H(L("service-certificate") ‖ certificate). */
export function certificateId(certificate: Uint8Array): Uint8Array {
  return labelledHash('service-certificate', certificate);
}

/** The bytes the root signs: L("service-certificate-signature") ‖ certificate_id. */
export function certificateSignatureMessage(certificate: Uint8Array): Uint8Array {
  return concatBytes(label('service-certificate-signature'), certificateId(certificate));
}

export function signCertificate(root: Signer, certificate: Uint8Array): Uint8Array {
  return root.sign(certificateSignatureMessage(certificate));
}

/** Read certificate bytes strictly (canonical, exact members, `development` only as true). */
export function readCertificate(bytes: Uint8Array, field = 'certificate'): ServiceCertificate {
  const obj = asEvidence(() => readCanonicalObject(bytes, field));
  readMembers(obj, field, ['key', 'not_before', 'purposes', 'root', 'v'], ['development', 'not_after']);
  if (obj.v !== 1) throw evidenceError(`${field}.v: must be 1`);
  if (Object.hasOwn(obj, 'development') && obj.development !== true) {
    throw evidenceError(`${field}.development: present only as true`);
  }
  const notBefore = readIsoMillis(obj.not_before, `${field}.not_before`);
  let notAfter: string | undefined;
  if (Object.hasOwn(obj, 'not_after')) {
    if (readIsoMillis(obj.not_after, `${field}.not_after`) <= notBefore) {
      throw evidenceError(`${field}.not_after: must be later than not_before`);
    }
    notAfter = obj.not_after as string;
  }
  const purposes = obj.purposes;
  if (
    !Array.isArray(purposes) ||
    purposes.length === 0 ||
    !purposes.every((p) => typeof p === 'string' && p !== '') ||
    new Set(purposes).size !== purposes.length
  ) {
    throw evidenceError(`${field}.purposes: expected distinct non-empty strings`);
  }
  return {
    key: readHexMember(obj.key, 32, `${field}.key`),
    root: readHexMember(obj.root, 32, `${field}.root`),
    notBefore: obj.not_before as string,
    notAfter,
    purposes: purposes as string[],
    development: obj.development === true,
  };
}

// ---- the online signer ---------------------------------------------------------------------

/** The online key with everything a statement needs to name it. */
export interface ServiceSigner extends Signer {
  /** key_id, 64 hex. */
  readonly keyId: string;
  readonly rootKey: Uint8Array;
  readonly certificate: Uint8Array;
  readonly certificateSignature: Uint8Array;
  readonly development: boolean;
}

export interface ServiceSignerInput {
  readonly root: Signer;
  readonly online: Signer;
  readonly notBefore: string;
  readonly notAfter?: string | undefined;
  readonly development?: boolean | undefined;
}

function makeServiceSigner(online: Signer, cert: ServiceCertificate, certificate: Uint8Array, signature: Uint8Array): ServiceSigner {
  return Object.freeze({
    publicKey: online.publicKey,
    sign: (message: Uint8Array) => online.sign(message),
    keyId: toHex(serviceKeyId(online.publicKey)),
    rootKey: cert.root,
    certificate,
    certificateSignature: signature,
    development: cert.development,
  });
}

/** Certify `online` with `root` and return the signer (pure: Ed25519 is deterministic). */
export function createServiceSigner(input: ServiceSignerInput): ServiceSigner {
  const certificate = certificateBytes({
    key: input.online.publicKey,
    root: input.root.publicKey,
    notBefore: input.notBefore,
    notAfter: input.notAfter,
    development: input.development,
  });
  const signature = signCertificate(input.root, certificate);
  return makeServiceSigner(input.online, readCertificate(certificate), certificate, signature);
}

/**
 * The online signer from a certificate the offline root signed earlier (how a relay is
 * configured in production). Refuses a certificate that names another key or whose root
 * signature does not verify.
 */
export function serviceSignerFromCertificate(online: Signer, certificate: Uint8Array, signature: Uint8Array): ServiceSigner {
  const cert = readCertificate(certificate);
  if (!equalBytes(cert.key, online.publicKey)) throw evidenceError('certificate.key: names another key');
  if (!verifyEd25519(cert.root, certificateSignatureMessage(certificate), signature)) {
    throw evidenceError('certificate_signature: does not verify under certificate.root');
  }
  return makeServiceSigner(online, cert, certificate, signature);
}

// ---- the served signer ---------------------------------------------------------------------

/** How a statement names its signer on the wire (objects.md §9). */
export interface ServedSigner {
  key_id: string;
  public_key: string;
  root_key: string;
  certificate: string;
  certificate_signature: string;
  development: boolean;
}

/** The served shape of a signer: our own online key, or one read from the wire and kept. */
export function renderSigner(signer: ReadSigner): ServedSigner {
  return {
    key_id: signer.keyId,
    public_key: toHex(signer.publicKey),
    root_key: toHex(signer.rootKey),
    certificate: toBase64url(signer.certificate),
    certificate_signature: toHex(signer.certificateSignature),
    development: signer.development,
  };
}

/** A served signer read strictly; nothing in it is trusted yet. */
export interface ReadSigner {
  readonly keyId: string;
  readonly publicKey: Uint8Array;
  readonly rootKey: Uint8Array;
  readonly certificate: Uint8Array;
  readonly certificateSignature: Uint8Array;
  readonly development: boolean;
}

export function readServedSigner(value: unknown, field = 'signer'): ReadSigner {
  const obj = readMembers(value, field, [
    'key_id',
    'public_key',
    'root_key',
    'certificate',
    'certificate_signature',
    'development',
  ]);
  if (typeof obj.development !== 'boolean') throw evidenceError(`${field}.development: expected a boolean`);
  if (!isHex(obj.key_id, 32)) throw evidenceError(`${field}.key_id: expected 64 lowercase hex`);
  return {
    keyId: obj.key_id,
    publicKey: readHexMember(obj.public_key, 32, `${field}.public_key`),
    rootKey: readHexMember(obj.root_key, 32, `${field}.root_key`),
    certificate: asEvidence(() => fromBase64url(obj.certificate, `${field}.certificate`)),
    certificateSignature: readHexMember(obj.certificate_signature, ED25519_SIGNATURE_BYTES, `${field}.certificate_signature`),
    development: obj.development,
  };
}

export interface SignerCheck {
  /** The service root key the reader trusts (capabilities' `service_root_key` or out of band). */
  readonly trustedRoot: Uint8Array;
  /** What the statement is. */
  readonly purpose: ServicePurpose;
  /** When the statement says it was created (ISO time with milliseconds). */
  readonly at: string;
}

/** A signer that passed every check; `development` must be shown to whoever relies on it. */
export interface TrustedSigner {
  readonly keyId: string;
  readonly publicKey: Uint8Array;
  readonly development: boolean;
  readonly notBefore: string;
  readonly notAfter: string | undefined;
}

/**
 * A certificate on its own: root equals the trusted one, the root's signature, the purpose,
 * and the time window (`at` from not_before − 60 s up to, not including, not_after).
 * Returns the certificate (its `development` must be shown) or throws CHECKPOINT_INVALID.
 */
export function verifyCertificate(
  certificate: Uint8Array,
  signature: Uint8Array,
  check: SignerCheck,
  field = 'certificate',
): ServiceCertificate {
  const cert = readCertificate(certificate, field);
  if (!equalBytes(cert.root, check.trustedRoot)) throw evidenceError(`${field}.root: is not the trusted root`);
  if (!verifyEd25519(cert.root, certificateSignatureMessage(certificate), signature)) {
    throw evidenceError(`${field}_signature: does not verify under the root`);
  }
  if (!cert.purposes.includes(check.purpose)) throw evidenceError(`${field}: does not vouch for ${check.purpose}`);
  const at = readIsoMillis(check.at, 'created_at');
  if (at < Date.parse(cert.notBefore) - CLOCK_SKEW_MS) throw evidenceError(`${field}: not valid before ${cert.notBefore}`);
  if (cert.notAfter !== undefined && at >= Date.parse(cert.notAfter)) {
    throw evidenceError(`${field}: expired at ${cert.notAfter}`);
  }
  return cert;
}

/**
 * objects.md §13 step 6, the signer half: key id formula, the certificate names the key and
 * the served root, then verifyCertificate, then the served development flag as the
 * certificate says. Returns the signer or throws CHECKPOINT_INVALID.
 */
export function verifyServiceSigner(signer: ReadSigner, check: SignerCheck, field = 'signer'): TrustedSigner {
  if (toHex(serviceKeyId(signer.publicKey)) !== signer.keyId) {
    throw evidenceError(`${field}.key_id: is not the key id of public_key`);
  }
  const cert = readCertificate(signer.certificate, `${field}.certificate`);
  if (!equalBytes(cert.key, signer.publicKey)) throw evidenceError(`${field}.certificate: names another key`);
  if (!equalBytes(cert.root, signer.rootKey)) throw evidenceError(`${field}.certificate: names another root`);
  if (!equalBytes(signer.rootKey, check.trustedRoot)) throw evidenceError(`${field}.root_key: is not the trusted root`);
  verifyCertificate(signer.certificate, signer.certificateSignature, check, `${field}.certificate`);
  if (cert.development !== signer.development) {
    throw evidenceError(`${field}.development: differs from the certificate`);
  }
  return {
    keyId: signer.keyId,
    publicKey: signer.publicKey,
    development: cert.development,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
  };
}

/** The signature and signer of a served statement, read strictly; nothing in them is trusted yet. */
export interface ReadServiceSignature {
  readonly signature: Uint8Array;
  readonly signer: ReadSigner;
}

/**
 * A served statement's `signature` (hex) and `signer` members, read strictly, the signer's key
 * id the one its signed bytes name (`signer_key_id`). Checks no signature.
 */
export function readServiceSignature(
  served: Readonly<Record<string, unknown>>,
  signerKeyId: string,
  field: string,
): ReadServiceSignature {
  const signature = readHexMember(served.signature, ED25519_SIGNATURE_BYTES, `${field}.signature`);
  const signer = readServedSigner(served.signer, `${field}.signer`);
  if (signer.keyId !== signerKeyId) throw evidenceError(`${field}.signer.key_id: is not signer_key_id`);
  return { signature, signer };
}

/**
 * A statement's signature over `message` under its signer's key, then the signer (verifyServiceSigner)
 * for the statement's purpose at its `created_at`. Returns the signer or throws CHECKPOINT_INVALID.
 */
export function verifyServiceSignature(read: ReadServiceSignature, message: Uint8Array, check: SignerCheck, field: string): TrustedSigner {
  if (!verifyEd25519(read.signer.publicKey, message, read.signature)) throw evidenceError(`${field}.signature: does not verify`);
  return verifyServiceSigner(read.signer, check, `${field}.signer`);
}
