/**
 * Passkey sign-in (spec/2-endpoints.md "Keys, tokens, passkeys"; spec/1-concepts.md
 * "Passkeys"; protocol/api-notes.md §3): a passkey is a KEY like any other, whose peer id is
 * H(L("passkey") ‖ spki) (labels.md) and whose token works everywhere an Ed25519 KEY's does.
 *
 * - passkeys.challenge: 56 bytes (exp ‖ nonce ‖ tag under L("passkey-challenge"), naming no
 *   KEY), with the rp_id and origins an assertion must name.
 * - passkeys.verify: an assertion (`webauthn.get`) over the challenge's raw bytes. The first
 *   use also sends the SPKI `public_key` and COSE `algorithm` (the web page creates the
 *   credential, then asks for one assertion with the same challenge), which registers the KEY;
 *   later sign-ins name the credential only, and its signature counter must advance.
 *
 * Checks, in order: passkeys on (PASSKEYS_UNAVAILABLE, before the body is read); the body
 * (INVALID_REQUEST, the Limits table's passkey field sizes); the challenge (CHALLENGE_EXPIRED,
 * CHALLENGE_INVALID); the key: registering, a public key that is canonical DER of its
 * algorithm's key (PASSKEY_INVALID), signing in, a registered credential
 * (PASSKEY_NOT_REGISTERED); the assertion (PASSKEY_INVALID naming the check); then in the
 * minting transaction a spent challenge (CHALLENGE_INVALID), a key or credential already
 * registered (PASSKEY_TAKEN), a blocked KEY (KEY_BLOCKED), a counter that did not advance
 * (PASSKEY_INVALID). Every refusal writes nothing. Bodies are attacker-controlled.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { fromBase64url, fromHex, toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { passkeyPeerIdOf } from '../../shared/identity.js';
import { PASSKEY_LIMITS, TOKEN_LABEL_MAX_BYTES, TOKEN_TTL_DEFAULT_SECONDS, TOKEN_TTL_MAX_SECONDS, TOKEN_TTL_MIN_SECONDS } from '../../shared/limits.js';
import {
  PASSKEY_ALGORITHMS,
  checkAssertion,
  passkeyKeyOf,
  readAssertion,
  type PasskeyAlgorithm,
  type PasskeyKey,
  type PasskeyPolicy,
} from '../../shared/passkey.js';
import type { RelayContext } from '../context.js';
import { tokenHash } from '../http/auth.js';
import { isoTime, lowerHex, noBody, utf8Max } from '../http/schemas.js';
import { newToken, newUuid } from '../ids.js';
import { checkChallenge, issueChallenge } from '../sign-in/challenge.js';

/** No body, or `{}`: the challenge takes no options, and a member sent is never ignored. */
const ChallengeBody = noBody;

/** Longest unpadded base64url of `bytes` bytes: longer text is refused before decoding. */
const b64uText = (bytes: number) => z.string().max(Math.ceil((bytes * 4) / 3));

const VerifyBody = z.strictObject({
  challenge: lowerHex(56),
  credential_id: b64uText(PASSKEY_LIMITS.credentialIdBytes.max),
  client_data_json: b64uText(PASSKEY_LIMITS.clientDataMaxBytes),
  authenticator_data: b64uText(PASSKEY_LIMITS.authenticatorDataBytes.max),
  signature: b64uText(PASSKEY_LIMITS.signatureMaxBytes),
  public_key: b64uText(PASSKEY_LIMITS.publicKeyBytes.max).optional(),
  algorithm: z
    .number()
    .int()
    .refine((n) => (PASSKEY_ALGORITHMS as readonly number[]).includes(n), 'one of -7 (ES256), -8 (EdDSA), -257 (RS256)')
    .optional(),
  label: utf8Max(TOKEN_LABEL_MAX_BYTES).optional(),
  ttl_seconds: z.number().int().min(TOKEN_TTL_MIN_SECONDS).max(TOKEN_TTL_MAX_SECONDS).optional(),
});

/** The policy, or PASSKEYS_UNAVAILABLE when the operator turned passkeys off. */
export function passkeysOn(ctx: RelayContext): PasskeyPolicy {
  const policy = ctx.passkeyPolicy();
  if (policy === null) throw new SvcError('PASSKEYS_UNAVAILABLE', 'passkeys are turned off on this relay');
  return policy;
}

/** The KEY the verify body names: registering (public key sent) or signing in (credential). */
async function keyOf(
  ctx: RelayContext,
  body: z.infer<typeof VerifyBody>,
  credentialId: string,
): Promise<{ peerId: string; spki: Uint8Array; key: PasskeyKey; register: boolean }> {
  if ((body.public_key === undefined) !== (body.algorithm === undefined)) {
    throw new SvcError('INVALID_REQUEST', 'public_key and algorithm: send both to register, neither to sign in');
  }
  if (body.public_key !== undefined) {
    const spki = fromBase64url(body.public_key, 'public_key');
    const { min, max } = PASSKEY_LIMITS.publicKeyBytes;
    if (spki.length < min || spki.length > max) throw new SvcError('INVALID_REQUEST', `public_key: ${min} to ${max} bytes`);
    const parsed = passkeyKeyOf(spki, body.algorithm);
    if (!parsed.ok) throw new SvcError('PASSKEY_INVALID', parsed.check);
    return { peerId: toHex(passkeyPeerIdOf(spki)), spki, key: parsed.value, register: true };
  }
  const known = await ctx.store.keys.passkey(credentialId);
  if (known === undefined) throw new SvcError('PASSKEY_NOT_REGISTERED', 'credential_id: no passkey KEY has this credential');
  const spki = fromHex(known.publicKey, undefined, 'public_key');
  const parsed = passkeyKeyOf(spki, known.algorithm);
  // The stored key passed this check at registration; failing now is the relay's fault.
  if (!parsed.ok) throw new Error(`stored passkey of ${known.peerId} no longer parses: ${parsed.check}`);
  return { peerId: known.peerId, spki, key: parsed.value, register: false };
}

export const passkeysRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const off = ctx.config.passkeys === false;
  // Before the body is parsed: a relay without passkeys answers PASSKEYS_UNAVAILABLE to anything.
  const refuseWhenOff = async (): Promise<void> => void passkeysOn(ctx);

  app.post(
    '/v1/passkeys/challenge',
    {
      schema: { body: ChallengeBody },
      onRequest: refuseWhenOff,
      config: {
        // Its own onRequest hook: never called in process.
        inProcess: false,
        auth: 'none',
        limit: 'register',
        operation: 'passkeys.challenge',
        describe: off
          ? 'Passkey sign-in: turned off on this relay (PASSKEYS_UNAVAILABLE).'
          : 'Challenge for a passkey to sign (webauthn.get) with the rp_id and origins it must name; five minutes, once.',
      },
    },
    async () => {
      const policy = passkeysOn(ctx);
      const issued = issueChallenge(ctx.serviceKeys.challengeSecret, 'passkey', ctx.clock(), ctx.random(16));
      return {
        challenge: toHex(issued.bytes),
        rp_id: policy.rpId,
        origins: [...policy.origins],
        algorithms: [...PASSKEY_ALGORITHMS],
        user_verification: 'required',
        expires_at: isoTime(issued.expiresAtMs),
      };
    },
  );

  app.post(
    '/v1/passkeys/verify',
    {
      schema: { body: VerifyBody },
      onRequest: refuseWhenOff,
      config: {
        // Its own onRequest hook: never called in process.
        inProcess: false,
        auth: 'none',
        limit: 'register',
        operation: 'passkeys.verify',
        describe: off
          ? 'Passkey sign-in: turned off on this relay (PASSKEYS_UNAVAILABLE).'
          : 'Trade a passkey assertion over the challenge for a token; with public_key and algorithm, the first use registers the KEY.',
      },
    },
    async (req) => {
      const policy = passkeysOn(ctx);
      const body = req.body as z.infer<typeof VerifyBody>;
      const assertion = readAssertion(body);
      const challenge = fromHex(body.challenge, 56, 'challenge');
      const now = ctx.clock();
      const { nonce, expiresAtMs } = checkChallenge(ctx.serviceKeys.challengeSecret, 'passkey', challenge, now);
      const key = await keyOf(ctx, body, body.credential_id);
      const checked = checkAssertion(assertion, key.key, challenge, policy);
      if (!checked.ok) throw new SvcError('PASSKEY_INVALID', checked.check);
      await ctx.limiter.take('tokensPerKey', `${key.peerId} ${req.ip}`);
      await ctx.limiter.take('tokensServiceWide', 'service', { shared: true });

      const token = newToken(ctx.random);
      const expiresAt = now + (body.ttl_seconds ?? TOKEN_TTL_DEFAULT_SECONDS) * 1000;
      const algorithm: PasskeyAlgorithm = key.key.algorithm;
      const minted = await ctx.store.keys.mint({
        peerId: key.peerId,
        keyType: 'passkey',
        publicKey: toHex(key.spki),
        nonce,
        nonceExpiresAt: expiresAtMs,
        tokenId: newUuid(ctx.random),
        tokenHash: tokenHash(token),
        label: body.label ?? null,
        now,
        expiresAt,
        passkey: { credentialId: body.credential_id, algorithm, counter: checked.value.counter, register: key.register },
      });
      if (!minted.ok) {
        switch (minted.reason) {
          case 'blocked':
            throw new SvcError('KEY_BLOCKED');
          case 'taken':
            throw new SvcError('PASSKEY_TAKEN', 'public_key or credential_id: already registered; sign in without public_key, or create a new passkey');
          case 'counter':
            throw new SvcError('PASSKEY_INVALID', 'authenticator_data: the signature counter did not increase (a cloned authenticator, or a replayed assertion)');
          case 'nonce_spent':
            throw new SvcError('CHALLENGE_INVALID', 'challenge: already used; each works once');
        }
      }
      return {
        peer_id: key.peerId,
        token,
        expires_at: isoTime(expiresAt),
        registered: minted.registered,
        key_type: 'passkey',
        algorithm,
      };
    },
  );
};
