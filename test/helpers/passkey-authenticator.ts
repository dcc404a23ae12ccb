/**
 * A software WebAuthn authenticator for tests that need no browser: a P-256 (ES256), Ed25519
 * (EdDSA) or RSA 2,048-bit (RS256) key from node:crypto, a credential id, and a signature
 * counter. `assert` builds what `navigator.credentials.get()` returns (client data JSON,
 * authenticator data = H(rp_id) ‖ flags ‖ counter, the signature over authenticator data ‖
 * H(client data JSON)); every part can be bent to test one check at a time.
 *
 * Also the relay's passkey flows over HTTP: register, sign in, and the webauthn members of a
 * signed post or a signature envelope.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { toBase64url, toHex } from '../../shared/encoding.js';
import { passkeyPeerIdOf } from '../../shared/identity.js';
import { objectIdOf, objectPasskeyChallenge } from '../../shared/objects.js';
import { call, type Answer, type RunningRelay } from './relay.js';

export type PasskeyAlg = -7 | -8 | -257;

export interface AssertOptions {
  /** The challenge bytes the client data names (b64u there). */
  challenge: Uint8Array;
  origin: string;
  rpId: string;
  /** Default webauthn.get. */
  type?: string;
  /** Default UP | UV (0x05). */
  flags?: number;
  /** The counter to send; default the authenticator's next one. */
  counter?: number;
  crossOrigin?: boolean;
  topOrigin?: string;
  /** Replace the whole client data JSON. */
  clientDataJson?: Uint8Array;
  /** Change the signature after signing. */
  tamperSignature?: boolean;
}

/** The four members of an assertion, b64u, as the wire sends them. */
export interface WireAssertion {
  credential_id: string;
  client_data_json: string;
  authenticator_data: string;
  signature: string;
}

export interface SoftAuthenticator {
  algorithm: PasskeyAlg;
  /** SPKI DER. */
  spki: Uint8Array;
  credentialId: Uint8Array;
  peerId: string;
  /** The counter the next assertion carries (then incremented), unless told to count 0. */
  counter: number;
  assert(o: AssertOptions): WireAssertion;
  /** The signature (b64u) over any authenticator data ‖ H(client data JSON), for hand-built data. */
  signRaw(authenticatorData: Uint8Array, clientDataJson: Uint8Array): string;
}

const sha256 = (b: Uint8Array): Buffer => createHash('sha256').update(b).digest();

/**
 * A new authenticator. `counting` false: the counter stays 0, as synced passkeys send it.
 */
export function softAuthenticator(algorithm: PasskeyAlg = -7, counting = true): SoftAuthenticator {
  const pair =
    algorithm === -7
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : algorithm === -8
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKey: KeyObject = pair.privateKey;
  const spki = new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' }));
  const signOver = (data: Uint8Array, clientDataJson: Uint8Array): Buffer =>
    sign(algorithm === -8 ? null : 'sha256', Buffer.concat([data, sha256(clientDataJson)]), privateKey);
  const auth: SoftAuthenticator = {
    algorithm,
    spki,
    credentialId: new Uint8Array(randomBytes(32)),
    peerId: toHex(passkeyPeerIdOf(spki)),
    counter: counting ? 1 : 0,
    assert(o) {
      const client: Record<string, unknown> = {
        type: o.type ?? 'webauthn.get',
        challenge: toBase64url(o.challenge),
        origin: o.origin,
      };
      if (o.crossOrigin !== undefined) client.crossOrigin = o.crossOrigin;
      if (o.topOrigin !== undefined) client.topOrigin = o.topOrigin;
      const clientDataJson = o.clientDataJson ?? new Uint8Array(Buffer.from(JSON.stringify(client)));
      const counter = o.counter ?? auth.counter;
      if (o.counter === undefined && counting) auth.counter++;
      const data = Buffer.alloc(37);
      sha256(Buffer.from(o.rpId)).copy(data, 0);
      data[32] = o.flags ?? 0x05;
      data.writeUInt32BE(counter, 33);
      const signature = signOver(data, clientDataJson);
      if (o.tamperSignature) signature[signature.length - 1]! ^= 1;
      return {
        credential_id: toBase64url(auth.credentialId),
        client_data_json: toBase64url(clientDataJson),
        authenticator_data: toBase64url(data),
        signature: toBase64url(signature),
      };
    },
    signRaw: (data, clientDataJson) => toBase64url(signOver(data, clientDataJson)),
  };
  return auth;
}

/** The relay's passkey settings as its challenge answer states them. */
export interface PasskeyChallenge {
  challenge: string;
  rp_id: string;
  origins: string[];
  bytes: Uint8Array;
}

export async function passkeyChallenge(relay: RunningRelay): Promise<PasskeyChallenge> {
  const r = await call(relay, 'POST', '/v1/passkeys/challenge', { body: {} });
  if (r.status !== 200) throw new Error(`passkeys.challenge: ${r.status} ${r.text}`);
  return { ...r.body, bytes: new Uint8Array(Buffer.from(r.body.challenge, 'hex')) };
}

/** A passkeys.verify body: the assertion over `c`, with `public_key` and `algorithm` when registering. */
export function verifyBody(a: SoftAuthenticator, c: PasskeyChallenge, register: boolean, o: Partial<AssertOptions> = {}): Record<string, unknown> {
  const assertion = a.assert({ challenge: c.bytes, origin: c.origins[0]!, rpId: c.rp_id, ...o });
  return {
    challenge: c.challenge,
    ...assertion,
    ...(register ? { public_key: toBase64url(a.spki), algorithm: a.algorithm } : {}),
  };
}

/** Register (or sign in) over HTTP; answers the verify answer. */
export async function passkeySignIn(relay: RunningRelay, a: SoftAuthenticator, register: boolean): Promise<Answer> {
  const c = await passkeyChallenge(relay);
  return call(relay, 'POST', '/v1/passkeys/verify', { body: verifyBody(a, c, register) });
}

/** A passkey KEY registered over HTTP, with its token. */
export async function passkeyKey(relay: RunningRelay, algorithm: PasskeyAlg = -7): Promise<{ auth: SoftAuthenticator; token: string; peerId: string }> {
  const auth = softAuthenticator(algorithm);
  const r = await passkeySignIn(relay, auth, true);
  if (r.status !== 200) throw new Error(`passkeys.verify: ${r.status} ${r.text}`);
  return { auth, token: r.body.token, peerId: r.body.peer_id };
}

/** Where the relay's assertions must come from, read from capabilities. */
export async function passkeyPolicyOf(relay: RunningRelay): Promise<{ rpId: string; origin: string }> {
  const r = await call(relay, 'GET', '/v1/capabilities');
  const p = r.body.protocol.passkeys;
  return { rpId: p.rp_id, origin: p.origins[0] };
}

/** The webauthn members signing a post's canonical bytes (objects.md §4: H(L("object-signature") ‖ object_id)). */
export function signPostWebauthn(
  a: SoftAuthenticator,
  canonical: Uint8Array,
  policy: { rpId: string; origin: string },
  o: Partial<AssertOptions> = {},
): WireAssertion {
  return a.assert({ challenge: objectPasskeyChallenge(objectIdOf(canonical)), origin: policy.origin, rpId: policy.rpId, ...o });
}

/** A webauthn signature envelope over `signed` (sealed.md §2: the challenge is H(signed)). */
export function webauthnEnvelope(
  a: SoftAuthenticator,
  signed: Uint8Array,
  policy: { rpId: string; origin: string },
  o: Partial<AssertOptions> = {},
): WireAssertion & { alg: 'webauthn' } {
  return { alg: 'webauthn', ...a.assert({ challenge: new Uint8Array(sha256(signed)), origin: policy.origin, rpId: policy.rpId, ...o }) };
}
