/**
 * Requests per route, kept in place: each route and method has one object, made on its first
 * request, whose numbers an answer increments (a status count, a latency bucket, the sum and
 * the count). Nothing is allocated per request; the Prometheus series are built from these
 * numbers only when scraped, so prom-client's labelled updates (a label hash string and a
 * value object per call) stay off the request path.
 */
import type { Registry } from 'prom-client';

/** Seconds: from a cached document (well under a millisecond) to a long poll held 25 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** One route's pattern and method, and what its answers counted. */
export class RouteSeries {
  /** Answers per status. */
  readonly statuses = new Map<number, number>();
  /** Answers per latency bucket (not cumulative; the last is past the highest bound). */
  readonly buckets = new Float64Array(LATENCY_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  constructor(
    readonly route: string,
    readonly method: string,
  ) {}

  answered(status: number, seconds: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
    this.buckets[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * Register, under `prefix`, `http_requests_total` (a counter per route, method and status) and
 * `http_request_duration_seconds` (a histogram per route and method) read from `all`. Both are
 * metric objects of prom-client's own shape (`get`, `reset`), as its registry reads them.
 */
export function registerRouteMetrics(registry: Registry, prefix: string, all: readonly RouteSeries[]): void {
  const requests = `${prefix}http_requests_total`;
  const latency = `${prefix}http_request_duration_seconds`;
  const counter = {
    name: requests,
    help: 'Requests answered, by route pattern, method and status.',
    type: 'counter',
    aggregator: 'sum',
    async get() {
      const values: Sample[] = [];
      for (const s of all) {
        for (const [status, n] of s.statuses) values.push({ labels: { route: s.route, method: s.method, status: String(status) }, value: n, metricName: requests });
      }
      return { name: requests, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
    reset() {
      for (const s of all) s.statuses.clear();
    },
  };
  const histogram = {
    name: latency,
    help: 'Time from a request arriving to its answer sent, by route pattern and method (long polls included).',
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const values: Sample[] = [];
      for (const s of all) {
        const labels = { route: s.route, method: s.method };
        let seen = 0;
        LATENCY_BUCKETS.forEach((le, i) => {
          seen += s.buckets[i]!;
          values.push({ labels: { le, ...labels }, value: seen, metricName: `${latency}_bucket` });
        });
        values.push({ labels: { le: '+Inf', ...labels }, value: s.count, metricName: `${latency}_bucket` });
        values.push({ labels, value: s.sum, metricName: `${latency}_sum` });
        values.push({ labels, value: s.count, metricName: `${latency}_count` });
      }
      return { name: latency, help: this.help, type: this.type, values, aggregator: this.aggregator };
    },
    reset() {
      for (const s of all) {
        s.buckets.fill(0);
        s.sum = 0;
        s.count = 0;
      }
    },
  };
  // prom-client types registerMetric for its own classes; its registry reads any object of this shape.
  registry.registerMetric(counter as unknown as Parameters<Registry['registerMetric']>[0]);
  registry.registerMetric(histogram as unknown as Parameters<Registry['registerMetric']>[0]);
}
