/**
 * The relay's open live streams (spec/1-concepts.md "Connector live updates", Limits "live
 * streams"): at most LIVE_STREAMS_PER_KEY per KEY, and the reasons a stream ends, each telling
 * the client to listen again:
 *
 * - `time`: 13 minutes after it opened, on the relay's clock (RelayDeps.clock, injected, so a
 *   test moves it instead of waiting);
 * - `expired`: its token's expiry, on the same clock;
 * - `revoked`: its token revoked, or every token of its KEY (RelayContext.tokenEvents), at once;
 * - `left`: its KEY left, or was removed from, a private or sealed SPACE it follows
 *   (MemberStore.onRemoved, judged again after the removing transaction commits, so a removal
 *   rolled back ends nothing; with several relay processes on one database the removal is
 *   published to the others, topic `l:<SPACE row id>:<peer id>`, which judge it the same way);
 * - `stopped`: the relay stops (the app's preClose hook, before the server waits for its
 *   connections);
 * - `closed`: the client went away or cancelled (nothing is sent then);
 * - `nothing`: it follows no address the KEY may read (it ends right after its acknowledgement).
 *
 * The clock is read by one sweep a second while any stream is open, so the 13 minutes and a
 * token's expiry need no timer per stream and follow the injected clock wherever it is moved.
 */
import { LIVE_STREAMS_PER_KEY } from '../../../shared/limits.js';
import type { RelayContext } from '../../context.js';
import { canReadPosts } from '../../policy.js';
import type { SpaceRow } from '../../store/spaces.js';
import type { MemberStore } from '../../store/members.js';

/** How long a stream stays open (spec: "after 13 minutes"). */
export const STREAM_LIFETIME_MS = 13 * 60 * 1000;
/** How often the clock is read for streams due to end. */
export const SWEEP_MS = 1000;

export type EndReason = 'time' | 'expired' | 'revoked' | 'left' | 'stopped' | 'closed' | 'nothing';

export interface StreamOwner {
  readonly peerId: string;
  readonly tokenId: string;
  readonly tokenExpiresAt: number;
}

/** One open stream as the registry sees it. */
export interface LiveStream extends StreamOwner {
  readonly endsAt: number;
  /** Row ids of the SPACES it follows (a removal from a private one ends it). */
  readonly spaces: ReadonlySet<number>;
  /** End it (once; later calls do nothing). */
  end(reason: EndReason): void;
}

/** Member removals told per store: its listener list cannot be taken back, so one per store. */
const removals = new WeakMap<MemberStore, Set<(space: SpaceRow, peer: string) => void>>();

function onRemoved(members: MemberStore, listener: (space: SpaceRow, peer: string) => void): () => void {
  let set = removals.get(members);
  if (set === undefined) {
    const listeners = new Set<(space: SpaceRow, peer: string) => void>();
    set = listeners;
    removals.set(members, listeners);
    members.onRemoved(async (space, peer) => {
      for (const l of [...listeners]) l(space, peer);
    });
  }
  const mine = set;
  mine.add(listener);
  return () => void mine.delete(listener);
}

/** The open streams of one relay app; a stateful resource, hence a class. */
export class LiveStreams {
  private readonly ctx: RelayContext;
  private readonly open = new Set<LiveStream>();
  private sweep: ReturnType<typeof setInterval> | undefined;
  private readonly stops: (() => void)[] = [];
  private stopped = false;

  constructor(ctx: RelayContext) {
    this.ctx = ctx;
    this.stops.push(
      ctx.tokenEvents.on((e) => {
        for (const s of this.of(e.peerId)) if (e.tokenId === null || e.tokenId === s.tokenId) s.end('revoked');
      }),
      onRemoved(ctx.store.members, (space, peer) => {
        if (space.visibility === 'public') return;
        // Told inside the removing transaction: judged, and told to the other processes, once
        // it has committed (dropped if it rolls back).
        ctx.store.db.afterCommit(() => {
          ctx.store.cluster?.publish(`l:${space.id}:${peer}`);
          void this.judgeRemoval(space.id, peer);
        });
      }),
    );
    const cluster = ctx.store.cluster;
    if (cluster !== undefined) {
      this.stops.push(
        cluster.subscribe((topic) => {
          const m = /^l:(\d+):(.+)$/.exec(topic);
          if (m !== null) void this.judgeRemoval(Number(m[1]), m[2]!);
        }),
      );
    }
  }

  /** End the KEY's streams that follow this SPACE when the KEY may no longer read it. */
  private async judgeRemoval(spaceRowId: number, peer: string): Promise<void> {
    const following = this.of(peer).filter((s) => s.spaces.has(spaceRowId));
    if (following.length === 0) return;
    try {
      const now = await this.ctx.store.spaces.byRowId(spaceRowId);
      if (now !== undefined && now.visibility === 'public') return;
      if (now !== undefined && canReadPosts(now, await this.ctx.store.members.roleOf(now, peer))) return;
    } catch {
      // The database did not answer: the stream ends, as a removal most likely stands.
    }
    for (const s of following) s.end('left');
  }

  /** The open streams of a KEY. */
  of(peerId: string): LiveStream[] {
    return [...this.open].filter((s) => s.peerId === peerId);
  }

  get count(): number {
    return this.open.size;
  }

  /** Whether the KEY may open one more stream. */
  hasRoom(peerId: string): boolean {
    return !this.stopped && this.of(peerId).length < LIVE_STREAMS_PER_KEY;
  }

  /**
   * Register a stream opened now; `end` is called once, with the reason, whoever ends it.
   * Answers undefined when the KEY already has its streams open or the relay is stopping.
   */
  add(owner: StreamOwner, spaces: ReadonlySet<number>, end: (reason: EndReason) => void): LiveStream | undefined {
    if (!this.hasRoom(owner.peerId)) return undefined;
    let ended = false;
    const stream: LiveStream = {
      ...owner,
      endsAt: this.ctx.clock() + STREAM_LIFETIME_MS,
      spaces,
      end: (reason) => {
        if (ended) return;
        ended = true;
        this.open.delete(stream);
        if (this.open.size === 0) this.stopSweep();
        end(reason);
      },
    };
    this.open.add(stream);
    this.sweep ??= setInterval(() => this.due(), SWEEP_MS);
    this.sweep.unref?.();
    return stream;
  }

  /** End every stream whose time or token is up. */
  due(): void {
    const now = this.ctx.clock();
    for (const s of [...this.open]) {
      if (now >= s.tokenExpiresAt) s.end('expired');
      else if (now >= s.endsAt) s.end('time');
    }
  }

  private stopSweep(): void {
    if (this.sweep !== undefined) clearInterval(this.sweep);
    this.sweep = undefined;
  }

  /** The relay stops: end every stream and take no more. */
  stop(): void {
    this.stopped = true;
    for (const s of [...this.open]) s.end('stopped');
    this.stopSweep();
    for (const f of this.stops.splice(0)) f();
  }
}
