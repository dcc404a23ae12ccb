/**
 * `svc_task` (spec/2-endpoints.md "Tasks"; spec/1-concepts.md "Task", the Task state table;
 * protocol/api-notes.md §6 arguments, the seed's ones only):
 *
 *   list      GET  /v1/spaces/{space}/tasks ?state tag before limit
 *   add       POST /v1/spaces/{space}/tasks              {title, body, tag?, after?}
 *   next      POST /v1/spaces/{space}/tasks/next         {tag?, verify?}
 *   done      POST /v1/spaces/{space}/tasks/{n}/done     {post_id}
 *   release   POST /v1/spaces/{space}/tasks/{n}/release  {}
 *   confirm   POST /v1/spaces/{space}/tasks/{n}/confirm  {post_id?, attempt?}
 *   reject    POST /v1/spaces/{space}/tasks/{n}/reject   {reason, attempt?}
 *   get       GET  /v1/spaces/{space}/tasks/{n}          ?history before limit
 *   change    POST /v1/spaces/{space}/tasks/{n}/change   {revision, reason, title?, body?, tag?, after?}
 *   retire    POST /v1/spaces/{space}/tasks/{n}/retire   {reason}
 *
 * (`done` passes `revision` too, once the words changed; `tag: null` and `after: []` in a
 * change clear them. get, change and retire came after API 0.1, as the public service has them,
 * and so did numbered attempts: `add` passes `numbered_attempts`, confirm and reject `attempt`.)
 *
 * Every answer says what to do next (tools/tasks/task-view.ts): a task handed out is worked,
 * its result posted with svc_post, then marked done with that post; a task to check is
 * confirmed or rejected; no task says why.
 *
 * A task is a row at the relay, not a post: in a sealed SPACE its words are NOT sealed
 * (spec "Task"). `add` there is refused unless the agent passes `plain_words: true`, so words
 * meant for the SPACE's members only never reach the relay in the clear by mistake; the refusal
 * and the answer say so. The relay decides who may do what (TASK_DENIED and the other codes).
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { PAGE_LIMIT_MAX, TASK_BATCH_MAX, TASK_LIMITS, TITLE_MAX_BYTES } from '../../shared/limits.js';
import type { BridgeDeps } from '../deps.js';
import { BridgeError } from '../errors.js';
import { peerFence, type PeerFence } from '../render.js';
import { toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeActions, isObject, items, need, objectBody, plain, runAction, segment, type ActionContext, type ActionTable } from '../action.js';
import { legend, postId } from '../posts/reading.js';
import { noTaskText, taskText } from './task-view.js';

export const TASK_ACTIONS = ['list', 'add', 'next', 'done', 'release', 'confirm', 'reject', 'get', 'change', 'retire'] as const;
export const TASK_STATES = ['open', 'held', 'done', 'accepted', 'retired'] as const;

/** Limits of a task's words (the task routes: title 1..512 bytes, body up to 16 KiB, reason 1..2048 bytes, tag 1..64). */
const TASK_BODY_MAX_BYTES = 16_384;
const TASK_REASON_MAX_BYTES = 2_048;
const TAG_RE = /^[a-z0-9_.-]{1,64}$/;
/** A tag, or "" (change: no tag any more; anywhere else the same as sending none). */
const TAG_OR_NONE_RE = /^([a-z0-9_.-]{1,64})?$/;

const taskNumber = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const TaskArgs = toolArgs(() => ({
  action: z.enum(TASK_ACTIONS),
  space: z.string().min(1).max(200),
  number: taskNumber.optional(),
  title: z.string().min(1).max(TITLE_MAX_BYTES).optional(),
  body: z.string().max(TASK_BODY_MAX_BYTES).optional(),
  tag: z.string().regex(TAG_OR_NONE_RE, 'a tag: 1 to 64 of a-z, 0-9, _ . -').optional().describe('change: "" clears it.'),
  after: z.array(taskNumber).max(TASK_LIMITS.after).optional().describe('Task numbers accepted first (change: [] clears).'),
  revision: taskNumber.optional().describe('change: the revision you read; done: the revision your result answers.'),
  history: z.boolean().optional(),
  verify: z.boolean().optional(),
  post_id: postId().optional(),
  reason: z.string().min(1).max(TASK_REASON_MAX_BYTES).optional(),
  state: z.enum(TASK_STATES).optional(),
  before: taskNumber.optional(),
  limit: z.number().int().min(1).max(PAGE_LIMIT_MAX).optional(),
  detail: z.enum(['compact', 'full']).optional(),
  plain_words: z.boolean().optional().describe('add in a sealed SPACE: task words are not sealed.'),
  numbered_attempts: z.boolean().optional().describe('add: any writer may mark it done, each done a numbered attempt.'),
  attempt: taskNumber.optional().describe('confirm, reject: the attempt checked.'),
  // add: up to 20 tasks at once, each added and answered on its own (tasks.add's batch).
  tasks: z
    .array(z.strictObject({ title: z.string().min(1).max(TITLE_MAX_BYTES), body: z.string().max(TASK_BODY_MAX_BYTES).optional(), tag: z.string().regex(TAG_RE, 'a tag: 1 to 64 of a-z, 0-9, _ . -').optional(), after: z.array(taskNumber).min(1).max(TASK_LIMITS.after).optional(), numbered_attempts: z.boolean().optional() }))
    .min(1)
    .max(TASK_BATCH_MAX)
    .optional(),
}));

export type TaskInput = z.infer<typeof TaskArgs>;

type Obj = Record<string, unknown>;

function ownFence(deps: BridgeDeps): PeerFence {
  return peerFence({ self: deps.identity.peerId });
}

function tasksPath(space: string, rest = ''): string {
  return `/v1/spaces/${segment(space, 'space')}/tasks${rest}`;
}

async function post(deps: BridgeDeps, path: string, body: Obj): Promise<Obj> {
  const res = await deps.api.request({ method: 'POST', path, body });
  return objectBody(res.body, `POST ${path}`);
}

/** The task of an answer (`{task}`); anything else is a broken relay. */
function taskOf(b: Obj, what: string): Obj {
  if (!isObject(b.task)) {
    throw new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${what} has no task`, 'Check that SVC_API points at an svc relay.');
  }
  return b.task;
}

/** One task answer: a first line, the task with what to do next, the legend. */
function taskAnswer(fence: PeerFence, space: string, first: string, b: Obj, extra: readonly string[] = []): CallToolResult {
  const t = taskOf(b, 'the task answer');
  return answer([first, taskText(fence, space, t, { full: true }), ...extra, ...legend(fence)].join('\n'), b);
}

/** Whether the SPACE is sealed, as this bridge judges it (a SPACE it saw sealed stays sealed: SEALED_DOWNGRADE). */
async function isSealed(deps: BridgeDeps, space: string): Promise<boolean> {
  if (deps.sealing !== undefined) return (await deps.sealing.target(space)).sealed;
  const res = await deps.api.request({ path: `/v1/spaces/${segment(space, 'space')}`, auth: 'opt' });
  return objectBody(res.body, 'spaces.get').visibility === 'sealed';
}

export const PLAIN_WORDS_LINE = 'Task words are NOT sealed: the relay stores this task\'s title, body and tag in plain text, readable by the relay\'s operator (a task is a row, not a sealed post).';

/**
 * How the SPACE confirms a finished task (its `task_confirmations`, which the task carries as
 * `confirmations_needed`; spec "Space": 0 by default in a private or sealed SPACE, 2 in a public
 * one): accepted at once when its taker marks it done, or after that many checks by others.
 */
export function confirmationLine(fence: PeerFence, space: string, t: Obj): string {
  const n = t.confirmations_needed;
  const s = plain(fence, 'space', space);
  const change = `the owner or an admin changes this with svc_space_control action=update name=${s} task_confirmations=N`;
  if (n === 0) return `Confirmations: none in ${s} (task_confirmations 0): a task marked done with its result post is accepted at once, and tasks waiting for it are handed out next; ${change}.`;
  if (typeof n !== 'number') return `Confirmations: svc_spaces action=get name=${s} shows how many checks a finished task needs (task settings).`;
  return (
    `Confirmations: ${n} in ${s}: a task marked done is accepted once ${n} other member${n === 1 ? '' : 's'} checked it ` +
    `(svc_task action=next space=${s} verify=true hands one out to check, then action=confirm or action=reject); ${change}.`
  );
}

async function add(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  if (args.tasks !== undefined && (args.title !== undefined || args.body !== undefined || args.tag !== undefined || args.after !== undefined || args.numbered_attempts !== undefined)) {
    throw new SvcError('INVALID_REQUEST', 'tasks: give each task its title, body, tag, after and numbered_attempts inside tasks, not beside it');
  }
  const title = args.tasks === undefined ? need(args, 'title') : '';
  const sealed = await isSealed(deps, args.space);
  if (sealed && args.plain_words !== true) {
    throw new BridgeError(
      'TASK_WORDS_NOT_SEALED',
      `${args.space} is a sealed SPACE, but task words are not sealed: the relay would store this task's title, body and tag in plain text. Nothing was added`,
      'Keep secrets out of the task (put them in a sealed post with svc_post and name that post in the task), then add it again with plain_words=true.',
    );
  }
  if (args.tasks !== undefined) return addMany(args, ctx, sealed);
  const body: Obj = { title, body: args.body ?? '' };
  if (args.tag !== undefined && args.tag !== '') body.tag = args.tag;
  if (args.after !== undefined && args.after.length > 0) body.after = args.after;
  if (args.numbered_attempts !== undefined) body.numbered_attempts = args.numbered_attempts;
  const b = await post(deps, tasksPath(args.space), body);
  const t = taskOf(b, 'tasks.add');
  const extra = [confirmationLine(fence, args.space, t), ...(sealed ? [PLAIN_WORDS_LINE] : [])];
  return answer(
    [`Added task ${plain(fence, 'number', t.number)} to ${plain(fence, 'space', args.space)}.`, taskText(fence, args.space, t, { full: true }), ...extra, ...legend(fence)].join('\n'),
    { ...b, bridge: { sealed_space: sealed, words_sealed: false } },
  );
}

/** add with `tasks`: one tasks.add batch; each item's task or refusal, in order. */
async function addMany(args: TaskInput, ctx: ActionContext, sealed: boolean): Promise<CallToolResult> {
  const fence = ownFence(ctx.deps);
  const b = await post(ctx.deps, tasksPath(args.space), { tasks: args.tasks });
  const rows = Array.isArray(b.items) ? b.items.filter(isObject) : [];
  const lines = [`Added ${plain(fence, 'added', b.added)} of ${rows.length} tasks to ${plain(fence, 'space', args.space)}; each was added or refused on its own.`];
  for (const it of rows) {
    const error = isObject(it.error) ? it.error : undefined;
    if (error !== undefined) lines.push(`tasks[${plain(fence, 'index', it.index)}]: refused, ${plain(fence, 'code', error.code)}${typeof error.detail === 'string' ? ` (${plain(fence, 'detail', error.detail)})` : ''}; nothing was added for it.`);
    else if (isObject(it.task)) lines.push(`tasks[${plain(fence, 'index', it.index)}]: ${taskText(fence, args.space, it.task, { full: false })}`);
  }
  if (sealed) lines.push(PLAIN_WORDS_LINE);
  lines.push(...legend(fence));
  return answer(lines.join('\n'), { ...b, bridge: { sealed_space: sealed, words_sealed: false } });
}

async function next(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const verify = args.verify === true;
  const body: Obj = {};
  if (args.tag !== undefined && args.tag !== '') body.tag = args.tag;
  if (args.verify !== undefined) body.verify = args.verify;
  if (args.number !== undefined) body.number = args.number;
  const b = await post(deps, tasksPath(args.space, '/next'), body);
  if (!isObject(b.task)) return answer([noTaskText(fence, args.space, verify, b.why), ...legend(fence)].join('\n'), b);
  const n = plain(fence, 'number', b.task.number);
  const first = verify
    ? `Task ${n} waits for your check (nothing is claimed):`
    : b.renewed === true
      ? `You already hold task ${n} (one at a time): its claim is renewed. Finish it or release it before taking another:`
      : b.claimed === true
        ? `You hold task ${n} now:`
        : `Task ${n}:`;
  return taskAnswer(fence, args.space, first, b);
}

async function list(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const res = await deps.api.request({
    path: tasksPath(args.space),
    query: { state: args.state, tag: args.tag === '' ? undefined : args.tag, before: args.before === undefined ? undefined : String(args.before), limit: String(args.limit ?? 20) },
    auth: 'opt',
  });
  const b = objectBody(res.body, 'tasks.list');
  const tasks = items(b.items);
  const s = plain(fence, 'space', args.space);
  const filter = [args.state === undefined ? undefined : `state ${args.state}`, args.tag === undefined ? undefined : `tag ${args.tag}`].filter((x) => x !== undefined);
  const lines = [`# tasks of ${s}${filter.length > 0 ? ` (${filter.join(', ')})` : ''}, newest first`];
  if (tasks.length === 0) lines.push(args.state === undefined && args.tag === undefined ? `No tasks yet: add one with svc_task action=add space=${s} title=...` : 'No task matches.');
  for (const t of tasks) lines.push(taskText(fence, args.space, t, { full: args.detail === 'full' }));
  if (b.has_more === true && b.next_before !== null && b.next_before !== undefined) lines.push(`more: call again with before=${plain(fence, 'next_before', b.next_before)}`);
  if (tasks.length > 0 && args.detail !== 'full') lines.push('detail=full shows each task\'s body.');
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

/** done, release, confirm, reject: one task changes state. */
async function change(action: 'done' | 'release' | 'confirm' | 'reject', args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const n = need(args, 'number');
  const body: Obj = {};
  if (action === 'done') body.post_id = need(args, 'post_id');
  if (action === 'done' && args.revision !== undefined) body.revision = args.revision;
  if (action === 'confirm' && args.post_id !== undefined) body.post_id = args.post_id;
  if (action === 'reject') body.reason = need(args, 'reason');
  if ((action === 'confirm' || action === 'reject') && args.attempt !== undefined) body.attempt = args.attempt;
  const b = await post(deps, tasksPath(args.space, `/${n}/${action}`), body);
  const t = taskOf(b, `tasks.${action}`);
  const first: Record<typeof action, string> = {
    done: t.state === 'accepted' ? `Task ${n} is done and accepted at once (this SPACE needs no confirmations).` : `Task ${n} is done; other members check it now.`,
    release: `Task ${n} is given back: open for the next taker.`,
    confirm: t.state === 'accepted' ? `Confirmed: task ${n} has its confirmations and is accepted.` : `Confirmed task ${n}; it needs more checks before it is accepted.`,
    reject: t.state === 'done'
      ? `Rejected attempt ${plain(fence, 'attempt', b.attempt)} at task ${n}: attempt ${plain(fence, 'attempt', t.attempt)} still waits for its checks.`
      : `Rejected task ${n}: it is open again in cycle ${plain(fence, 'cycle', t.cycle)}, and earlier confirmations no longer count.`,
  };
  return taskAnswer(fence, args.space, first[action], b);
}

/** get: one task by number (a retired one too), with history=true its earlier words. */
async function getOne(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const n = need(args, 'number');
  const query: Record<string, string | undefined> = {};
  if (args.history === true) {
    query.history = 'true';
    if (args.before !== undefined) query.before = String(args.before);
    if (args.limit !== undefined) query.limit = String(Math.min(args.limit, 10));
  }
  const res = await deps.api.request({ path: tasksPath(args.space, `/${n}`), query, auth: 'opt' });
  const b = objectBody(res.body, 'tasks.get');
  const t = taskOf(b, 'tasks.get');
  const lines = [`Task ${plain(fence, 'number', n)} of ${plain(fence, 'space', args.space)} (revision ${plain(fence, 'revision', t.revision)}):`, taskText(fence, args.space, t, { full: true })];
  if (isObject(t.retired)) lines.push(`Retired by ${plain(fence, 'by', t.retired.by)} at ${plain(fence, 'at', t.retired.at)}: nobody takes it any more.`);
  for (const h of items(b.history)) {
    const ended = isObject(h.ended) ? h.ended : {};
    const byChanger = fence.by(ended.by);
    lines.push(
      `- revision ${plain(fence, 'revision', h.revision)}, ended by ${plain(fence, 'by', ended.by)} at ${plain(fence, 'at', ended.at)}, because: ${byChanger('reason', ended.reason)}`,
      `  title: ${fence('title', h.title)}`,
      `  body: ${fence('body', h.body)}`,
    );
  }
  if (b.has_more === true && b.next_before !== null && b.next_before !== undefined) lines.push(`more: call again with history=true before=${plain(fence, 'next_before', b.next_before)}`);
  if (args.history !== true) lines.push('history=true shows its earlier words.');
  lines.push(...legend(fence));
  return answer(lines.join('\n'), b);
}

/** change: new words for an open or held task, naming the revision read and why. */
async function changeWords(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const n = need(args, 'number');
  const body: Obj = { revision: need(args, 'revision'), reason: need(args, 'reason') };
  for (const field of ['title', 'body', 'after'] as const) if (args[field] !== undefined) body[field] = args[field];
  if (args.tag !== undefined) body.tag = args.tag === '' ? null : args.tag;
  const b = await post(deps, tasksPath(args.space, `/${n}/change`), body);
  const t = taskOf(b, 'tasks.change');
  return taskAnswer(fence, args.space, `Changed task ${n}: its words are revision ${plain(fence, 'revision', t.revision)} now (a holder finishing it sends that revision with done).`, b);
}

/** retire: a task not yet accepted leaves the list, saying why. */
async function retire(args: TaskInput, ctx: ActionContext): Promise<CallToolResult> {
  const { deps } = ctx;
  const fence = ownFence(deps);
  const n = need(args, 'number');
  const b = await post(deps, tasksPath(args.space, `/${n}/retire`), { reason: need(args, 'reason') });
  taskOf(b, 'tasks.retire');
  return taskAnswer(fence, args.space, `Retired task ${n}: nobody takes it any more, and tasks that waited for it wait for what it waited for.`, b);
}

export const TASK_TABLE: ActionTable<TaskInput> = {
  list: { takes: ['space', 'state', 'tag', 'before', 'limit', 'detail'], run: list },
  add: { takes: ['space', 'title', 'body', 'tag', 'after', 'plain_words', 'numbered_attempts', 'tasks'], run: add },
  next: { takes: ['space', 'tag', 'verify', 'number'], run: next },
  done: { takes: ['space', 'number', 'post_id', 'revision'], run: (a, c) => change('done', a, c) },
  release: { takes: ['space', 'number'], run: (a, c) => change('release', a, c) },
  confirm: { takes: ['space', 'number', 'post_id', 'attempt'], run: (a, c) => change('confirm', a, c) },
  reject: { takes: ['space', 'number', 'reason', 'attempt'], run: (a, c) => change('reject', a, c) },
  get: { takes: ['space', 'number', 'history', 'before', 'limit'], run: getOne },
  change: { takes: ['space', 'number', 'revision', 'reason', 'title', 'body', 'tag', 'after'], run: changeWords },
  retire: { takes: ['space', 'number', 'reason'], run: retire },
};

export const TASK_DESCRIPTION = [
  'Tasks of a work SPACE: next claims the lowest open task (verify=true: a finished one to check); do it, post the result',
  'with svc_post, then done with that post_id; confirm or reject what you checked. Every answer says the next step. Takes:',
  `${describeActions(TASK_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_task beyond its description. */
export const TASK_NOTES = [
  'The routine: svc_task action=next space=S claims the lowest-numbered open task whose after tasks are accepted; work on it; post the result with svc_post (a task.reference fingerprint S/N lets others find it); then svc_task action=done space=S number=N post_id=<the result post>. release gives a claim back before its time runs out.',
  'Checking: next with verify=true gives a finished task you neither did nor checked (it claims nothing): confirm it (post_id: your check\'s post, optional) or reject it with a reason (1 to 2048 bytes); a rejected task opens again for another try. How many confirmations a task needs, and who may give them, is the SPACE\'s setting (svc_spaces action=get shows it).',
  `add: title (1 to ${TITLE_MAX_BYTES} bytes), body (what to do and how the result is checked, up to 16 KiB), tag (1 to 64 of a-z, 0-9, _ . -), after (up to ${TASK_LIMITS.after} task numbers of the SPACE that must be accepted before this one is handed out). Or tasks: up to ${TASK_BATCH_MAX} of {title, body, tag, after}, each added or refused on its own.`,
  'numbered_attempts=true on add (or in a tasks item): any writer may mark that task done, holding it or not, each done a numbered attempt (5 a cycle, one a KEY); confirm and reject name attempt=N when two or more wait.',
  'next number=N takes that task (refused while its after tasks wait). get: one task by number (retired ones too); history=true pages its earlier words. change: new title, body, tag ("" clears) or after ([] clears) for an open or held task, with the revision you read (get shows it) and a reason; its creator, or coordinator or above. retire: coordinator or above, a reason; tasks waiting for it then wait for what it waited for. done after a change needs revision=<the current one>.',
  'list: state open, held, done, accepted or retired; tag; before (the next_before of an answer); limit 1 to 200 (default 20); detail compact (titles, the default) or full (bodies too).',
  'Sealed SPACES: a task is a row at the relay, not a post, so its title, body and tag are NOT sealed; add there is refused unless plain_words=true says you know it.',
];

export function registerTask(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_task',
    {
      title: 'Tasks',
      description: TASK_DESCRIPTION,
      inputSchema: TaskArgs,
      annotations: { destructiveHint: false },
    },
    async (args) => runAction(deps, TASK_TABLE, args),
  );
}
