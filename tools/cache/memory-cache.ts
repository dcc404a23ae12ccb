/**
 * The cache of one KEY held in memory (the `Cache` interface of tools/cache/cache.ts), for the relay's
 * connector: it has no key directory, so it keeps a KEY's cursors, the checkpoints it has seen,
 * the service epochs and the pinned root in memory for as long as the relay runs. The rules are
 * the SQLite cache's: cursors and checkpoints only move forward, a pinned root and a kept sealed
 * pair are never replaced. The connector is served by the relay itself: no other relay can stand
 * at its address and it is never unreachable from itself, so a root is never accepted in place of
 * another here and no answer is kept to answer from offline.
 *
 * Bounded: at most `entriesMax` cursors and as many checkpoints (and sealed pairs, recovery
 * notices, closed SPACES and lost checkpoints); past it the entry changed longest ago is dropped (a dropped cursor restarts at the start of its stream,
 * which shows posts again rather than skipping any).
 */
import { parseDecimal } from '../../shared/encoding.js';
import type { Cache, CheckpointStream, ClosedSpace, CursorScope, EpochNote, KeptRecovery, KeptSealedPair, LostCheckpoint, SavedCursor, SeenCheckpoint } from './cache.js';

/** Default bound per kind of entry. */
export const MEMORY_CACHE_ENTRIES_MAX = 256;

function position(text: string, what: string): bigint {
  return parseDecimal(text, what, 0n, (1n << 64n) - 1n);
}

function scopeKey(relay: string, scope: CursorScope): string {
  if (scope.kind === 'conversation') return `${relay}\u0000conversation\u0000${scope.conversation}`;
  return `${relay}\u0000${scope.kind}\u0000${scope.kind === 'space' ? scope.space : ''}`;
}

/** A Map that forgets its oldest-set entry past `max` (Map keeps insertion order). */
function setBounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value!);
}

interface CursorEntry {
  readonly relay: string;
  readonly scope: CursorScope;
  readonly after: string;
  readonly updatedAt: number;
}

export function createMemoryCache(entriesMax = MEMORY_CACHE_ENTRIES_MAX): Cache {
  const cursors = new Map<string, CursorEntry>();
  const checkpoints = new Map<string, SeenCheckpoint>();
  const epochs = new Map<string, string>();
  const checked = new Map<string, string>();
  const pairs = new Map<string, KeptSealedPair & { readonly relay: string }>();
  const roots = new Map<string, string>();
  const recoveries = new Map<string, KeptRecovery & { readonly relay: string }>();
  const closed = new Map<string, ClosedSpace & { readonly relay: string }>();
  const lost = new Map<string, LostCheckpoint & { readonly relay: string }>();
  const ofRelay = <T extends { readonly relay: string }>(map: Map<string, T>, relay: string): Omit<T, 'relay'>[] =>
    [...map.values()].filter((v) => v.relay === relay).map(({ relay: _r, ...rest }) => rest);
  return {
    path: ':memory:',
    cursor: (relay, scope) => cursors.get(scopeKey(relay, scope))?.after,
    advanceCursor(relay, scope, after, now) {
      const key = scopeKey(relay, scope);
      const held = cursors.get(key);
      if (held !== undefined && position(after, 'after') <= position(held.after, 'after')) return false;
      setBounded(cursors, key, { relay, scope, after: position(after, 'after').toString(), updatedAt: now }, entriesMax);
      return true;
    },
    cursors(relay): SavedCursor[] {
      const out: SavedCursor[] = [];
      for (const c of cursors.values()) {
        if (c.relay !== relay || c.scope.kind === 'conversation') continue;
        out.push({ kind: c.scope.kind, space: c.scope.kind === 'space' ? c.scope.space : '', after: c.after, updatedAt: c.updatedAt });
      }
      return out.sort((a, b) => (a.kind === b.kind ? (a.space < b.space ? -1 : a.space > b.space ? 1 : 0) : a.kind < b.kind ? -1 : 1));
    },
    conversationCursors(relay) {
      const out: { conversation: string; after: string }[] = [];
      for (const c of cursors.values()) if (c.relay === relay && c.scope.kind === 'conversation') out.push({ conversation: c.scope.conversation, after: c.after });
      return out.sort((a, b) => (a.conversation < b.conversation ? -1 : a.conversation > b.conversation ? 1 : 0));
    },
    forgetCursor: (relay, scope) => void cursors.delete(scopeKey(relay, scope)),
    checkpoint: (relay, space, stream) => checkpoints.get(`${relay}\u0000${space}\u0000${stream}`),
    noteCheckpoint(relay, space, stream: CheckpointStream, cp) {
      if (!/^[0-9a-f]{64}$/.test(cp.checkpointId)) throw new TypeError('checkpointId: expected 64 lowercase hex');
      const key = `${relay}\u0000${space}\u0000${stream}`;
      const held = checkpoints.get(key);
      if (held !== undefined && position(cp.last, 'last') <= position(held.last, 'last')) return false;
      position(cp.first, 'first');
      setBounded(checkpoints, key, cp, entriesMax);
      return true;
    },
    checkpointSpaces(relay) {
      const names = new Set<string>();
      for (const key of checkpoints.keys()) {
        const [r, space] = key.split('\u0000');
        if (r === relay) names.add(space!);
      }
      return [...names].sort();
    },
    replaceLostCheckpoint(relay, space, stream, lostId, cp, recoveryId, now) {
      const key = `${relay}\u0000${space}\u0000${stream}`;
      const held = checkpoints.get(key);
      if (held === undefined || held.checkpointId !== lostId) return false;
      position(cp.first, 'first');
      position(cp.last, 'last');
      setBounded(lost, `${key}\u0000${lostId}`, { ...held, relay, space, stream, recoveryId, lostAt: now }, entriesMax);
      setBounded(checkpoints, key, cp, entriesMax);
      return true;
    },
    lostCheckpoints: (relay) => ofRelay(lost, relay),
    keepRecovery(relay, r) {
      const key = `${relay}\u0000${r.recoveryId}`;
      if (!recoveries.has(key)) setBounded(recoveries, key, { ...r, relay }, entriesMax);
    },
    recoveries: (relay) => ofRelay(recoveries, relay),
    noteClosedSpace: (relay, c) => setBounded(closed, `${relay}\u0000${c.space}`, { ...c, relay }, entriesMax),
    closedSpace(relay, space) {
      const c = closed.get(`${relay}\u0000${space}`);
      if (c === undefined) return undefined;
      const { relay: _r, ...rest } = c;
      return rest;
    },
    closedSpaces: (relay) => ofRelay(closed, relay),
    serviceEpoch: (relay) => epochs.get(relay),
    noteServiceEpoch(relay, epoch): EpochNote {
      const previous = epochs.get(relay);
      epochs.set(relay, epoch);
      return { previous, changed: previous !== undefined && previous !== epoch };
    },
    cursorsCheckedEpoch: (relay) => checked.get(relay),
    noteCursorsChecked: (relay, epoch) => void checked.set(relay, epoch),
    keepSealedPair(relay, k) {
      const key = `${relay}\u0000${k.conversationId}`;
      if (!pairs.has(key)) setBounded(pairs, key, { ...k, relay }, entriesMax);
    },
    sealedPair(relay, conversationId) {
      const p = pairs.get(`${relay}\u0000${conversationId}`);
      return p && { conversationId: p.conversationId, pair: p.pair, commitment: p.commitment, sealed: p.sealed, source: p.source };
    },
    sealedPairsOf: (relay, pair) => [...pairs.values()].filter((p) => p.relay === relay && p.pair === pair),
    serviceRoot: (relay) => roots.get(relay),
    pinServiceRoot(relay, rootKey) {
      if (!/^[0-9a-f]{64}$/.test(rootKey)) throw new TypeError('rootKey: expected 64 lowercase hex');
      if (!roots.has(relay)) roots.set(relay, rootKey);
      return roots.get(relay)!;
    },
    acceptServiceRoot() {
      throw new Error('the connector follows the relay it runs in: no other relay is accepted');
    },
    relayIdentities: () => [],
    relayScope: (relay) => relay,
    keepAnswer: () => {},
    keptAnswer: () => undefined,
    close() {
      cursors.clear();
      checkpoints.clear();
      pairs.clear();
      recoveries.clear();
      closed.clear();
      lost.clear();
    },
  };
}
