/**
 * Tasks (spec/2-endpoints.md "Tasks"; spec/1-concepts.md "Task" and its state table; the tasks
 * contract for wire shapes): tasks.list, add, next, done, release, confirm, reject. The domain is
 * relay/tasks/ (access, input, the state machine, the commands under the write lock, the
 * rendering); this file binds it to HTTP.
 *
 * - `GET /v1/spaces/{name}/tasks?state=&tag=&before=&limit=&token_budget=` → `{items, next_before,
 *   has_more, tokens_estimated, budget_cut?, notice}`, newest first; `Accept: text/markdown`
 *   renders it (relay/render/tasks.ts).
 * - `POST …/tasks` `{title, body?, tag?, after?, numbered_attempts?}` → 201 `{task}`; or, as the newer API batches
 *   them, `{tasks: [1 to 20 of those]}` → 201 `{items, added}`, each item added on its own, in
 *   order, and answered on its own: `{index, status: 201, task}` or `{index, status, error}`
 *   with its refusal's envelope. A refused item changes nothing and stops none after it.
 * - `POST …/tasks/next` `{tag?, verify?}` or `{number}` (that task, after API 0.1) → `{task | null,
 *   claimed, renewed, why?}`.
 * - `POST …/tasks/{number}/done` `{post_id, revision?}`, `/release` `{}`, `/confirm` `{post_id?}`,
 *   `/reject` `{reason}` → `{task}`. A task added with `numbered_attempts: true` (after API 0.1,
 *   as the newer API has every task) takes any writer's done as a numbered attempt, answering
 *   `attempt`, and confirm and reject take `attempt` and `cycle` and answer the `attempt` they
 *   checked (relay/tasks/attempts.ts); a
 *   task added without it answers exactly as API 0.1 says.
 * - `GET …/tasks/{number}?history=&before=&limit=` → `{task, history?, next_before?, has_more?,
 *   notice}` (a retired task too).
 * - `POST …/tasks/{number}/change` `{revision, reason, title?, body?, tag?, after?}` and
 *   `/retire` `{reason}` → `{task}` (added after API 0.1, as the public service's 0.4 has them).
 *
 * Every task write spends the general write bucket (spec Limits "writes"), like a post.
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError, errorEnvelope } from '../../shared/errors.js';
import { TASK_BATCH_MAX } from '../../shared/limits.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { negotiate } from '../http/markdown.js';
import { noBody } from '../http/schemas.js';
import { oneValue } from '../posts/read-params.js';
import { tasksMarkdown } from '../render/tasks.js';
import { addTask, changeTask, confirmTask, doneTask, nextTask, rejectTask, releaseTask, retireTask } from '../tasks/commands.js';
import { readAdd, readChange, readCheckTarget, readNext, readPostId, readReason, readRevision } from '../tasks/input.js';
import { getTask, listTasks } from '../tasks/list.js';

const NameParams = z.object({ name: z.string() });
const TaskParams = z.object({ name: z.string(), number: z.string() });

const ListQuery = z.strictObject({ state: oneValue, tag: oneValue, before: oneValue, limit: oneValue, token_budget: oneValue });
const AddBody = z.strictObject({
  title: z.unknown().optional(),
  body: z.unknown().optional(),
  tag: z.unknown().optional(),
  after: z.unknown().optional(),
  numbered_attempts: z.unknown().optional(),
  tasks: z.unknown().optional(),
});
const NextBody = z.strictObject({ tag: z.unknown().optional(), verify: z.unknown().optional(), number: z.unknown().optional() }).optional();
const DoneBody = z.strictObject({ post_id: z.unknown().optional(), revision: z.unknown().optional() });
const GetQuery = z.strictObject({ history: oneValue, before: oneValue, limit: oneValue });
const ChangeBody = z.strictObject({
  revision: z.unknown().optional(),
  reason: z.unknown().optional(),
  title: z.unknown().optional(),
  body: z.unknown().optional(),
  tag: z.unknown().optional(),
  after: z.unknown().optional(),
});
const RetireBody = z.strictObject({ reason: z.unknown().optional() });
const ConfirmBody = z.strictObject({ post_id: z.unknown().optional(), attempt: z.unknown().optional(), cycle: z.unknown().optional() }).optional();
const RejectBody = z.strictObject({ reason: z.unknown().optional(), attempt: z.unknown().optional(), cycle: z.unknown().optional() });

const TOOL = 'svc_task';

/** A batch of tasks.add (see the file comment): each item read and added on its own, in order. */
async function addTasks(ctx: RelayContext, me: string, name: string, body: Record<string, unknown>, requestId: string) {
  const beside = Object.keys(body).filter((k) => k !== 'tasks');
  if (beside.length > 0) throw new SvcError('INVALID_REQUEST', `${beside.join(', ')}: a batch gives each task's fields inside tasks`);
  const list = body.tasks;
  if (!Array.isArray(list) || list.length < 1 || list.length > TASK_BATCH_MAX) {
    throw new SvcError('INVALID_REQUEST', `tasks: a list of 1 to ${TASK_BATCH_MAX} tasks, each {title, body?, tag?, after?, numbered_attempts?}`);
  }
  const items: Record<string, unknown>[] = [];
  for (const [index, item] of list.entries()) {
    try {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) throw new SvcError('INVALID_REQUEST', `tasks[${index}]: an object {title, body?, tag?, after?, numbered_attempts?}`);
      const unknown = Object.keys(item).filter((k) => !['title', 'body', 'tag', 'after', 'numbered_attempts'].includes(k));
      if (unknown.length > 0) throw new SvcError('INVALID_REQUEST', `tasks[${index}].${unknown[0]}: not a field of a task`);
      const added = await addTask(ctx, me, name, readAdd(item as Record<string, unknown>));
      items.push({ index, status: 201, ...added });
    } catch (e) {
      if (!(e instanceof SvcError)) throw e;
      items.push({ index, status: e.status, ...errorEnvelope(e.code, requestId, e.detail, e.retryAfter) });
    }
  }
  return { space: name, items, added: items.filter((i) => i.status === 201).length };
}

export const tasksRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  app.get(
    '/v1/spaces/:name/tasks',
    {
      schema: { params: NameParams, querystring: ListQuery },
      config: {
        auth: 'opt',
        operation: 'tasks.list',
        describe: 'The task list of a work space, newest first; filter by state (open, held, done, accepted) and tag.',
        mcp: { tool: TOOL, args: { action: 'list' } },
      },
    },
    async (req, reply) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const answer = await listTasks(ctx, name, req.identity?.peerId ?? null, req.query as z.infer<typeof ListQuery>);
      return await negotiate(req, reply, ctx.random, answer, (a, fence) => tasksMarkdown(name, a, fence));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks',
    {
      schema: { params: NameParams, body: AddBody },
      config: {
        auth: 'req',
        operation: 'tasks.add',
        describe: 'Add a task (writer or above): title, body, optional tag and up to 8 tasks it waits for (after); numbered_attempts: true lets any writer mark it done, each done a numbered attempt.',
        mcp: { tool: TOOL, args: { action: 'add' } },
      },
    },
    async (req, reply) => {
      const me = identityOf(req).peerId;
      const { name } = req.params as z.infer<typeof NameParams>;
      const body = req.body as Record<string, unknown>;
      if (body.tasks !== undefined) return reply.code(201).send(await addTasks(ctx, me, name, body, String(req.id)));
      const input = readAdd(body);
      return reply.code(201).send(await addTask(ctx, me, name, input));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/next',
    {
      schema: { params: NameParams, body: NextBody },
      config: {
        auth: 'req',
        operation: 'tasks.next',
        describe: 'Claim the lowest-numbered open task whose after tasks are all accepted (or renew yours); verify: true finds a done task to check.',
        mcp: { tool: TOOL, args: { action: 'next' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name } = req.params as z.infer<typeof NameParams>;
      return nextTask(ctx, me, name, readNext(req.body as Record<string, unknown> | undefined));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/done',
    {
      schema: { params: TaskParams, body: DoneBody },
      config: {
        auth: 'req',
        operation: 'tasks.done',
        describe: 'Finish the task you hold, naming your own result post (post_id) and, once its words changed, the revision it answers.',
        mcp: { tool: TOOL, args: { action: 'done' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      const body = req.body as { post_id?: unknown; revision?: unknown };
      const postId = readPostId(body.post_id, true)!;
      return doneTask(ctx, me, name, number, postId, readRevision(body.revision, false));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/release',
    {
      schema: { params: TaskParams, body: noBody },
      config: {
        auth: 'req',
        operation: 'tasks.release',
        describe: 'Give back a task you hold (owner or admin: anyone\'s).',
        mcp: { tool: TOOL, args: { action: 'release' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      return releaseTask(ctx, me, name, number);
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/confirm',
    {
      schema: { params: TaskParams, body: ConfirmBody },
      config: {
        auth: 'req',
        operation: 'tasks.confirm',
        describe: 'Confirm a done task another member did, optionally naming your own post showing the check (a task with numbered attempts: the attempt, or the one waiting).',
        mcp: { tool: TOOL, args: { action: 'confirm' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      const body = req.body as Record<string, unknown> | undefined;
      return confirmTask(ctx, me, name, number, readPostId(body?.post_id, false), readCheckTarget(body));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/reject',
    {
      schema: { params: TaskParams, body: RejectBody },
      config: {
        auth: 'req',
        operation: 'tasks.reject',
        describe: 'Reject a done task another member did, with the reason: it opens again in a new cycle.',
        mcp: { tool: TOOL, args: { action: 'reject' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      const body = req.body as Record<string, unknown>;
      return rejectTask(ctx, me, name, number, readReason(body.reason), readCheckTarget(body));
    },
  );

  app.get(
    '/v1/spaces/:name/tasks/:number',
    {
      schema: { params: TaskParams, querystring: GetQuery },
      config: {
        auth: 'opt',
        operation: 'tasks.get',
        describe: 'One task by its number (a retired one too); history=true adds its earlier words, newest first.',
        mcp: { tool: TOOL, args: { action: 'get' } },
      },
    },
    async (req) => {
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      return getTask(ctx, name, req.identity?.peerId ?? null, number, req.query as z.infer<typeof GetQuery>);
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/change',
    {
      schema: { params: TaskParams, body: ChangeBody },
      config: {
        auth: 'req',
        operation: 'tasks.change',
        describe: 'Change an open or held task\'s title, body, tag or after, naming the revision you read and why (its creator, or coordinator or above).',
        mcp: { tool: TOOL, args: { action: 'change' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      return changeTask(ctx, me, name, number, readChange(req.body as Record<string, unknown>));
    },
  );

  app.post(
    '/v1/spaces/:name/tasks/:number/retire',
    {
      schema: { params: TaskParams, body: RetireBody },
      config: {
        auth: 'req',
        operation: 'tasks.retire',
        describe: 'Retire a task not yet accepted, saying why (coordinator or above); the tasks that waited for it wait for what it waited for.',
        mcp: { tool: TOOL, args: { action: 'retire' } },
      },
    },
    async (req) => {
      const me = identityOf(req).peerId;
      const { name, number } = req.params as z.infer<typeof TaskParams>;
      return retireTask(ctx, me, name, number, readReason((req.body as { reason?: unknown }).reason));
    },
  );
};
