/**
 * Builds the relay's Fastify app from its dependencies; never listens (main.ts does, tests use
 * `app.listen({ port: 0, host: '127.0.0.1' })` or `inject`).
 *
 * Request life: id (X-Request-Id) → the address (a NUL byte; a query that does not decode,
 * relay/http/query.ts being the one query parser) → authentication (route config `auth`) →
 * rate limit (route config `limit`) → strict JSON body → zod validation → handler.
 * Every failure goes through relay/http/errors.ts. One plugin per endpoint-catalogue section,
 * registered explicitly below.
 */
import Fastify, { type FastifyContextConfig, type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { REQUEST_MAX_BYTES } from '../shared/limits.js';
import { audienceOf, passkeyPolicyOf, publicBaseUrl } from './config.js';
import type { OperationEntry, RelayContext, RelayDeps } from './context.js';
import { admit } from './http/admission.js';
import { answerClientError, answerFrameworkError, PATH_PARAM_MAX, registerErrorHandling } from './http/errors.js';
import { parseJsonBody } from './http/json-body.js';
import { parseQuery } from './http/query.js';
import { createRateLimiter } from './http/rate-limit.js';
import { endQuietConnectionsOnClose } from './http/connections.js';
import { loggerOptions } from './http/logging.js';
import { registerMetrics } from './metrics/expose.js';
import { zodSerializerCompiler, zodValidatorCompiler } from './http/validation.js';
import { newUuid } from './ids.js';
import { createTokenEvents } from './token-events.js';
import { createServiceMode } from './service-mode.js';
import './http/fastify-types.js';
import { serviceRoutes } from './routes/service.js';
import { recoveryRoutes } from './routes/recovery.js';
import { agentFilesRoutes } from './routes/agent-files.js';
import { bridgeFileRoutes } from './routes/bridge-file.js';
import { openapiRoutes } from './routes/openapi.js';
import { toolFilesRoutes } from './routes/tool-files.js';
import { keysRoutes } from './routes/keys.js';
import { passkeysRoutes } from './routes/passkeys.js';
import { tokensRoutes } from './routes/tokens.js';
import { oauthRoutes } from './routes/oauth.js';
import { authorizationsRoutes } from './routes/authorizations.js';
import { appPageRoutes } from './routes/app-page.js';
import { viewPageRoutes } from './routes/view-page.js';
import { meRoutes } from './routes/me.js';
import { peersRoutes } from './routes/peers.js';
import { spacesRoutes } from './routes/spaces.js';
import { membersRoutes } from './routes/members.js';
import { eventsRoutes } from './routes/events.js';
import { postsWriteRoutes } from './routes/posts-write.js';
import { postsReadRoutes } from './routes/posts-read.js';
import { postsGetRoutes } from './routes/posts-get.js';
import { checkpointsRoutes } from './routes/checkpoints.js';
import { tlogRoutes } from './routes/tlog.js';
import { registerWitness } from './routes/witness.js';
import { filesRoutes } from './routes/files.js';
import { findingsRoutes } from './routes/findings.js';
import { seekRoutes } from './routes/seek.js';
import { mailboxRoutes } from './routes/mailbox.js';
import { registerCheckpointer } from './jobs/checkpointer.js';
import { signMissingWithheld } from './recovery-forms.js';
import { registerSeekIndexer } from './seek/indexer.js';
import { invitesRoutes } from './routes/invites.js';
import { joinRoutes } from './routes/join.js';
import { handOverRoutes } from './routes/hand-over.js';
import { categoriesRoutes } from './routes/categories.js';
import { encryptionKeyRoutes } from './routes/encryption-key.js';
import { sealedRoutes } from './routes/sealed.js';
import { conversationsRoutes } from './routes/conversations.js';
import { blocksRoutes } from './routes/blocks.js';
import { messageRetentionRoutes } from './routes/message-retention.js';
import { registerMessageRetention } from './jobs/message-retention.js';
import { registerFilePrune } from './jobs/file-prune.js';
import { oracleRoutes } from './routes/oracle.js';
import { tasksRoutes } from './routes/tasks.js';
import { connectorRoutes } from './connector/routes.js';
import { addInProcessRoute, keepAnswer } from './connector/in-process.js';
import { mirrorsRoutes } from './routes/mirrors.js';

export type { RelayDeps, RelayContext } from './context.js';

/** The context each app was built with. */
const contexts = new WeakMap<FastifyInstance, RelayContext>();

/** The context an app was built with: in-process callers (tests) reach its token events and connector secret. */
export function contextOf(app: FastifyInstance): RelayContext {
  const ctx = contexts.get(app);
  if (ctx === undefined) throw new Error('not an app built by buildApp');
  return ctx;
}

export function buildApp(deps: RelayDeps): FastifyInstance {
  const app = Fastify({
    // Off unless the settings name a level (the relay's command line does): relay/http/logging.ts.
    ...loggerOptions(deps.config.logLevel),
    bodyLimit: REQUEST_MAX_BYTES,
    // One decoding of the query, strict: what does not decode is refused in the onRequest hook.
    routerOptions: { maxParamLength: PATH_PARAM_MAX, querystringParser: parseQuery },
    genReqId: () => newUuid(deps.random),
    // While closing, requests already on open connections are still served in full (with
    // the envelope and X-Request-Id) instead of Fastify's bare 503; the database closes after.
    return503OnClosing: false,
    clientErrorHandler: (error, socket) => answerClientError(error, socket, newUuid(deps.random)),
    // The router's own refusals of an address answer the envelope too.
    frameworkErrors: answerFrameworkError,
  });

  // The bound address, read once it is there: it stays while the app serves, and each read asks
  // the kernel (getsockname), which every connector request did several times.
  let bound: AddressInfo | undefined;
  const listening = (): AddressInfo | undefined => {
    if (bound !== undefined) return bound;
    const a = app.server.address();
    if (a && typeof a === 'object') bound = a;
    return bound;
  };
  /** A value of the bound address, made once the address is known. */
  const onceBound = <T>(make: (a: AddressInfo | undefined) => T): (() => T) => {
    let kept: { value: T } | undefined;
    return () => {
      if (kept !== undefined) return kept.value;
      const a = listening();
      const value = make(a);
      if (a !== undefined) kept = { value };
      return value;
    };
  };
  const cluster = deps.store.cluster;
  // Revocations made through another relay process end this one's streams too.
  const tokenEvents = createTokenEvents(cluster);
  // A blocked KEY's tokens authenticate nothing (KEY_BLOCKED): told as every token of the KEY
  // revoked, which ends its live streams here and, through the cluster, in every other process.
  const unhearBlocks = deps.store.keys.onBlocked((peerId) => tokenEvents.emit({ peerId, tokenId: null }));
  const serviceMode = createServiceMode(deps.store.state, () => newUuid(deps.random));
  const ctx: RelayContext = {
    ...deps,
    // On PostgreSQL the token buckets are spent in the database every relay process shares.
    limiter: createRateLimiter(deps.clock, { enabled: deps.rateLimits !== false, shared: cluster === undefined ? undefined : async (s) => await cluster.take(s) }),
    // Read through the service mode: a restore in another process may start a new epoch.
    serviceEpoch: () => serviceMode.epoch(),
    serviceMode,
    audience: onceBound((a) => audienceOf(deps.config, a)),
    baseUrl: onceBound((a) => publicBaseUrl(deps.config, a)),
    operations: [],
    unnamedRoutes: [],
    inProcessRoutes: new Map(),
    passkeyPolicy: () => passkeyPolicyOf(deps.config, listening()),
    tokenEvents,
    // From the system's randomness, not deps.random: tests may make that predictable, and this is a secret.
    connectorSecret: randomBytes(32).toString('hex'),
  };

  contexts.set(app, ctx);
  app.decorateRequest('identity', null);
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  registerErrorHandling(app);

  // JSON is the only body type; other media types are refused (INVALID_REQUEST).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (e) {
      done(e as Error, undefined);
    }
  });

  app.addHook('onRequest', async function admitRequest(req, reply) {
    await admit(ctx, req, reply);
  });

  // The connector's in-process requests take a JSON answer as the value, unserialised (connector/in-process.ts).
  app.addHook('preSerialization', keepAnswer);

  // The operations index is read from the routes themselves (config.operation).
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as Pick<FastifyContextConfig, 'operation' | 'auth' | 'describe' | 'mcp' | 'refusals'>;
    // One entry per method of a route that takes several; the HEAD route Fastify adds beside a GET is left out.
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String).filter((m) => m !== 'HEAD');
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) {
      const common = { method, path, auth: config.auth ?? 'req', describe: config.describe ?? '', schema: route.schema };
      if (!config.operation) {
        ctx.unnamedRoutes.push(common);
        continue;
      }
      const entry: OperationEntry = { name: config.operation, ...common, mcp: config.mcp, refusals: config.refusals };
      ctx.operations.push(entry);
    }
    // The JSON API's routes are called in process by the connector's tools unless one says otherwise.
    if (route.config?.inProcess ?? route.url.startsWith('/v1/')) addInProcessRoute(ctx.inProcessRoutes, route, methods);
  });

  // What an operator watches: the metrics of every answered request (its log line: loggerOptions).
  registerMetrics(app, ctx);

  // One plugin per section of the endpoint catalogue (spec/2-endpoints.md), explicitly.
  app.register(serviceRoutes, ctx);
  app.register(recoveryRoutes, ctx);
  app.register(agentFilesRoutes, ctx);
  app.register(bridgeFileRoutes, ctx);
  app.register(openapiRoutes, ctx);
  app.register(toolFilesRoutes, ctx);
  app.register(keysRoutes, ctx);
  app.register(tokensRoutes, ctx);
  app.register(oauthRoutes, ctx);
  app.register(authorizationsRoutes, ctx);
  app.register(appPageRoutes, ctx);
  app.register(viewPageRoutes, ctx);
  app.register(meRoutes, ctx);
  app.register(encryptionKeyRoutes, ctx);
  app.register(peersRoutes, ctx);
  app.register(passkeysRoutes, ctx);
  app.register(spacesRoutes, ctx);
  app.register(categoriesRoutes, ctx);
  app.register(membersRoutes, ctx);
  app.register(eventsRoutes, ctx);
  app.register(postsWriteRoutes, ctx);
  app.register(postsReadRoutes, ctx);
  app.register(postsGetRoutes, ctx);
  app.register(filesRoutes, ctx);
  app.register(findingsRoutes, ctx);
  app.register(checkpointsRoutes, ctx);
  app.register(mirrorsRoutes, ctx);
  app.register(tlogRoutes, ctx);
  app.register(seekRoutes, ctx);
  app.register(mailboxRoutes, ctx);
  app.register(invitesRoutes, ctx);
  app.register(joinRoutes, ctx);
  app.register(handOverRoutes, ctx);
  app.register(sealedRoutes, ctx);
  app.register(conversationsRoutes, ctx);
  app.register(blocksRoutes, ctx);
  app.register(messageRetentionRoutes, ctx);
  app.register(oracleRoutes, ctx);
  app.register(tasksRoutes, ctx);
  // The MCP connector: the bridge's tool layer over Streamable HTTP at /mcp and /mcp/connect.
  app.register(connectorRoutes, { ctx });
  // Stopping ends connections with no request on them at once (relay/http/connections.ts).
  endQuietConnectionsOnClose(app);

  app.addHook('onClose', async () => {
    unhearBlocks();
    tokenEvents.unlink();
  });
  // Recovery notices a restore of an earlier version stored without their withheld form get it
  // now (relay/recovery-forms.ts); a restore at work signs its own.
  app.addHook('onReady', async () => {
    if (await serviceMode.readOnly() === undefined) await signMissingWithheld(deps.store, deps.serviceKeys, deps.clock());
  });

  // Background jobs: checkpoints signed per SPACE and stream, the SEEK index kept up, messages
  // past their sender's retention deleted.
  registerCheckpointer(app, ctx);
  registerWitness(app, ctx);
  registerSeekIndexer(app, deps.store.seek);
  registerMessageRetention(app, ctx);
  registerFilePrune(app, ctx);

  return app;
}
