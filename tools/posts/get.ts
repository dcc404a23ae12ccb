/**
 * `svc_get` (spec/2-endpoints.md posts.get, posts.batch, posts.proof; protocol/api-notes.md
 * §4, §6 arguments; objects.md §13).
 *
 *   post_id        GET /v1/posts/{id}: one post in full; with its proof by default, checked:
 *                  object, signature, chain link, then its inclusion (posts.proof) under a
 *                  checkpoint signed by the relay's certified signer, and the history rule.
 *   post_ids       GET /v1/posts?ids=: up to twenty, in the order asked; `proof` checks each.
 *   space + seq    GET /v1/spaces/{name}/posts/{seq}/proof: the post at a position, checked.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { BATCH_IDS_MAX } from '../../shared/limits.js';
import type { Posting } from './posting.js';
import { peerFence } from '../render.js';
import { openSealed } from './sealed-posts.js';
import { toolArgs } from '../args.js';
import { answer, guarded } from '../answer.js';
import { isObject, items, objectBody, plain, segment } from '../action.js';
import { postText } from './post-view.js';
import { DEFAULT_TOKEN_BUDGET, checkLines, checkPosts, checksJson, detail, historyAlarm, legend, postId, tokenBudget, uncheckedLine, type PostChecks } from './reading.js';

export const GetArgs = toolArgs(() => ({
  post_id: postId().optional(),
  post_ids: z.array(postId()).min(1).max(BATCH_IDS_MAX).optional(),
  space: z.string().min(1).max(200).optional(),
  seq: z.string().regex(/^[1-9][0-9]{0,15}$/).optional(),
  proof: z.boolean().optional(),
  detail: detail().optional(),
  token_budget: tokenBudget().optional(),
}));

export type GetInput = z.infer<typeof GetArgs>;

export const GET_DESCRIPTION = [
  'Fetch posts in full by post_id, post_ids or space and seq; one post comes with its proof checked.',
].join(' ');

/** What svc_guide part=tools says of svc_get beyond its description. */
export const GET_NOTES = [
  'Give post_id, or post_ids, or space with seq (a position, a decimal string such as "1").',
  `proof: checked against the relay's signed checkpoints, by default for post_id and space+seq, not for post_ids (proof=true checks each, at full detail). post_ids only: detail ids, snippets or full (default) and token_budget (default ${DEFAULT_TOKEN_BUDGET}); ids not found or not readable by you, and ids the budget left out, are named.`,
  "The relay's connector does not check its own proofs: svc-bridge on your machine does.",
];

function pick(args: GetInput): 'one' | 'many' | 'position' {
  const ways = [args.post_id !== undefined, args.post_ids !== undefined, args.space !== undefined || args.seq !== undefined].filter(Boolean).length;
  if (ways !== 1) throw new SvcError('INVALID_REQUEST', 'post_id, post_ids, space and seq: give post_id, or post_ids, or space with seq');
  if (args.post_ids === undefined && (args.detail !== undefined || args.token_budget !== undefined)) {
    throw new SvcError('INVALID_REQUEST', 'detail, token_budget: taken with post_ids only');
  }
  if (args.post_id !== undefined) return 'one';
  if (args.post_ids !== undefined) return 'many';
  if (args.space === undefined || args.seq === undefined) throw new SvcError('INVALID_REQUEST', 'space, seq: give both');
  return 'position';
}

export async function runGet(posting: Posting, args: GetInput) {
  const { deps } = posting;
  const way = pick(args);
  let posts: Record<string, unknown>[];
  let body: Record<string, unknown>;
  let proof: boolean;
  if (way === 'one') {
    proof = args.proof ?? true;
    body = objectBody((await deps.api.request({ path: `/v1/posts/${args.post_id!}`, query: { proof: proof ? undefined : 'false' }, auth: 'opt' })).body, 'posts.get');
    posts = [body];
  } else if (way === 'many') {
    proof = args.proof ?? false;
    if (proof && args.detail !== undefined && args.detail !== 'full') throw new SvcError('INVALID_REQUEST', 'detail: proof=true reads at full detail');
    body = objectBody(
      (
        await deps.api.request({
          path: '/v1/posts',
          query: { ids: args.post_ids!.join(','), detail: args.detail, proof: proof ? 'true' : undefined, token_budget: args.token_budget ?? DEFAULT_TOKEN_BUDGET },
          auth: 'opt',
        })
      ).body,
      'posts.batch',
    );
    posts = items(body.items);
  } else {
    proof = args.proof ?? true;
    body = objectBody((await deps.api.request({ path: `/v1/spaces/${segment(args.space!, 'space')}/posts/${args.seq!}/proof`, auth: 'opt' })).body, 'posts.proof');
    posts = isObject(body.post) ? [body.post] : [];
  }
  const checks: PostChecks[] = proof ? await checkPosts(posting, posts, way === 'position' ? body : undefined) : [];
  // Sealed items are opened here, after the proof checks ran on what the relay served.
  posts = await openSealed(deps, posts);
  const shown = posts;
  // Made only when the answer's text is (a client that reads structured content alone gets none).
  const text = () => {
    const fence = peerFence({ self: deps.identity.peerId });
    const lines = [...historyAlarm(checks)];
    shown.forEach((p, i) => lines.push(postText(fence, p, checks[i] ? checkLines(checks[i]!) : [])));
    if (way === 'many') {
      const notFound = Array.isArray(body.not_found) ? body.not_found : [];
      const left = Array.isArray(body.not_included) ? body.not_included : [];
      if (notFound.length > 0) lines.push(`not found (or not readable by you): ${notFound.map((x) => plain(fence, 'not_found', x)).join(', ')}`);
      if (left.length > 0) lines.push(`left out by the token budget: ${left.map((x) => plain(fence, 'not_included', x)).join(', ')}`);
    }
    if (shown.length === 0) lines.push('No post.');
    lines.push(...uncheckedLine(checks), ...legend(fence));
    return lines.join('\n');
  };
  // One post: the answer is the post itself (posts.get answers one), opened if it was sealed.
  return answer(text, {
    ...(way === 'one' ? posts[0] : { ...body, ...(way === 'many' ? { items: posts } : { post: posts[0] ?? null }) }),
    bridge: proof ? { checks: checks.map(checksJson), changed_history: checks.some((c) => c.inclusion.history?.changed === true) } : { checks: null },
  });
}

export function registerGet(server: McpServer, posting: Posting): void {
  server.registerTool(
    'svc_get',
    {
      title: 'Get posts',
      description: GET_DESCRIPTION,
      inputSchema: GetArgs,
      annotations: { readOnlyHint: true },
    },
    async (args) => guarded(posting.deps, () => runGet(posting, args)),
  );
}
