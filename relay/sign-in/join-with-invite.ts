/**
 * `POST /v1/keys/verify` may carry `invite` (an invite or hand-over link) and joins its SPACE in
 * the same call (spec/1-concepts.md "Minting with an Ed25519 KEY" 3). The token is minted
 * first and stays valid whatever the join answers; the answer carries
 * `joined {name, role, tags[], state, changed, revision, handed_over_by?}` or
 * `join_refused {code, message, fix, detail?}`.
 *
 * The join is exactly join.link's (relay/joining.ts), including the link-use rate limit.
 */
import { SvcError, errorEnvelope } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { joinByLink, parseLink, takeLinkUse, type Joined } from '../joining.js';

export type { Joined } from '../joining.js';

export interface JoinRefused {
  code: string;
  message: string;
  fix: string;
  detail?: string;
}

export type JoinOutcome = { joined: Joined } | { join_refused: JoinRefused };

/** Join the SPACE an invite link names, as `peerId`. Throws SvcError on refusal. */
export async function joinWithInvite(ctx: RelayContext, peerId: string, link: string): Promise<Joined> {
  await takeLinkUse(ctx, peerId);
  return await joinByLink(ctx, peerId, parseLink(link, ctx.baseUrl(), 'invite'));
}

/** Run the join and render its refusal the way keys.verify answers it. */
export async function joinOutcome(ctx: RelayContext, peerId: string, link: string, requestId: string): Promise<JoinOutcome> {
  try {
    return { joined: await joinWithInvite(ctx, peerId, link) };
  } catch (e) {
    if (!(e instanceof SvcError)) throw e;
    const { code, message, fix, detail } = errorEnvelope(e.code, requestId, e.detail).error;
    return { join_refused: detail === undefined ? { code, message, fix } : { code, message, fix, detail } };
  }
}
