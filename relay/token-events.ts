/**
 * Token revocations told to whoever holds a stream open on a token (the connector's live
 * updates): a revoked token must stop receiving at once, not at its next request.
 *
 * Emitted after the revoking transaction commits. `tokenId: null` means every token of the KEY
 * (also emitted when the KEY is blocked: its tokens then authenticate nothing; relay/app.ts).
 * A listener that throws is dropped from this emission's concerns: the others still hear it.
 *
 * Several relay processes on one database (`link`: Store.cluster): a revocation made through
 * one process is published to the others (topic `t:<peer id>:<token id or *>`), each of which
 * tells its own listeners, so a stream ends wherever it is held.
 */

export interface TokenEvent {
  readonly peerId: string;
  /** The revoked token's id, or null for every token of the KEY. */
  readonly tokenId: string | null;
}

export type TokenEventListener = (e: TokenEvent) => void;

export interface TokenEvents {
  /** Listen; answers the function that stops listening. */
  on(listener: TokenEventListener): () => void;
  emit(e: TokenEvent): void;
}

/** What links the processes (relay/store/cluster.ts). */
export interface TokenEventsLink {
  publish(topic: string): void;
  subscribe(listener: (topic: string) => void): () => void;
}

const TOPIC = /^t:([^:]+):(.+)$/;

export function createTokenEvents(link?: TokenEventsLink): TokenEvents & { unlink(): void } {
  const listeners = new Set<TokenEventListener>();
  const tell = (e: TokenEvent): void => {
    for (const listener of [...listeners]) {
      try {
        listener(e);
      } catch {
        // One listener's failure must not keep a revocation from the others.
      }
    }
  };
  const unlink =
    link?.subscribe((topic) => {
      const m = TOPIC.exec(topic);
      if (m !== null) tell({ peerId: m[1]!, tokenId: m[2] === '*' ? null : m[2]! });
    }) ?? (() => undefined);
  return {
    unlink,
    on(listener) {
      // A listener added twice is called twice and removed by each of its own stop functions.
      const entry: TokenEventListener = (e) => listener(e);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    emit(e) {
      tell(e);
      link?.publish(`t:${e.peerId}:${e.tokenId ?? '*'}`);
    },
  };
}
