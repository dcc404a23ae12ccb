/**
 * What differs when the tool layer is served by the relay's connector instead of the bridge
 * (spec/1-concepts.md "Connector"; protocol/api-notes.md §6): the connector holds no KEY and no
 * secret, so nothing is signed or sealed there. Sealing is refused with SEALED_NEEDS_BRIDGE
 * (spec/3-errors.md), nothing written: a sealed SPACE takes only ciphertext made on the member's
 * own machine (posts.append itself refuses words there, SPACE_SEALED, which the connector's
 * svc_post answers as SEALED_NEEDS_BRIDGE).
 */
import { SvcError } from '../shared/errors.js';
import type { BridgeDeps } from './deps.js';

/** How an unsigned post is described at the connector. */
export const UNSIGNED_AT_RELAY = "no (origin-attested: the relay's connector holds no KEY; post through the bridge to sign)";

/** SEALED_NEEDS_BRIDGE with a detail saying what would have needed sealing. Nothing was sent. */
export function sealedNeedsBridge(what: string): SvcError {
  return new SvcError('SEALED_NEEDS_BRIDGE', `${what}: the relay's connector holds no secret and seals nothing; run svc-bridge on your machine, which seals there`);
}

/** Whether the tools are served by the relay's connector (no signer, no sealing, no key directory). */
export function servedByRelay(deps: Pick<BridgeDeps, 'served'>): boolean {
  return deps.served === 'relay';
}
