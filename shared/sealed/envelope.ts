/**
 * Signature envelopes of protocol/sealed.md §2, shared by encryption-key statements, keeper
 * lists and stamps:
 *
 *   {"alg":"ed25519","signature": 128 hex}                        Ed25519 over `signed`
 *   {"alg":"webauthn","credential_id","client_data_json",
 *    "authenticator_data","signature"} (b64u)                     an assertion whose challenge is H(signed)
 *
 * `signed` is always L(label) || the statement's bytes. A webauthn envelope is checked as at
 * passkey sign-in (shared/passkey.ts) under the policy its signer key carries: where assertions
 * must come from is the relay's setting, so software that has none (or a relay with passkeys
 * turned off) answers PASSKEYS_UNAVAILABLE. The signature counter is the caller's to check.
 *
 * Request bodies and envelopes are attacker-controlled.
 */
import { SvcError, type ErrorCode } from '../errors.js';
import { fromBase64url, fromHex, isHex, toHex } from '../encoding.js';
import { sha256 } from '../hash.js';
import { passkeyPeerIdOf, peerIdOf, verifyEd25519, type Signer } from '../identity.js';
import { ASSERTION_MEMBERS, checkAssertion, passkeyKeyOf, readAssertion, type PasskeyPolicy } from '../passkey.js';

export interface Ed25519Envelope {
  alg: 'ed25519';
  /** 128 lowercase hex. */
  signature: string;
}

export interface WebauthnEnvelope {
  alg: 'webauthn';
  credential_id: string;
  client_data_json: string;
  authenticator_data: string;
  signature: string;
}

export type SignatureEnvelope = Ed25519Envelope | WebauthnEnvelope;

/**
 * The KEY that signs: its peer id (hex) and what the peer id is a hash of. A passkey KEY also
 * carries where its assertions must come from (`passkeys`; absent or null: not checkable here,
 * PASSKEYS_UNAVAILABLE) and, when known, the credential id (b64u) it registered.
 */
export type SignerKey =
  | { peerId: string; keyType: 'ed25519'; publicKey: Uint8Array }
  | { peerId: string; keyType: 'passkey'; spki: Uint8Array; passkeys?: PasskeyPolicy | null | undefined; credentialId?: string | undefined };

const WEBAUTHN_MEMBERS = ASSERTION_MEMBERS;

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

/** Ed25519 envelope over `signed`. */
export function signEnvelope(signer: Signer, signed: Uint8Array): Ed25519Envelope {
  return { alg: 'ed25519', signature: toHex(signer.sign(signed)) };
}

/** The WebAuthn challenge a passkey signs: H(signed). */
export function passkeyChallenge(signed: Uint8Array): Uint8Array {
  return sha256(signed);
}

/** Whether the signer's key hashes to its peer id (L("agent") or L("passkey"), labels.md). */
export function signerMatchesPeerId(key: SignerKey): boolean {
  try {
    const id = key.keyType === 'ed25519' ? peerIdOf(key.publicKey) : passkeyPeerIdOf(key.spki);
    return toHex(id) === key.peerId;
  } catch {
    return false;
  }
}

/**
 * Read a request body made of one payload member (`statement`, `list` or `stamp`, b64u) and an
 * envelope's members, and nothing else. Returns the payload bytes and the envelope. Shape
 * problems are INVALID_REQUEST naming the member.
 */
export function readEnvelopeBody(body: unknown, payloadMember: string): { payload: Uint8Array; envelope: SignatureEnvelope } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('body', 'expected a JSON object');
  const b = body as Record<string, unknown>;
  const envelope = readEnvelope(b, payloadMember);
  if (b[payloadMember] === undefined) throw bad(payloadMember, 'required');
  return { payload: fromBase64url(b[payloadMember], payloadMember), envelope };
}

/**
 * Read an envelope from `value`, whose members besides the envelope's may only be `others`.
 * `field` prefixes details (empty for a request body's top level).
 */
export function readEnvelope(value: unknown, ...others: string[]): SignatureEnvelope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('signature', 'expected an envelope object');
  const b = value as Record<string, unknown>;
  const alg = b.alg;
  if (alg !== 'ed25519' && alg !== 'webauthn') throw bad('alg', 'must be ed25519 or webauthn');
  const allowed = new Set<string>(['alg', ...others, ...(alg === 'ed25519' ? ['signature'] : WEBAUTHN_MEMBERS)]);
  for (const k of Object.keys(b)) if (!allowed.has(k)) throw bad(k, `not allowed with alg ${alg}`);
  if (alg === 'ed25519') {
    if (!isHex(b.signature, 64)) throw bad('signature', 'expected 128 lowercase hex');
    return { alg, signature: b.signature };
  }
  // The sizes of the Limits table ("passkey fields"), INVALID_REQUEST naming the member.
  readAssertion(b);
  const out: Record<string, string> = {};
  for (const m of WEBAUTHN_MEMBERS) out[m] = b[m] as string;
  return { alg, ...(out as Omit<WebauthnEnvelope, 'alg'>) };
}

/**
 * Verify `envelope` over `signed` by `key`. Failure is `code` with a detail naming `what`:
 * ENCRYPTION_KEY_INVALID for statements, SEALED_SIGNATURE_INVALID for keeper lists and stamps.
 * The signer's peer-id binding is the caller's check, made before this one.
 */
export function verifyEnvelope(envelope: SignatureEnvelope, signed: Uint8Array, key: SignerKey, code: ErrorCode, what: string): void {
  if (envelope.alg === 'webauthn') {
    if (key.keyType !== 'passkey') throw new SvcError(code, `${what}: a webauthn signature from a KEY that is not a passkey`);
    if (key.passkeys === undefined || key.passkeys === null) {
      throw new SvcError('PASSKEYS_UNAVAILABLE', `${what}: webauthn signatures need the relay's passkeys, turned off here`);
    }
    const assertion = readAssertion(envelope as unknown as Record<string, unknown>);
    if (key.credentialId !== undefined && envelope.credential_id !== key.credentialId) {
      throw new SvcError(code, `${what}: credential_id is not the passkey this KEY registered`);
    }
    const parsed = passkeyKeyOf(key.spki);
    if (!parsed.ok) throw new SvcError(code, `${what}: ${parsed.check}`);
    const checked = checkAssertion(assertion, parsed.value, passkeyChallenge(signed), key.passkeys);
    if (!checked.ok) throw new SvcError(code, `${what}: ${checked.check}`);
    return;
  }
  if (key.keyType !== 'ed25519') throw new SvcError(code, `${what}: an ed25519 signature from a passkey KEY`);
  if (!verifyEd25519(key.publicKey, signed, fromHex(envelope.signature, 64, 'signature'))) {
    throw new SvcError(code, `${what}: the signature does not verify`);
  }
}
