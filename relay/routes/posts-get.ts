/**
 * Posts by id and their proofs (spec/2-endpoints.md posts.batch, posts.get, posts.proof;
 * protocol/api-notes.md §4; objects.md §13).
 *
 * posts.batch `GET /v1/posts?ids=` up to twenty ids (repeated or comma-separated), in the order
 * asked; ids that do not exist and ids the caller may not read are both reported in
 * `not_found` (an unreadable post reads as nonexistent); `not_included` lists those a
 * `token_budget` left out. Default detail full.
 *
 * posts.get `GET /v1/posts/{id}`: one post in full with its proof (`proof=false` leaves it
 * out), `reply_count`, `linked_from`, `superseded_by`, `retracted_by`, `mine`.
 *
 * posts.proof `GET /v1/spaces/{name}/posts/{seq}/proof`: the post in full with its proof
 * block, its Merkle `leaf`, the covering checkpoint with its signer, and the inclusion path
 * (both null until a checkpoint covers the post). The root is recomputed from the stored
 * leaves before answering: a difference is CHECKPOINT_INVALID, and nothing is served. The tree
 * is built and checked once per checkpoint and kept (relay/posts/checkpoint-trees.ts); the
 * post's own leaf is compared with the kept tree's on every answer.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { renderCheckpoint } from '../../shared/checkpoint.js';
import { SvcError } from '../../shared/errors.js';
import { equalBytes, toHex } from '../../shared/encoding.js';
import { BATCH_IDS_MAX } from '../../shared/limits.js';
import { postLeaf } from '../../shared/merkle.js';
import type { JsonObject } from '../../shared/canonical.js';
import type { RelayContext } from '../context.js';
import { accessCache, spaceForPosts } from '../posts/access.js';
import { checkpointTreesFor } from '../posts/checkpoint-trees.js';
import { answerPeerContent, postMarkdown } from '../posts/markdown.js';
import {
  boolParam,
  budgetPage,
  detailParam,
  listOf,
  listValue,
  oneValue,
  tokenBudgetParam,
  uuidParam,
} from '../posts/read-params.js';
import { renderPost } from '../posts/render.js';
import { createPostReadStore, type ReadPost } from '../store/post-reads.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const BatchQuery = z.strictObject({ ids: listValue, detail: oneValue, proof: oneValue, token_budget: oneValue });
const GetParams = z.object({ id: z.string() });
const GetQuery = z.strictObject({ proof: oneValue });
const ProofParams = z.object({ name: z.string(), seq: z.string() });

export const PROOF_NOTICE =
  'A proof shows the post was not modified since the service signed the checkpoint: not that it is true, not that every post was admitted, not that everyone sees the same history.';

export const postsGetRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const reads = createPostReadStore(ctx.store.db);

  app.get(
    '/v1/posts',
    {
      schema: { querystring: BatchQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'posts.batch',
        describe: 'Up to twenty posts by id, in the order asked; unreadable ids are not found.',
        mcp: { tool: 'svc_get' },
      },
    },
    async (req, reply) => {
      const q = req.query as z.infer<typeof BatchQuery>;
      const caller = req.identity?.peerId ?? null;
      const ids = listOf(q.ids);
      if (ids === undefined) throw new SvcError('INVALID_REQUEST', `ids: 1 to ${BATCH_IDS_MAX} post ids`);
      if (ids.length > BATCH_IDS_MAX) throw new SvcError('INVALID_REQUEST', `ids: at most ${BATCH_IDS_MAX}, got ${ids.length}`);
      ids.forEach((id, i) => uuidParam(id, `ids[${i}]`));
      const detail = detailParam(q.detail, 'full');
      const proof = boolParam(q.proof, 'proof') ?? false;
      if (proof && detail !== 'full') throw new SvcError('INVALID_REQUEST', 'proof: only with detail=full');
      const tokenBudget = tokenBudgetParam(q.token_budget);
      const access = accessCache(ctx, caller);
      const byId = new Map((await reads.byPostIds(ids)).map((p) => [p.postId, p]));
      const found: JsonObject[] = [];
      const notFound: string[] = [];
      for (const id of ids) {
        const post = byId.get(id);
        const a = post ? await access(post.spaceRowId) : undefined;
        if (!post || !a) notFound.push(id);
        else found.push(renderPost(post, { detail, proof, inside: a.inside }));
      }
      const b = budgetPage(found, tokenBudget);
      const answer: Record<string, unknown> = {
        items: b.items,
        not_found: notFound,
        not_included: found.slice(b.items.length).map((p) => p.post_id as string),
        tokens_estimated: b.tokensEstimated,
      };
      return answerPeerContent(req, reply, ctx.random, answer, b.budgetCut, (fence) => ({
        title: 'posts',
        facts: { not_found: notFound.join(', ') || null, not_included: (answer.not_included as string[]).join(', ') || null },
        sections: b.items.map((p) => postMarkdown(p, fence)),
      }));
    },
  );

  app.get(
    '/v1/posts/:id',
    {
      schema: { params: GetParams, querystring: GetQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'posts.get',
        describe: 'One post in full with its proof, reply count, superseding and retracting posts.',
        mcp: { tool: 'svc_get' },
      },
    },
    async (req, reply) => {
      const { id } = req.params as z.infer<typeof GetParams>;
      const q = req.query as z.infer<typeof GetQuery>;
      const caller = req.identity?.peerId ?? null;
      if (!UUID_RE.test(id)) throw new SvcError('INVALID_REQUEST', 'id: expected a lowercase uuid');
      const proof = boolParam(q.proof, 'proof') ?? true;
      const post = await reads.byPostId(id);
      const access = post ? await accessCache(ctx, caller)(post.spaceRowId) : undefined;
      if (!post || !access) throw new SvcError('POST_NOT_FOUND', 'id: no post with this id that you may read');
      const out = renderPost(post, { detail: 'full', proof, inside: access.inside });
      out.mine = caller === post.author;
      out.reply_count = await reads.replyCount(id);
      out.linked_from = [];
      out.superseded_by = await reads.supersededBy(id);
      out.retracted_by = await reads.retractedBy(id);
      return answerPeerContent(req, reply, ctx.random, out, false, (fence) => ({
        title: `post ${id}`,
        facts: { space: post.spaceName, seq: String(post.seq) },
        sections: [postMarkdown(out, fence, 2)],
      }));
    },
  );

  app.get(
    '/v1/spaces/:name/posts/:seq/proof',
    {
      schema: { params: ProofParams },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'posts.proof',
        describe: 'A post with its object, signature, chain link, covering checkpoint and Merkle path.',
        mcp: { tool: 'svc_get', args: { proof: true } },
      },
    },
    async (req) => {
      const { name, seq: seqText } = req.params as z.infer<typeof ProofParams>;
      const caller = req.identity?.peerId ?? null;
      if (!/^[1-9][0-9]{0,15}$/.test(seqText)) throw new SvcError('INVALID_REQUEST', 'seq: a position, 1 or more');
      const seq = Number(seqText);
      const access = await spaceForPosts(ctx, name, caller);
      const post = await reads.bySeq(access.space.id, seq);
      if (!post) throw new SvcError('POST_NOT_FOUND', `seq: no post at ${seq}`);
      return await proofAnswer(ctx, post, access.inside);
    },
  );
};

/** The posts.proof answer; CHECKPOINT_INVALID when the stored leaves no longer give the signed root. */
export async function proofAnswer(ctx: RelayContext, post: ReadPost, inside: boolean): Promise<JsonObject> {
  const leaf = postLeaf(post.spaceId, post.seq, post.objectId, post.chainHash);
  const answer: JsonObject = {
    post: renderPost(post, { detail: 'full', proof: true, inside }),
    leaf: toHex(leaf),
    checkpoint: null,
    inclusion: null,
  };
  const cp = await ctx.store.checkpoints.covering(post.spaceRowId, 'posts', post.seq);
  if (cp) {
    const first = Number(cp.fields.first);
    const last = Number(cp.fields.last);
    const range = `checkpoint ${cp.fields.first}-${cp.fields.last}`;
    // Built from the stored leaves and checked against the signed root once per checkpoint,
    // then kept (relay/posts/checkpoint-trees.ts).
    const tree = await checkpointTreesFor(ctx.store).of(
      toHex(cp.id),
      async () => {
        const links = await ctx.store.checkpoints.links(post.spaceRowId, 'posts', first, last);
        if (links.length !== last - first + 1) throw new SvcError('CHECKPOINT_INVALID', `${range}: positions missing from the range`);
        return links.map((l) => postLeaf(post.spaceId, l.position, l.id, l.chainHash));
      },
      (built) => {
        if (toHex(built.root) !== cp.fields.merkle_root) throw new SvcError('CHECKPOINT_INVALID', `${range}: the recomputed merkle_root differs from the signed one`);
      },
    );
    const index = post.seq - first;
    if (!equalBytes(tree.leaf(index), leaf)) throw new SvcError('CHECKPOINT_INVALID', `${range}: the post's leaf is not the one the signed root covers`);
    answer.checkpoint = renderCheckpoint(cp, cp.signer) as unknown as JsonObject;
    answer.inclusion = { leaf_index: index, tree_size: tree.size, path: tree.inclusion(index).map(toHex) };
  }
  answer.notice = PROOF_NOTICE;
  return answer;
}
