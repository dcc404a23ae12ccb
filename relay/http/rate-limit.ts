/**
 * Rate limits (spec/1-concepts.md "Limits"): token buckets per KEY and per address, and
 * concurrency gates ("6 at once"). In memory, in bounded maps that evict the least recently
 * used entry, so an address flood cannot grow memory without bound.
 *
 * Several relay processes on one PostgreSQL database spend every token bucket in the database
 * (`shared`: relay/store/cluster.ts `take`, one statement per spend), so a KEY's 30 writes a
 * minute are 30 whichever processes its requests reach, and the service-wide buckets are the
 * service's. A spend the database cannot answer falls back to this process's bucket: trouble
 * with the database never refuses a request the limits allow. Concurrency gates stay per
 * process: they bound what one process holds open (its connections, its memory), and a
 * holder that dies must not keep a place in the database.
 *
 * Routes choose a class with `config: { limit: 'read' | 'write' | 'register' | 'health' | 'none' }`;
 * the hook in app.ts calls `applyRouteLimit` after authentication. Handlers that need a finer
 * bucket (e.g. tokens per KEY at verify) call `limiter.take(...)` themselves.
 *
 * Refusals carry Retry-After. RateLimit-Limit/Remaining/Reset only when the caller's own bucket
 * denied; a shared bucket answers a flat 60 s and no numbers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../../shared/errors.js';
import { RelayRefusal } from './errors.js';
import { RATE_LIMITS, SHARED_BUCKET_RETRY_SECONDS, type Rate } from '../../shared/limits.js';
import type { BucketSpend } from '../store/cluster.js';

/** Spend from a bucket every relay process shares (relay/store/cluster.ts `take`). */
export type SharedSpend = (spend: BucketSpend) => Promise<{ wait: number; remaining: number }>;

/**
 * Buckets the relay keeps: the Limits table's rates (shared/limits.ts) plus one of our own:
 * the spec says only that "an address that presents many unknown tokens gets RATE_LIMITED";
 * we allow 60 an hour, burst 20.
 */
export const RATES = {
  registration: RATE_LIMITS.registration,
  tokensPerKey: RATE_LIMITS.tokensPerKey,
  tokensServiceWide: RATE_LIMITS.tokensServiceWide,
  reads: RATE_LIMITS.reads,
  readsWithoutToken: RATE_LIMITS.readsWithoutToken,
  writes: RATE_LIMITS.writes,
  directMessages: RATE_LIMITS.directMessages,
  health: RATE_LIMITS.health,
  categoryLookup: RATE_LIMITS.categoryLookup,
  linkUses: RATE_LIMITS.linkUses,
  spaceCreation: RATE_LIMITS.spaceCreation,
  controlActions: RATE_LIMITS.controlActions,
  deliveriesBetweenKeys: RATE_LIMITS.deliveriesBetweenKeys,
  noticesToKey: RATE_LIMITS.noticesToKey,
  oauthRegistration: RATE_LIMITS.oauthRegistration,
  oauthRegistrationPerNetwork: RATE_LIMITS.oauthRegistrationPerNetwork,
  oauthRegistrationServiceWide: RATE_LIMITS.oauthRegistrationServiceWide,
  oauthAuthorize: RATE_LIMITS.oauthAuthorize,
  oauthAuthorizePerNetwork: RATE_LIMITS.oauthAuthorizePerNetwork,
  oauthTokenExchange: RATE_LIMITS.oauthTokenExchange,
  unknownTokens: { limit: 60, windowSeconds: 3600, scope: 'address', burst: 20 },
} as const satisfies Record<string, Rate>;

export type LimitClass = 'read' | 'write' | 'register' | 'health' | 'none';

const MAX_ENTRIES = 100_000;

interface Bucket {
  tokens: number;
  at: number;
}

/** Token buckets keyed by string, all with the same rate. A stateful resource, hence a class. */
export class BucketMap {
  private readonly buckets = new Map<string, Bucket>();
  constructor(
    readonly rate: Rate,
    private readonly maxEntries = MAX_ENTRIES,
    private readonly shared?: { readonly name: string; readonly spend: SharedSpend },
  ) {}

  /**
   * `take`, in the bucket every relay process shares when there is one (named `shared.name`
   * there), else in this process's. A shared spend that fails is made here instead.
   */
  async spend(key: string, now: number, cost = 1): Promise<{ wait: number; remaining: number }> {
    if (this.shared === undefined) return this.take(key, now, cost);
    const perMs = this.rate.limit / (this.rate.windowSeconds * 1000);
    try {
      return await this.shared.spend({ bucket: this.shared.name, key, capacity: this.capacity, perMs, cost, now });
    } catch {
      return this.take(key, now, cost);
    }
  }

  /**
   * Spend `cost` from `key`'s bucket at time `now` (ms). Answers 0 when allowed, else the
   * seconds until it would be, and the tokens left.
   */
  take(key: string, now: number, cost = 1): { wait: number; remaining: number } {
    const perMs = this.rate.limit / (this.rate.windowSeconds * 1000);
    const burst = this.capacity;
    let b = this.buckets.get(key);
    if (b) {
      this.buckets.delete(key); // re-insert below: Map order is the LRU order
      b.tokens = Math.min(burst, b.tokens + Math.max(0, now - b.at) * perMs);
      b.at = now;
    } else {
      b = { tokens: burst, at: now };
    }
    this.buckets.set(key, b);
    if (this.buckets.size > this.maxEntries) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return { wait: 0, remaining: Math.floor(b.tokens) };
    }
    return { wait: Math.max(1, Math.ceil((cost - b.tokens) / perMs / 1000)), remaining: Math.floor(b.tokens) };
  }

  /** Bucket size: the burst, or the allowance per window when the table names no burst. */
  get capacity(): number {
    return this.rate.burst ?? this.rate.limit;
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** Counting gates: at most `limit` holders per key at once. */
export class GateMap {
  private readonly held = new Map<string, number>();
  constructor(readonly limit: number) {}

  /** A release function, or undefined when the key already has `limit` holders. */
  enter(key: string): (() => void) | undefined {
    const n = this.held.get(key) ?? 0;
    if (n >= this.limit) return undefined;
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const m = (this.held.get(key) ?? 1) - 1;
      if (m <= 0) this.held.delete(key);
      else this.held.set(key, m);
    };
  }
}

/** What a refusal is counted under: a bucket of RATES, or the gate of reads at once. */
export type RefusalClass = keyof typeof RATES | 'concurrentReads';

export interface RateLimiter {
  /** false: every limit and gate is off (RelayDeps.rateLimits false; benchmarks only). */
  readonly enabled: boolean;
  readonly buckets: { readonly [K in keyof typeof RATES]: BucketMap };
  readonly gates: { readonly readsPerKey: GateMap; readonly readsPerAddress: GateMap };
  /** Refusals since the limiter was made, per class, counted in place (the metrics read them). */
  readonly refused: Record<RefusalClass, number>;
  /**
   * Spend from one bucket; rejects with `code` (RATE_LIMITED by default) when it is empty.
   * `shared` marks a bucket others can spend (flat 60 s, no numbers).
   */
  take(bucket: keyof typeof RATES, key: string, opts?: { code?: ErrorCode; shared?: boolean; cost?: number }): Promise<void>;
  /** A bucket of a route's own (SEEK's), shared across processes as the limiter's are. */
  bucket(name: string, rate: Rate): BucketMap;
}

/**
 * `enabled: false` makes `take` and the route limits no-ops (benchmarks only). `shared`: the
 * buckets live in the database several relay processes share (Store.cluster).
 */
export function createRateLimiter(clock: () => number, opts: { enabled?: boolean; shared?: SharedSpend | undefined } = {}): RateLimiter {
  const enabled = opts.enabled ?? true;
  const shared = opts.shared;
  const bucket = (name: string, rate: Rate): BucketMap => new BucketMap(rate, MAX_ENTRIES, shared === undefined ? undefined : { name, spend: shared });
  const buckets = Object.fromEntries(
    Object.entries(RATES).map(([name, rate]) => [name, bucket(name, rate)]),
  ) as { [K in keyof typeof RATES]: BucketMap };
  const gates = {
    readsPerKey: new GateMap(RATE_LIMITS.reads.concurrent),
    readsPerAddress: new GateMap(RATE_LIMITS.readsWithoutToken.concurrent),
  };
  const refused = Object.fromEntries([...Object.keys(RATES), 'concurrentReads'].map((name) => [name, 0])) as Record<RefusalClass, number>;
  return {
    enabled,
    buckets,
    gates,
    refused,
    bucket,
    async take(bucket, key, opts = {}) {
      if (!enabled) return;
      const map = buckets[bucket];
      const r = await map.spend(key, clock(), opts.cost ?? 1);
      if (r.wait === 0) return;
      refused[bucket]++;
      const code = opts.code ?? 'RATE_LIMITED';
      if (opts.shared) throw new RelayRefusal(code, undefined, SHARED_BUCKET_RETRY_SECONDS, {});
      throw new RelayRefusal(code, undefined, r.wait, {
        'ratelimit-limit': String(map.capacity),
        'ratelimit-remaining': String(r.remaining),
        'ratelimit-reset': String(r.wait),
      });
    },
  };
}

/**
 * Release a gate when the response closes, or now when it already has: a spend above may have
 * awaited the database while the client went away, and a close already heard never comes again.
 */
export function releaseOnClose(req: FastifyRequest, reply: FastifyReply, release: () => void): void {
  if (reply.raw.destroyed || req.raw.socket?.destroyed === true) release();
  else reply.raw.once('close', release);
}

/**
 * Apply a route's limit class. `peerId` is the authenticated KEY, if any. Concurrency gates are
 * released when the response closes (finished or aborted).
 */
export async function applyRouteLimit(
  limiter: RateLimiter,
  kind: LimitClass,
  req: FastifyRequest,
  reply: FastifyReply,
  peerId: string | undefined,
): Promise<void> {
  if (!limiter.enabled) return;
  const address = req.ip;
  switch (kind) {
    case 'none':
      return;
    case 'health':
      await limiter.take('health', address, { code: 'BUSY' });
      return;
    case 'register':
      await limiter.take('registration', address);
      return;
    case 'write':
      // A write without a KEY is refused by authentication before this point.
      if (peerId !== undefined) await limiter.take('writes', peerId);
      else await limiter.take('readsWithoutToken', address, { code: 'BUSY' });
      return;
    case 'read': {
      const byKey = peerId !== undefined;
      if (byKey) await limiter.take('reads', peerId, { code: 'BUSY' });
      else await limiter.take('readsWithoutToken', address, { code: 'BUSY' });
      const gate = byKey ? limiter.gates.readsPerKey : limiter.gates.readsPerAddress;
      const release = gate.enter(byKey ? peerId : address);
      if (!release) {
        limiter.refused.concurrentReads++;
        throw new RelayRefusal('BUSY', 'too many reads at once', 1, {});
      }
      releaseOnClose(req, reply, release);
      return;
    }
  }
}
