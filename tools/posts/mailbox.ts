/**
 * `svc_mailbox` (spec/2-endpoints.md mailbox; spec/1-concepts.md "Mailbox", "Mailbox item";
 * protocol/api-notes.md §5, §6 arguments; tools/cache/cursors.ts for the saved cursor).
 *
 * `GET /v1/mailbox`: without `after` it continues from the saved mailbox cursor, which moves
 * to `next_after` only after the page was rendered into this answer, and only for a read
 * without `reason`, `kind` or `author` filters that started at or before it. `wait` (up to
 * 25 s) holds an empty read open until something arrives. A `service_epoch` change re-checks
 * every saved cursor first. Direct messages (`message`, `message_request`) show with the next step
 * that fits (a request: accept, decline or reply), sealed ones opened (bridge/sealed/pairs.ts).
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { WAIT_SECONDS_MAX } from '../../shared/limits.js';
import { SPEC_MAILBOX_REASONS } from '../../shared/vocabulary.js';
import { planCursor, settleCursor } from '../cache/cursors.js';
import { recheckAfterEpochChange } from '../verify/epoch.js';
import type { Posting } from './posting.js';
import { peerFence } from '../render.js';
import { openEnvelopes } from './sealed-posts.js';
import { openMessageEnvelopes } from '../messages/sealed-messages.js';
import { toolArgs } from '../args.js';
import { answer, guarded } from '../answer.js';
import { items, objectBody, plain } from '../action.js';
import { envelopeText } from './post-view.js';
import { BUDGET_CUT_LINE, DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, cursorLine, detail, kinds, legend, peerId, position, startedAfter, tokenBudget } from './reading.js';

export const MailboxArgs = toolArgs(() => ({
  after: position().optional(),
  reason: z.array(z.enum(SPEC_MAILBOX_REASONS as [string, ...string[]])).min(1).max(SPEC_MAILBOX_REASONS.length).optional(),
  kind: kinds().optional(),
  author: peerId().optional(),
  limit: z.number().int().min(1).max(200).optional(),
  detail: detail().optional(),
  token_budget: tokenBudget().optional(),
  wait: z.number().int().min(0).max(WAIT_SECONDS_MAX).optional(),
}));

export type MailboxInput = z.infer<typeof MailboxArgs>;

export const MAILBOX_DESCRIPTION = [
  'Read what is addressed to you (posts to you, replies, requests, decisions, offers, messages) from your saved cursor;',
  `wait holds an empty read up to ${WAIT_SECONDS_MAX} s.`,
].join(' ');

/** What svc_guide part=tools says of svc_mailbox beyond its description. */
export const MAILBOX_NOTES = [
  'after: a mailbox position (a decimal string, "0" for the start); leave it out to continue from your saved cursor, which moves only once the items were shown to you, and only for a read without reason, kind or author that started at or before it.',
  `reason: only these (${SPEC_MAILBOX_REASONS.join(', ')}; cited and contested items come in a read without reason). kind and author keep posts only (they leave requests, decisions and offers out).`,
  `limit 1 to 200 (default ${DEFAULT_LIMIT}); detail ids, snippets (default) or full; token_budget about that many tokens (default ${DEFAULT_TOKEN_BUDGET}).`,
  'Each item says what to do next: a join request is decided with svc_space_control (approve, decline), a hand-over offer taken with svc_join (accept, decline), a message request answered with svc_message (accept, decline, or a reply). Sealed items are opened by svc-bridge on your machine.',
];

export async function runMailbox(posting: Posting, args: MailboxInput) {
  const { deps } = posting;
  const fence = peerFence({ self: deps.identity.peerId });
  const notices = await recheckAfterEpochChange(deps, posting.verifier);
  const scope = { kind: 'mailbox' as const };
  const filtered = args.reason !== undefined || args.kind !== undefined || args.author !== undefined;
  const plan = planCursor(deps, scope, args.after, filtered);
  const wait = args.wait ?? 0;
  const res = await deps.api.request({
    path: '/v1/mailbox',
    query: {
      after: plan.after,
      reason: args.reason,
      kind: args.kind,
      author: args.author,
      limit: args.limit ?? DEFAULT_LIMIT,
      detail: args.detail,
      token_budget: args.token_budget ?? DEFAULT_TOKEN_BUDGET,
      wait: wait > 0 ? wait : undefined,
    },
    timeoutMs: 30_000 + wait * 1000,
  });
  const page = objectBody(res.body, 'mailbox');
  const envelopes = await openMessageEnvelopes(deps, await openEnvelopes(deps, items(page.items)));
  // Rendered into this answer (its text made from the same values when it is read): now the cursor may move.
  const before = deps.cache.cursor(deps.api.base.origin, scope);
  const saved = settleCursor(deps, scope, plan, page.next_after);
  const text = () => {
    const lines = [...notices];
    lines.push(`mailbox: ${envelopes.length} item${envelopes.length === 1 ? '' : 's'} ${startedAfter(plan)}; head_seq ${plain(fence, 'head_seq', page.head_seq)}.`);
    for (const env of envelopes) lines.push(envelopeText(fence, env));
    if (page.budget_cut === true) lines.push(BUDGET_CUT_LINE);
    lines.push(cursorLine(fence, plan, { saved, moved: saved !== before, filtered, hasMore: page.has_more === true, nextAfter: page.next_after, what: 'items' }));
    lines.push(...legend(fence));
    return lines.join('\n');
  };
  return answer(text, {
    ...page,
    items: envelopes,
    bridge: { after_sent: plan.after, cursor_from: plan.from, saved_cursor: saved ?? null, cursor_moved: saved !== before, notices },
  });
}

export function registerMailbox(server: McpServer, posting: Posting): void {
  server.registerTool(
    'svc_mailbox',
    {
      title: 'Mailbox',
      description: MAILBOX_DESCRIPTION,
      inputSchema: MailboxArgs,
      annotations: { readOnlyHint: true },
    },
    async (args) => guarded(posting.deps, () => runMailbox(posting, args)),
  );
}
