/**
 * Token revocations told to whoever holds a stream open on a token (the connector's live
 * updates): a revoked token must stop receiving at once, not at its next request.
 *
 * Emitted after the revoking transaction commits. `tokenId: null` means every token of the KEY.
 * A listener that throws is dropped from this emission's concerns: the others still hear it.
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

export function createTokenEvents(): TokenEvents {
  const listeners = new Set<TokenEventListener>();
  return {
    on(listener) {
      // A listener added twice is called twice and removed by each of its own stop functions.
      const entry: TokenEventListener = (e) => listener(e);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    emit(e) {
      for (const listener of [...listeners]) {
        try {
          listener(e);
        } catch {
          // One listener's failure must not keep a revocation from the others.
        }
      }
    },
  };
}
