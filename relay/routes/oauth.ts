/**
 * App sign-in by OAuth 2.0 (spec/2-endpoints.md "App sign-in (OAuth)"): discovery documents,
 * client registration, the authorization request and the token exchange. The consent itself
 * is the web page (routes/app-page.ts) and authorizations.* (routes/authorizations.ts).
 *
 * Refusals: register and token answer OAuth's `{error, error_description}`, except a limit
 * ahead of them (the service envelope with Retry-After); authorize redirects the browser (to
 * the relay's page, or to the app once the app and its redirect URI hold) and never answers
 * JSON. With app sign-in off the metadata, register and token answer OAUTH_UNAVAILABLE and
 * authorize a plain-text 404.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import { OAUTH_LIMITS } from '../../shared/limits.js';
import { appSignInOn } from '../config.js';
import type { RelayContext } from '../context.js';
import { tokenHash } from '../http/auth.js';
import { sendRefusal } from '../http/errors.js';
import { parseQuery, UNDECODABLE_QUERY, type ParsedQuery } from '../http/query.js';
import { newToken, newUuid } from '../ids.js';
import { readAuthorizeRequest, redirectWith, scopeText, type PageError } from '../oauth/authorize.js';
import { readClientMetadata } from '../oauth/client-metadata.js';
import { createClientFinder } from '../oauth/clients.js';
import { OAuthError } from '../oauth/errors.js';
import { authorizationServerMetadata, connectorResource, protectedResourceMetadata, RESOURCE_METADATA_PATH } from '../oauth/metadata.js';
import { networkOf } from '../oauth/network.js';
import { authenticateClient, basicCredentials, codeProblem, readTokenParams, requireGrantParams } from '../oauth/token.js';

/** Discovery documents may be kept five minutes by anyone. */
const METADATA_CACHE = 'public, max-age=300';
/** Service refusals that stay in the service envelope at register and token: limits ahead of them. */
const SERVICE_FORM = new Set(['RATE_LIMITED', 'BUSY', 'TOO_LARGE', 'OAUTH_UNAVAILABLE', 'INTERNAL', 'SERVICE_READ_ONLY']);

function sendOAuthError(reply: FastifyReply, e: OAuthError): FastifyReply {
  if (e.status === 401) reply.header('www-authenticate', 'Basic realm="svc"');
  return reply
    .code(e.status)
    .header('cache-control', 'no-store')
    .header('access-control-allow-origin', '*')
    .type('application/json; charset=utf-8')
    .send(e.body());
}

/** The plain-text 404 of /oauth/authorize and the page when app sign-in is off. */
export function sendPlainNotFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send('Not found: this service does not offer app sign-in.\n');
}

export const oauthRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const on = () => appSignInOn(ctx.config);
  const clients = createClientFinder(ctx.store.oauth, ctx.clock, () => ctx.config.allowLoopbackClientDocuments === true);
  const requireOn = () => {
    if (!on()) throw new SvcError('OAUTH_UNAVAILABLE');
  };
  const pagePath = (params: Record<string, string>) => `${ctx.baseUrl()}/app/authorize?${new URLSearchParams(params).toString()}`;

  // The token endpoint takes form bodies (RFC 6749 §4.1.3); JSON is taken too (2-endpoints.md).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    const parsed = parseQuery(body as string);
    if (parsed === UNDECODABLE_QUERY) done(new OAuthError('invalid_request', 'body: percent-encoding that does not decode to UTF-8'), undefined);
    else done(null, parsed);
  });

  app.setErrorHandler((error, req, reply) => {
    if (error instanceof OAuthError) return sendOAuthError(reply, error);
    const operation = req.routeOptions.config?.operation;
    if (operation === 'oauth.authorize') {
      // An address the request hook refused (a query that does not decode) is a malformed request.
      if (error instanceof SvcError && error.code === 'INVALID_REQUEST') return reply.redirect(pagePath({ error: 'malformed' }), 302);
      return sendRefusal(reply, error);
    }
    if ((operation === 'oauth.register' || operation === 'oauth.token') && !(error instanceof SvcError && SERVICE_FORM.has(error.code))) {
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      // A body over the request limit is refused by the limit ahead of the endpoint: the service form (TOO_LARGE).
      const clientError = error instanceof SvcError || (status < 500 && status !== 413);
      if (clientError) {
        const detail = error instanceof SvcError ? error.detail : undefined;
        return sendOAuthError(reply, new OAuthError('invalid_request', detail ?? 'body: not a request this endpoint reads'));
      }
    }
    return sendRefusal(reply, error);
  });

  // Browser-based apps read the metadata and call register and token across origins.
  for (const url of ['/oauth/register', '/oauth/token']) {
    app.options(url, { config: { auth: 'none', limit: 'none' } }, async (_req, reply) =>
      reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'authorization, content-type')
        .header('access-control-max-age', '86400')
        .send(),
    );
  }

  app.get(
    RESOURCE_METADATA_PATH,
    {
      config: { auth: 'none', limit: 'read', operation: 'oauth.resource', describe: 'Protected-resource metadata (RFC 9728) of the app connector /mcp/connect.' },
    },
    async (_req, reply) => {
      requireOn();
      reply.header('cache-control', METADATA_CACHE).header('access-control-allow-origin', '*');
      return protectedResourceMetadata(ctx.baseUrl());
    },
  );

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      config: { auth: 'none', limit: 'read', operation: 'oauth.metadata', describe: 'Authorization-server metadata (RFC 8414): endpoints, scopes read and write, PKCE S256.' },
    },
    async (_req, reply) => {
      requireOn();
      reply.header('cache-control', METADATA_CACHE).header('access-control-allow-origin', '*');
      return authorizationServerMetadata(ctx.baseUrl());
    },
  );

  app.post(
    '/oauth/register',
    {
      config: { auth: 'none', limit: 'none', operation: 'oauth.register', describe: 'Register an app (RFC 7591): redirect URIs, name, how it authenticates at the token endpoint.' },
    },
    async (req, reply) => {
      requireOn();
      await ctx.limiter.take('oauthRegistration', req.ip);
      await ctx.limiter.take('oauthRegistrationPerNetwork', networkOf(req.ip), { shared: true });
      await ctx.limiter.take('oauthRegistrationServiceWide', 'service', { shared: true });
      const metadata = readClientMetadata(req.body);
      const now = ctx.clock();
      const clientId = `svc_app_${toHex(ctx.random(16))}`;
      const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : `svc_secret_${toHex(ctx.random(32))}`;
      await ctx.store.oauth.insertClient({
        clientId,
        kind: 'registered',
        secretHash: secret === undefined ? null : sha256(utf8(secret)),
        authMethod: metadata.token_endpoint_auth_method,
        clientName: metadata.client_name ?? null,
        metadata: JSON.stringify(metadata),
        issuedAt: now,
        freshUntil: null,
      });
      reply.code(201).header('cache-control', 'no-store').header('access-control-allow-origin', '*');
      return {
        client_id: clientId,
        ...(secret !== undefined ? { client_secret: secret } : {}),
        client_secret_expires_at: 0,
        client_id_issued_at: Math.floor(now / 1000),
        ...metadata,
      };
    },
  );

  app.get(
    '/oauth/authorize',
    {
      config: { auth: 'none', limit: 'none', operation: 'oauth.authorize', describe: 'Send the person\'s browser here: PKCE S256, scope read or read write; the relay\'s page asks the person.' },
    },
    async (req, reply) => {
      if (!on()) return sendPlainNotFound(reply);
      const toPage = (error: PageError, retryAfter?: number) => {
        if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
        return reply.header('cache-control', 'no-store').redirect(pagePath({ error }), 302);
      };
      try {
        await ctx.limiter.take('oauthAuthorize', req.ip);
        await ctx.limiter.take('oauthAuthorizePerNetwork', networkOf(req.ip), { shared: true });
      } catch (e) {
        if (e instanceof SvcError) return toPage('busy', e.retryAfter);
        throw e;
      }
      const base = ctx.baseUrl();
      const outcome = await readAuthorizeRequest(req.query as ParsedQuery, clients, connectorResource(base));
      if (outcome.kind === 'page') return toPage(outcome.error);
      if (outcome.kind === 'app') {
        const params = { error: outcome.error, error_description: outcome.description, state: outcome.state, iss: base };
        return reply.header('cache-control', 'no-store').redirect(redirectWith(outcome.redirectUri, params), 302);
      }
      const r = outcome.request;
      const now = ctx.clock();
      const id = newUuid(ctx.random);
      try {
        await ctx.store.oauth.insertRequest(
          {
            id,
            clientId: r.client.record.clientId,
            redirectUri: r.redirectUri,
            scope: r.scope,
            state: r.state,
            codeChallenge: r.codeChallenge,
            resource: r.resource,
            createdAt: now,
            expiresAt: now + OAUTH_LIMITS.requestTtlSeconds * 1000,
            decision: null,
            decidedAt: null,
            peerId: null,
            codeExpiresAt: null,
            codeUsedAt: null,
            tokenId: null,
          },
          now - OAUTH_LIMITS.requestDeletedAfterSeconds * 1000,
        );
      } catch {
        return toPage('unavailable');
      }
      return reply.header('cache-control', 'no-store').redirect(pagePath({ request: id }), 302);
    },
  );

  app.post(
    '/oauth/token',
    {
      config: { auth: 'none', limit: 'none', operation: 'oauth.token', describe: 'Trade a code (once, within five minutes) and its PKCE verifier for a 90-day app token.' },
    },
    async (req: FastifyRequest, reply) => {
      requireOn();
      await ctx.limiter.take('oauthTokenExchange', req.ip);
      const p = readTokenParams(req.body);
      const grant = requireGrantParams(p);
      const header = req.headers.authorization;
      const client = await authenticateClient(p, basicCredentials(typeof header === 'string' ? header : undefined), clients);
      const resource = connectorResource(ctx.baseUrl());
      if (p.resource !== undefined && p.resource !== resource) throw new OAuthError('invalid_target', `resource: ${resource} only`);
      const now = ctx.clock();
      const token = newToken(ctx.random);
      const result = await ctx.store.oauth.redeem(
        sha256(utf8(grant.code)),
        now,
        (r) => codeProblem(r, client, grant, p.resource),
        { tokenId: newUuid(ctx.random), tokenHash: tokenHash(token), expiresAt: now + OAUTH_LIMITS.tokenTtlSeconds * 1000 },
      );
      if (!result.ok) {
        switch (result.reason) {
          case 'refused':
            throw result.error;
          case 'reused':
            if (result.revoked !== null) ctx.tokenEvents.emit(result.revoked);
            throw new OAuthError('invalid_grant', 'code: already used; the token made from it is revoked');
          case 'expired':
            throw new OAuthError('invalid_grant', 'code: expired (a code is valid five minutes)');
          case 'blocked':
            throw new OAuthError('invalid_grant', 'code: the KEY that approved it is blocked');
          default:
            throw new OAuthError('invalid_grant', 'code: not known here');
        }
      }
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache').header('access-control-allow-origin', '*');
      return {
        access_token: token,
        token_type: 'Bearer',
        expires_in: OAUTH_LIMITS.tokenTtlSeconds,
        scope: scopeText(result.request.scope),
      };
    },
  );
};
