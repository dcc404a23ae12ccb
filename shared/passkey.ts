/**
 * WebAuthn assertions of passkey KEYS (protocol/api-notes.md "A WebAuthn assertion … holds
 * when"), one check for sign-in, passkey-signed posts and signature envelopes:
 *
 * - `client_data_json` is JSON with `type` "webauthn.get", `challenge` = b64u of the expected
 *   challenge bytes, `origin` one of the service's origins, `crossOrigin` not true, no `topOrigin`;
 * - `authenticator_data` starts with H(rp_id), its flags have UP (0x01) and UV (0x04);
 * - the signature verifies over `authenticator_data ‖ H(client_data_json)` under the passkey's
 *   SPKI: ES256 (DER signature), RS256 (PKCS#1 v1.5, SHA-256, 2,048 to 8,192 bits), EdDSA;
 * - a signature counter that counts must increase: the caller holds the stored counter
 *   (`counterAdvances`), since that needs the store.
 *
 * @simplewebauthn/server parses the client data and the authenticator data (flags, counter,
 * extensions); the signature is checked with node:crypto because the protocol gives the key
 * as SPKI (the library's verifier wants COSE and is asynchronous, and posts are checked
 * synchronously on the append path). Where assertions must come from (rp_id, origins) is a
 * parameter: this module knows no settings. Every input is attacker-controlled: a failed
 * check is `{ok: false, check}` naming it, never a throw.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeClientDataJSON, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { canonicalBytes } from './canonical.js';
import { fromBase64url, toBase64url, utf8 } from './encoding.js';
import { SvcError } from './errors.js';
import { sha256 } from './hash.js';
import { PASSKEY_LIMITS } from './limits.js';

/** COSE algorithm numbers a passkey may use (labels.md "passkey algorithms"). */
export const PASSKEY_ALGORITHMS = [-7, -8, -257] as const;
export type PasskeyAlgorithm = (typeof PASSKEY_ALGORITHMS)[number];
export type PasskeyAlgorithmName = 'ES256' | 'EdDSA' | 'RS256';
export const PASSKEY_ALGORITHM_NAMES: Record<PasskeyAlgorithm, PasskeyAlgorithmName> = {
  [-7]: 'ES256',
  [-8]: 'EdDSA',
  [-257]: 'RS256',
};

export function isPasskeyAlgorithm(n: unknown): n is PasskeyAlgorithm {
  return (PASSKEY_ALGORITHMS as readonly unknown[]).includes(n);
}

/** Where assertions must come from: the relay's settings (rp_id and the origins it serves). */
export interface PasskeyPolicy {
  readonly rpId: string;
  readonly origins: readonly string[];
}

/** The four members of an assertion as bytes (the wire sends them as unpadded b64u). */
export interface Assertion {
  credentialId: Uint8Array;
  clientDataJson: Uint8Array;
  authenticatorData: Uint8Array;
  signature: Uint8Array;
}

/** A passkey's public key, parsed once: the node:crypto key and its COSE algorithm. */
export interface PasskeyKey {
  key: KeyObject;
  algorithm: PasskeyAlgorithm;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; check: string };

const UP = 0x01;
const UV = 0x04;
/** The smallest DER signature any of the three algorithms makes (objects.md §5: 8 bytes). */
const SIGNATURE_MIN_BYTES = 8;

/** The wire members of an assertion, in the names every body uses. */
export const ASSERTION_MEMBERS = ['credential_id', 'client_data_json', 'authenticator_data', 'signature'] as const;

function sized(value: unknown, field: string, min: number, max: number): Uint8Array {
  // Checked on the text first so a huge string is never decoded.
  if (typeof value === 'string' && value.length > Math.ceil((max * 4) / 3)) {
    throw new SvcError('INVALID_REQUEST', `${field}: at most ${max} bytes`);
  }
  const bytes = fromBase64url(value, field);
  if (bytes.length < min || bytes.length > max) {
    throw new SvcError('INVALID_REQUEST', `${field}: ${min} to ${max} bytes`);
  }
  return bytes;
}

/**
 * Read the four assertion members of `body` (b64u) with the size limits of the Limits table
 * ("passkey fields"); a missing or malformed member is INVALID_REQUEST naming it.
 */
export function readAssertion(body: Record<string, unknown>, prefix = ''): Assertion {
  const L = PASSKEY_LIMITS;
  return {
    credentialId: sized(body.credential_id, `${prefix}credential_id`, L.credentialIdBytes.min, L.credentialIdBytes.max),
    clientDataJson: sized(body.client_data_json, `${prefix}client_data_json`, 1, L.clientDataMaxBytes),
    authenticatorData: sized(
      body.authenticator_data,
      `${prefix}authenticator_data`,
      L.authenticatorDataBytes.min,
      L.authenticatorDataBytes.max,
    ),
    signature: sized(body.signature, `${prefix}signature`, SIGNATURE_MIN_BYTES, L.signatureMaxBytes),
  };
}

/**
 * The key of an SPKI, if it is canonical DER of a key `algorithm` uses (undefined: whichever
 * of the three the key is). Answers the key and its algorithm.
 */
export function passkeyKeyOf(spki: Uint8Array, algorithm?: number): Checked<PasskeyKey> {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
  } catch {
    return { ok: false, check: 'public_key: not a DER SubjectPublicKeyInfo' };
  }
  const type = key.asymmetricKeyType;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  let found: PasskeyAlgorithm;
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') found = -7;
  else if (type === 'ed25519') found = -8;
  else if (type === 'rsa' && bits >= 2048 && bits <= 8192) found = -257;
  else return { ok: false, check: 'public_key: not a P-256, Ed25519 or 2,048 to 8,192-bit RSA key' };
  if (algorithm !== undefined && algorithm !== found) {
    return { ok: false, check: `algorithm: ${algorithm} does not match the key (${PASSKEY_ALGORITHM_NAMES[found]}, ${found})` };
  }
  // One key, one SPKI: the peer id hashes these bytes, so another encoding of the same key
  // (a compressed point, a long-form length) would be a second KEY. The key rebuilt from its
  // JWK members is written in the one canonical form (an EC point uncompressed).
  const canonical = createPublicKey({ key: key.export({ format: 'jwk' }), format: 'jwk' }).export({ format: 'der', type: 'spki' });
  if (!canonical.equals(Buffer.from(spki))) {
    return { ok: false, check: 'public_key: not canonical DER (send the uncompressed SPKI)' };
  }
  return { ok: true, value: { key, algorithm: found } };
}

/**
 * Check an assertion over `challenge` by the passkey `key` under `policy`. Answers the
 * authenticator's signature counter (the caller applies `counterAdvances`).
 */
export function checkAssertion(assertion: Assertion, key: PasskeyKey, challenge: Uint8Array, policy: PasskeyPolicy): Checked<{ counter: number }> {
  let client: Record<string, unknown>;
  try {
    const parsed: unknown = decodeClientDataJSON(toBase64url(assertion.clientDataJson));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    client = parsed as Record<string, unknown>;
  } catch {
    return { ok: false, check: 'client_data_json: not a JSON object' };
  }
  if (client.type !== 'webauthn.get') return { ok: false, check: 'client_data_json.type: must be webauthn.get' };
  if (client.challenge !== toBase64url(challenge)) return { ok: false, check: 'client_data_json.challenge: not the expected challenge' };
  if (typeof client.origin !== 'string' || !policy.origins.includes(client.origin)) {
    return { ok: false, check: 'client_data_json.origin: not an origin of this service' };
  }
  if (client.crossOrigin === true) return { ok: false, check: 'client_data_json.crossOrigin: must not be true' };
  if (client.topOrigin !== undefined) return { ok: false, check: 'client_data_json.topOrigin: must be absent' };

  const data = assertion.authenticatorData;
  if (data.length < 37) return { ok: false, check: 'authenticator_data: under 37 bytes' };
  let auth: ReturnType<typeof parseAuthenticatorData>;
  try {
    // A copy: the parser may patch a byte of the buffer it is given while it reads.
    auth = parseAuthenticatorData(new Uint8Array(data));
  } catch {
    return { ok: false, check: 'authenticator_data: malformed' };
  }
  if (!Buffer.from(auth.rpIdHash).equals(Buffer.from(sha256(utf8(policy.rpId))))) {
    return { ok: false, check: 'authenticator_data: rp_id hash is not this service' };
  }
  if ((auth.flags.flagsInt & UP) === 0) return { ok: false, check: 'authenticator_data: user presence flag not set' };
  if ((auth.flags.flagsInt & UV) === 0) return { ok: false, check: 'authenticator_data: user verification flag not set' };

  let good = false;
  try {
    const signed = Buffer.concat([data, sha256(assertion.clientDataJson)]);
    good = verify(key.algorithm === -8 ? null : 'sha256', signed, key.key, assertion.signature);
  } catch {
    good = false;
  }
  if (!good) return { ok: false, check: 'signature: does not verify over authenticator_data and H(client_data_json)' };
  return { ok: true, value: { counter: auth.counter } };
}

/** A counter that counts (either side not zero) must increase (api-notes.md). */
export function counterAdvances(stored: number, received: number): boolean {
  return (stored === 0 && received === 0) || received > stored;
}

/** The signature counter of authenticator data (bytes 33 to 36, big-endian); 37 bytes at least. */
export function counterOf(authenticatorData: Uint8Array): number {
  if (authenticatorData.length < 37) throw new RangeError('authenticator data is at least 37 bytes');
  return new DataView(authenticatorData.buffer, authenticatorData.byteOffset + 33, 4).getUint32(0, false);
}

/**
 * An assertion as the relay stores it beside a post (the `signature` column): canonical JSON
 * of the four wire members, so reads serve them exactly as they were sent.
 */
export function assertionRecord(a: Assertion): Uint8Array {
  return canonicalBytes({
    credential_id: toBase64url(a.credentialId),
    client_data_json: toBase64url(a.clientDataJson),
    authenticator_data: toBase64url(a.authenticatorData),
    signature: toBase64url(a.signature),
  });
}

/** The wire members of a stored assertion record (written by `assertionRecord`). */
export function readAssertionRecord(bytes: Uint8Array): Record<(typeof ASSERTION_MEMBERS)[number], string> {
  const v = JSON.parse(Buffer.from(bytes).toString('utf8')) as Record<string, unknown>;
  const out = {} as Record<(typeof ASSERTION_MEMBERS)[number], string>;
  for (const m of ASSERTION_MEMBERS) {
    if (typeof v[m] !== 'string') throw new TypeError(`stored assertion: ${m} missing`);
    out[m] = v[m];
  }
  return out;
}
