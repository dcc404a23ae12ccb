/**
 * Token challenges (protocol/labels.md "token-challenge", "passkey-challenge"):
 *
 *   challenge = exp (8 bytes, big-endian Unix seconds, now + 300) ‖ nonce (16) ‖ tag (32)
 *   tag = HMAC-SHA256(server secret, L("token-challenge") ‖ peer_id32 ‖ exp8 ‖ nonce16)
 *   passkey sign-in: tag = HMAC-SHA256(server secret, L("passkey-challenge") ‖ exp8 ‖ nonce16),
 *   naming no KEY (the passkey is known only from the answer)
 *
 * Checked in order: length, expiry, tag (constant time). The challenge is stateless; spending
 * its nonce (one token per nonce) happens in the store when the token is minted.
 * The challenge a client sends back is attacker-controlled.
 */
import { timingSafeEqual } from 'node:crypto';
import { SvcError } from '../../shared/errors.js';
import { concatBytes, readU64, u64 } from '../../shared/encoding.js';
import { hmacSha256 } from '../../shared/hash.js';
import { label } from '../../shared/labels.js';
import { CHALLENGE_BYTES, CHALLENGE_TTL_SECONDS } from '../../shared/limits.js';

export interface IssuedChallenge {
  bytes: Uint8Array;
  expiresAtMs: number;
}

/** What a challenge is bound to: an Ed25519 KEY's peer id, or passkey sign-in (no KEY yet). */
export type ChallengeFor = Uint8Array | 'passkey';

function tagOf(secret: Uint8Array, bound: ChallengeFor, exp: Uint8Array, nonce: Uint8Array): Uint8Array {
  return bound === 'passkey'
    ? hmacSha256(secret, label('passkey-challenge'), exp, nonce)
    : hmacSha256(secret, label('token-challenge'), bound, exp, nonce);
}

export function issueChallenge(secret: Uint8Array, bound: ChallengeFor, nowMs: number, nonce: Uint8Array): IssuedChallenge {
  const expSeconds = Math.floor(nowMs / 1000) + CHALLENGE_TTL_SECONDS;
  const exp = u64(expSeconds);
  return { bytes: concatBytes(exp, nonce, tagOf(secret, bound, exp, nonce)), expiresAtMs: expSeconds * 1000 };
}

/** Check a returned challenge; answers its nonce and expiry or throws the catalogue code. */
export function checkChallenge(
  secret: Uint8Array,
  bound: ChallengeFor,
  challenge: Uint8Array,
  nowMs: number,
): { nonce: Uint8Array; expiresAtMs: number } {
  if (challenge.length !== CHALLENGE_BYTES) {
    throw new SvcError('CHALLENGE_INVALID', `challenge: must be ${CHALLENGE_BYTES} bytes`);
  }
  const exp = challenge.subarray(0, 8);
  const nonce = challenge.subarray(8, 24);
  const tag = challenge.subarray(24, 56);
  const expiresAtMs = Number(readU64(exp)) * 1000;
  if (!Number.isSafeInteger(expiresAtMs) || nowMs >= expiresAtMs) throw new SvcError('CHALLENGE_EXPIRED');
  if (!timingSafeEqual(tag, tagOf(secret, bound, exp, nonce))) {
    throw new SvcError('CHALLENGE_INVALID', bound === 'passkey' ? 'challenge: not a passkey challenge issued here' : 'challenge: not issued here for this key');
  }
  return { nonce: new Uint8Array(nonce), expiresAtMs };
}
