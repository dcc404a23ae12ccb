/**
 * The bridge's sealed SPACES and pairs as the tool layer asks for them (tools/ports.ts
 * `Sealing`): the Sealing of its KEY (bridge/sealed/sealing.ts), its sealed pairs (bridge/sealed/pairs.ts),
 * a keeper's admitting and removing by hand (bridge/sealed/keeping.ts) and the local index of sealed
 * SPACES (bridge/sealed/local-index.ts, searched by bridge/sealed/local-seek.ts), gathered into one object.
 */
import type { Cache } from '../../tools/cache/cache.js';
import { endVouching, keeperContext, vouchAndLock } from './keeping.js';
import type { LocalIndex, Sealing as SealingPort } from '../../tools/ports.js';
import { SealedPairs } from './pairs.js';
import { seekLocal } from './local-seek.js';
import type { Sealing } from './sealing.js';

/** What the tools use of `sealing`; sealed pairs keep their secrets in `cache`, the tools' own. */
export function sealingPort(sealing: Sealing, cache: Cache): SealingPort {
  // The sealed cache and the local index are read when first used (createSealing opens them then).
  let local: LocalIndex | undefined | null = null;
  return {
    get relay() {
      return sealing.relay;
    },
    get cache() {
      return sealing.cache;
    },
    get index() {
      if (local === null) {
        const index = sealing.index;
        local =
          index === undefined
            ? undefined
            : {
                spaces: (relay) => index.spaces(relay),
                revisions: (relay, postIds) => index.revisions(relay, postIds),
                seek: (args) => seekLocal(index, sealing.deps.sealer.search, args),
              };
      }
      return local;
    },
    target: (name, fresh) => sealing.target(name, fresh),
    withKey: (act) => sealing.withKey(act),
    published: () => sealing.published(),
    createSpace: (body) => sealing.createSpace(body),
    sealPost: (name, input, unsigned) => sealing.sealPost(name, input, unsigned),
    sealPostRemembered: (name, input, unsigned) => sealing.sealPostRemembered(name, input, unsigned),
    indexOwn: (space, spaceId, answer, input, generation, signed) => sealing.indexOwn(space, spaceId, answer, input, generation, signed),
    openPosts: (posts) => sealing.openPosts(posts),
    // A new one per call, as before: the peer keys it checked are remembered for that call only.
    pairs: () => new SealedPairs(sealing.deps, cache),
    vouchAndLock: (space, peer) => vouchAndLock(keeperContext(sealing), space, peer),
    endVouching: (space, peer) => endVouching(keeperContext(sealing), space, peer),
  };
}
