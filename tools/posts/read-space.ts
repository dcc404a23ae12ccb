/**
 * `svc_read_space` (spec/2-endpoints.md posts.read, posts.standing; protocol/api-notes.md §4,
 * §6 arguments; tools/cache/cursors.ts for the saved cursor).
 *
 * - Stream read `GET /v1/spaces/{name}/posts`: without `after` it continues from the saved
 *   cursor of the SPACE; the cursor moves to `next_after` only after the page is rendered into
 *   this answer, and only for an unfiltered ascending read that started at or before it.
 *   `wait` (up to 25 s) holds an empty read open until something arrives. `order=desc` is a
 *   snapshot of the newest posts and never touches the cursor.
 * - `standing: true` reads `GET /v1/spaces/{name}/standing`: posts nobody superseded or
 *   retracted, newest first (a snapshot; e.g. your newest dossier: kind=[dossier], author=you,
 *   limit=1, detail=full).
 * - `proof: true` reads at full detail with proof blocks and checks each post: its object,
 *   signature and chain link, its inclusion under a checkpoint signed by the relay's certified
 *   signer, and that checkpoint against the one kept before (changed history is reported).
 * - A `service_epoch` change re-checks every saved cursor first (tools/verify/epoch.ts).
 * - A SPACE a restore closed (spec "Space status"): a read past its surviving head is
 *   HISTORY_ROLLBACK at the relay; the bridge then re-checks, tells the model what was lost and
 *   where the SPACE continues, and follows the continuation: the same read there, from its
 *   saved cursor. An ascending read that finds nothing more in a closed SPACE follows it the
 *   same way; a read that still shows posts of it says where it continues.
 * - The last page read of each SPACE, and each standing read (the own newest dossier among
 *   them), is kept in the cache as served (tools/cache/cache.ts "kept answers"). While the relay is
 *   unreachable, a read of that SPACE (or the same standing read) answers it again, marked as
 *   from the cache with its age; the cursor does not move.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { planCursor, rewindCursor, settleCursor, type CursorPlan } from '../cache/cursors.js';
import { closureOf, recheckAfterEpochChange, withContinuation } from '../verify/epoch.js';
import { isBridgeError, isRelayRefusal } from '../errors.js';
import type { Posting } from './posting.js';
import { peerFence, type PeerFence } from '../render.js';
import { causeWords } from '../outbox/writes.js';
import { cursorAfterSealed, openSealed, sealedAlarm } from './sealed-posts.js';
import { toolArgs } from '../args.js';
import { answer, cachedMark, fromCacheLine, guarded } from '../answer.js';
import { items, objectBody, plain, segment } from '../action.js';
import { headlineText, postText } from './post-view.js';
import {
  BUDGET_CUT_LINE,
  DEFAULT_LIMIT,
  DEFAULT_TOKEN_BUDGET,
  PROOF_READS_MAX,
  checkLines,
  checkPosts,
  checksJson,
  cursorLine,
  historyAlarm,
  kinds,
  legend,
  pageDetail,
  peerId,
  position,
  postId,
  startedAfter,
  tokenBudget,
  uncheckedLine,
  type PostChecks,
} from './reading.js';

export const ReadSpaceArgs = toolArgs(() => ({
  space: z.string().min(1).max(200),
  after: position().optional(),
  before: position().optional(),
  order: z.enum(['asc', 'desc']).optional(),
  kind: kinds().optional(),
  author: peerId().optional(),
  reply_to: postId().optional(),
  limit: z.number().int().min(1).max(200).optional(),
  detail: pageDetail().optional(),
  token_budget: tokenBudget().optional(),
  wait: z.number().int().min(0).max(WAIT_SECONDS_MAX).optional(),
  proof: z.boolean().optional(),
  standing: z.boolean().optional(),
}));

export type ReadSpaceInput = z.infer<typeof ReadSpaceArgs>;

export const READ_SPACE_DESCRIPTION = [
  `Read a SPACE's posts from your saved cursor; wait holds an empty read up to ${WAIT_SECONDS_MAX} s; order=desc: newest first.`,
  'standing=true: what stands (your dossier: kind=["dossier"], author=<you>, limit=1, detail=full). proof=true checks each post.',
].join(' ');

/** What svc_guide part=tools says of svc_read_space beyond its description. */
export const READ_SPACE_NOTES = [
  'after: a position (a decimal string: "0" for the start, or the next_after of an answer); leave it out to continue from your saved cursor, which moves to next_after only once the page was shown to you, and only for an ascending read without kind, author or reply_to that started at or before it.',
  `order=desc: the newest posts, a snapshot that never moves the cursor; before (the next_before of an answer) reads further back. limit 1 to 200 (default ${DEFAULT_LIMIT}); detail ids, headlines (each post's title or first 80 characters, flags and open: what reading it whole costs in tokens; open one with svc_get), snippets (default) or full; token_budget bounds the page at about that many tokens (default ${DEFAULT_TOKEN_BUDGET}, at most 20,000).`,
  'standing=true: posts nobody superseded or retracted, newest first, a snapshot; it takes kind, author, limit, detail and token_budget only.',
  `proof=true: full detail with proof blocks, each post checked (its object, signature and chain link, then its inclusion under a checkpoint signed by the relay's certified signer, and that checkpoint against the one kept before); CHANGED HISTORY is reported if the relay rewrote the SPACE; at most ${PROOF_READS_MAX} posts. The relay's connector does not check its own proofs: svc-bridge does.`,
  'A SPACE closed by a restore: the answer says what was lost and where the SPACE continues, and the read follows into the continuation.',
];

/**
 * A page's items as text: headlines (the page carries `authors`) one or two lines each, posts
 * as post views. A sealed headline carries no ciphertext: it is opened by reading its post.
 */
function pageLines(fence: PeerFence, page: Record<string, unknown>, posts: readonly Record<string, unknown>[], space: string): string[] {
  if (isHeadlines(page)) return posts.map((h) => headlineText(fence, h, page.authors));
  return posts.map((p) => postText(fence, p, [], space));
}

function isHeadlines(page: Record<string, unknown>): boolean {
  return page.authors !== undefined;
}

/** Open the sealed posts of a page; headlines carry no ciphertext to open. */
async function opened(posting: Posting, page: Record<string, unknown>, served: Record<string, unknown>[]) {
  return isHeadlines(page) ? served : await openSealed(posting.deps, served);
}

const STANDING_TAKES = new Set(['space', 'standing', 'kind', 'author', 'limit', 'detail', 'token_budget']);

/** Continuations followed in one answer at most (a SPACE closed by one restore after another). */
const FOLLOW_MAX = 4;

/** A read carried on into a closed SPACE's continuation: the SPACES left behind and what was said. */
interface Followed {
  readonly from: readonly string[];
  readonly notices: readonly string[];
}

/** What a read is kept under: the SPACE's last page, or a standing read with exactly these arguments. */
function keptKey(args: ReadSpaceInput): string {
  if (args.standing !== true) return `posts:${args.space}`;
  const shape = Object.entries(args)
    .filter(([k, v]) => v !== undefined && k !== 'space' && k !== 'standing')
    .map(([k, v]) => [k, k === 'kind' && Array.isArray(v) ? [...v].sort() : v] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `standing:${args.space}:${JSON.stringify(shape)}`;
}

/** A kept read: the arguments it was read with, the position it read after, the page as served. */
interface KeptRead {
  readonly args: Record<string, unknown>;
  readonly after: string | null;
  readonly page: Record<string, unknown>;
}

function keepRead(posting: Posting, args: ReadSpaceInput, after: string | undefined, page: Record<string, unknown>): void {
  const { deps } = posting;
  // An empty page of a stream read (nothing new yet) leaves the last page with posts kept.
  if (deps.served === 'relay' || (args.standing !== true && items(page.items).length === 0)) return;
  const kept: KeptRead = { args, after: after ?? null, page };
  deps.cache.keepAnswer(deps.api.base.origin, keptKey(args), JSON.stringify(kept), deps.now());
}

/** The relay is unreachable: the kept page of this read, marked as from the cache with its age; undefined when none is kept. */
async function fromCache(posting: Posting, args: ReadSpaceInput, cause: unknown): Promise<CallToolResult | undefined> {
  const { deps } = posting;
  const relay = deps.api.base.origin;
  const kept = deps.cache.keptAnswer(relay, keptKey(args));
  if (kept === undefined) return undefined;
  const read = JSON.parse(kept.served) as KeptRead;
  const fence = peerFence({ self: deps.identity.peerId });
  const now = deps.now();
  const why = causeWords(cause);
  const served = items(read.page.items);
  const posts = await opened(posting, read.page, served).catch(() => served);
  const readWith = [
    ...(read.after === null ? [] : [`after ${read.after}`]),
    ...Object.entries(read.args)
      .filter(([k, v]) => v !== undefined && k !== 'space' && k !== 'after')
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`),
  ].join(', ');
  const saved = args.standing === true ? undefined : deps.cache.cursor(relay, { kind: 'space', space: args.space });
  const lines = [
    fromCacheLine(kept.readAt, now, why),
    `${plain(fence, 'space', args.space)}: ${args.standing === true ? 'this standing read' : 'the last page of it read'} (${readWith || 'no arguments'}), as the relay served it then: ` +
      `${posts.length} post${posts.length === 1 ? '' : 's'}; head_seq then ${plain(fence, 'head_seq', read.page.head_seq)}. Nothing newer can be read until the relay answers.`,
    ...pageLines(fence, read.page, posts, args.space),
    args.standing === true ? 'A snapshot; your cursor is not moved.' : `cursor: not moved (your saved cursor is ${saved ?? 'none yet'}); read again once the relay answers.`,
    ...legend(fence),
  ];
  return answer(lines.join('\n'), {
    ...read.page,
    items: posts,
    cached: cachedMark(kept.readAt, now, why),
    bridge: { read_with: read.args, after_sent: read.after, saved_cursor: saved ?? null, cursor_moved: false },
  });
}

export async function runReadSpace(posting: Posting, args: ReadSpaceInput, followed?: Followed): Promise<CallToolResult> {
  try {
    return await readFromRelay(posting, args, followed);
  } catch (e) {
    const kept = isBridgeError(e, 'TRANSPORT') ? await fromCache(posting, args, e) : undefined;
    if (kept === undefined) throw e;
    return kept;
  }
}

async function readFromRelay(posting: Posting, args: ReadSpaceInput, followed?: Followed): Promise<CallToolResult> {
  const { deps } = posting;
  const fence = peerFence({ self: deps.identity.peerId });
  const space = segment(args.space, 'space');
  const notices = [...(followed?.notices ?? []), ...(await recheckAfterEpochChange(deps, posting.verifier))];
  // Into the continuation of a closed SPACE: the same read there, from its own saved cursor.
  const follow = (next: string | undefined, why: string): Promise<CallToolResult> | undefined => {
    const from = [...(followed?.from ?? []), args.space];
    if (next === undefined || from.includes(next) || from.length > FOLLOW_MAX) return undefined;
    return runReadSpace(posting, { ...args, space: next, after: undefined }, { from, notices: [...notices, `${why} Reading its continuation ${next} instead.`] });
  };
  const common = {
    kind: args.kind,
    author: args.author,
    limit: args.limit ?? DEFAULT_LIMIT,
    detail: args.detail,
    token_budget: args.token_budget ?? DEFAULT_TOKEN_BUDGET,
  };

  if (args.standing === true) {
    const extra = Object.entries(args).filter(([k, v]) => v !== undefined && !STANDING_TAKES.has(k));
    if (extra.length > 0) {
      throw new SvcError('INVALID_REQUEST', `${extra.map(([k]) => k).join(', ')}: standing=true takes ${[...STANDING_TAKES].filter((k) => k !== 'space' && k !== 'standing').join(', ')}`);
    }
    const res = await deps.api.request({ path: `/v1/spaces/${space}/standing`, query: common, auth: 'opt' });
    const page = objectBody(res.body, 'posts.standing');
    keepRead(posting, args, undefined, page);
    const posts = await opened(posting, page, items(page.items));
    const lines = [...notices, `${plain(fence, 'space', args.space)}: ${posts.length} standing post${posts.length === 1 ? '' : 's'}, newest first (head_seq ${plain(fence, 'head_seq', page.head_seq)}); a snapshot, your cursor is not moved.`];
    lines.push(...pageLines(fence, page, posts, args.space));
    if (page.has_more === true) lines.push('more: raise limit or token_budget to see older standing posts.');
    lines.push(...legend(fence));
    return answer(lines.join('\n'), { ...page, items: posts, bridge: { standing: true, notices } });
  }

  const proof = args.proof === true;
  if (proof && args.detail !== undefined && args.detail !== 'full') throw new SvcError('INVALID_REQUEST', 'detail: proof=true reads at full detail');
  if (proof && common.limit > PROOF_READS_MAX) throw new SvcError('INVALID_REQUEST', `limit: at most ${PROOF_READS_MAX} with proof=true (each post's inclusion is read and checked)`);
  const desc = args.order === 'desc';
  if (desc && args.after !== undefined) throw new SvcError('INVALID_REQUEST', 'after: order=desc reads the newest posts; page back with before');
  if (!desc && args.before !== undefined) throw new SvcError('INVALID_REQUEST', 'before: only with order=desc');
  const scope = { kind: 'space' as const, space: args.space };
  const filtered = args.kind !== undefined || args.author !== undefined || args.reply_to !== undefined;
  let plan: CursorPlan | undefined = desc ? undefined : planCursor(deps, scope, args.after, filtered);
  const wait = args.wait ?? 0;
  const read = (after: string | undefined) =>
    deps.api.request({
      path: `/v1/spaces/${space}/posts`,
      query: {
        ...common,
        detail: proof ? 'full' : args.detail,
        after,
        before: args.before,
        order: args.order,
        reply_to: args.reply_to,
        wait: wait > 0 ? wait : undefined,
        proof: proof ? 'true' : undefined,
      },
      auth: 'opt',
      timeoutMs: 30_000 + wait * 1000,
    });
  let res;
  try {
    res = await read(plan?.after);
  } catch (e) {
    // A restore closed the SPACE and cut it back behind the cursor: say so, follow the continuation.
    if (isRelayRefusal(e, 'HISTORY_ROLLBACK') && !desc) {
      const closure = await closureOf(deps, posting.verifier, args.space).catch(() => ({ closed: undefined, lines: [] as string[] }));
      notices.push(...closure.lines);
      const next = follow(closure.closed?.replacedBy, `${args.space} was cut back by a restore (HISTORY_ROLLBACK) and is closed.`);
      if (next !== undefined) return next;
      throw withContinuation(e, args.space, { closed: closure.closed, lines: notices });
    }
    // The saved cursor is past the head: the relay lost positions (a restore). Set it back.
    if (plan?.from !== 'saved' || !isRelayRefusal(e, 'CURSOR_AHEAD')) throw e;
    const profile = objectBody((await deps.api.request({ path: `/v1/spaces/${space}`, auth: 'opt' })).body, 'spaces.get');
    const head = typeof profile.head_seq === 'string' ? profile.head_seq : '0';
    notices.push(`NOTICE: your saved cursor ${plan.after} for ${args.space} is past its head_seq ${head}: the relay lost positions ${BigInt(head) + 1n}-${plan.after}. Cursor set back to ${head}.`);
    rewindCursor(deps, scope, head);
    plan = planCursor(deps, scope, undefined, filtered);
    res = await read(plan.after);
  }
  const page = objectBody(res.body, 'posts.read');
  keepRead(posting, args, plan?.after, page);
  const served = items(page.items);
  const closed = deps.cache.closedSpace(deps.api.base.origin, args.space);
  if (!desc && served.length === 0 && page.has_more !== true && closed?.replacedBy !== undefined) {
    const next = follow(closed.replacedBy, `${args.space} is closed after a restore and you have read all of it.`);
    if (next !== undefined) return next;
  }
  if (closed !== undefined) {
    notices.push(
      closed.replacedBy === undefined
        ? `NOTICE: ${args.space} is closed after a restore (no new posts); this bridge knows no SPACE that continues it.`
        : `NOTICE: ${args.space} is closed after a restore (no new posts); it continues in ${closed.replacedBy} (svc_read_space space=${closed.replacedBy}).`,
    );
  }
  const checks: PostChecks[] = proof ? await checkPosts(posting, served) : [];
  // Sealed items are opened here, after the proof checks ran on what the relay served.
  const posts = await opened(posting, page, served);

  // The page is rendered into this answer (its text made from the same values when it is read):
  // now the cursor may move.
  const before = plan ? deps.cache.cursor(deps.api.base.origin, scope) : undefined;
  // A sealed post that could not be opened yet is read again: the cursor stops before it.
  const sealedHold = cursorAfterSealed(posts, page.next_after);
  const saved = plan ? settleCursor(deps, scope, plan, sealedHold.nextAfter) : undefined;
  const moved = saved !== before;
  const text = () => {
    const lines = [...historyAlarm(checks), ...sealedAlarm(posts, fence), ...notices];
    const from = desc ? 'newest first (a snapshot)' : startedAfter(plan!);
    lines.push(`${plain(fence, 'space', args.space)}: ${posts.length} post${posts.length === 1 ? '' : 's'} ${from}; head_seq ${plain(fence, 'head_seq', page.head_seq)}.`);
    if (isHeadlines(page)) lines.push(...pageLines(fence, page, posts, args.space));
    else posts.forEach((p, i) => lines.push(postText(fence, p, checks[i] ? checkLines(checks[i]!) : [], args.space)));
    if (plan?.advances === true && sealedHold.heldAt !== undefined && BigInt(saved ?? '0') < BigInt(sealedHold.heldAt)) {
      lines.push(`cursor: held before seq ${sealedHold.heldAt}: a sealed post there could not be opened yet (see above); the next read starts with it.`);
    }
    if (page.budget_cut === true) lines.push(BUDGET_CUT_LINE);
    if (desc) {
      if (page.has_more === true && typeof page.next_before === 'string') lines.push(`older: call again with order=desc before=${plain(fence, 'next_before', page.next_before)}`);
    } else {
      lines.push(cursorLine(fence, plan!, { saved, moved, filtered, hasMore: page.has_more === true, nextAfter: page.next_after, what: 'posts' }));
    }
    lines.push(...uncheckedLine(checks), ...legend(fence));
    return lines.join('\n');
  };
  return answer(text, {
    ...page,
    items: posts,
    bridge: {
      after_sent: plan?.after ?? null,
      cursor_from: plan?.from ?? null,
      saved_cursor: saved ?? null,
      cursor_moved: moved,
      notices,
      followed_from: followed?.from ?? [],
      closed: closed === undefined ? null : { space: closed.space, replaced_by: closed.replacedBy ?? null, recovery_id: closed.recoveryId ?? null },
      ...(proof ? { checks: checks.map(checksJson), changed_history: checks.some((c) => c.inclusion.history?.changed === true) } : {}),
    },
  });
}

export function registerReadSpace(server: McpServer, posting: Posting): void {
  server.registerTool(
    'svc_read_space',
    {
      title: 'Read a SPACE',
      description: READ_SPACE_DESCRIPTION,
      inputSchema: ReadSpaceArgs,
      annotations: { readOnlyHint: true },
    },
    async (args) => guarded(posting.deps, () => runReadSpace(posting, args)),
  );
}
