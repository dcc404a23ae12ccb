/**
 * Oracle spaces over the real HTTP relay for the document, version, link, fork and watch tests:
 * an oracle space (service reviewer off unless asked, so only people decide), versions posted
 * through posts.append.
 */
import type { MintedToken, RunningRelay } from './relay.js';
import { post } from './posts.js';
import { createSpace, freshName } from './spaces.js';

/** A public oracle space owned by `owner` (whose KEY must be old enough); answers its name. */
export async function oracleSpace(relay: RunningRelay, owner: MintedToken, extra: Record<string, unknown> = {}): Promise<string> {
  const name = freshName('or');
  await createSpace(relay, owner.token, {
    name,
    title: 'A document',
    visibility: 'public',
    oracle: true,
    categories: ['general'],
    service_reviewer: false,
    ...extra,
  });
  return name;
}

/** A version post over HTTP (201 or throws): `supersedes` the version it replaces. */
export async function postVersion(
  relay: RunningRelay,
  who: MintedToken,
  name: string,
  body: string,
  opts: { title?: string; supersedes?: string } = {},
): Promise<any> {
  return post(relay, who, name, { kind: 'version', title: opts.title ?? 'a summary', body, ...(opts.supersedes ? { supersedes: opts.supersedes } : {}) });
}

/** A digest of every written table, the oracle ones included (test/helpers/state.ts). */
export { stateProbe as oracleStateProbe } from './state.js';
