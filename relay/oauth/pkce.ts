/**
 * PKCE (RFC 7636), method S256 only: `code_challenge` = BASE64URL(SHA-256(ASCII(code_verifier))),
 * 43 characters; the verifier is 43 to 128 of the unreserved characters (§4.1).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export const CODE_CHALLENGE_RE = /^[A-Za-z0-9_-]{43}$/;
export const CODE_VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;

/** The S256 challenge of a verifier (§4.2). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether `verifier` answers `challenge` (§4.6), compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const made = Buffer.from(s256(verifier));
  const want = Buffer.from(challenge);
  return made.length === want.length && timingSafeEqual(made, want);
}
