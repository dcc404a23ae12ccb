/**
 * Mirrors: a SPACE of another relay (its origin) kept here read-only, so readers can read and
 * verify it from either relay. Not in the endpoint catalogue (spec/2-endpoints.md); routes of
 * their own under `/v1/mirrors/{space_id}`, by the origin's SPACE uuid, so a mirror never
 * shadows a SPACE of this relay that has the same name.
 *
 * - mirrors.create `POST /v1/mirrors` (req) body `{origin, name}`: the relay reads the SPACE's
 *   profile and the origin's capabilities from the origin itself (relay/mirrors/origin.ts; only
 *   origins the operator allows with `--mirror-from`), pins the origin's service root key, and
 *   makes the mirror when the caller is the SPACE's owner there (CONTROL_DENIED otherwise: peer
 *   ids are the same on every relay, so the owner's KEY signs in here as itself). 201 made, 200
 *   already there.
 * - mirrors.sync `POST /v1/mirrors/{space_id}/sync` (req, the owner as the origin names it
 *   now) body `{lines: [export line text…], checkpoints: [served checkpoint…]}`: everything
 *   verified (relay/mirrors/verify.ts), then stored in one transaction, or nothing stored.
 *   Refusals: INVALID_REQUEST (a line or checkpoint fails a check), HISTORY_ROLLBACK (another
 *   history than the one held), BUSY (the origin could not be read, or another sync moved the
 *   mirror meanwhile).
 * - mirrors.get, mirrors.posts (JSON page, or the origin's export format with
 *   `Accept: application/x-ndjson`), mirrors.checkpoints, mirrors.proof: reads (opt), READ_DENIED
 *   for a SPACE that is not public unless the caller is its owner (relay/mirrors/read.ts).
 * - mirrors.append `POST /v1/mirrors/{space_id}/posts`: a mirror takes no posts. SPACE_CLOSED
 *   (the catalogue's code for a SPACE that reads and exports but refuses new writes); the
 *   detail names the origin to write to.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { isUuid } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { EXPORT_BYTES_MAX, PAGE_LIMIT_MAX } from '../../shared/limits.js';
import { validateAfter, validateSpaceName } from '../../shared/validate.js';
import type { RelayContext } from '../context.js';
import { allowedOrigin, readOrigin } from '../mirrors/origin.js';
import { MIRROR_NOTICE, lineFor, mirrorExport, mirrorOf, mirrorProof, mirrorStatus, readerOf } from '../mirrors/read.js';
import { verifySync } from '../mirrors/verify.js';
import { intParam, oneValue } from '../posts/read-params.js';
import type { MirrorRow } from '../store/mirrors.js';

const SpaceParams = z.object({ space_id: z.string().max(64) });
const ProofParams = z.object({ space_id: z.string().max(64), seq: z.string().max(32) });
const CreateBody = z.strictObject({ origin: z.string().max(2048), name: z.string().max(200) });
const SyncBody = z.strictObject({
  lines: z.array(z.string()).max(1000),
  checkpoints: z.array(z.record(z.string(), z.unknown())).max(PAGE_LIMIT_MAX),
});
const PageQuery = z.strictObject({ after: oneValue, limit: oneValue });

/** A sync carries at most one export page (8 MiB) with its checkpoints. */
const SYNC_BODY_MAX = EXPORT_BYTES_MAX + 2 * 1024 * 1024;
const LINES_DEFAULT = 200;
const EXPORT_LINES_MAX = 1000;
const CHECKPOINTS_DEFAULT = 50;
/** How long a client waits before syncing again when another sync moved the mirror. */
const RACE_RETRY_SECONDS = 1;

function afterParam(value: string | undefined): number {
  if (value === undefined) return 0;
  const after = validateAfter(value, 'after');
  return after > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(after);
}

async function mirrorNamed(ctx: RelayContext, spaceId: string): Promise<MirrorRow> {
  if (!isUuid(spaceId)) throw new SvcError('SPACE_NOT_FOUND', 'space_id: the origin SPACE uuid');
  return await mirrorOf(ctx.store.mirrors, spaceId);
}

function wantsExport(accept: string | undefined): boolean {
  return /application\/x-ndjson/i.test(accept ?? '');
}

export const mirrorsRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const allowed = ctx.config.mirrorOrigins ?? [];

  app.post(
    '/v1/mirrors',
    {
      schema: { body: CreateBody },
      config: {
        operation: 'mirrors.create',
        describe: "Mirror a SPACE of another relay here (its owner): the relay reads the profile and the root key from the origin.",
        refusals: ['SPACE_NOT_FOUND', 'CONTROL_DENIED'],
      },
    },
    async (req, reply) => {
      const body = req.body as z.infer<typeof CreateBody>;
      const caller = req.identity!.peerId;
      const origin = allowedOrigin(body.origin, allowed);
      validateSpaceName(body.name, 'name');
      const facts = await readOrigin(origin, body.name);
      const existing = await ctx.store.mirrors.bySpaceId(facts.spaceId);
      if (existing !== undefined && existing.origin !== origin) {
        throw new SvcError('INVALID_REQUEST', `origin: this relay already mirrors that SPACE from ${existing.origin}`);
      }
      if (facts.owner !== caller) {
        throw new SvcError('CONTROL_DENIED', `only the SPACE's owner at ${origin} (${facts.owner}) mirrors it`);
      }
      const mirror = existing ?? await ctx.store.mirrors.create({ ...facts, origin, now: ctx.clock() });
      return reply.code(existing === undefined ? 201 : 200).send(await mirrorStatus(mirror, ctx.store.mirrors));
    },
  );

  app.post(
    '/v1/mirrors/:space_id/sync',
    {
      bodyLimit: SYNC_BODY_MAX,
      schema: { params: SpaceParams, body: SyncBody },
      config: {
        operation: 'mirrors.sync',
        describe: "Push the origin's export lines and checkpoints (its owner); each is verified before anything is stored.",
        refusals: ['SPACE_NOT_FOUND', 'CONTROL_DENIED', 'HISTORY_ROLLBACK'],
      },
    },
    async (req) => {
      const { space_id } = req.params as z.infer<typeof SpaceParams>;
      const body = req.body as z.infer<typeof SyncBody>;
      const caller = req.identity!.peerId;
      const mirror = await mirrorNamed(ctx, space_id);
      // The owner may have handed the SPACE over since the last sync: the origin says who owns it now.
      const facts = await readOrigin(mirror.origin, mirror.name);
      if (facts.spaceId !== mirror.spaceId) {
        throw new SvcError('INVALID_REQUEST', `name: ${mirror.name} at ${mirror.origin} is now another SPACE (${facts.spaceId}); this mirror keeps ${mirror.spaceId}`);
      }
      if (facts.owner !== caller) throw new SvcError('CONTROL_DENIED', `only the SPACE's owner at ${mirror.origin} (${facts.owner}) syncs its mirror`);
      const verified = await verifySync(mirror, ctx.store.mirrors, body.lines, body.checkpoints);
      const stored = await ctx.store.mirrors.applySync(mirror.id, {
        expectHead: verified.expectHead,
        expectLast: verified.expectLast,
        lines: verified.lines,
        checkpoints: verified.checkpoints,
        owner: facts.owner,
        now: ctx.clock(),
      });
      if (!stored) throw new SvcError('BUSY', 'another sync of this mirror was stored meanwhile; read its status and sync again', RACE_RETRY_SECONDS);
      return {
        stored: { lines: verified.lines.length, checkpoints: verified.checkpoints.length },
        already_held: verified.alreadyHeld,
        ...await mirrorStatus((await ctx.store.mirrors.bySpaceId(mirror.spaceId))!, ctx.store.mirrors),
      };
    },
  );

  app.get(
    '/v1/mirrors/:space_id',
    {
      schema: { params: SpaceParams },
      config: { auth: 'opt', limit: 'read', operation: 'mirrors.get', describe: 'A mirror: origin, pinned root, head and last checkpoint.', refusals: ['SPACE_NOT_FOUND', 'READ_DENIED'] },
    },
    async (req) => {
      const { space_id } = req.params as z.infer<typeof SpaceParams>;
      const mirror = await mirrorNamed(ctx, space_id);
      readerOf(mirror, req.identity?.peerId ?? null);
      return await mirrorStatus(mirror, ctx.store.mirrors);
    },
  );

  app.get(
    '/v1/mirrors/:space_id/posts',
    {
      schema: { params: SpaceParams, querystring: PageQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'mirrors.posts',
        describe: "The mirrored posts by cursor; with Accept: application/x-ndjson the origin's export format.",
        refusals: ['SPACE_NOT_FOUND', 'READ_DENIED'],
      },
    },
    async (req, reply) => {
      const { space_id } = req.params as z.infer<typeof SpaceParams>;
      const q = req.query as z.infer<typeof PageQuery>;
      const mirror = await mirrorNamed(ctx, space_id);
      const { inside } = readerOf(mirror, req.identity?.peerId ?? null);
      const after = afterParam(q.after);
      if (wantsExport(req.headers.accept)) {
        const limit = intParam(q.limit, 'limit', 1, EXPORT_LINES_MAX) ?? LINES_DEFAULT;
        const body = await mirrorExport(mirror, ctx.store.mirrors, after, limit, inside);
        return reply.type('application/x-ndjson; charset=utf-8').header('cache-control', 'no-store').send(body);
      }
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? LINES_DEFAULT;
      const rows = await ctx.store.mirrors.lines(mirror.id, after, limit + 1);
      const items = rows.slice(0, limit).map((r) => JSON.parse(lineFor(r.line, inside)) as unknown);
      const hasMore = rows.length > limit;
      const head = (await ctx.store.mirrors.head(mirror.id))?.seq ?? 0;
      const last = rows.slice(0, limit).at(-1)?.seq ?? after;
      return { items, next_after: hasMore ? String(last) : String(Math.max(last, head)), has_more: hasMore, head_seq: String(head), notice: MIRROR_NOTICE };
    },
  );

  app.get(
    '/v1/mirrors/:space_id/checkpoints',
    {
      schema: { params: SpaceParams, querystring: PageQuery },
      config: { auth: 'opt', limit: 'read', operation: 'mirrors.checkpoints', describe: "The origin's checkpoints the mirror holds, oldest first.", refusals: ['SPACE_NOT_FOUND', 'READ_DENIED'] },
    },
    async (req) => {
      const { space_id } = req.params as z.infer<typeof SpaceParams>;
      const q = req.query as z.infer<typeof PageQuery>;
      const mirror = await mirrorNamed(ctx, space_id);
      readerOf(mirror, req.identity?.peerId ?? null);
      const limit = intParam(q.limit, 'limit', 1, PAGE_LIMIT_MAX) ?? CHECKPOINTS_DEFAULT;
      const rows = await ctx.store.mirrors.checkpoints(mirror.id, afterParam(q.after), limit + 1);
      const hasMore = rows.length > limit;
      const items = rows.slice(0, limit).map((c) => JSON.parse(c.served) as unknown);
      return { items, next_after: hasMore ? String(rows[limit - 1]!.last) : null, has_more: hasMore, notice: MIRROR_NOTICE };
    },
  );

  app.get(
    '/v1/mirrors/:space_id/posts/:seq/proof',
    {
      schema: { params: ProofParams },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'mirrors.proof',
        describe: "One mirrored post with its proof block, the origin's covering checkpoint and the Merkle path.",
        refusals: ['SPACE_NOT_FOUND', 'READ_DENIED', 'POST_NOT_FOUND'],
      },
    },
    async (req) => {
      const { space_id, seq } = req.params as z.infer<typeof ProofParams>;
      const mirror = await mirrorNamed(ctx, space_id);
      const { inside } = readerOf(mirror, req.identity?.peerId ?? null);
      if (!/^[1-9][0-9]{0,15}$/.test(seq) || !Number.isSafeInteger(Number(seq))) throw new SvcError('INVALID_REQUEST', 'seq: a position, 1 or more');
      return await mirrorProof(mirror, ctx.store.mirrors, Number(seq), inside);
    },
  );

  app.post(
    '/v1/mirrors/:space_id/posts',
    {
      schema: { params: SpaceParams },
      config: { operation: 'mirrors.append', describe: 'Refused: a mirror is read-only; write at the origin.', refusals: ['SPACE_NOT_FOUND', 'SPACE_CLOSED'] },
    },
    async (req) => {
      const { space_id } = req.params as z.infer<typeof SpaceParams>;
      const mirror = await mirrorNamed(ctx, space_id);
      throw new SvcError('SPACE_CLOSED', `a mirror of ${mirror.name} at ${mirror.origin}: it takes no posts; write there`);
    },
  );
};
