/**
 * Hand-over (spec/2-endpoints.md hand_over.create, hand_over.accept, hand_over.decline;
 * spec/1-concepts.md "Hand-over", "Roles matrix": every role holder hands over its own role, the
 * owner the SPACE itself).
 *
 * create: to a KEY (`to`: registered, not yourself, sharing a SPACE with you; told by a mailbox
 * `hand_over` row) or, without `to`, as a one-use `svc_hand_` link (never in a sealed SPACE). A
 * new offer replaces the giver's last one in that SPACE.
 * accept: by the offered KEY, with the offer id from its mailbox; a link is taken with join.link.
 * decline: by the offered KEY (declined) or the giver (revoked); anyone else is told the id is
 * unknown.
 *
 * A sealed SPACE goes only to a successor with an encryption key that the keeper list in force
 * names as a keeper and that holds a lock for the generation in use (ENCRYPTION_KEY_MISSING,
 * SEALED_SUCCESSOR_NOT_KEEPER, SEALED_NEEDS_LOCK; relay/store/hand-overs.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { validateLabel } from '../../shared/validate.js';
import { ROLE_RANK } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { PEER_ID_RE, isoTime } from '../http/schemas.js';
import { newUuid } from '../ids.js';
import { assertOpen, codeHash, linkFor, mayNotify, newCode, takeHandOver } from '../joining.js';
import { canHandOver, rankOf } from '../policy.js';
import { HAND_OVER_DEFAULT_SECONDS, type HandOverRow } from '../store/hand-overs.js';
import type { SpaceRow } from '../store/spaces.js';
import { lifetimeOf, spaceNamed } from './invites.js';

const NameParams = z.object({ name: z.string().max(200) });
const IdParams = z.object({ id: z.string().max(200) });
const CreateBody = z
  .strictObject({
    to: z.string().max(200).optional(),
    expires_in_seconds: z.unknown().optional(),
    label: z.unknown().optional(),
  })
  .optional();
const EmptyBody = z.strictObject({}).optional();

/** An offer as answers and mailbox envelopes show it (api-notes §5 "offer"). */
export function renderOffer(space: Pick<SpaceRow, 'name'>, o: HandOverRow): JsonObject {
  return {
    offer_id: o.id,
    space: space.name,
    from: o.giver,
    role: o.role,
    to: o.to,
    by_link: o.isLink,
    label: o.label,
    created_at: isoTime(o.createdAt),
    expires_at: o.expiresAt === null ? null : isoTime(o.expiresAt),
    state: o.state,
  };
}

async function offerFor(ctx: RelayContext, id: string): Promise<{ offer: HandOverRow; space: SpaceRow }> {
  const offer = await ctx.store.handOvers.byId(id, ctx.clock());
  const space = offer && await ctx.store.spaces.byRowId(offer.spaceRowId);
  if (!offer || !space) throw new SvcError('INVITE_NOT_FOUND', 'id: no offer has this id');
  return { offer, space };
}

export const handOverRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.post(
    '/v1/spaces/:name/hand-over',
    {
      schema: { params: NameParams, body: CreateBody },
      config: {
        operation: 'hand_over.create',
        describe: 'Offer your own role (the owner: the SPACE) to a KEY you share a SPACE with, or as a one-use link.',
        mcp: { tool: 'svc_space_control', args: { action: 'hand_over' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      await ctx.limiter.take('controlActions', me);
      const { name } = req.params as z.infer<typeof NameParams>;
      const body = (req.body as z.infer<typeof CreateBody>) ?? {};
      const now = ctx.clock();
      const expiresAt = lifetimeOf(body.expires_in_seconds, now, HAND_OVER_DEFAULT_SECONDS);
      const label = body.label === undefined || body.label === null ? null : validateLabel(body.label);
      if (body.to !== undefined && !PEER_ID_RE.test(body.to)) throw new SvcError('INVALID_REQUEST', 'to: a peer id is 64 lowercase hex');

      const space = await spaceNamed(ctx, name);
      const role = await ctx.store.members.roleOf(space, me);
      if (!canHandOver(role) || role === null) throw new SvcError('CONTROL_DENIED', 'only a role holder hands over its role');
      const to = body.to ?? null;
      if (to !== null) {
        if (to === me) throw new SvcError('CONTROL_DENIED', 'to: nobody hands over to themselves');
        if (!await ctx.store.keys.get(to)) throw new SvcError('PEER_NOT_REGISTERED', 'to: no registered KEY has this id');
        if (!await ctx.store.handOvers.shareSpace(me, to)) throw new SvcError('HAND_OVER_UNREACHABLE', 'to: the KEY shares no SPACE with you');
        const theirs = await ctx.store.members.roleOf(space, to);
        if (rankOf(theirs) > ROLE_RANK[role]) throw new SvcError('CONTROL_DENIED', `to: the KEY already holds ${theirs}, above the ${role} offered`);
      } else if (space.visibility === 'sealed') {
        throw new SvcError('SEALED_NO_LINKS', `${space.name} is sealed: offer the hand-over by peer id`);
      }
      assertOpen(space);
      const code = to === null ? newCode('hand_over', ctx.random) : null;
      const { offer, replaced } = await ctx.store.handOvers.create({
        space,
        id: newUuid(ctx.random),
        giver: me,
        role,
        to,
        codeHash: code === null ? null : codeHash(code),
        label,
        expiresAt,
        now,
        notify: to === null || await mayNotify(ctx, me, to),
      });
      const answer: JsonObject = { ...renderOffer(space, offer), replaced };
      if (code !== null) {
        answer.link = linkFor(ctx.baseUrl(), code);
        answer.code = code;
        answer.notice = 'The link and code are shown once; whoever uses the link first takes over your role.';
      }
      return reply.code(201).send(answer);
    },
  );

  app.post(
    '/v1/hand-overs/:id/accept',
    {
      schema: { params: IdParams, body: EmptyBody },
      config: {
        operation: 'hand_over.accept',
        describe: 'Take over the role (or SPACE) offered to you; the id is in your mailbox offer.',
        mcp: { tool: 'svc_join', args: { action: 'accept' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { id } = req.params as z.infer<typeof IdParams>;
      const { space } = await offerFor(ctx, id);
      return await takeHandOver(ctx, space, id, me, false);
    },
  );

  app.post(
    '/v1/hand-overs/:id/decline',
    {
      schema: { params: IdParams, body: EmptyBody },
      config: {
        operation: 'hand_over.decline',
        describe: 'Decline an offer made to you (or withdraw your own); the giver keeps the role.',
        mcp: { tool: 'svc_join', args: { action: 'decline' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { id } = req.params as z.infer<typeof IdParams>;
      const { offer, space } = await offerFor(ctx, id);
      if (offer.to !== me && offer.giver !== me) throw new SvcError('INVITE_NOT_FOUND', 'id: no offer to or from you has this id');
      assertOpen(space);
      return renderOffer(space, await ctx.store.handOvers.decline(id, me, ctx.clock()));
    },
  );
};
