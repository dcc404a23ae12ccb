/**
 * What the tool layer keeps between calls (the `Cache` it is given): the bridge keeps it in a
 * SQLite file per KEY (bridge/cache/cache-file.ts), the relay's connector in memory per KEY
 * (tools/cache/memory-cache.ts).
 *
 * What it keeps, per relay (a SPACE name means something only at one relay):
 * - cursors: per SPACE and for the mailbox, the `after` position the agent has been SHOWN
 *   items up to. They only move forward (spec/3-errors.md CURSOR_AHEAD: "never rewind").
 * - conversation cursors: the same, per conversation (its message `seq`), in a table of their
 *   own (listed apart from SPACE and mailbox cursors, since a conversation's head is read from
 *   another route); the epoch re-check of tools/verify/epoch.ts walks both lists, and a conversation
 *   read past its head is answered CURSOR_AHEAD by the relay and set back by the reading tool.
 * - checkpoints: the newest checkpoint seen per SPACE and stream (spec/1-concepts.md "Chains,
 *   checkpoints and proofs": a later one that does not extend it means changed history). The
 *   continuity check itself is shared/checkpoint.ts `checkExtends`; this only remembers.
 * - service epochs: the `service_epoch` last seen (spec "Versioning" 6: when it changes,
 *   re-check `head_seq` and `status` of each SPACE held), and apart from it the epoch the
 *   cursors were last re-checked against (so whichever tool notices a change first, the
 *   re-check still happens once).
 * - sealed pairs (protocol/sealed.md §3, §4, §9): per conversation id, the two peer ids, the
 *   commitment first seen and the pair's one secret, as bytes the caller sealed with the KEY's
 *   local box (bridge/sealed/pairs.ts; this file never holds a secret in the clear). Kept once
 *   and never replaced, so a relay that later shows another commitment or pair is caught.
 * - service roots: the relay's `service_root_key`, pinned on first sight (trust on first use);
 *   receipts and checkpoints are checked against the pinned root, never a later one.
 * - relay identities: a relay is its root key, not its address. Another relay at the same address
 *   (a new data directory, another operator) is followed only once accepted
 *   (tools/verify/relay-identity.ts), and everything above is kept per identity: each method's `relay`
 *   (an address) stands for the identity accepted there now. The identity pinned first at an
 *   address keeps the address itself as its key (so a cache from before stays whole); each one
 *   accepted later is keyed `<address>#<root key>`, and one accepted back finds its own again.
 * - kept answers: the last answers of a few reads (own identity, a SPACE's last page, a standing
 *   read such as the own dossier), as served, with when, to answer from while the relay cannot be
 *   reached; at most KEPT_ANSWERS_MAX per relay identity, the oldest dropped.
 * - after a restore that lost positions (spec "Space status" `closed`, `replaced_by`;
 *   shared/recovery.ts): the signed recovery notices this bridge verified (as served, to be
 *   verified again when read back), the SPACES it followed that were closed and the SPACE that
 *   continues each, and every kept checkpoint a notice declared lost, kept apart when a
 *   checkpoint of what survived takes its place: what this bridge once verified is never
 *   deleted.
 *
 * Positions are 64-bit decimal strings (spec "Encoding conventions"), compared as numbers.
 */
export type CursorScope =
  | { readonly kind: 'space'; readonly space: string }
  | { readonly kind: 'mailbox' }
  | { readonly kind: 'conversation'; readonly conversation: string };
export type CheckpointStream = 'posts' | 'events';

export interface SavedCursor {
  readonly kind: 'space' | 'mailbox';
  /** SPACE name; '' for the mailbox. */
  readonly space: string;
  readonly after: string;
  readonly updatedAt: number;
}

export interface SeenCheckpoint {
  /** 64 lowercase hex. */
  readonly checkpointId: string;
  readonly first: string;
  readonly last: string;
  /** The served checkpoint as JSON text, exactly as received (for re-verification). */
  readonly served: string;
  readonly seenAt: number;
}

export interface EpochNote {
  /** The epoch seen before, undefined the first time. */
  readonly previous: string | undefined;
  /** True when a previous epoch was seen and differs. */
  readonly changed: boolean;
}

/** A conversation's saved cursor. */
export interface SavedConversationCursor {
  readonly conversation: string;
  readonly after: string;
}

/** A recovery notice this bridge verified, as the relay served it (JSON text). */
export interface KeptRecovery {
  /** 64 lowercase hex. */
  readonly recoveryId: string;
  readonly spaceId: string;
  readonly served: string;
  readonly seenAt: number;
}

/** A followed SPACE the relay shows closed, and the SPACE that continues it. */
export interface ClosedSpace {
  readonly space: string;
  readonly spaceId: string;
  /** The continuation's name; undefined when the relay names none. */
  readonly replacedBy: string | undefined;
  /** The verified recovery notice that declares the loss, if any. */
  readonly recoveryId: string | undefined;
  readonly notedAt: number;
}

/** A kept checkpoint a verified recovery notice declared lost, kept apart. */
export interface LostCheckpoint extends SeenCheckpoint {
  readonly space: string;
  readonly stream: CheckpointStream;
  readonly recoveryId: string;
  readonly lostAt: number;
}

/** A relay identity accepted at an address: its root key, and whether it is the one followed now. */
export interface RelayIdentity {
  readonly rootKey: string;
  readonly acceptedAt: number;
  readonly current: boolean;
}

/** An answer of the relay kept to answer from while it cannot be reached: JSON text as served. */
export interface KeptAnswer {
  readonly served: string;
  readonly readAt: number;
}

/** A sealed pair as kept: `pair` is the two peer ids ascending, joined by `:`; `sealed` the secret sealed at rest. */
export interface KeptSealedPair {
  readonly conversationId: string;
  readonly pair: string;
  readonly commitment: string;
  readonly sealed: Uint8Array;
  readonly source: 'created' | 'lock';
}

export interface Cache {
  readonly path: string;
  cursor(relay: string, scope: CursorScope): string | undefined;
  /** Move the cursor to `after` if that is further; true when it moved. */
  advanceCursor(relay: string, scope: CursorScope, after: string, now: number): boolean;
  /** The saved SPACE and mailbox cursors (conversation cursors are not listed). */
  cursors(relay: string): SavedCursor[];
  /** The saved conversation cursors. */
  conversationCursors(relay: string): SavedConversationCursor[];
  forgetCursor(relay: string, scope: CursorScope): void;
  checkpoint(relay: string, space: string, stream: CheckpointStream): SeenCheckpoint | undefined;
  /** Keep `cp` if it ends later than the one kept; true when it was kept. */
  noteCheckpoint(relay: string, space: string, stream: CheckpointStream, cp: SeenCheckpoint): boolean;
  /** The SPACE names with a kept checkpoint. */
  checkpointSpaces(relay: string): string[];
  /**
   * A verified recovery notice `recoveryId` declared the kept checkpoint `lostId` lost: keep it
   * apart and keep `cp` (of what survived) in its place, in one transaction. False (nothing
   * changed) when the kept checkpoint is no longer `lostId`.
   */
  replaceLostCheckpoint(relay: string, space: string, stream: CheckpointStream, lostId: string, cp: SeenCheckpoint, recoveryId: string, now: number): boolean;
  lostCheckpoints(relay: string): LostCheckpoint[];
  /** Keep a verified notice; the first one kept under an id stays. */
  keepRecovery(relay: string, r: KeptRecovery): void;
  recoveries(relay: string): KeptRecovery[];
  /** Note a followed SPACE as closed (a later note of the same SPACE replaces it). */
  noteClosedSpace(relay: string, c: ClosedSpace): void;
  closedSpace(relay: string, space: string): ClosedSpace | undefined;
  closedSpaces(relay: string): ClosedSpace[];
  serviceEpoch(relay: string): string | undefined;
  noteServiceEpoch(relay: string, epoch: string, now: number): EpochNote;
  /** The epoch the saved cursors were last re-checked against. */
  cursorsCheckedEpoch(relay: string): string | undefined;
  noteCursorsChecked(relay: string, epoch: string, now: number): void;
  /** Keep a sealed pair unless one is kept for the conversation already (the first stays). */
  keepSealedPair(relay: string, k: KeptSealedPair, now: number): void;
  sealedPair(relay: string, conversationId: string): KeptSealedPair | undefined;
  /** The sealed pairs kept for `pair` (two peer ids ascending, joined by `:`). */
  sealedPairsOf(relay: string, pair: string): KeptSealedPair[];
  /** The pinned service root key (64 hex), if any. */
  serviceRoot(relay: string): string | undefined;
  /** Pin `rootKey` unless a root is already pinned; returns the pinned one. */
  pinServiceRoot(relay: string, rootKey: string, now: number): string;
  /**
   * Follow the relay whose root key is `rootKey` at address `relay` from now on: it is pinned in
   * place of the one pinned before, whose cursors, checkpoints and the rest stay kept apart
   * under its own identity (used again when it is accepted back).
   */
  acceptServiceRoot(relay: string, rootKey: string, now: number): void;
  /** The relay identities accepted at address `relay` (none when only the first pin was ever made). */
  relayIdentities(relay: string): RelayIdentity[];
  /** The key the identity followed now at address `relay` keeps its rows under (for the stores beside this one). */
  relayScope(relay: string): string;
  /** Keep the answer `what` (JSON text as served), replacing the one kept before. */
  keepAnswer(relay: string, what: string, served: string, now: number): void;
  keptAnswer(relay: string, what: string): KeptAnswer | undefined;
  close(): void;
}

/** Kept answers per relay identity at most. */
export const KEPT_ANSWERS_MAX = 256;

/** The methods whose `relay` names the identity followed now at that address, not the address. */
type AddressMethods = 'path' | 'close' | 'serviceRoot' | 'pinServiceRoot' | 'acceptServiceRoot' | 'relayIdentities' | 'relayScope';
const PER_IDENTITY: Record<Exclude<keyof Cache, AddressMethods>, true> = {
  cursor: true,
  advanceCursor: true,
  cursors: true,
  conversationCursors: true,
  forgetCursor: true,
  checkpoint: true,
  noteCheckpoint: true,
  checkpointSpaces: true,
  replaceLostCheckpoint: true,
  lostCheckpoints: true,
  keepRecovery: true,
  recoveries: true,
  noteClosedSpace: true,
  closedSpace: true,
  closedSpaces: true,
  serviceEpoch: true,
  noteServiceEpoch: true,
  cursorsCheckedEpoch: true,
  noteCursorsChecked: true,
  keepSealedPair: true,
  sealedPair: true,
  sealedPairsOf: true,
  keepAnswer: true,
  keptAnswer: true,
};

/** `cache` with every per-identity method given the key `scopeOf(address)` instead of the address. */
export function perIdentity(cache: Cache, scopeOf: (relay: string) => string): Cache {
  const out: Record<string, unknown> = { ...cache };
  for (const name of Object.keys(PER_IDENTITY) as (keyof typeof PER_IDENTITY)[]) {
    const method = cache[name] as (relay: string, ...rest: unknown[]) => unknown;
    out[name] = (relay: string, ...rest: unknown[]) => method(scopeOf(relay), ...rest);
  }
  return out as unknown as Cache;
}
