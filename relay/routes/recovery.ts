/**
 * recovery.list `GET /v1/recovery` (spec/2-endpoints.md; shared/recovery.ts): the signed notices
 * restores published, one per SPACE a restore closed because its chain was cut: how far each
 * stream was signed and how far it survived, and the SPACE that continues it. Oldest first.
 *
 * Like the rest of the service documents it needs no KEY (the catalogue's auth for it is none):
 * a client must be able to learn of a restore before anything else. But the positions and
 * links of a chain are only for those who may read that chain's checkpoints: each notice is
 * served whole to a caller who may read every chain it names, and as its signed withheld
 * form otherwise (relay/recovery-forms.ts). So a bearer token, when one is sent, names the
 * caller; one that does not authenticate is read as no token at all (the operation has no
 * refusal of its own), except that unknown tokens still spend the address's allowance.
 * Query `space` (a name) narrows to one SPACE (none for a name no SPACE has), `after` (the
 * previous page's `next_after`), `limit` 1 to 200 (default 50). Answer
 * `{items, next_after, has_more, service_epoch, notice}`.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { isSvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import { renderRecovery, type ServedRecovery } from '../../shared/recovery.js';
import { validateAfter } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { TOKEN_REFUSALS } from '../documents/refusals.js';
import { authenticate } from '../http/auth.js';
import type { SpaceRole } from '../policy.js';
import { intParam, oneValue } from '../posts/read-params.js';
import { servedForm } from '../recovery-forms.js';

const ListQuery = z.strictObject({ space: oneValue, after: oneValue, limit: oneValue });

export const RECOVERY_LIMIT_DEFAULT = 50;
export const RECOVERY_NOTICE =
  'Each notice is signed by the service key (purpose recovery): verify it before you accept a checkpoint that does not extend one you kept, then move to replaced_by; positions past survived_last do not return. A chain you may not read is withheld (unavailable: true) in a notice with full_recovery_id; send your token to see the chains of the SPACES you belong to.';

/** The caller's KEY when the request carries a token that authenticates; null otherwise. */
async function callerOf(req: FastifyRequest, ctx: RelayContext): Promise<string | null> {
  try {
    const identity = await authenticate(req, ctx.store.tokens, ctx.limiter, ctx.clock(), { connectorSecret: ctx.connectorSecret, write: false });
    return identity?.peerId ?? null;
  } catch (e) {
    if (TOKEN_REFUSALS.some((code) => isSvcError(e, code))) return null;
    throw e;
  }
}

export const recoveryRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/recovery',
    {
      schema: { querystring: ListQuery },
      config: {
        auth: 'none',
        limit: 'read',
        operation: 'recovery.list',
        describe:
          'Signed notices after each restore that lost links: SPACES closed, how far chains were signed and survived, the continuation; chains the caller may not read withheld (a signed withheld form).',
      },
    },
    async (req) => {
      const q = req.query as z.infer<typeof ListQuery>;
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? RECOVERY_LIMIT_DEFAULT;
      const afterBig = q.after === undefined ? 0n : validateAfter(q.after, 'after');
      const after = afterBig > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(afterBig);
      // A name no SPACE has narrows to nothing: the catalogue gives this operation no refusal of its own.
      const spaceRowId = q.space === undefined ? undefined : ((await ctx.store.spaces.byName(q.space))?.id ?? -1);
      const rows = await ctx.store.recovery.list({ after, limit: limit + 1, spaceRowId });
      const page = rows.slice(0, limit);
      const caller = await callerOf(req, ctx);
      const items: ServedRecovery[] = [];
      for (const n of page) {
        const space = await ctx.store.spaces.byRowId(n.spaceRowId);
        const role: SpaceRole = caller === null || space === undefined ? null : await ctx.store.members.roleOf(space, caller);
        const form = servedForm(n, space, role);
        if (form !== undefined) items.push(renderRecovery(form, form.signer));
      }
      const hasMore = rows.length > limit;
      return {
        items,
        next_after: hasMore ? String(page[page.length - 1]!.rowId) : null,
        has_more: hasMore,
        service_epoch: (await ctx.serviceEpoch()),
        notice: RECOVERY_NOTICE,
      };
    },
  );
};
