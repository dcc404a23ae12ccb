/**
 * What a request passes before its route reads its input (the app's onRequest hook; the
 * connector's in-process calls of a route run it too, connector/in-process.ts): the address's own
 * refusals (a NUL byte, a query that does not decode, spec/2-endpoints.md general refusals),
 * authentication by the route's `auth`, the read-only mode a running restore sets (writes wait,
 * spec/3-errors.md SERVICE_READ_ONLY), and the route's rate limit.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { READ_ONLY_RETRY_SECONDS } from '../service-mode.js';
import { authenticate, type AuthMode } from './auth.js';
import { UNDECODABLE_QUERY, UNDECODABLE_QUERY_DETAIL } from './query.js';
import { applyRouteLimit } from './rate-limit.js';

export async function admit(ctx: RelayContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (/%00/.test(req.url) || req.url.includes('\u0000')) throw new SvcError('INVALID_REQUEST', 'address: NUL byte');
  if (req.query === UNDECODABLE_QUERY) throw new SvcError('INVALID_REQUEST', UNDECODABLE_QUERY_DETAIL);
  if (req.is404) return;
  const config = req.routeOptions.config;
  const auth: AuthMode = config.auth ?? 'req';
  // A write, for an app token's scope and the read-only mode: anything but GET and HEAD, except
  // the reads sent as POST, unless the route says.
  const write = config.writes ?? (req.method !== 'GET' && req.method !== 'HEAD' && config.limit !== 'read');
  if (auth !== 'none') {
    const rule = { connectorSecret: ctx.connectorSecret, write };
    const identity = (await authenticate(req, ctx.store.tokens, ctx.limiter, ctx.clock(), rule)) ?? null;
    if (identity === null && auth === 'req') throw new SvcError('TOKEN_MISSING');
    req.identity = identity;
  }
  const limit = config.limit ?? (req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write');
  if (write && (await ctx.serviceMode.readOnly()) !== undefined) {
    throw new SvcError('SERVICE_READ_ONLY', 'a restore is in progress; reads work; retry the write when it is done', READ_ONLY_RETRY_SECONDS);
  }
  await applyRouteLimit(ctx.limiter, limit, req, reply, req.identity?.peerId);
}
