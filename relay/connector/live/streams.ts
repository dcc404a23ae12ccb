/**
 * The relay's open live streams (spec/1-concepts.md "Connector live updates", Limits "live
 * streams"): at most LIVE_STREAMS_PER_KEY per KEY, and the reasons a stream ends, each telling
 * the client to listen again:
 *
 * - `time`: 13 minutes after it opened, on the relay's clock (RelayDeps.clock, injected, so a
 *   test moves it instead of waiting);
 * - `expired`: its token's expiry, on the same clock;
 * - `revoked`: its token revoked, or every token of its KEY, or its KEY blocked
 *   (RelayContext.tokenEvents), at once;
 * - `left`: its KEY may no longer read a private or sealed SPACE it follows, whichever way it lost
 *   access (removed, left, handed its role or the SPACE itself over, removed with the invite link
 *   that admitted it or whoever brought it in). Every such change appends its event to the
 *   SPACE's governance log in the transaction that makes it (spec/1-concepts.md "Audit log
 *   events"), so, rather than a list of causes, each event appended (EventStore.onAppended,
 *   after its commit: a change rolled back ends nothing) has every stream following that SPACE
 *   judged again by what the database says now. With several relay processes on one database
 *   the event is published to the others (topic `a:<SPACE row id>`), which judge theirs the same
 *   way; a process that may have missed topics judges all its streams again. A stream is judged
 *   once more right after it registers (a loss committed while it opened), and its followers ask
 *   before telling a change of a private SPACE (`keeps`, follow.ts), so nothing that lands after
 *   a loss is told, even in the moment before the judgement ends the stream;
 * - `stopped`: the relay stops (the app's preClose hook, before the server waits for its
 *   connections);
 * - `closed`: the client went away or cancelled (nothing is sent then);
 * - `nothing`: it follows no address the KEY may read (it ends right after its acknowledgement).
 *
 * The clock is read by one sweep a second while any stream is open, so the 13 minutes and a
 * token's expiry need no timer per stream and follow the injected clock wherever it is moved.
 *
 * A SPACE's visibility is fixed at creation (spec/1-concepts.md "Space"): a public one stays
 * readable by every KEY and is never judged. A closed SPACE is still read, so closing ends nothing.
 */
import { LIVE_STREAMS_PER_KEY } from '../../../shared/limits.js';
import type { RelayContext } from '../../context.js';
import { canReadPosts } from '../../policy.js';
import type { SpaceRow } from '../../store/spaces.js';

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
  /** Row ids of the SPACES it follows (a loss of access to a private one ends it). */
  readonly spaces: ReadonlySet<number>;
  /** End it (once; later calls do nothing). */
  end(reason: EndReason): void;
}

/** The SPACE when `peer` may read its posts now, else undefined (a public SPACE: always). */
export async function readableBy(ctx: RelayContext, spaceRowId: number, peer: string): Promise<SpaceRow | undefined> {
  const space = await ctx.store.spaces.byRowId(spaceRowId);
  if (space === undefined) return undefined;
  if (space.visibility === 'public') return space;
  return canReadPosts(space, await ctx.store.members.roleOf(space, peer)) ? space : undefined;
}

/** The open streams of one relay app; a stateful resource, hence a class. */
export class LiveStreams {
  private readonly ctx: RelayContext;
  private readonly open = new Set<LiveStream>();
  private sweep: ReturnType<typeof setInterval> | undefined;
  private readonly stops: (() => void)[] = [];
  private stopped = false;

  /** SPACES being judged now, each with whether another judgement was asked for meanwhile. */
  private readonly judging = new Map<number, boolean>();

  constructor(ctx: RelayContext) {
    this.ctx = ctx;
    const cluster = ctx.store.cluster;
    this.stops.push(
      ctx.tokenEvents.on((e) => {
        for (const s of this.of(e.peerId)) if (e.tokenId === null || e.tokenId === s.tokenId) s.end('revoked');
      }),
      // Told after the commit: judged here, and told to the other processes.
      ctx.store.events.onAppended((spaceRowId) => {
        cluster?.publish(`a:${spaceRowId}`);
        this.judge(spaceRowId);
      }),
    );
    if (cluster !== undefined) {
      this.stops.push(
        cluster.subscribe((topic) => {
          const m = /^a:(\d+)$/.exec(topic);
          if (m !== null) this.judge(Number(m[1]));
        }),
        // Topics may have been missed: every SPACE followed here is judged again.
        cluster.onResync(() => {
          for (const id of new Set([...this.open].flatMap((s) => [...s.spaces]))) this.judge(id);
        }),
      );
    }
  }

  /**
   * Judge again every stream that follows this SPACE, ending those whose KEY may no longer read
   * it. Asked again while a judgement runs, one more runs after it (which reads what the later
   * change committed), however many times it was asked.
   */
  judge(spaceRowId: number): void {
    if (this.judging.has(spaceRowId)) {
      this.judging.set(spaceRowId, true);
      return;
    }
    const run = async (): Promise<void> => {
      do {
        this.judging.set(spaceRowId, false);
        await this.judgeOnce(spaceRowId);
      } while (this.judging.get(spaceRowId) === true);
    };
    void run().finally(() => this.judging.delete(spaceRowId));
  }

  private async judgeOnce(spaceRowId: number): Promise<void> {
    const byPeer = new Map<string, LiveStream[]>();
    for (const s of this.open) {
      if (!s.spaces.has(spaceRowId)) continue;
      const list = byPeer.get(s.peerId);
      if (list === undefined) byPeer.set(s.peerId, [s]);
      else list.push(s);
    }
    if (byPeer.size === 0) return;
    let space: SpaceRow | undefined;
    try {
      space = await this.ctx.store.spaces.byRowId(spaceRowId);
      if (space?.visibility === 'public') return;
    } catch {
      space = undefined;
    }
    for (const [peer, streams] of byPeer) {
      let reads = false;
      try {
        reads = space !== undefined && canReadPosts(space, await this.ctx.store.members.roleOf(space, peer));
      } catch {
        // The database did not answer: the stream ends (its client listens again and is judged then).
      }
      if (!reads) for (const s of streams) s.end('left');
    }
  }

  /**
   * Whether the stream's KEY may still read this SPACE; when it may not, the stream ends
   * (`left`) and the answer is false. A follower asks before it tells a change.
   */
  async keeps(stream: LiveStream, spaceRowId: number): Promise<boolean> {
    let reads = false;
    try {
      reads = (await readableBy(this.ctx, spaceRowId, stream.peerId)) !== undefined;
    } catch {
      // The database did not answer: nothing is told, and the stream ends.
    }
    if (!reads) stream.end('left');
    return reads;
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
