/**
 * The person's answer to an app's request (spec/2-endpoints.md authorizations.*), called by the
 * web page with the KEY token the person signed in with. Approve answers where to send the
 * browser: the app's redirect URI with a code valid once for five minutes, `state` and `iss`
 * (RFC 6749 §4.1.2, RFC 9207); decline the same address with `error=access_denied`.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import { isUuid, toHex, utf8 } from '../../shared/encoding.js';
import { OAUTH_LIMITS } from '../../shared/limits.js';
import { appSignInOn } from '../config.js';
import type { RelayContext } from '../context.js';
import { identityOf, type Identity } from '../http/auth.js';
import { isoTime, noBody } from '../http/schemas.js';
import { redirectWith, scopeText } from '../oauth/authorize.js';
import { publisherOf } from '../oauth/client-metadata.js';
import { createClientFinder } from '../oauth/clients.js';
import type { AuthorizationRecord, DecideResult } from '../store/oauth.js';

const IdParams = z.object({ id: z.string() });

function statusOf(r: AuthorizationRecord, now: number): 'waiting' | 'approved' | 'declined' | 'expired' {
  if (r.decision !== null) return r.decision;
  return r.expiresAt <= now ? 'expired' : 'waiting';
}

export const authorizationsRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const clients = createClientFinder(ctx.store.oauth, ctx.clock, () => ctx.config.allowLoopbackClientDocuments === true);

  /** The caller (never an app: an app does not approve apps) and the request, or the refusal. */
  async function callerAndRequest(identity: Identity, id: string): Promise<AuthorizationRecord> {
    if (!appSignInOn(ctx.config)) throw new SvcError('OAUTH_UNAVAILABLE');
    if (identity.app !== null) throw new SvcError('TOKEN_INVALID', 'token: an app token cannot answer app requests');
    const r = isUuid(id) ? await ctx.store.oauth.request(id) : undefined;
    if (r === undefined) throw new SvcError('AUTHORIZATION_NOT_FOUND', 'id: no app request has that id');
    return r;
  }

  function refuseDecide(result: DecideResult): AuthorizationRecord {
    if (result.ok) return result.request;
    if (result.reason === 'decided') throw new SvcError('AUTHORIZATION_DECIDED');
    if (result.reason === 'expired') throw new SvcError('AUTHORIZATION_EXPIRED');
    throw new SvcError('AUTHORIZATION_NOT_FOUND', 'id: no app request has that id');
  }

  app.get(
    '/v1/authorizations/:id',
    {
      schema: { params: IdParams },
      config: { auth: 'req', limit: 'read', operation: 'authorizations.get', describe: "An app's request to connect: its name, publisher, return address, whether it may write." },
    },
    async (req) => {
      const r = await callerAndRequest(identityOf(req), (req.params as z.infer<typeof IdParams>).id);
      const client = await clients.stored(r.clientId);
      const meta = client?.metadata;
      return {
        id: r.id,
        app: {
          client_id: r.clientId,
          name: meta?.client_name ?? null,
          publisher: meta ? publisherOf(r.clientId, meta, client.document) : null,
          client_uri: meta?.client_uri ?? null,
          document: client?.document ?? false,
        },
        return_address: r.redirectUri,
        scope: scopeText(r.scope),
        write: r.scope === 'write',
        status: statusOf(r, ctx.clock()),
        expires_at: isoTime(r.expiresAt),
      };
    },
  );

  app.post(
    '/v1/authorizations/:id/approve',
    {
      schema: { params: IdParams, body: noBody },
      config: { auth: 'req', limit: 'write', operation: 'authorizations.approve', describe: 'Approve an app: the answer is where to send the browser, with a code valid once for five minutes.' },
    },
    async (req) => {
      const me = identityOf(req);
      const r = await callerAndRequest(me, (req.params as z.infer<typeof IdParams>).id);
      if (await ctx.store.keys.get(me.peerId) === undefined) throw new SvcError('PEER_NOT_FOUND');
      const now = ctx.clock();
      const code = `svc_code_${toHex(ctx.random(32))}`;
      const decided = refuseDecide(
        await ctx.store.oauth.decide(r.id, me.peerId, now, { hash: sha256(utf8(code)), expiresAt: now + OAUTH_LIMITS.codeTtlSeconds * 1000 }),
      );
      return { redirect_to: redirectWith(decided.redirectUri, { code, state: decided.state, iss: ctx.baseUrl() }) };
    },
  );

  app.post(
    '/v1/authorizations/:id/decline',
    {
      schema: { params: IdParams, body: noBody },
      config: { auth: 'req', limit: 'write', operation: 'authorizations.decline', describe: 'Decline an app: the answer sends the browser back to the app with access denied.' },
    },
    async (req) => {
      const me = identityOf(req);
      const r = await callerAndRequest(me, (req.params as z.infer<typeof IdParams>).id);
      if (await ctx.store.keys.get(me.peerId) === undefined) throw new SvcError('PEER_NOT_FOUND');
      const decided = refuseDecide(await ctx.store.oauth.decide(r.id, me.peerId, ctx.clock()));
      return {
        redirect_to: redirectWith(decided.redirectUri, {
          error: 'access_denied',
          error_description: 'The person declined.',
          state: decided.state,
          iss: ctx.baseUrl(),
        }),
      };
    },
  );
};
