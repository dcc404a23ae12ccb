/**
 * What every route plugin receives: the app's dependencies plus the pieces built from them.
 * Route files take it as their plugin options: `app.register(keysRoutes, ctx)`.
 */
import type { FastifyContextConfig, FastifySchema, RouteHandlerMethod } from 'fastify';
import type { ErrorCode } from '../shared/errors.js';
import type { PasskeyPolicy } from '../shared/passkey.js';
import type { RelayConfig } from './config.js';
import type { Store } from './store/index.js';
import type { ServiceKeys } from './service-keys.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { AuthMode } from './http/auth.js';
import type { Random } from './ids.js';
import type { TokenEvents } from './token-events.js';
import type { CheckpointLog } from './checkpoint-log.js';
import type { ServiceMode } from './service-mode.js';

export interface RelayDeps {
  readonly config: RelayConfig;
  readonly store: Store;
  /** Now, in Unix milliseconds. Injected so tests can move time. */
  readonly clock: () => number;
  /** n random bytes. Injected so tests can make ids deterministic. */
  readonly random: Random;
  readonly serviceKeys: ServiceKeys;
  /**
   * false turns every rate limit and concurrency gate off. For benchmarks only (cli.ts: env
   * SVC_RELAY_NO_RATE_LIMITS=1); default true.
   */
  readonly rateLimits?: boolean;
  /**
   * true: a signed post's Ed25519 check runs on libuv's thread pool (relay/posts/verify-off-thread.ts;
   * cli.ts: env SVC_RELAY_VERIFY_OFF_THREAD=1); default false, the check on the event loop.
   */
  readonly verifyOffThread?: boolean;
  /**
   * false sends every connector request to the MCP SDK's handler, the direct lane for tool calls
   * off (relay/connector/direct.ts), and every tool's call of a route through `app.inject`, none
   * in process (relay/connector/in-process.ts); default true. Tests compare the two ways' answers.
   */
  readonly connectorDirect?: boolean;
  /** Where every signed checkpoint is appended (relay/checkpoint-log.ts); none for a memory-only relay. */
  readonly checkpointLog?: CheckpointLog | undefined;
}

/** One row of the operations index (GET / as JSON, capabilities `operations`). */
export interface OperationEntry {
  name: string;
  method: string;
  path: string;
  auth: AuthMode;
  describe: string;
  /** The connector tool for it, if any. */
  mcp?: { tool: string; args?: Record<string, unknown>; via?: string } | undefined;
  /** The route's schemas as declared (zod: params, querystring, body, response); /openapi.json is generated from them. */
  schema?: FastifySchema | undefined;
  /** Refusals the route names beyond the catalogue's list for its operation (route config `refusals`). */
  refusals?: readonly ErrorCode[] | undefined;
}

/** A route registered with no operation name (the connector's MCP transport): in /openapi.json, not in the index. */
export type UnnamedRoute = Omit<OperationEntry, 'name' | 'mcp' | 'refusals'>;

/**
 * A route the connector's tools may call in process without an HTTP request of their own
 * (`config.inProcess`, connector/in-process.ts): what Fastify would run for it, read from the
 * route as registered.
 */
export interface InProcessRoute {
  readonly method: string;
  /** The pattern as registered, `/v1/posts/:id`. */
  readonly url: string;
  /** The pattern's segments after the leading "/": a literal, or null where a parameter stands. */
  readonly segments: readonly (string | null)[];
  /** The pattern's parameter names, in order. */
  readonly params: readonly string[];
  readonly config: FastifyContextConfig;
  /** The route's validators, compiled as the app compiles them (http/validation.ts). */
  readonly validate: { readonly [part in 'params' | 'body' | 'querystring']?: (data: unknown) => { value?: unknown; error?: Error } };
  readonly handler: RouteHandlerMethod;
}

export interface RelayContext extends RelayDeps {
  readonly limiter: RateLimiter;
  /** The service epoch (uuid), made on first start and stored; read again after a restore changes it. */
  serviceEpoch(): Promise<string>;
  /** The epoch and the read-only flag a running restore sets (relay/service-mode.ts). */
  readonly serviceMode: ServiceMode;
  /** The token-challenge audience: host of the public URL. */
  audience(): string;
  /** The public base URL, without a trailing slash. */
  baseUrl(): string;
  /** Where passkey assertions must come from (rp_id, origins); null when passkeys are off. */
  passkeyPolicy(): PasskeyPolicy | null;
  /** Every operation registered so far, in registration order. */
  readonly operations: OperationEntry[];
  /** Every route registered with no operation name, in registration order. */
  readonly unnamedRoutes: UnnamedRoute[];
  /** The routes the connector's tools call in process, by method and number of segments. */
  readonly inProcessRoutes: Map<string, InProcessRoute[]>;
  /** Token revocations, emitted after each revoking commit (live streams end on them). */
  readonly tokenEvents: TokenEvents;
  /**
   * 32 random bytes as hex, made when the app is built and never sent anywhere: the connector
   * sets it in CONNECTOR_HEADER on its in-process requests, the only way an app token is accepted.
   */
  readonly connectorSecret: string;
}
