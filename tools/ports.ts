/**
 * What the tool layer asks of the program that serves it, beyond the relay's API (tools/api.ts
 * `RelayApi`) and the cache (tools/cache/cache.ts `Cache`): interfaces owned by the tools that use them,
 * so the tools never import a program's own modules. The bridge gives all of them (its sealing,
 * outbox and stdio listen streams); the relay's connector gives none, and the tools answer there
 * as spec/1-concepts.md "Connector" says (nothing sealed, nothing queued).
 */
import type { SealedTransport } from '../shared/sealed/items.js';
import type { Fingerprint, PostInput } from '../shared/validate.js';
import type { TextQuery } from '../shared/seek/terms.js';
import type { Cache } from './cache/cache.js';

type Obj = Record<string, unknown>;

// ---- sealed SPACES and pairs (protocol/sealed.md) ---------------------------------------------

/** What the relay says about a SPACE name before posting. */
export interface Target {
  readonly sealed: boolean;
  readonly spaceId: string;
}

/** A post sealed (and signed, unless unsigned) for a sealed SPACE: the body to send. */
export interface SealedPostBody {
  readonly body: Obj;
  readonly signed: boolean;
  /** Hex object id of a signed post. */
  readonly objectId: string | undefined;
  readonly spaceId: string;
  readonly generation: number;
}

/** An indexed SPACE of the local index of sealed SPACES (one with at least one post indexed). */
export interface IndexedSpace {
  readonly row: number;
  readonly spaceId: string;
  readonly name: string;
}

export interface LocalSeekArgs {
  readonly relay: string;
  readonly text?: TextQuery | undefined;
  readonly fingerprints: readonly Fingerprint[];
  readonly prefix?: Fingerprint | undefined;
  /** Only the indexed SPACE of this name. */
  readonly space?: string | undefined;
  readonly kinds?: readonly string[] | undefined;
  readonly author?: string | undefined;
}

export interface LocalHit {
  /** The opened post as kept (a `full` rendering with its words). */
  readonly record: Obj;
  readonly match: 'fingerprint' | 'text';
  /** Document id: orders hits by when their posts were made. */
  readonly doc: number;
  readonly spaceId: string;
}

export interface LocalSeek {
  readonly fingerprint: LocalHit[];
  readonly text: LocalHit[];
}

/** The local index of what the bridge opened of sealed SPACES, as svc_seek reads it. */
export interface LocalIndex {
  /** The SPACES with posts indexed at `relay`. */
  spaces(relay: string): IndexedSpace[];
  /** Post ids that supersede or retract each of `postIds`, as far as the index knows. */
  revisions(relay: string, postIds: readonly string[]): Map<string, { supersededBy: string[]; retractedBy: string[] }>;
  /** Hits of `args` (none when nothing of the scope is indexed). */
  seek(args: LocalSeekArgs): LocalSeek;
}

/** What `vouchAndLock` could do for a KEY just admitted. */
export type Handed =
  /** It holds the key of `generation` now; `stamped`: this keeper vouched for it with a stamp. */
  | { readonly state: 'locked'; readonly generation: number; readonly stamped: boolean }
  /**
   * It held the key of `generation` already (a lock left from before a removal stays until the
   * next key change); `stamped`: this keeper vouched for it anew, having ended that on the removal.
   */
  | { readonly state: 'held'; readonly generation: number; readonly stamped: boolean }
  /** This KEY is neither the owner nor a keeper of the list in force. */
  | { readonly state: 'not_keeper' }
  /** This keeper holds no key for the generation in use itself. */
  | { readonly state: 'no_key_here'; readonly generation: number; readonly why: string }
  /** The KEY has published no encryption key; vouched for (`stamped` by this keeper, or already). */
  | { readonly state: 'no_encryption_key'; readonly generation: number; readonly stamped: boolean }
  /** A stamp from another issuer stands that this keeper does not count. */
  | { readonly state: 'not_vouched'; readonly generation: number }
  /** Something failed on the way (trust rules, the relay); the keeper duty tries again. */
  | { readonly state: 'failed'; readonly why: string };

/** What `endVouching` did for a KEY just removed. */
export type Ended =
  /**
   * A stamp from this KEY that ended at `notAfter` (seconds) stands for it now, replacing any of
   * this KEY's; `still`: the keeper list vouches for it anyway (admission open, or it is listed).
   */
  | { readonly state: 'ended'; readonly notAfter: number; readonly still: 'open' | 'listed' | undefined }
  /** Another issuer's stamp that counts and has not run out stands; this KEY cannot replace it. */
  | { readonly state: 'other_issuer'; readonly issuer: string }
  /** This KEY is neither the owner nor a keeper of the list in force: it puts no stamp for others. */
  | { readonly state: 'not_keeper' }
  /** Something failed on the way (trust rules, the relay); `remembered`: this KEY's passes count its stamps for it no more. */
  | { readonly state: 'failed'; readonly why: string; readonly remembered: boolean };

/** A sealed pair just started: the body's `sealed` member, and what is kept once the relay names the conversation. */
export interface StartedPair {
  readonly sealed: Obj;
  readonly secret: Uint8Array;
  readonly commitment: string;
  readonly pair: [string, string];
}

/** Sealed pairs (protocol/sealed.md §3, §4, §9) as the message tools use them, for one call. */
export interface SealedPairs {
  readonly relay: string;
  readonly cache: Pick<Cache, 'sealedPair'>;
  /** The body's `sealed` member of a new sealed pair with `peer`, its first message sealed. */
  startBody(peer: string, body: string, opts: { about?: string | undefined; idempotencyKey: string }): Promise<StartedPair>;
  /** Keep a started pair's secret once the relay names its conversation. */
  keepStarted(conversationId: string, started: StartedPair): void;
  /** The body's `sealed` member of a message into sealed conversation `conv` (as the relay shows it). */
  sealInto(conv: Obj, body: string, opts: { reply_to?: string | undefined; about?: string | undefined; idempotencyKey: string }): Promise<SealedTransport>;
  /** The sealed pairs kept with `peer`. */
  keptWith(peer: string): readonly { readonly conversationId: string }[];
  /** `peer`'s keys, checked against its own statements (`encryption` null: none published). */
  peerKey(peer: string): Promise<{ readonly encryption: unknown }>;
  /** Every sealed message of a page of conversation `conv` opened, or shut saying why. */
  openMessages(conv: unknown, messages: readonly Obj[]): Promise<Obj[]>;
}

/**
 * Sealed SPACES and pairs, sealed and opened with the KEY's encryption key (bridge/sealed/sealing.ts
 * and its neighbours). Only the bridge has it: the relay's connector holds no secret.
 */
export interface Sealing {
  /** The relay's origin. */
  readonly relay: string;
  /** What the sealed cache remembers of a SPACE this bridge accepted as sealed. */
  readonly cache: { spaceByName(relay: string, name: string): { readonly spaceId: string } | undefined };
  /** The local index of sealed SPACES; none in some tests and tools. */
  readonly index: LocalIndex | undefined;
  /** Whether SPACE `name` is sealed and its uuid (`fresh`: ask the relay again). */
  target(name: string, fresh?: boolean): Promise<Target>;
  /** Run `act` once this KEY's encryption key is published (so a keeper can lock for it). */
  withKey<T>(act: () => Promise<T>): Promise<T>;
  /** Publish this KEY's encryption key unless it is; whether it was published now. */
  published(): Promise<boolean>;
  /** Create a sealed SPACE with its first key made on this machine; the relay's answer. */
  createSpace(body: Obj): Promise<Obj>;
  sealPost(name: string, input: PostInput, unsigned: boolean): Promise<SealedPostBody>;
  /** Seal with what the sealed cache remembers, without asking the relay (the outbox); undefined when it cannot. */
  sealPostRemembered(name: string, input: PostInput, unsigned: boolean): SealedPostBody | undefined;
  /** Put this KEY's own sealed post, just accepted, into the local index. */
  indexOwn(space: string, spaceId: string | undefined, answer: Obj, input: PostInput, generation: number | undefined, signed: boolean): void;
  /** Open the sealed items of a page; an item that fails any step shows only why. */
  openPosts(posts: readonly Obj[]): Promise<Obj[]>;
  /** The sealed pairs of this KEY, for one call. */
  pairs(): SealedPairs;
  /** Vouch for and lock the key for `peer` just admitted to sealed SPACE `space`. Never throws. */
  vouchAndLock(space: string, peer: string): Promise<Handed>;
  /** End this KEY's vouching for `peer` just removed from sealed SPACE `space`. Never throws. */
  endVouching(space: string, peer: string): Promise<Ended>;
}

// ---- offline writes (the bridge's outbox) -----------------------------------------------------

export type OutboxKind = 'post' | 'message';

/** What to check once an item is delivered. */
export interface OutboxCheck {
  /** A post: the SPACE uuid and the object id this bridge signed (the receipt must name them). */
  readonly spaceId?: string | undefined;
  readonly objectId?: string | undefined;
  /** A sealed post: the generation it was sealed under. */
  readonly generation?: number | undefined;
  /** A plain message into this conversation: look first that the relay does not show it sealed. */
  readonly plainInto?: string | undefined;
}

/** An item to keep. */
export interface OutboxEntry {
  readonly relay: string;
  readonly kind: OutboxKind;
  /** Order is kept per target: `space:<name>`, `conversation:<id>`, `start:<peer ids>`. */
  readonly target: string;
  /** The target in words (a SPACE name, a conversation id, recipients). */
  readonly label: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** The JSON body to send, signed or sealed already. */
  readonly body: unknown;
  readonly idempotencyKey: string;
  readonly check: OutboxCheck;
}

/** What a tool queues: an entry without its relay. */
export type QueuedWrite = Omit<OutboxEntry, 'relay'>;

export interface OutboxCaps {
  /** At most this many items per KEY and relay. */
  readonly maxItems: number;
  /** At most this many bytes of bodies per KEY and relay. */
  readonly maxBytes: number;
}

export interface OutboxSummary {
  readonly count: number;
  readonly bytes: number;
  readonly oldestAt: number | undefined;
  /** Per target, oldest first. */
  readonly targets: readonly { readonly kind: OutboxKind; readonly label: string; readonly count: number }[];
  /** The newest failure to send, with when. */
  readonly lastError: { readonly text: string; readonly at: number } | undefined;
  /** The earliest time the relay asked to be left alone until (Retry-After), if later than now. */
  readonly notBefore: number | undefined;
}

/** A SPACE as an earlier post learnt it. */
export interface KnownSpace {
  readonly spaceId: string;
  readonly sealed: boolean;
}

/** Writes kept while the relay cannot take them, sent later in order (bridge/outbox/send.ts). */
export interface Outbox {
  readonly relay: string;
  readonly caps: OutboxCaps;
  /** Offline writes are on (a cap of 0 items turns them off). */
  readonly enabled: boolean;
  /** Keep a write signed (or sealed) already: its id, how many wait, whether it was queued already. */
  queue(w: QueuedWrite, cause?: unknown): { id: number; waiting: number; already: boolean };
  /** Whether any write waits for `target`. */
  waiting(target: string): boolean;
  rememberSpace(name: string, spaceId: string, sealed: boolean): void;
  knownSpace(name: string): KnownSpace | undefined;
  summary(): OutboxSummary;
  /** Send what waits, for at most a short while, before a tool runs. */
  beforeTool(): Promise<void>;
  /** Take the notices of what became of queued writes (each once). */
  notices(): string[];
}

// ---- live updates over stdio ------------------------------------------------------------------

/** The stdio entry's `subscriptions/listen` streams (tools/resources/subscriptions.ts `ListenTap`). */
export interface ListenStreams {
  /** Every address an open stream asks for. */
  addresses(): string[];
  /** Be told whenever the open addresses change; returns the function that stops it. */
  onChange(listener: (addresses: readonly string[]) => void): () => void;
}
