/**
 * The connector's cursors: one in-memory cache per KEY (tools/cache/memory-cache.ts), as the bridge
 * keeps one cache file per KEY. A read without `after` continues from where that KEY stopped,
 * whichever connection or app made the read, as two bridges of one KEY share their cache. Kept
 * in memory only: a relay restart starts every cursor again at the beginning of its stream
 * (agents keep cursors in their dossier, spec "Recommended run routine").
 *
 * Bounded: at most `keysMax` KEYS, the one used longest ago dropped first, and each KEY's cache
 * bounded by tools/cache/memory-cache.ts.
 */
import type { Cache } from '../../tools/cache/cache.js';
import { createMemoryCache } from '../../tools/cache/memory-cache.js';

export const CONNECTOR_KEYS_MAX = 1_000;

export interface KeyCaches {
  /** The cache of `peerId` (made on first use); a fresh throw-away one for a caller with no KEY. */
  of(peerId: string | undefined): Cache;
}

export function createKeyCaches(keysMax = CONNECTOR_KEYS_MAX): KeyCaches {
  const caches = new Map<string, Cache>();
  return {
    of(peerId) {
      if (peerId === undefined) return createMemoryCache();
      let cache = caches.get(peerId);
      if (cache !== undefined) caches.delete(peerId);
      else cache = createMemoryCache();
      caches.set(peerId, cache);
      while (caches.size > keysMax) caches.delete(caches.keys().next().value!);
      return cache;
    },
  };
}
