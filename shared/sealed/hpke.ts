/**
 * HPKE (RFC 9180) for suite 1 of protocol/sealed.md §1: KEM DHKEM(X25519, HKDF-SHA256) 0x0020,
 * KDF HKDF-SHA256 0x0001, AEAD AES-128-GCM 0x0001; modes base (0x00) and auth (0x02).
 *
 * The sealed formats use only single-shot SealAuth/OpenAuth at sequence number 0. Base mode and
 * the context with sequence numbers are here so the whole of RFC 9180 A.1 can be checked.
 *
 * Pure: the ephemeral key is made by DeriveKeyPair from `ikmE`, 32 random bytes the caller
 * passes in (RFC 9180 §7.1.3 defines GenerateKeyPair as DeriveKeyPair(random(Nsk))), so a vector
 * gives the same `enc` every time. `enc`, ciphertexts and senders' public keys handed to the open
 * functions are attacker-controlled.
 */
import { concatBytes, utf8 } from '../encoding.js';
import { aesGcmOpen, aesGcmSeal, AES128_KEY_BYTES, GCM_NONCE_BYTES } from './aes-gcm.js';
import { SealedError } from './errors.js';
import { hkdfExpand, hkdfExtract, SHA256_BYTES } from './hkdf.js';
import { x25519, x25519PublicKey, X25519_KEY_BYTES } from './x25519.js';

export const MODE_BASE = 0x00;
export const MODE_AUTH = 0x02;
export type HpkeMode = typeof MODE_BASE | typeof MODE_AUTH;

const KEM_ID = 0x0020;
const KDF_ID = 0x0001;
const AEAD_ID = 0x0001;
/** Nsecret, Nenc, Npk, Nsk of DHKEM(X25519, HKDF-SHA256) (§7.1). */
export const HPKE_SECRET_BYTES = 32;
export const HPKE_ENC_BYTES = 32;
/** Nk, Nn, Nt of AES-128-GCM (§7.3). */
export const HPKE_KEY_BYTES = AES128_KEY_BYTES;
export const HPKE_NONCE_BYTES = GCM_NONCE_BYTES;
export const HPKE_TAG_BYTES = 16;

const HPKE_V1 = utf8('HPKE-v1');
/** suite_id of the KEM (§4.1) and of the whole suite (§5.1). */
const KEM_SUITE_ID = concatBytes(utf8('KEM'), i2osp(KEM_ID, 2));
const HPKE_SUITE_ID = concatBytes(utf8('HPKE'), i2osp(KEM_ID, 2), i2osp(KDF_ID, 2), i2osp(AEAD_ID, 2));
const EMPTY = new Uint8Array(0);

/** I2OSP(n, w): `w` bytes, big-endian (§3). */
function i2osp(n: number, w: number): Uint8Array {
  const out = new Uint8Array(w);
  let v = n;
  for (let i = w - 1; i >= 0; i--) {
    out[i] = v & 0xff;
    v = Math.floor(v / 256);
  }
  if (v !== 0) throw new RangeError(`${n} does not fit in ${w} bytes`);
  return out;
}

function assertBytes(value: unknown, name: string, length?: number): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || (length !== undefined && value.length !== length)) {
    throw new TypeError(length === undefined ? `${name} must be bytes` : `${name} must be ${length} bytes`);
  }
}

// ---- §4: labelled Extract and Expand ------------------------------------------------------

function labeledExtract(suiteId: Uint8Array, salt: Uint8Array, label: string, ikm: Uint8Array): Uint8Array {
  return hkdfExtract(salt, concatBytes(HPKE_V1, suiteId, utf8(label), ikm));
}

function labeledExpand(suiteId: Uint8Array, prk: Uint8Array, label: string, info: Uint8Array, length: number): Uint8Array {
  return hkdfExpand(prk, concatBytes(i2osp(length, 2), HPKE_V1, suiteId, utf8(label), info), length);
}

// ---- §4.1 and §7.1: DHKEM(X25519, HKDF-SHA256) --------------------------------------------

export interface X25519KeyPair {
  /** Raw 32-byte scalar as DeriveKeyPair gives it (SerializePrivateKey: unclamped). */
  privateKey: Uint8Array;
  publicKey: Uint8Array;
}

/** DeriveKeyPair(ikm) (§7.1.3): sk = LabeledExpand(LabeledExtract("", "dkp_prk", ikm), "sk", "", 32). */
export function deriveKeyPair(ikm: Uint8Array): X25519KeyPair {
  assertBytes(ikm, 'ikm');
  if (ikm.length < X25519_KEY_BYTES) throw new RangeError('ikm must be at least 32 bytes (§7.1.3)');
  const dkpPrk = labeledExtract(KEM_SUITE_ID, EMPTY, 'dkp_prk', ikm);
  const privateKey = labeledExpand(KEM_SUITE_ID, dkpPrk, 'sk', EMPTY, X25519_KEY_BYTES);
  return { privateKey, publicKey: x25519PublicKey(privateKey) };
}

/** ExtractAndExpand(dh, kem_context) (§4.1). */
function extractAndExpand(dh: Uint8Array, kemContext: Uint8Array): Uint8Array {
  const eaePrk = labeledExtract(KEM_SUITE_ID, EMPTY, 'eae_prk', dh);
  return labeledExpand(KEM_SUITE_ID, eaePrk, 'shared_secret', kemContext, HPKE_SECRET_BYTES);
}

export interface Encapsulation {
  sharedSecret: Uint8Array;
  enc: Uint8Array;
}

/** Encap(pkR) with the ephemeral key DeriveKeyPair(ikmE) (§4.1). */
export function encap(pkR: Uint8Array, ikmE: Uint8Array): Encapsulation {
  assertBytes(pkR, 'pkR', X25519_KEY_BYTES);
  const e = deriveKeyPair(ikmE);
  const dh = x25519(e.privateKey, pkR);
  const enc = e.publicKey;
  return { sharedSecret: extractAndExpand(dh, concatBytes(enc, pkR)), enc };
}

/** Decap(enc, skR) (§4.1). */
export function decap(enc: Uint8Array, skR: Uint8Array): Uint8Array {
  assertBytes(enc, 'enc', HPKE_ENC_BYTES);
  const dh = x25519(skR, enc);
  return extractAndExpand(dh, concatBytes(enc, x25519PublicKey(skR)));
}

/** AuthEncap(pkR, skS) with the ephemeral key DeriveKeyPair(ikmE) (§4.1). */
export function authEncap(pkR: Uint8Array, skS: Uint8Array, ikmE: Uint8Array): Encapsulation {
  assertBytes(pkR, 'pkR', X25519_KEY_BYTES);
  const e = deriveKeyPair(ikmE);
  const dh = concatBytes(x25519(e.privateKey, pkR), x25519(skS, pkR));
  const enc = e.publicKey;
  return { sharedSecret: extractAndExpand(dh, concatBytes(enc, pkR, x25519PublicKey(skS))), enc };
}

/** AuthDecap(enc, skR, pkS) (§4.1). */
export function authDecap(enc: Uint8Array, skR: Uint8Array, pkS: Uint8Array): Uint8Array {
  assertBytes(enc, 'enc', HPKE_ENC_BYTES);
  assertBytes(pkS, 'pkS', X25519_KEY_BYTES);
  const dh = concatBytes(x25519(skR, enc), x25519(skR, pkS));
  return extractAndExpand(dh, concatBytes(enc, x25519PublicKey(skR), pkS));
}

// ---- §5.1: key schedule, §5.2: encryption context -----------------------------------------

export interface KeySchedule {
  keyScheduleContext: Uint8Array;
  secret: Uint8Array;
  key: Uint8Array;
  baseNonce: Uint8Array;
  exporterSecret: Uint8Array;
}

/** KeySchedule(mode, shared_secret, info, default_psk, default_psk_id) (§5.1); no PSK modes here. */
export function keySchedule(mode: HpkeMode, sharedSecret: Uint8Array, info: Uint8Array): KeySchedule {
  if (mode !== MODE_BASE && mode !== MODE_AUTH) throw new RangeError('only modes base and auth are supported');
  assertBytes(sharedSecret, 'sharedSecret', HPKE_SECRET_BYTES);
  assertBytes(info, 'info');
  const pskIdHash = labeledExtract(HPKE_SUITE_ID, EMPTY, 'psk_id_hash', EMPTY);
  const infoHash = labeledExtract(HPKE_SUITE_ID, EMPTY, 'info_hash', info);
  const keyScheduleContext = concatBytes(Uint8Array.of(mode), pskIdHash, infoHash);
  const secret = labeledExtract(HPKE_SUITE_ID, sharedSecret, 'secret', EMPTY);
  return {
    keyScheduleContext,
    secret,
    key: labeledExpand(HPKE_SUITE_ID, secret, 'key', keyScheduleContext, HPKE_KEY_BYTES),
    baseNonce: labeledExpand(HPKE_SUITE_ID, secret, 'base_nonce', keyScheduleContext, HPKE_NONCE_BYTES),
    exporterSecret: labeledExpand(HPKE_SUITE_ID, secret, 'exp', keyScheduleContext, SHA256_BYTES),
  };
}

/** ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn) (§5.2). */
export function computeNonce(baseNonce: Uint8Array, seq: number): Uint8Array {
  assertBytes(baseNonce, 'baseNonce', HPKE_NONCE_BYTES);
  if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError('seq must be a non-negative integer');
  const s = i2osp(seq, HPKE_NONCE_BYTES);
  return baseNonce.map((b, i) => b ^ s[i]!);
}

/** Context.Seal at sequence number `seq` (§5.2). */
export function contextSeal(schedule: KeySchedule, seq: number, aad: Uint8Array, pt: Uint8Array): Uint8Array {
  return aesGcmSeal(schedule.key, computeNonce(schedule.baseNonce, seq), pt, aad);
}

/** Context.Open at sequence number `seq` (§5.2); throws SealedError('aead-open') on failure. */
export function contextOpen(schedule: KeySchedule, seq: number, aad: Uint8Array, ct: Uint8Array): Uint8Array {
  const pt = aesGcmOpen(schedule.key, computeNonce(schedule.baseNonce, seq), ct, aad);
  if (pt === undefined) throw new SealedError('aead-open', 'the HPKE ciphertext does not authenticate');
  return pt;
}

// ---- §6.1: single-shot APIs ---------------------------------------------------------------

export interface HpkeSealed {
  enc: Uint8Array;
  ct: Uint8Array;
}

/** Seal in mode_base (§6.1, §5.1.1). */
export function sealBase(input: { pkR: Uint8Array; info: Uint8Array; aad: Uint8Array; pt: Uint8Array; ikmE: Uint8Array }): HpkeSealed {
  const { sharedSecret, enc } = encap(input.pkR, input.ikmE);
  return { enc, ct: contextSeal(keySchedule(MODE_BASE, sharedSecret, input.info), 0, input.aad, input.pt) };
}

/** Open in mode_base (§6.1, §5.1.1). */
export function openBase(input: { enc: Uint8Array; skR: Uint8Array; info: Uint8Array; aad: Uint8Array; ct: Uint8Array }): Uint8Array {
  const sharedSecret = decap(input.enc, input.skR);
  return contextOpen(keySchedule(MODE_BASE, sharedSecret, input.info), 0, input.aad, input.ct);
}

/** SealAuth (§6.1, §5.1.3): the sender authenticates with its static key skS. */
export function sealAuth(input: {
  pkR: Uint8Array;
  info: Uint8Array;
  aad: Uint8Array;
  pt: Uint8Array;
  skS: Uint8Array;
  ikmE: Uint8Array;
}): HpkeSealed {
  const { sharedSecret, enc } = authEncap(input.pkR, input.skS, input.ikmE);
  return { enc, ct: contextSeal(keySchedule(MODE_AUTH, sharedSecret, input.info), 0, input.aad, input.pt) };
}

/** OpenAuth (§6.1, §5.1.3): succeeds only for the sender whose public key is pkS. */
export function openAuth(input: {
  enc: Uint8Array;
  skR: Uint8Array;
  info: Uint8Array;
  aad: Uint8Array;
  ct: Uint8Array;
  pkS: Uint8Array;
}): Uint8Array {
  const sharedSecret = authDecap(input.enc, input.skR, input.pkS);
  return contextOpen(keySchedule(MODE_AUTH, sharedSecret, input.info), 0, input.aad, input.ct);
}
