/**
 * The relay's metrics in Prometheus form (prom-client), one registry per app:
 *
 * - requests by route (the route's pattern, never the address asked for, so the series stay
 *   few and no name, code or id lands in them), method and status, and latency per route;
 * - appends (posts.append accepted or refused) and posts stored;
 * - group commits (relay/posts/commit-queue.ts): works per commit, the write transaction's
 *   time and its COMMIT's, where synchronous=FULL waits for the fsync;
 * - read when scraped: checkpoint lag per stream (positions not yet covered, age of the
 *   oldest), the SEEK backlog, long polls waiting, the commit queue's waiting works, rate-limit
 *   refusals per class (counted in place by the limiter), database and WAL size, free disk
 *   space as /healthz sees it;
 * - the process: CPU, memory, heap, event-loop delay, handles, file descriptors (prom-client's
 *   default collectors).
 *
 * The request path touches only numbers kept in place (route-series.ts): an answered request
 * costs two map look-ups and a few increments, and allocates nothing; the series are built
 * when scraped.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { HealthCheck } from '../health.js';
import type { RateLimiter, RefusalClass } from '../http/rate-limit.js';
import type { CommitQueue } from '../posts/commit-queue.js';
import type { Notifier } from '../posts/notify.js';
import type { StoreGauges } from '../store/gauges.js';
import { registerRouteMetrics, RouteSeries } from './route-series.js';

const PREFIX = 'svc_relay_';

/** Seconds of a write transaction or its COMMIT (an fsync is about a millisecond). */
const COMMIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Works per commit, up to COMMIT_BATCH_MAX (64). */
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64];

/** The route label of a request no route matched. */
const UNMATCHED = '(unmatched)';

type RouteConfig = { url?: string; operation?: string };

export interface MetricsSources {
  limiter: RateLimiter;
  commitQueue: CommitQueue;
  notifier: Notifier;
  gauges: StoreGauges;
  health: HealthCheck;
}

export interface RelayMetrics {
  readonly registry: Registry;
  /** Count an answered request (onResponse). */
  answered(req: FastifyRequest, reply: FastifyReply): void;
  /** The exposition, and its content type. */
  render(): Promise<{ text: string; contentType: string }>;
  /** Stop taking commit timings. */
  close(): void;
}

export function createRelayMetrics(sources: MetricsSources): RelayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const allSeries: RouteSeries[] = [];
  registerRouteMetrics(registry, PREFIX, allSeries);
  const appends = { accepted: 0, refused: 0 };
  new Counter({
    name: `${PREFIX}appends_total`,
    help: 'posts.append answered: accepted (201, a replay of an idempotency key included) or refused.',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'accepted' }, appends.accepted);
      this.inc({ outcome: 'refused' }, appends.refused);
    },
  });
  new Gauge({
    name: `${PREFIX}posts_stored`,
    help: 'Posts stored, all SPACES together (posts are never deleted: its rate is the rate of new posts, replays left out).',
    registers: [registry],
    async collect() {
      this.set(await sources.gauges.postsStored());
    },
  });

  const batchSize = new Histogram({
    name: `${PREFIX}commit_batch_works`,
    help: 'Works (appends, messages, task commands) committed together in one write transaction.',
    buckets: BATCH_BUCKETS,
    registers: [registry],
  });
  const transactionSeconds = new Histogram({
    name: `${PREFIX}commit_transaction_seconds`,
    help: "A group commit's write transaction, from BEGIN IMMEDIATE to COMMIT returning.",
    buckets: COMMIT_BUCKETS,
    registers: [registry],
  });
  const commitSeconds = new Histogram({
    name: `${PREFIX}commit_fsync_seconds`,
    help: "A group commit's COMMIT alone: with synchronous=FULL, the write-ahead log's fsync.",
    buckets: COMMIT_BUCKETS,
    registers: [registry],
  });
  sources.commitQueue.observer = (works, transaction, commit) => {
    batchSize.observe(works);
    transactionSeconds.observe(transaction);
    commitSeconds.observe(commit);
  };

  new Gauge({
    name: `${PREFIX}commit_queue_waiting`,
    help: 'Works waiting for the next group commit.',
    registers: [registry],
    collect() {
      this.set(sources.commitQueue.waiting);
    },
  });
  // One reading serves both lag gauges of a scrape (render() forgets it first).
  let lagRead: Awaited<ReturnType<StoreGauges['checkpointLag']>> | undefined;
  const checkpointLag = async () => (lagRead ??= await sources.gauges.checkpointLag());
  new Gauge({
    name: `${PREFIX}checkpoint_lag_positions`,
    help: 'Positions no signed checkpoint covers yet, summed over every SPACE, per stream.',
    labelNames: ['stream'] as const,
    registers: [registry],
    async collect() {
      const lag = await checkpointLag();
      this.set({ stream: 'posts' }, lag.posts.positions);
      this.set({ stream: 'events' }, lag.events.positions);
    },
  });
  new Gauge({
    name: `${PREFIX}checkpoint_lag_oldest_seconds`,
    help: 'Age of the oldest position no signed checkpoint covers yet, per stream (0 when none waits).',
    labelNames: ['stream'] as const,
    registers: [registry],
    async collect() {
      const lag = await checkpointLag();
      const now = Date.now();
      for (const stream of ['posts', 'events'] as const) {
        const at = lag[stream].oldestAt;
        this.set({ stream }, at === undefined ? 0 : Math.max(0, (now - at) / 1000));
      }
    },
  });
  new Gauge({
    name: `${PREFIX}seek_backlog_posts`,
    help: 'Posts stored but not yet in the SEEK index.',
    registers: [registry],
    async collect() {
      this.set(await sources.gauges.seekBacklog());
    },
  });
  new Gauge({
    name: `${PREFIX}long_polls_waiting`,
    help: 'Reads held open waiting for something new (posts, mailbox, conversations, live updates).',
    registers: [registry],
    collect() {
      this.set(sources.notifier.waiting);
    },
  });
  new Counter({
    name: `${PREFIX}rate_limit_refusals_total`,
    help: 'Requests refused by a rate limit (RATE_LIMITED or BUSY), by class: the bucket spent, or concurrentReads.',
    labelNames: ['class'] as const,
    registers: [registry],
    collect() {
      // Counted in place by the limiter; copied here, so the counter only ever rises with it.
      this.reset();
      for (const [name, n] of Object.entries(sources.limiter.refused) as [RefusalClass, number][]) this.inc({ class: name }, n);
    },
  });
  new Gauge({
    name: `${PREFIX}database_bytes`,
    help: 'Size of the database file and of its write-ahead log.',
    labelNames: ['file'] as const,
    registers: [registry],
    async collect() {
      const size = await sources.gauges.databaseSize();
      this.set({ file: 'database' }, size.database);
      this.set({ file: 'wal' }, size.wal);
    },
  });
  new Gauge({
    name: `${PREFIX}disk_free_bytes`,
    help: 'Free space an unprivileged writer may use on the disk of the database and of the checkpoint log.',
    labelNames: ['volume'] as const,
    registers: [registry],
    async collect() {
      for (const d of await sources.health.disks()) if (d.free !== undefined) this.set({ volume: d.role }, d.free);
    },
  });
  new Gauge({
    name: `${PREFIX}disk_min_free_bytes`,
    help: 'Free space below which /healthz answers 503 (--min-free-disk), per disk.',
    labelNames: ['volume'] as const,
    registers: [registry],
    async collect() {
      for (const d of await sources.health.disks()) if (d.free !== undefined) this.set({ volume: d.role }, d.min);
    },
  });

  /**
   * Series per route pattern as Fastify registered it (config.url), then per method: a route the
   * connector's tools call in process (connector/in-process.ts) counts in the same series.
   */
  const routes = new Map<string, Map<string, RouteSeries>>();
  let unmatched: Map<string, RouteSeries> | undefined;

  function seriesOf(req: FastifyRequest, config: RouteConfig): RouteSeries {
    const pattern = config.url ?? UNMATCHED;
    let byMethod = req.is404 ? unmatched : routes.get(pattern);
    if (byMethod === undefined) {
      byMethod = new Map();
      if (req.is404) unmatched = byMethod;
      else routes.set(pattern, byMethod);
    }
    let series = byMethod.get(req.method);
    if (series === undefined) {
      // The route's pattern as Fastify registered it (config.url), never the address asked for.
      series = new RouteSeries(req.is404 ? UNMATCHED : pattern, req.method);
      byMethod.set(req.method, series);
      allSeries.push(series);
    }
    return series;
  }

  return {
    registry,
    answered(req, reply) {
      const config = req.routeOptions.config as RouteConfig;
      const status = reply.statusCode;
      seriesOf(req, config).answered(status, reply.elapsedTime / 1000);
      if (config.operation === 'posts.append') {
        if (status === 201) appends.accepted++;
        else appends.refused++;
      }
    },
    async render() {
      lagRead = undefined;
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
    close() {
      sources.commitQueue.observer = undefined;
    },
  };
}
