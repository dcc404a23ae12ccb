/**
 * Where the metrics are served. Never to the public by default: the metrics say how busy the
 * relay is, how its disks fill, which routes fail, which is the operator's business.
 *
 * - Their own listener (`--metrics-port`, on 127.0.0.1 unless `--metrics-host`): GET /metrics
 *   and nothing else, no authentication; Prometheus scrapes it on the machine or through the
 *   operator's own network.
 * - `/metrics` on the public port, only with `--metrics-token-file`: to a request whose
 *   `Authorization: Bearer` is that file's secret; others get TOKEN_MISSING or TOKEN_INVALID with
 *   the envelope, and a wrong secret spends the address's bucket of unknown tokens as a wrong
 *   relay token does, so the secret cannot be guessed at speed.
 *
 * Without either setting no metrics are kept: no hook runs on the request path.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { createHealthCheck, relayVolumes } from '../health.js';
import { commitQueueFor } from '../posts/commit-queue.js';
import { notifierFor } from '../posts/notify.js';
import { createStoreGauges } from '../store/gauges.js';
import { createRelayMetrics, type RelayMetrics } from './metrics.js';

/** The shortest secret `--metrics-token-file` may hold. */
export const METRICS_TOKEN_MIN_LENGTH = 32;

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's metrics, when the settings ask for them (cli.ts serves them on their own port). */
    metrics: RelayMetrics | undefined;
  }
}

/** Read `--metrics-token-file`: one line of at least METRICS_TOKEN_MIN_LENGTH visible characters. */
export function readMetricsToken(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--metrics-token-file: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const token = text.trim();
  if (token.length < METRICS_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(
      `--metrics-token-file: ${path} must hold one secret of at least ${METRICS_TOKEN_MIN_LENGTH} visible ASCII characters (e.g. openssl rand -hex 32)`,
    );
  }
  return token;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Keep the app's metrics when the settings ask for them: the request hook, the commit
 * observer and, with a token, the public /metrics route. Decorates `app.metrics`.
 */
export function registerMetrics(app: FastifyInstance, ctx: RelayContext): RelayMetrics | undefined {
  const setting = ctx.config.metrics;
  if (setting === undefined || (setting.listen === undefined && setting.token === undefined)) {
    app.decorate('metrics', undefined);
    return undefined;
  }
  const metrics = createRelayMetrics({
    limiter: ctx.limiter,
    commitQueue: commitQueueFor(ctx.store.db),
    notifier: notifierFor(ctx.store.db),
    gauges: createStoreGauges(ctx.store.db),
    health: createHealthCheck({ ping: ctx.store.ping, volumes: relayVolumes(ctx.config.dataDir, ctx.checkpointLog?.path), rule: ctx.config.minFreeDisk }),
  });
  app.decorate('metrics', metrics);
  app.addHook('onResponse', function countAnswer(req, reply, done) {
    metrics.answered(req, reply);
    done();
  });
  app.addHook('onClose', async () => metrics.close());

  const token = setting.token;
  if (token !== undefined) {
    const expected = digest(token);
    app.get(
      '/metrics',
      {
        config: {
          auth: 'none',
          limit: 'health',
          describe: "Prometheus metrics (text format 0.0.4), to Authorization: Bearer <the operator's --metrics-token-file secret> only.",
        },
      },
      async (req, reply) => {
        const header = req.headers.authorization;
        if (header === undefined) throw new SvcError('TOKEN_MISSING', 'metrics: send Authorization: Bearer <the metrics secret>');
        const given = /^Bearer (\S+)$/i.exec(header)?.[1];
        if (given === undefined || !timingSafeEqual(digest(given), expected)) {
          await ctx.limiter.take('unknownTokens', req.ip);
          throw new SvcError('TOKEN_INVALID', 'metrics: not the metrics secret');
        }
        const { text, contentType } = await metrics.render();
        return reply.header('cache-control', 'no-store').type(contentType).send(text);
      },
    );
  }
  return metrics;
}

export interface MetricsServer {
  /** The bound address, e.g. http://127.0.0.1:9464/metrics. */
  readonly url: string;
  close(): Promise<void>;
}

/** Serve GET /metrics on its own listener; anything else is 404, and a failed read 500. */
export async function startMetricsServer(metrics: RelayMetrics, listen: { host: string; port: number }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.render().then(
      ({ text, contentType }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (e: unknown) => {
        process.stderr.write(`svc-relay: metrics: ${e instanceof Error ? e.message : String(e)}\n`);
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics could not be read\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
