/**
 * The command line's monitoring settings (cli.ts): the log level, the free disk /healthz asks
 * for, and where metrics are served (relay/metrics/expose.ts). Kept apart from cli.ts so the
 * flags, their environment variables, their help and their parsing stay together.
 */
import type { FastifyInstance } from 'fastify';
import {
  DEFAULT_METRICS_HOST,
  parseLogLevel,
  parseMinFreeDisk,
  type FreeDiskRule,
  type LogLevel,
  type MetricsSetting,
} from './config.js';
import { readMetricsToken, startMetricsServer, type MetricsServer } from './metrics/expose.js';

export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** parseArgs options of these settings. */
export const MONITORING_OPTIONS = {
  'log-level': { type: 'string' },
  'min-free-disk': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string' },
  'metrics-token-file': { type: 'string' },
} as const;

export const MONITORING_HELP = `  --log-level LEVEL one JSON line per request on stdout (method, route, status, ms, request_id);
                    fatal, error, warn, info, debug, trace or silent (default ${DEFAULT_LOG_LEVEL};
                    env SVC_LOG_LEVEL)
  --min-free-disk SIZE
                    /healthz answers 503 when the disk of the database or of the checkpoint log
                    has less free: bytes (2GiB, 500MB, 1073741824) or a share (5%); 0 turns it
                    off (default 1GiB, or 5% of the disk when that is smaller; env SVC_MIN_FREE_DISK)
  --metrics-port P  serve Prometheus metrics at /metrics on a listener of their own on port P
                    (env SVC_METRICS_PORT); no metrics are kept without this or the token file
  --metrics-host H  the metrics listener's interface (default ${DEFAULT_METRICS_HOST}; env SVC_METRICS_HOST)
  --metrics-token-file FILE
                    also serve /metrics on the public port, to Authorization: Bearer <the
                    secret in FILE, 32 characters or more> only (env SVC_METRICS_TOKEN_FILE)
`;

export interface MonitoringSettings {
  logLevel: LogLevel;
  minFreeDisk: FreeDiskRule | undefined;
  metrics: MetricsSetting | undefined;
}

type Values = { [K in keyof typeof MONITORING_OPTIONS]?: string | undefined };

function parseMetricsPort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) throw new Error(`--metrics-port: not a port number: ${text}`);
  return Number(text);
}

/** The settings from flags, else the environment; the token file is read here, once. */
export function parseMonitoring(values: Values, env: NodeJS.ProcessEnv): MonitoringSettings {
  const level = values['log-level'] ?? env.SVC_LOG_LEVEL;
  const minFree = values['min-free-disk'] ?? env.SVC_MIN_FREE_DISK;
  const port = values['metrics-port'] ?? env.SVC_METRICS_PORT;
  const host = values['metrics-host'] ?? env.SVC_METRICS_HOST;
  const tokenFile = values['metrics-token-file'] ?? env.SVC_METRICS_TOKEN_FILE;
  if (host !== undefined && port === undefined) throw new Error('--metrics-host: give --metrics-port too');
  const listen = port === undefined ? undefined : { host: host ?? DEFAULT_METRICS_HOST, port: parseMetricsPort(port) };
  const token = tokenFile === undefined || tokenFile === '' ? undefined : readMetricsToken(tokenFile);
  return {
    logLevel: level === undefined ? DEFAULT_LOG_LEVEL : parseLogLevel(level),
    minFreeDisk: minFree === undefined ? undefined : parseMinFreeDisk(minFree),
    metrics: listen === undefined && token === undefined ? undefined : { listen, token },
  };
}

/**
 * Start the metrics listener when the settings name one; undefined otherwise. An address it
 * cannot take throws one line naming the flag that fixes it.
 */
export async function startMetricsListener(app: FastifyInstance, metrics: MetricsSetting | undefined): Promise<MetricsServer | undefined> {
  if (metrics?.listen === undefined || app.metrics === undefined) return undefined;
  const { host, port } = metrics.listen;
  try {
    return await startMetricsServer(app.metrics, metrics.listen);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    if (code === 'EADDRINUSE') throw new Error(`cannot serve metrics on ${address}: in use; pick another --metrics-port`);
    if (code === 'EACCES') throw new Error(`cannot serve metrics on ${address}: no permission; pick a --metrics-port above 1023`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new Error(`cannot serve metrics on ${address}: not an address of this machine; pick another --metrics-host`);
    throw e;
  }
}
