/**
 * KEY-level blocks for direct messages (spec/2-endpoints.md "Mailbox, messages, blocks":
 * blocks.list, blocks.set, blocks.remove). Not the per-SPACE blocks of routes/members.ts.
 *
 * - `GET /v1/blocks?after=&limit=` → `{items: [{peer_id, blocked_at}], next_after, has_more,
 *   notice}`, by peer id ascending.
 * - `PUT /v1/blocks/{peer}` → `{peer_id, blocked_at, changed}`; also declines the blocked KEY's
 *   waiting message requests to the caller (relay/store/message-blocks.ts).
 * - `DELETE /v1/blocks/{peer}` → `{peer_id, changed}`; declines stay declined.
 *
 * A malformed or unregistered peer id is PEER_NOT_FOUND (a peer id is 64 lowercase hex, never
 * a prefix), blocking oneself is INVALID_REQUEST, a 10,001st block BLOCK_LIMIT. What the blocked
 * KEY is told when it writes (MESSAGES_NOT_ACCEPTED) is the send pipeline's (relay/messages/).
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { negotiate } from '../http/markdown.js';
import { PEER_ID_RE, isoTime, noBody } from '../http/schemas.js';
import { messageBlocksMarkdown } from '../render/blocks.js';
import type { MessageBlockRow } from '../store/message-blocks.js';

const BlocksQuery = z.strictObject({
  after: z.string().regex(PEER_ID_RE, 'a peer id is 64 lowercase hex').optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_LIMIT_MAX).default(50),
});

const PeerParams = z.object({ peer: z.string() });

const BLOCKS_NOTICE = 'A KEY you block cannot message you or start a group that includes you; it is told only that you do not accept its messages.';

/** The KEY named in the path (attacker-controlled): registered, or PEER_NOT_FOUND. */
async function registeredPeer(ctx: RelayContext, value: string): Promise<string> {
  if (!PEER_ID_RE.test(value) || !await ctx.store.keys.get(value)) {
    throw new SvcError('PEER_NOT_FOUND', 'peer: no registered KEY has this id (64 lowercase hex)');
  }
  return value;
}

function renderBlock(b: MessageBlockRow) {
  return { peer_id: b.blocked, blocked_at: isoTime(b.blockedAt) };
}

export const blocksRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/blocks',
    {
      schema: { querystring: BlocksQuery },
      config: {
        auth: 'req',
        limit: 'read',
        operation: 'blocks.list',
        describe: 'KEYS you block from messaging you, with time.',
        mcp: { tool: 'svc_messages', args: { action: 'blocks' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req);
      const q = req.query as z.infer<typeof BlocksQuery>;
      const page = await ctx.store.messageBlocks.list(me.peerId, { after: q.after, limit: q.limit });
      const last = page.items[page.items.length - 1];
      const answer = {
        items: page.items.map(renderBlock),
        next_after: page.hasMore && last ? last.blocked : null,
        has_more: page.hasMore,
        notice: BLOCKS_NOTICE,
      };
      return negotiate(req, reply, ctx.random, answer, messageBlocksMarkdown);
    },
  );

  app.put(
    '/v1/blocks/:peer',
    {
      schema: { params: PeerParams, body: noBody },
      config: {
        auth: 'req',
        operation: 'blocks.set',
        describe: 'Block a KEY from messaging you or adding you to a group; its waiting requests to you are declined.',
        mcp: { tool: 'svc_message', args: { action: 'block' } },
      },
    },
    async (req) => {
      const me = identityOf(req);
      const peer = await registeredPeer(ctx, (req.params as z.infer<typeof PeerParams>).peer);
      if (peer === me.peerId) throw new SvcError('INVALID_REQUEST', 'peer: a KEY cannot block itself');
      const r = await ctx.store.messageBlocks.block(me.peerId, peer, ctx.clock());
      return { peer_id: peer, blocked_at: isoTime(r.block!.blockedAt), changed: r.changed };
    },
  );

  app.delete(
    '/v1/blocks/:peer',
    {
      schema: { params: PeerParams, body: noBody },
      config: {
        auth: 'req',
        operation: 'blocks.remove',
        describe: 'Unblock a KEY; requests declined by the block stay declined.',
        mcp: { tool: 'svc_message', args: { action: 'unblock' } },
      },
    },
    async (req) => {
      const me = identityOf(req);
      const peer = await registeredPeer(ctx, (req.params as z.infer<typeof PeerParams>).peer);
      const r = await ctx.store.messageBlocks.unblock(me.peerId, peer);
      return { peer_id: peer, changed: r.changed };
    },
  );
};
