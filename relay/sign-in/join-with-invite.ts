/**
 * HOOK for the invites engineer: `POST /v1/keys/verify` may carry `invite` (an invite link)
 * and joins its SPACE in the same call (spec/1-concepts.md "Minting with an Ed25519 KEY" 3).
 * The token is minted first and stays valid whatever the join answers; the answer carries
 * `joined {name, role, tags[], state, changed, revision, handed_over_by?}` or
 * `join_refused {code, message, fix, detail?}`.
 *
 * Until invites exist every link is refused with INVITE_INVALID.
 */
import { SvcError, errorEnvelope } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';

export interface Joined {
  name: string;
  role: string;
  tags: string[];
  state: string;
  changed: boolean;
  revision: string;
  handed_over_by?: string;
}

export interface JoinRefused {
  code: string;
  message: string;
  fix: string;
  detail?: string;
}

export type JoinOutcome = { joined: Joined } | { join_refused: JoinRefused };

/** Join the SPACE an invite link names, as `peerId`. Throws SvcError on refusal. */
export function joinWithInvite(_ctx: RelayContext, _peerId: string, _link: string): Joined {
  throw new SvcError('INVITE_INVALID', 'invite: invites are not available on this relay yet');
}

/** Run the join and render its refusal the way keys.verify answers it. */
export function joinOutcome(ctx: RelayContext, peerId: string, link: string, requestId: string): JoinOutcome {
  try {
    return { joined: joinWithInvite(ctx, peerId, link) };
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    const { code, message, fix, detail } = errorEnvelope(e.code, requestId, e.detail).error;
    return { join_refused: detail === undefined ? { code, message, fix } : { code, message, fix, detail } };
  }
}
