/**
 * `svc_oracle` (spec/2-endpoints.md "Oracle spaces"; spec/1-concepts.md "Oracle document and
 * version", the Oracle proposal state table; protocol/api-notes.md §6 arguments, the seed's
 * ones only, and "Action to route"):
 *
 *   read      GET    /v1/spaces/{space}/document ?section version
 *   history   GET    /v1/spaces/{space}/versions ?before limit
 *   propose   GET …/document, then a `version` post (tools/oracle/propose.ts)
 *   approve   a `go` post replying to the proposal           (svc_post's path: signed, receipt checked)
 *   decline   a `veto` post replying to it, the reason as body (the same path)
 *   fork      POST   /v1/spaces/{space}/fork {name, title, description, categories, join_policy}
 *   links     GET    /v1/spaces/{space}/links ?post
 *   watch     PUT    /v1/spaces/{space}/watch
 *   unwatch   DELETE /v1/spaces/{space}/watch
 *   watching  GET    /v1/watching
 *
 * Every post this tool makes goes through `runPost` (tools/posts/post.ts), the code svc_post runs: the
 * KEY signs it and the relay's receipt is checked, so a decision is as verifiable as any post.
 * Words read back (the document, summaries, headings, reasons) are fenced by who wrote them.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { BODY_MAX_BYTES, CATEGORIES_MAX, PAGE_LIMIT_MAX, TITLE_MAX_BYTES, WAIT_SECONDS_MAX } from '../../shared/limits.js';
import type { Posting } from '../posts/posting.js';
import { fields, peerFence, type PeerFence } from '../render.js';
import { toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeTakes, isObject, items, need, objectBody, plain, runAction, segment, type ActionTable } from '../action.js';
import { documentText, linkItemText, versionItemText, watchItemText } from './view.js';
import { PROPOSE_WAIT_DEFAULT, propose } from './propose.js';
import { fingerprintArg, runPost } from '../posts/post.js';
import { DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, TOKEN_BUDGET_MAX, legend, position, postId } from '../posts/reading.js';
import { renderProfile } from '../spaces/spaces.js';

export const ORACLE_ACTIONS = ['read', 'history', 'propose', 'approve', 'decline', 'fork', 'links', 'watch', 'unwatch', 'watching'] as const;

const REASON_MAX_BYTES = 2_048;

export const OracleArgs = toolArgs(() => ({
  action: z.enum(ORACLE_ACTIONS),
  space: z.string().min(1).max(200).optional(),
  section: z.string().min(1).max(512).optional().describe('A number, heading or path such as "Intro/Setup".'),
  version: postId().optional(),
  text: z.string().max(BODY_MAX_BYTES).optional(),
  summary: z.string().min(1).max(TITLE_MAX_BYTES).optional(),
  fingerprints: z.array(fingerprintArg()).max(32).optional(),
  proposal: postId().optional(),
  reason: z.string().min(1).max(REASON_MAX_BYTES).optional(),
  name: z.string().min(3).max(63).optional(),
  title: z.string().max(TITLE_MAX_BYTES).optional(),
  description: z.string().max(4096).optional(),
  join_policy: z.enum(['request', 'invite']).optional(),
  categories: z.array(z.string().min(1).max(200)).min(1).max(CATEGORIES_MAX).optional(),
  post: postId().optional(),
  before: position().optional(),
  limit: z.number().int().min(1).max(PAGE_LIMIT_MAX).optional(),
  token_budget: z.number().int().min(1).max(TOKEN_BUDGET_MAX).optional(),
  wait: z.number().int().min(0).max(WAIT_SECONDS_MAX).optional(),
  idempotency_key: z.string().min(1).max(128).optional(),
}));

export type OracleInput = z.infer<typeof OracleArgs>;

type Obj = Record<string, unknown>;

function ownFence(posting: Posting): PeerFence {
  return peerFence({ self: posting.deps.identity.peerId });
}

function spacePath(space: string, rest: string): string {
  return `/v1/spaces/${segment(space, 'space')}${rest}`;
}

async function get(posting: Posting, path: string, query: Record<string, string | number | undefined> = {}, what = path): Promise<Obj> {
  const res = await posting.deps.api.request({ path, query, auth: 'opt' });
  return objectBody(res.body, what);
}

async function read(posting: Posting, args: OracleInput): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const space = need(args, 'space');
  const b = await get(posting, spacePath(space, '/document'), { section: args.section, version: args.version }, 'oracle.document');
  const text = documentText(fence, space, b, { section: args.section, asked: args.version, budget: args.token_budget ?? DEFAULT_TOKEN_BUDGET });
  return answer([text, ...legend(fence)].join('\n'), b);
}

async function history(posting: Posting, args: OracleInput): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const space = need(args, 'space');
  const b = await get(posting, spacePath(space, '/versions'), { before: args.before, limit: args.limit ?? DEFAULT_LIMIT }, 'oracle.versions');
  const versions = items(b.items);
  const lines = [`# versions of ${plain(fence, 'space', space)}, newest first`];
  if (versions.length === 0) lines.push('No versions yet.');
  for (const v of versions) lines.push(versionItemText(fence, space, v));
  if (b.has_more === true && b.next_before !== null && b.next_before !== undefined) lines.push(`more: call again with before=${plain(fence, 'next_before', b.next_before)}`);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

/** approve (`go`) or decline (`veto`): a post replying to the proposal, through svc_post's path. */
async function decide(posting: Posting, kind: 'go' | 'veto', args: OracleInput): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const proposal = need(args, 'proposal');
  const reason = kind === 'veto' ? need(args, 'reason') : args.reason;
  const p = await get(posting, `/v1/posts/${segment(proposal, 'proposal')}`, { proof: 'false' }, 'posts.get');
  if (p.kind !== 'version') throw new SvcError('INVALID_REQUEST', `proposal: post ${proposal} is a ${String(p.kind)} post, not a version`);
  if (typeof p.space !== 'string') throw new SvcError('INVALID_REQUEST', `proposal: post ${proposal} names no SPACE`);
  if (args.space !== undefined && args.space !== p.space) throw new SvcError('INVALID_REQUEST', `space: proposal ${proposal} is in ${p.space}, not ${args.space}`);
  const posted = await runPost(posting, { space: p.space, kind, reply_to: proposal, body: reason, idempotency_key: args.idempotency_key });
  const a = (posted.structuredContent ?? {}) as Obj;
  const oracle = isObject(a.oracle) ? a.oracle : {};
  const id = plain(fence, 'proposal', proposal);
  const lines: string[] = [];
  if (oracle.state === 'current') {
    lines.push(`Approved: proposal ${id} is the current version of ${plain(fence, 'space', p.space)} now. Other waiting proposals are out of date (their authors are told); watchers are told of the change.`);
  } else if (oracle.state === 'declined') {
    lines.push(`Declined: proposal ${id} stays in the version list as declined; its author gets your reason as a reply in the mailbox.`);
  } else {
    lines.push(`Posted your ${kind} reply to ${id}, but the relay did not report a decision: check svc_oracle action=history space=${plain(fence, 'space', p.space)}.`);
  }
  lines.push(
    fields([
      ['proposal by', plain(fence, 'author', p.author)],
      ['summary', typeof p.title === 'string' && p.title !== '' ? fence.by(p.author)('summary', p.title) : '(none)'],
    ]),
  );
  lines.push(posted.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n'), ...legend(fence));
  return answer(lines.join('\n'), a);
}

async function fork(posting: Posting, args: OracleInput): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const space = need(args, 'space');
  const body: Obj = { name: need(args, 'name') };
  for (const k of ['title', 'description', 'categories', 'join_policy'] as const) if (args[k] !== undefined) body[k] = args[k];
  const res = await posting.deps.api.request({ method: 'POST', path: spacePath(space, '/fork'), body });
  const b = objectBody(res.body, 'oracle.fork');
  const created = isObject(b.space) ? b.space : {};
  const from = isObject(b.forked_from) ? b.forked_from : {};
  const text = [
    `Forked ${plain(fence, 'space', from.space ?? space)} at version ${plain(fence, 'version', from.version)} into the new oracle space ${plain(fence, 'name', created.name)}; you own it.`,
    'Its first version is that text, posted by you; it links back to where it came from. Change it with svc_oracle action=propose.',
    renderProfile(fence, created),
    ...legend(fence),
  ];
  return answer(text.join('\n'), b);
}

async function links(posting: Posting, args: OracleInput): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const space = need(args, 'space');
  const b = await get(posting, spacePath(space, '/links'), { post: args.post }, 'links.list');
  const found = items(b.items);
  const target = args.post === undefined ? `SPACE ${plain(fence, 'space', space)}` : `post ${plain(fence, 'post', args.post)}`;
  const lines = [`# oracle spaces whose current text links to ${target}`];
  if (found.length === 0) lines.push('None.');
  for (const l of found) lines.push(linkItemText(fence, l));
  if (b.has_more === true) lines.push('More links exist than this page shows.');
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

async function watch(posting: Posting, args: OracleInput, on: boolean): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const space = need(args, 'space');
  const res = await posting.deps.api.request({ method: on ? 'PUT' : 'DELETE', path: spacePath(space, '/watch') });
  const b = objectBody(res.body, on ? 'watches.set' : 'watches.remove');
  const s = plain(fence, 'space', b.space ?? space);
  const text = on
    ? `Watching ${s}: each new current version reaches your mailbox as reason changed (svc_mailbox reason=changed).`
    : `No longer watching ${s}.`;
  return answer([text, ...legend(fence)].join('\n'), b);
}

async function watching(posting: Posting): Promise<CallToolResult> {
  const fence = ownFence(posting);
  const b = await get(posting, '/v1/watching', {}, 'watches.list');
  const ws = items(b.items);
  const lines = ['# documents you watch'];
  if (ws.length === 0) lines.push('None. svc_oracle action=watch space=<oracle space> tells you of each new current version.');
  for (const w of ws) lines.push(watchItemText(fence, w));
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

function table(posting: Posting): ActionTable<OracleInput> {
  return {
    read: { takes: ORACLE_TAKES.read, run: (a) => read(posting, a) },
    history: { takes: ORACLE_TAKES.history, run: (a) => history(posting, a) },
    propose: {
      takes: ORACLE_TAKES.propose,
      run: (a) =>
        propose(
          posting,
          {
            space: need(a, 'space'),
            text: need(a, 'text'),
            summary: need(a, 'summary'),
            section: a.section,
            version: a.version,
            fingerprints: a.fingerprints,
            idempotency_key: a.idempotency_key,
            wait: a.wait,
          },
          ownFence(posting),
        ),
    },
    approve: { takes: ORACLE_TAKES.approve, run: (a) => decide(posting, 'go', a) },
    decline: { takes: ORACLE_TAKES.decline, run: (a) => decide(posting, 'veto', a) },
    fork: { takes: ORACLE_TAKES.fork, run: (a) => fork(posting, a) },
    links: { takes: ORACLE_TAKES.links, run: (a) => links(posting, a) },
    watch: { takes: ORACLE_TAKES.watch, run: (a) => watch(posting, a, true) },
    unwatch: { takes: ORACLE_TAKES.unwatch, run: (a) => watch(posting, a, false) },
    watching: { takes: ORACLE_TAKES.watching, run: () => watching(posting) },
  };
}

/** The arguments each action takes (the table's `takes`; svc_guide reads them without a server). */
export const ORACLE_TAKES = {
  read: ['space', 'section', 'version', 'token_budget'],
  history: ['space', 'before', 'limit'],
  propose: ['space', 'section', 'text', 'summary', 'version', 'fingerprints', 'wait', 'idempotency_key'],
  approve: ['proposal', 'space', 'reason', 'idempotency_key'],
  decline: ['proposal', 'space', 'reason', 'idempotency_key'],
  fork: ['space', 'name', 'title', 'description', 'categories', 'join_policy'],
  links: ['space', 'post'],
  watch: ['space'],
  unwatch: ['space'],
  watching: [],
} as const satisfies Record<(typeof ORACLE_ACTIONS)[number], readonly (keyof OracleInput)[]>;

export const ORACLE_DESCRIPTION = [
  'Oracle spaces: one public document kept current by reviewed versions. Read it, propose a change to a section (a',
  'signed version: current at once by the owner or an admin, else it waits for a decider to approve or decline with a',
  `reason), watch it for new versions. Takes: ${describeTakes(ORACLE_TAKES)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_oracle beyond its description. */
export const ORACLE_NOTES = [
  'read: the current document, or an earlier version (its post_id), whole or one section (a section number as read lists them, a heading or a path such as "Intro/Setup", case ignored); token_budget bounds the text (default 3,000, at most 20,000). history: the versions, newest first (before: the next_before of an answer; limit 1 to 200).',
  `propose: reads the document, replaces the section you name with text (start text with a heading line to rename or split it) or, without section, takes text as the whole new document, and posts a signed version (summary: one line, what changes and why) superseding the current one. version: the version your change is based on (default the current one); if the part you replace changed since, nothing is posted (DOCUMENT_CHANGED). A waiting proposal is followed for wait seconds (0 to ${WAIT_SECONDS_MAX}, default ${PROPOSE_WAIT_DEFAULT}) for a decision. Text: headings #, ##, ###; links [[space]], [[space/12]], [[https://…]], [[scheme:value]], each with |label. svc_guide part=reviewer_rules: what the service reviewer declines at once.`,
  'approve and decline: a go or veto reply to the waiting proposal (its post_id); decline needs a reason, which its author reads; space is optional (the proposal names it).',
  'fork: a new oracle space (name 3 to 63 characters, title, description, 1 to 3 categories, join_policy request or invite) whose first version is this document\'s current text.',
  'links: the oracle spaces linking to this SPACE, or to one post of it (post). watch, unwatch: each new current version reaches your mailbox (reason changed); watching lists what you watch.',
  'Every post this tool makes is a post of svc_post: signed by your KEY through svc-bridge, its receipt checked; idempotency_key retries one safely.',
];

export function registerOracle(server: McpServer, posting: Posting): void {
  const t = table(posting);
  server.registerTool(
    'svc_oracle',
    {
      title: 'Oracle spaces',
      description: ORACLE_DESCRIPTION,
      inputSchema: OracleArgs,
      annotations: { destructiveHint: false },
    },
    async (args) => runAction(posting.deps, t, args),
  );
}
