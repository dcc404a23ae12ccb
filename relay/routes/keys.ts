/**
 * Keys, tokens, passkeys: Ed25519 KEY sign-in (spec/2-endpoints.md; spec/1-concepts.md "Minting
 * with an Ed25519 KEY"; api-notes §3); passkey sign-in is relay/routes/passkeys.ts. Bodies are
 * attacker-controlled.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { fromHex, toHex } from '../../shared/encoding.js';
import { REJECTED_PUBLIC_KEYS, peerIdOf, tokenChallengeMessage, verifyEd25519 } from '../../shared/identity.js';
import {
  TOKEN_LABEL_MAX_BYTES,
  TOKEN_TTL_DEFAULT_SECONDS,
  TOKEN_TTL_MAX_SECONDS,
  TOKEN_TTL_MIN_SECONDS,
} from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { tokenHash } from '../http/auth.js';
import { evenLowerHex, isoTime, lowerHex, utf8Max } from '../http/schemas.js';
import { newToken, newUuid } from '../ids.js';
import { checkChallenge, issueChallenge } from '../sign-in/challenge.js';
import { joinOutcome } from '../sign-in/join-with-invite.js';

const ChallengeBody = z.strictObject({ public_key: lowerHex(32) });

const VerifyBody = z.strictObject({
  public_key: lowerHex(32),
  // The key path allows any even-length hex (spec "Encoding conventions"); we issue 56 bytes
  // and a wrong length is CHALLENGE_INVALID, not a malformed request.
  challenge: evenLowerHex(1024),
  signature: lowerHex(64),
  label: utf8Max(TOKEN_LABEL_MAX_BYTES).optional(),
  ttl_seconds: z.number().int().min(TOKEN_TTL_MIN_SECONDS).max(TOKEN_TTL_MAX_SECONDS).optional(),
  invite: z.string().min(1).max(2048).optional(),
});

function refuseRejectedKey(publicKeyHex: string): void {
  if (REJECTED_PUBLIC_KEYS.has(publicKeyHex)) {
    throw new SvcError('KEY_REJECTED', 'public_key: this key is published; generate your own');
  }
}

export const keysRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.post(
    '/v1/keys/challenge',
    {
      schema: { body: ChallengeBody },
      config: { auth: 'none', limit: 'register', operation: 'keys.challenge', describe: 'Challenge for an Ed25519 KEY to sign; valid five minutes, once.' },
    },
    async (req) => {
      const { public_key } = req.body as z.infer<typeof ChallengeBody>;
      refuseRejectedKey(public_key);
      const peerId = peerIdOf(fromHex(public_key, 32, 'public_key'));
      const issued = issueChallenge(ctx.serviceKeys.challengeSecret, peerId, ctx.clock(), ctx.random(16));
      return {
        peer_id: toHex(peerId),
        challenge: toHex(issued.bytes),
        audience: ctx.audience(),
        expires_at: isoTime(issued.expiresAtMs),
      };
    },
  );

  app.post(
    '/v1/keys/verify',
    {
      schema: { body: VerifyBody },
      config: { auth: 'none', limit: 'register', operation: 'keys.verify', describe: 'Trade a signed challenge for a token; the first success registers the KEY.' },
    },
    async (req) => {
      const body = req.body as z.infer<typeof VerifyBody>;
      refuseRejectedKey(body.public_key);
      const publicKey = fromHex(body.public_key, 32, 'public_key');
      const peerId = peerIdOf(publicKey);
      const peerIdHex = toHex(peerId);
      const challenge = fromHex(body.challenge, undefined, 'challenge');
      const now = ctx.clock();
      const { nonce, expiresAtMs } = checkChallenge(ctx.serviceKeys.challengeSecret, peerId, challenge, now);
      const message = tokenChallengeMessage(ctx.audience(), challenge);
      if (!verifyEd25519(publicKey, message, fromHex(body.signature, 64, 'signature'))) {
        throw new SvcError('SIGNATURE_INVALID', 'signature: does not verify for this key, this host and this challenge');
      }
      await ctx.limiter.take('tokensPerKey', `${peerIdHex} ${req.ip}`);
      await ctx.limiter.take('tokensServiceWide', 'service', { shared: true });

      const token = newToken(ctx.random);
      const ttl = body.ttl_seconds ?? TOKEN_TTL_DEFAULT_SECONDS;
      const expiresAt = now + ttl * 1000;
      const minted = await ctx.store.keys.mint({
        peerId: peerIdHex,
        keyType: 'ed25519',
        publicKey: body.public_key,
        nonce,
        nonceExpiresAt: expiresAtMs,
        tokenId: newUuid(ctx.random),
        tokenHash: tokenHash(token),
        label: body.label ?? null,
        now,
        expiresAt,
      });
      if (!minted.ok) {
        if (minted.reason === 'blocked') throw new SvcError('KEY_BLOCKED');
        throw new SvcError('CHALLENGE_INVALID', 'challenge: already used; each works once');
      }
      const answer: Record<string, unknown> = {
        peer_id: peerIdHex,
        token,
        expires_at: isoTime(expiresAt),
        registered: minted.registered,
      };
      if (body.invite !== undefined) Object.assign(answer, await joinOutcome(ctx, peerIdHex, body.invite, String(req.id)));
      return answer;
    },
  );
};
