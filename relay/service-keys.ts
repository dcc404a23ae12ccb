/**
 * The service's own keys (protocol/objects.md §9): an Ed25519 root key and an online signer key
 * vouched for by a certificate the root signed, plus the server secret that tags token
 * challenges (protocol/labels.md "token-challenge (server side)").
 *
 * On first start the seeds are made and written to the data directory (0600, atomically);
 * later starts read them back, so key ids and signatures stay the same across restarts.
 * With --dev the certificate says `development: true`.
 */
import { mkdirSync } from 'node:fs';
import { canonicalBytes } from '../shared/canonical.js';
import { fromBase64url, fromHex, toBase64url, toHex } from '../shared/encoding.js';
import { labelledHash, label } from '../shared/labels.js';
import { concatBytes } from '../shared/encoding.js';
import { loadOrCreateSecret, readTextFile, writeFileAtomic } from './secret-files.js';
import { signerFromSeed, type Signer } from '../shared/identity.js';

export const ROOT_SEED_FILE = 'service-root.key';
export const SIGNER_SEED_FILE = 'service-signer.key';
export const CERTIFICATE_FILE = 'service-certificate.json';
export const CHALLENGE_SECRET_FILE = 'challenge.secret';

/** How a statement names its signer (objects.md §9). */
export interface SignerRendering {
  key_id: string;
  public_key: string;
  root_key: string;
  certificate: string;
  certificate_signature: string;
  development: boolean;
}

export interface ServiceKeys {
  /** Root public key, hex (`service_root_key` in capabilities). */
  readonly rootKey: string;
  /** The online signer: signs checkpoints, receipts and recovery notices. */
  readonly signer: Signer;
  /** `hex(H(L("service-key") ‖ online pk))`. */
  readonly keyId: string;
  /** The signer as statements name it, plus when the key was added. */
  readonly rendering: SignerRendering;
  readonly addedAt: string;
  /** Server secret for token-challenge tags; never leaves the process. */
  readonly challengeSecret: Uint8Array;
}

export const CERTIFICATE_PURPOSES = ['checkpoint', 'receipt', 'recovery'] as const;

export function serviceKeyId(publicKey: Uint8Array): string {
  return toHex(labelledHash('service-key', publicKey));
}

/** Canonical certificate bytes (objects.md §9). */
export function certificateBytes(input: {
  key: Uint8Array;
  root: Uint8Array;
  notBefore: string;
  notAfter?: string;
  development: boolean;
}): Uint8Array {
  const cert: Record<string, unknown> = {
    key: toHex(input.key),
    not_before: input.notBefore,
    purposes: [...CERTIFICATE_PURPOSES],
    root: toHex(input.root),
    v: 1,
  };
  if (input.development) cert.development = true;
  if (input.notAfter !== undefined) cert.not_after = input.notAfter;
  return canonicalBytes(cert);
}

/** What the root signs: `L("service-certificate-signature") ‖ H(L("service-certificate") ‖ certificate)`. */
export function certificateSigningMessage(certificate: Uint8Array): Uint8Array {
  return concatBytes(label('service-certificate-signature'), labelledHash('service-certificate', certificate));
}

interface StoredCertificate {
  certificate: string;
  certificate_signature: string;
  added_at: string;
}

export interface LoadServiceKeysOptions {
  dataDir: string;
  dev: boolean;
  now: number;
  random: (n: number) => Uint8Array;
}

/** Load the service keys from the data directory, creating what is missing. */
export function loadServiceKeys(opts: LoadServiceKeysOptions): ServiceKeys {
  const { dataDir, dev, now, random } = opts;
  if (dataDir !== ':memory:') mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const root = signerFromSeed(loadOrCreateSecret(dataDir, ROOT_SEED_FILE, random));
  const signer = signerFromSeed(loadOrCreateSecret(dataDir, SIGNER_SEED_FILE, random));
  const challengeSecret = loadOrCreateSecret(dataDir, CHALLENGE_SECRET_FILE, random);

  let stored = readStoredCertificate(dataDir, signer.publicKey, root.publicKey, dev);
  if (!stored) {
    const addedAt = new Date(now).toISOString();
    const cert = certificateBytes({ key: signer.publicKey, root: root.publicKey, notBefore: addedAt, development: dev });
    stored = {
      certificate: toBase64url(cert),
      certificate_signature: toHex(root.sign(certificateSigningMessage(cert))),
      added_at: addedAt,
    };
    if (dataDir !== ':memory:') writeFileAtomic(dataDir, CERTIFICATE_FILE, `${JSON.stringify(stored)}\n`);
  }
  const keyId = serviceKeyId(signer.publicKey);
  return {
    rootKey: toHex(root.publicKey),
    signer,
    keyId,
    addedAt: stored.added_at,
    challengeSecret,
    rendering: {
      key_id: keyId,
      public_key: toHex(signer.publicKey),
      root_key: toHex(root.publicKey),
      certificate: stored.certificate,
      certificate_signature: stored.certificate_signature,
      development: dev,
    },
  };
}

/** The stored certificate, if it names these keys and this development flag. */
function readStoredCertificate(
  dataDir: string,
  key: Uint8Array,
  root: Uint8Array,
  dev: boolean,
): StoredCertificate | undefined {
  if (dataDir === ':memory:') return undefined;
  const text = readTextFile(dataDir, CERTIFICATE_FILE);
  if (text === undefined) return undefined;
  const stored = JSON.parse(text) as StoredCertificate;
  const cert = JSON.parse(new TextDecoder().decode(fromBase64url(stored.certificate, 'certificate'))) as {
    key: string;
    root: string;
    development?: boolean;
  };
  fromHex(stored.certificate_signature, 64, 'certificate_signature');
  if (cert.key !== toHex(key) || cert.root !== toHex(root) || (cert.development === true) !== dev) return undefined;
  return stored;
}
