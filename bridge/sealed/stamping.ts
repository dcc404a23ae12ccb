/**
 * Stamps in the bridge (protocol/sealed.md §8): a KEY's signed word that another KEY belongs to
 * it, for one sealed SPACE, counted by keepers when they decide who is vouched for.
 *
 *   stamp  = canonical({"issuer","not_after"?,"peer_id","v":1})
 *   signed = L("sealed-stamp") || stamp
 *
 * `signedStamp` builds and signs one with the KEY's signer (no key bytes here); `putStamp` sends
 * a `PUT …/sealed/stamp` body. The `svc-bridge stamp` command and the tools that admit a KEY to
 * a sealed SPACE or remove one from it (bridge/sealed/keeping.ts `vouchAndLock`, `endVouching`) all go
 * through these two.
 */
import { toBase64url } from '../../shared/encoding.js';
import type { Signer } from '../../shared/identity.js';
import { buildStamp, signStamp } from '../../shared/sealed/stamps.js';
import type { RelayApi } from '../../tools/api.js';

/**
 * The `not_after` of a stamp that ends a KEY's vouching now (ms clock): the second before. A
 * stamp counts "until and including" its `not_after` (shared/sealed/stamps.ts `stampCurrent`),
 * so one ending at the current second would still vouch for the rest of it.
 */
export function endedNotAfter(nowMs: number): number {
  return Math.max(0, Math.floor(nowMs / 1000) - 1);
}

/** The `PUT …/sealed/stamp` body of a stamp `issuer` signs for `peer` (no end unless `notAfter`). */
export function signedStamp(signer: Signer, issuer: string, peer: string, notAfter?: number): Record<string, string> {
  const bytes = buildStamp({ issuer, peer_id: peer, not_after: notAfter });
  return { stamp: toBase64url(bytes), ...signStamp(signer, bytes) };
}

export interface StampPut {
  /** False when another issuer's stamp for that KEY still vouches and stands (§8). */
  readonly stored: boolean;
  /** The issuer of the stamp that stands now, as the relay shows it (attacker-controlled). */
  readonly issuer: unknown;
}

/** Put a stamp in sealed SPACE `space` (sealed.stamp). */
export async function putStamp(api: RelayApi, space: string, body: Record<string, string>): Promise<StampPut> {
  const res = await api.request({ method: 'PUT', path: `/v1/spaces/${encodeURIComponent(space)}/sealed/stamp`, body });
  const b = (res.body ?? {}) as Record<string, unknown>;
  const standing = (b.stamp ?? {}) as Record<string, unknown>;
  return { stored: b.stored !== false, issuer: standing.issuer };
}
