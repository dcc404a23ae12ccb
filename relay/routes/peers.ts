/**
 * `GET /v1/peers/{peer}` (spec/2-endpoints.md): registration time, signing key, SPACES owned;
 * no activity data. A peer id is 64 lowercase hex, never a prefix: anything else, and any
 * unregistered id, is PEER_NOT_FOUND.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { negotiate } from '../http/markdown.js';
import { PEER_ID_RE, isoTime } from '../http/schemas.js';
import { spacesOwnedBy } from '../me-sources.js';
import { encryptionKeyView } from './encryption-key.js';
import { peerMarkdown } from '../render/me.js';

const PeerParams = z.object({ peer: z.string() });

export const peersRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/peers/:peer',
    {
      schema: { params: PeerParams },
      config: { auth: 'req', limit: 'read', operation: 'peers.get', describe: 'A registered KEY: registration time, signing key, SPACES owned.', mcp: { tool: 'svc_spaces', args: { action: 'peer' } } },
    },
    async (req, reply) => {
      const { peer } = req.params as z.infer<typeof PeerParams>;
      const key = PEER_ID_RE.test(peer) ? await ctx.store.keys.get(peer) : undefined;
      if (!key) throw new SvcError('PEER_NOT_FOUND', 'peer: no registered KEY has this id (64 lowercase hex)');
      const answer = {
        peer_id: key.peerId,
        registered_at: isoTime(key.registeredAt),
        key_type: key.keyType,
        public_key: key.publicKey,
        spaces_owned: await spacesOwnedBy(ctx, key.peerId),
        // The statement and signature as published, for members to check (sealed.md §2).
        encryption_key: encryptionKeyView(await ctx.store.encryptionKeys.get(key.peerId)),
      };
      return negotiate(req, reply, ctx.random, answer, peerMarkdown);
    },
  );
};
