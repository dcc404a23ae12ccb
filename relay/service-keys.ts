/**
 * The service's own keys (protocol/objects.md §9): an Ed25519 root key and an online signer key
 * vouched for by a certificate the root signed, plus the server secret that tags token
 * challenges (protocol/labels.md "token-challenge (server side)").
 *
 * On first start the seeds are made and written to the data directory (0600, atomically);
 * later starts read them back and re-check the stored certificate, so key ids and signatures
 * stay the same across restarts. With --dev the certificate says `development: true`; when
 * the flag changes, a new certificate is issued for the same keys.
 */
import { mkdirSync } from 'node:fs';
import { fromBase64url, fromHex, toBase64url, toHex } from '../shared/encoding.js';
import { signerFromSeed } from '../shared/identity.js';
import {
  createServiceSigner,
  renderSigner,
  serviceSignerFromCertificate,
  type ServedSigner,
  type ServiceSigner,
} from '../shared/service-keys.js';
import { loadOrCreateSecret, readTextFile, writeFileAtomic } from './secret-files.js';

export const ROOT_SEED_FILE = 'service-root.key';
export const SIGNER_SEED_FILE = 'service-signer.key';
export const CERTIFICATE_FILE = 'service-certificate.json';
export const CHALLENGE_SECRET_FILE = 'challenge.secret';

export interface ServiceKeys {
  /** Root public key, hex (`service_root_key` in capabilities). */
  readonly rootKey: string;
  /** The online signer with its certificate: signs checkpoints, receipts, recovery notices. */
  readonly signer: ServiceSigner;
  /** `hex(H(L("service-key") ‖ online pk))`. */
  readonly keyId: string;
  /** The signer as statements name it. */
  readonly rendering: ServedSigner;
  /** When this certificate was made (ISO), `added_at` in capabilities. */
  readonly addedAt: string;
  /** Server secret for token-challenge tags; never leaves the process. */
  readonly challengeSecret: Uint8Array;
}

interface StoredCertificate {
  certificate: string;
  certificate_signature: string;
  added_at: string;
}

export interface LoadServiceKeysOptions {
  /** Data directory, or ':memory:' for keys that live only as long as the process. */
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
  const online = signerFromSeed(loadOrCreateSecret(dataDir, SIGNER_SEED_FILE, random));
  const challengeSecret = loadOrCreateSecret(dataDir, CHALLENGE_SECRET_FILE, random);

  let signer: ServiceSigner | undefined;
  let addedAt = '';
  const text = dataDir === ':memory:' ? undefined : readTextFile(dataDir, CERTIFICATE_FILE);
  if (text !== undefined) {
    const stored = JSON.parse(text) as StoredCertificate;
    // Our own file, but re-checked: a certificate that does not verify is a fault to report.
    const s = serviceSignerFromCertificate(
      online,
      fromBase64url(stored.certificate, 'certificate'),
      fromHex(stored.certificate_signature, 64, 'certificate_signature'),
    );
    if (toHex(s.rootKey) !== toHex(root.publicKey)) throw new Error(`${CERTIFICATE_FILE}: names another root key`);
    if (s.development === dev) {
      signer = s;
      addedAt = stored.added_at;
    }
  }
  if (!signer) {
    addedAt = new Date(now).toISOString();
    signer = createServiceSigner({ root, online, notBefore: addedAt, development: dev });
    const stored: StoredCertificate = {
      certificate: toBase64url(signer.certificate),
      certificate_signature: toHex(signer.certificateSignature),
      added_at: addedAt,
    };
    if (dataDir !== ':memory:') writeFileAtomic(dataDir, CERTIFICATE_FILE, `${JSON.stringify(stored)}\n`);
  }
  return {
    rootKey: toHex(root.publicKey),
    signer,
    keyId: signer.keyId,
    rendering: renderSigner(signer),
    addedAt,
    challengeSecret,
  };
}
