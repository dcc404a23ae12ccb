/**
 * Which relay stands at SVC_API (spec/1-concepts.md "Chains, checkpoints and proofs": a relay's
 * signatures chain to its `service_root_key`). A relay is its root key, not its address: a
 * restore of the same relay keeps the root key and moves `service_epoch` on (tools/verify/epoch.ts,
 * tools/verify/recovery.ts), while a new data directory or another operator at the same address
 * publishes another root key. That is another relay, and nothing of what this bridge knows of the
 * one it pinned (cursors, kept checkpoints, closed SPACES, queued writes) means anything there.
 *
 * - The root is pinned on first sight (tools/cache/cache.ts; tools/verify/verify.ts checks under it).
 * - Before a token is minted (which registers the KEY at a relay new to it) and before a new
 *   epoch is taken for a restore, the published root is compared with the pinned one; another
 *   one is refused with RELAY_CHANGED, naming both, and nothing is sent: no token, no post, no
 *   cursor moved or set back.
 * - It is followed only once accepted: by the agent (`svc_whoami accept_relay=<root key>`) or
 *   its person (`svc-bridge relay accept <root key>`), each naming the exact root key the relay
 *   publishes now, so an acceptance never covers a relay that changed again since it was shown.
 *   The cache then keeps the identities apart (tools/cache/cache.ts "relay identities"): the one
 *   pinned before keeps its rows, found again if it is accepted back.
 */
import { isHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import type { Cache } from '../cache/cache.js';
import { BridgeError } from '../errors.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The `service_root_key` a capability document publishes (64 hex), if it publishes one. */
export function publishedRoot(caps: unknown): string | undefined {
  if (!isObject(caps)) return undefined;
  const protocol = isObject(caps.protocol) ? caps.protocol : {};
  const root = protocol.service_root_key ?? caps.service_root_key;
  return isHex(root, 32) ? root : undefined;
}

/** How the agent and its person accept the relay whose root key is `seen`. */
export function acceptWords(seen: string): string {
  return `svc_whoami accept_relay="${seen}" (or your person runs: svc-bridge relay accept ${seen})`;
}

/** RELAY_CHANGED: the relay at `relay` publishes `seen`, not the `pinned` root. */
export function relayChanged(relay: string, pinned: string, seen: string): BridgeError {
  return new BridgeError(
    'RELAY_CHANGED',
    `the relay at ${relay} is another relay than the one this bridge pinned there: it publishes service_root_key ${seen}, ` +
      `and this bridge pinned ${pinned} when it first met the relay at this address. A restore of the same relay keeps its root key, ` +
      'so this is a new relay (a new data directory or another operator), not a restore. Nothing was sent to it: no token minted ' +
      '(your KEY is not registered there), nothing posted, no cursor moved; your cursors, kept checkpoints and queued writes of the ' +
      'relay pinned before are kept apart for it',
    `If you expected this relay (your person set up a new one at this address), accept it: ${acceptWords(seen)}. ` +
      'If you did not expect it, ask your person before accepting; to keep using the relay you had, point SVC_API at it.',
  );
}

/**
 * The relay whose capabilities are `caps` is the one pinned at `relay`: pinned now when none is
 * (trust on first use), RELAY_CHANGED when it publishes another root. A relay that publishes no
 * root passes (nothing to compare; tools/verify/verify.ts says so of every check).
 */
export function checkRelay(cache: Cache, relay: string, caps: unknown, now: number): void {
  const seen = publishedRoot(caps);
  if (seen === undefined) return;
  const pinned = cache.serviceRoot(relay) ?? cache.pinServiceRoot(relay, seen, now);
  if (pinned !== seen) throw relayChanged(relay, pinned, seen);
}

/** The check before a token is minted (tools/api.ts `beforeMint`), on a cache opened for it. */
export function relayGuard(relay: string, openCache: () => Cache, now: () => number): (caps: unknown) => void {
  return (caps) => {
    const cache = openCache();
    try {
      checkRelay(cache, relay, caps, now());
    } finally {
      cache.close();
    }
  };
}

export interface Acceptance {
  /** The root followed before; undefined when none was pinned. */
  readonly before: string | undefined;
  readonly now: string;
  /** False when `now` was the one followed already. */
  readonly changed: boolean;
  /** The accepted relay was followed here before: its own cursors and checkpoints are back. */
  readonly returned: boolean;
  /** What to tell. */
  readonly line: string;
}

/**
 * Accept the relay at `relay` whose capabilities are `caps`, given the root key `given` it must
 * publish (the agent's or person's word for it). INVALID_REQUEST, with nothing changed, when it
 * publishes another one or none.
 */
export function acceptRelay(cache: Cache, relay: string, caps: unknown, given: string, now: number): Acceptance {
  const seen = publishedRoot(caps);
  if (seen === undefined) throw new SvcError('INVALID_REQUEST', `accept_relay: the relay at ${relay} publishes no service_root_key, so there is no root key to accept; nothing changed`);
  if (given !== seen) {
    throw new SvcError('INVALID_REQUEST', `accept_relay: the relay at ${relay} publishes service_root_key ${seen}, not ${given}; nothing changed (accept only the key the relay publishes now)`);
  }
  const before = cache.serviceRoot(relay);
  if (before === seen) return { before, now: seen, changed: false, returned: false, line: `The relay at ${relay} (service_root_key ${seen}) is the one this bridge follows already; nothing changed.` };
  const returned = cache.relayIdentities(relay).some((i) => i.rootKey === seen);
  cache.acceptServiceRoot(relay, seen, now);
  const apart = before === undefined ? '' : ` What this bridge kept of the relay pinned before (${before}: cursors, checkpoints, queued writes) is kept apart for it and used again only if it is accepted back.`;
  const back = returned ? ' This relay was followed here before: its own cursors and checkpoints are used again.' : ' Its cursors start empty; a token is minted at the next call (your KEY is registered there).';
  return { before, now: seen, changed: true, returned, line: `Accepted: the relay at ${relay} with service_root_key ${seen} is the relay this bridge follows from now on.${back}${apart}` };
}

/** What `svc-bridge relay` prints: the root the relay publishes, the one pinned, the ones known before. */
export function describeRelay(cache: Cache, relay: string, caps: unknown): string[] {
  const seen = publishedRoot(caps);
  const pinned = cache.serviceRoot(relay);
  const lines = [`relay:     ${relay}`, `publishes: service_root_key ${seen ?? 'none'}`, `pinned:    ${pinned ?? 'none yet (pinned at the first call)'}`];
  if (seen !== undefined && pinned !== undefined) {
    lines.push(seen === pinned ? 'the same relay: this bridge follows it' : `ANOTHER relay than the one pinned: nothing is registered or posted there until you run: svc-bridge relay accept ${seen}`);
  }
  for (const i of cache.relayIdentities(relay).filter((x) => !x.current)) {
    lines.push(`known before at this address: ${i.rootKey} (what this bridge kept of it is kept apart)`);
  }
  return lines;
}
