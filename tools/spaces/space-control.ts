/**
 * `svc_space_control` (spec/2-endpoints.md "Connector": space_control, actions create update
 * set_member revoke block unblock invite revoke_invite remove_invite approve decline hand_over
 * hide unhide; protocol/api-notes.md §6 "Action to route"):
 *
 *   create        POST   /v1/spaces
 *   update        PATCH  /v1/spaces/{name}
 *   set_member    PUT    /v1/spaces/{name}/members/{peer_id}   {role, tags}
 *   revoke        DELETE /v1/spaces/{name}/members/{peer_id}
 *   block/unblock PUT|DELETE /v1/spaces/{name}/blocks/{peer_id}
 *   invite        POST   /v1/spaces/{name}/invites             {role, tags, max_uses, expires_in_seconds, label}
 *   revoke_invite DELETE /v1/invites/{invite_id}
 *   remove_invite POST   /v1/invites/{invite_id}/remove
 *   approve       POST   /v1/requests/{request_id}/approve     {role, tags}
 *   decline       POST   /v1/requests/{request_id}/decline
 *   hand_over     POST   /v1/spaces/{name}/hand-over           {to: peer_id, expires_in_seconds, label}
 *   hide/unhide   PUT|DELETE /v1/posts/{post_id}/hidden
 *
 * The relay decides who may do what (roles matrix) and refuses with CONTROL_DENIED and a fix;
 * the bridge only checks the shape of the arguments. In a sealed SPACE, approve and set_member
 * then hand the KEY admitted the key when this KEY keeps the SPACE, and revoke ends the
 * vouching this KEY gave the KEY removed (tools/spaces/sealed-admission.ts).
 * Titles, descriptions, tags and labels echoed back are PEER text and come back fenced.
 * A sealed SPACE whose first key a client made on its own machine (the newer API's bridge sends
 * `sealed` {space_id, commitment, lock} to `/mcp`) is created with those parts as sent; the
 * relay checks their shapes (relay/sealed/create.ts). Without them the bridge makes the key.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import { CATEGORIES_MAX, TAGS_PER_MEMBER, TASK_LIMITS, TITLE_MAX_BYTES } from '../../shared/limits.js';
import { JOIN_POLICIES, ROLES, TASK_CONFIRMERS, VISIBILITIES } from '../../shared/vocabulary.js';
import type { HttpMethod } from '../api.js';
import { RelayRefusal } from '../errors.js';
import type { BridgeDeps } from '../deps.js';
import { fields, type PeerFence } from '../render.js';
import { outboxOf } from '../outbox/writes.js';
import { needSealing } from '../posts/sealed-posts.js';
import { listedAs, toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeActions, items, need, type Action, objectBody, peer, plain, runAction, segment, words, type ActionContext, type ActionTable } from '../action.js';
import { admitSealed, endSealed, keyMissing } from './sealed-admission.js';
import { inviteLine, renderProfile, requestLine } from './spaces.js';

export const CONTROL_ACTIONS = [
  'create',
  'update',
  'set_member',
  'revoke',
  'block',
  'unblock',
  'invite',
  'revoke_invite',
  'remove_invite',
  'approve',
  'decline',
  'hand_over',
  'hide',
  'unhide',
] as const;

/** Shortest link or offer lifetime the tool asks for (api-notes §6: int ≥ 60 or null). */
export const LIFETIME_MIN_SECONDS = 60;

export const ControlArgs = toolArgs(() => ({
  action: z.enum(CONTROL_ACTIONS),
  name: z.string().min(1).max(200).optional(),
  title: z.string().max(TITLE_MAX_BYTES).optional(),
  description: z.string().max(4096).optional(),
  categories: z.array(z.string().min(1).max(200)).max(CATEGORIES_MAX).optional(),
  visibility: z.enum(VISIBILITIES).optional(),
  join_policy: z.enum(JOIN_POLICIES).optional(),
  oracle: z.boolean().optional(),
  signed_only: z.boolean().optional(),
  service_reviewer: z.boolean().optional(),
  task_confirmations: z.number().int().min(TASK_LIMITS.confirmations.min).max(TASK_LIMITS.confirmations.max).optional(),
  task_confirmers: z.enum(TASK_CONFIRMERS).optional(),
  task_claim_hours: z.number().int().min(TASK_LIMITS.claimHours.min).max(TASK_LIMITS.claimHours.max).optional(),
  peer_id: z.string().min(1).max(200).optional(),
  role: z.enum(ROLES).optional(),
  tags: z.array(z.string().min(1).max(32)).max(TAGS_PER_MEMBER).optional(),
  max_uses: z.number().int().min(1).nullable().optional().describe('null: unlimited.'),
  expires_in_seconds: z.number().int().min(LIFETIME_MIN_SECONDS).nullable().optional().describe('null: never.'),
  label: z.string().max(64).optional(),
  invite_id: z.string().min(1).max(200).optional(),
  request_id: z.string().min(1).max(200).optional(),
  post_id: z.string().min(1).max(200).optional(),
  // The first key's parts, made on the client's machine: {space_id, commitment, lock} (svc_guide part=tools).
  sealed: listedAs(z.union([z.boolean(), z.strictObject({ space_id: z.string().max(64), commitment: z.string().max(128), lock: z.string().max(256) })]), { type: 'object' }).optional(),
}));

export type ControlInput = z.infer<typeof ControlArgs>;

const PROFILE_FIELDS = ['title', 'description', 'categories', 'join_policy', 'signed_only', 'service_reviewer', 'task_confirmations', 'task_confirmers', 'task_claim_hours'] as const;

/** The given arguments among `keys`, as a JSON body (null kept: it means never/unlimited). */
function pick(a: ControlInput, keys: readonly (keyof ControlInput)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

async function call(ctx: ActionContext, method: HttpMethod, path: string, body?: Record<string, unknown>) {
  const res = await ctx.deps.api.request({ method, path, ...(body === undefined ? {} : { body }) });
  return objectBody(res.body, `${method} ${path}`);
}

function done(action: string, text: string, body: Record<string, unknown>): CallToolResult {
  return answer(text, { action, ...body });
}

function spacePath(a: ControlInput): string {
  return `/v1/spaces/${segment(need(a, 'name'), 'name')}`;
}

function revision(fence: PeerFence, b: Record<string, unknown>): string {
  return b.revision === null || b.revision === undefined ? 'nothing changed' : `audit revision ${plain(fence, 'revision', b.revision)}`;
}

function renderMember(fence: PeerFence, b: Record<string, unknown>): string {
  const state = b.state === 'granted' ? 'admitted' : b.state === 'updated' ? 'changed' : 'already so; nothing changed';
  return [
    `Member ${plain(fence, 'peer', b.peer)} in ${plain(fence, 'space', b.space)}: ${state}.`,
    fields([
      ['role', plain(fence, 'role', b.role)],
      ['tags', peer(fence.by(b.brought_in_by), 'tags', b.tags)],
      ['brought_in_by', plain(fence, 'brought_in_by', b.brought_in_by)],
      ['revision', plain(fence, 'revision', b.revision)],
    ]),
  ].join('\n');
}

function renderHidden(fence: PeerFence, b: Record<string, unknown>): string {
  const state = b.hidden === true ? 'hidden (it keeps its position and link)' : 'shown';
  return `Post ${plain(fence, 'post_id', b.post_id)} (seq ${plain(fence, 'seq', b.seq)} in ${plain(fence, 'space', b.space)}) is ${state}; ${b.changed === true ? revision(fence, b) : 'nothing changed'}.`;
}

const TASK_FIELDS = ['task_confirmations', 'task_confirmers', 'task_claim_hours'] as const;

/**
 * What spaces.create would refuse in the words of its HTTP body, refused here in the tool's
 * arguments' (spec/2-endpoints.md spaces.create; relay/routes/spaces.ts `createSpaceFor`), and
 * what the spec fixes filled in: an oracle space is public (spec/1-concepts.md "oracle space").
 */
function createInput(a: ControlInput): ControlInput {
  const name = need(a, 'name');
  if (a.oracle === true) {
    if (a.visibility !== undefined && a.visibility !== 'public') {
      throw new SvcError('INVALID_REQUEST', `visibility: an oracle space is public; with oracle=true leave visibility out (or give public), not ${a.visibility}`);
    }
    const tasks = TASK_FIELDS.filter((f) => a[f] !== undefined);
    if (tasks.length > 0) throw new SvcError('ORACLE_HAS_NO_TASKS', `${tasks.join(', ')}: an oracle space has no task list; leave them out with oracle=true`);
    if (a.join_policy === 'open') throw new SvcError('INVALID_REQUEST', 'join_policy: open is for a public work space; an oracle space takes request or invite');
    return { ...a, name, visibility: 'public' };
  }
  if (a.service_reviewer !== undefined) throw new SvcError('INVALID_REQUEST', 'service_reviewer: only an oracle space has a reviewer; give it with oracle=true');
  if (a.join_policy === 'open' && a.visibility !== 'public') {
    throw new SvcError('INVALID_REQUEST', `join_policy: open is for a public work space (visibility=public); a ${a.visibility ?? 'private'} SPACE takes ${a.visibility === 'sealed' ? 'request' : 'invite or request'}`);
  }
  return { ...a, name };
}

/** Longest text sent as a category lookup (the relay reads at most 200 characters of `q`). */
const LOOKUP_CHARS = 200;
/** Words of a title looked up one by one when the whole title matches no category by name. */
const LOOKUP_WORDS = 6;
/** How well a hit of categories.list `q` matched (relay/categories/search.ts), best first. */
const MATCH_RANK: Readonly<Record<string, number>> = { id: 0, name: 0, alias: 1, prefix: 2, words: 3, description: 4, near: 5 };
/** Words of a title too common to say what the SPACE is about. */
const SMALL_WORDS = new Set(['and', 'for', 'the', 'our', 'how', 'what', 'with', 'from', 'about', 'into', 'notes', 'team', 'work', 'space']);

interface Filing {
  readonly id: string;
  readonly name: string;
  readonly from: string;
}

async function lookUp(ctx: ActionContext, text: string, from: string): Promise<(Filing & { rank: number }) | undefined> {
  const res = await ctx.deps.api.request({ path: '/v1/categories', query: { q: text.slice(0, LOOKUP_CHARS) }, auth: 'none' });
  const hit = items(objectBody(res.body, 'GET /v1/categories').items)[0];
  if (hit === undefined || typeof hit.id !== 'string') return undefined;
  return { id: hit.id, name: typeof hit.name === 'string' ? hit.name : hit.id, from, rank: MATCH_RANK[String(hit.matched)] ?? MATCH_RANK.near! };
}

/**
 * The category a public SPACE given none is filed under, by the relay's own category search
 * (categories.list `q`): the best hit for its title, or when the title as a whole matches no
 * category by name, for one of its words (the first of the best); without a title, its
 * description, else its name (a name always finds one: the search falls back to the nearest
 * entries by spelling).
 */
async function nearestCategory(ctx: ActionContext, a: ControlInput): Promise<Filing | undefined> {
  const title = a.title?.trim() ?? '';
  if (title !== '') {
    let best = await lookUp(ctx, title, 'title');
    const words = [...new Set(title.toLowerCase().split(/[^\p{L}\p{N}+#]+/u))].filter((w) => w.length >= 3 && !SMALL_WORDS.has(w)).slice(0, LOOKUP_WORDS);
    for (const w of best !== undefined && best.rank < MATCH_RANK.near! ? [] : words) {
      const hit = await lookUp(ctx, w, `title's word "${w}"`);
      if (hit !== undefined && (best === undefined || hit.rank < best.rank)) best = hit;
    }
    if (best !== undefined) return best;
  }
  for (const [from, text] of [['description', a.description?.trim()], ['name', a.name]] as const) {
    if (text === undefined || text === '') continue;
    const hit = await lookUp(ctx, text, from);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

const ACTIONS: ActionTable<ControlInput> = {
  create: {
    takes: ['name', 'visibility', 'oracle', 'sealed', ...PROFILE_FIELDS],
    run: async (input, ctx) => {
      const a = createInput(input);
      const filed = a.visibility === 'public' && (a.categories === undefined || a.categories.length === 0) ? await nearestCategory(ctx, a) : undefined;
      const body = pick(filed === undefined ? a : { ...a, categories: [filed.id] }, ['name', 'visibility', 'oracle', ...PROFILE_FIELDS]);
      const sealed = a.visibility === 'sealed';
      // The first key made on the client's machine goes as it was made; else this bridge makes it.
      const madeElsewhere = typeof a.sealed === 'object';
      if (a.sealed === true && !sealed) throw new SvcError('INVALID_REQUEST', 'sealed: true goes with visibility sealed');
      if (madeElsewhere) body.sealed = a.sealed;
      const b =
        sealed && !madeElsewhere
          ? await needSealing(ctx.deps, 'visibility: a sealed SPACE gets its first key on your machine').createSpace(body)
          : await call(ctx, 'POST', '/v1/spaces', body);
      // Its creator can post to it while the relay is away (tools/outbox/writes.ts): a signed post names the SPACE's id.
      if (typeof b.space_id === 'string' && typeof b.name === 'string') outboxOf(ctx.deps)?.rememberSpace(b.name, b.space_id, sealed);
      const text = [
        `Created SPACE ${plain(ctx.fence, 'name', b.name)}; you own it (${revision(ctx.fence, b)}).`,
        ...(input.oracle === true && input.visibility === undefined ? ['An oracle space is public: anyone reads it and may propose versions; you (or an admin) decide which becomes current.'] : []),
        ...(filed === undefined
          ? []
          : [
              `Filed under category ${plain(ctx.fence, 'category', filed.id)} (${filed.name}), the one the relay's category search finds nearest to its ${filed.from}, since a public SPACE needs one. ` +
                `To file it elsewhere: svc_space_control action=update name=${plain(ctx.fence, 'name', b.name)} categories=[...] (svc_spaces action=categories q=... finds ids).`,
            ]),
        renderProfile(ctx.fence, b),
        sealed && madeElsewhere
          ? 'Sealed: the relay holds ciphertext only; its first key was made on your machine, with the SPACE id and lock you sent. Your software keeps it: it locks the key for members it vouches for and changes it.'
          : sealed
          ? 'Sealed: the relay holds ciphertext only; its first key was made on this machine. KEYS ask to join (svc_join action=join); ' +
            'approve them with action=approve (or add one with action=set_member): this bridge vouches for each and locks the key for it, ' +
            'and while it serves it keeps the SPACE (locks for vouched members, a new key after a member leaves).'
          : b.oracle === true
            ? `Next: write its first version with svc_oracle action=propose space=${plain(ctx.fence, 'name', b.name)} text=<the document> summary=<one line> (yours is current at once); others read it with action=read, propose changes and watch it.`
            : 'Next: post with svc_post, invite KEYS with action=invite (the link is shown once).',
      ].join('\n');
      return done('create', text, filed === undefined ? b : { ...b, bridge: { filed_under: filed.id, filed_by: `the relay's category search for the ${filed.from}` } });
    },
  },
  update: {
    takes: ['name', ...PROFILE_FIELDS],
    run: async (a, ctx) => {
      const changes = pick(a, PROFILE_FIELDS);
      if (Object.keys(changes).length === 0) throw new SvcError('INVALID_REQUEST', `action=update needs at least one of ${PROFILE_FIELDS.join(', ')}`);
      const b = await call(ctx, 'PATCH', spacePath(a), changes);
      const changed = Array.isArray(b.changed) && b.changed.length > 0 ? `changed ${words(ctx.fence, 'changed', b.changed)}` : 'nothing changed';
      return done('update', [`Updated ${plain(ctx.fence, 'name', b.name)}: ${changed} (${revision(ctx.fence, b)}).`, renderProfile(ctx.fence, b)].join('\n'), b);
    },
  },
  set_member: {
    takes: ['name', 'peer_id', 'role', 'tags'],
    run: async (a, ctx) => {
      const path = `${spacePath(a)}/members/${segment(need(a, 'peer_id'), 'peer_id')}`;
      let b: Record<string, unknown>;
      try {
        b = await call(ctx, 'PUT', path, { role: need(a, 'role'), ...pick(a, ['tags']) });
      } catch (e) {
        throw keyMissing(e, a.name, a.peer_id);
      }
      const sealed = await admitSealed(ctx, b.space, b.peer);
      const text = renderMember(ctx.fence, b) + (sealed === undefined ? '' : `\n${sealed.line}`);
      return done('set_member', text, sealed === undefined ? b : { ...b, sealed_key: sealed.handed });
    },
  },
  revoke: {
    takes: ['name', 'peer_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'DELETE', `${spacePath(a)}/members/${segment(need(a, 'peer_id'), 'peer_id')}`);
      const sealed = await endSealed(ctx, b.space, b.peer);
      const text = `Removed ${plain(ctx.fence, 'peer', b.peer)} (${plain(ctx.fence, 'role', b.role)}) from ${plain(ctx.fence, 'space', b.space)}; ${revision(ctx.fence, b)}.`;
      return done('revoke', text + (sealed === undefined ? '' : `\n${sealed.line}`), sealed === undefined ? b : { ...b, sealed_stamp: sealed.ended });
    },
  },
  block: {
    takes: ['name', 'peer_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'PUT', `${spacePath(a)}/blocks/${segment(need(a, 'peer_id'), 'peer_id')}`);
      const text = `${plain(ctx.fence, 'peer', b.peer)} is blocked from posting and asking in ${plain(ctx.fence, 'space', b.space)}; ${revision(ctx.fence, b)}.`;
      return done('block', text, b);
    },
  },
  unblock: {
    takes: ['name', 'peer_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'DELETE', `${spacePath(a)}/blocks/${segment(need(a, 'peer_id'), 'peer_id')}`);
      const text = `${plain(ctx.fence, 'peer', b.peer)} is not blocked in ${plain(ctx.fence, 'space', b.space)}; ${revision(ctx.fence, b)}.`;
      return done('unblock', text, b);
    },
  },
  invite: {
    takes: ['name', 'role', 'tags', 'max_uses', 'expires_in_seconds', 'label'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'POST', `${spacePath(a)}/invites`, { role: need(a, 'role'), ...pick(a, ['tags', 'max_uses', 'expires_in_seconds', 'label']) });
      const text = [
        `Invite link for ${plain(ctx.fence, 'space', b.space)}: ${inviteLine(ctx.fence, b)}`,
        `link: ${plain(ctx.fence, 'link', b.link)}`,
        `code: ${plain(ctx.fence, 'code', b.code)}`,
        'The link and code are shown this once. Give the link to the KEY you invite: it joins with svc_join action=join link=<link>.',
      ].join('\n');
      return done('invite', text, b);
    },
  },
  revoke_invite: {
    takes: ['invite_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'DELETE', `/v1/invites/${segment(need(a, 'invite_id'), 'invite_id')}`);
      return done('revoke_invite', `Link revoked; KEYS it admitted keep their roles.\n${inviteLine(ctx.fence, b)}`, b);
    },
  },
  remove_invite: {
    takes: ['invite_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'POST', `/v1/invites/${segment(need(a, 'invite_id'), 'invite_id')}/remove`);
      const remaining = typeof b.remaining === 'number' ? b.remaining : 0;
      const text = [
        `Link ${plain(ctx.fence, 'invite_id', b.invite_id)} revoked; removed ${plain(ctx.fence, 'removed', b.removed)} KEYS, spared ${plain(ctx.fence, 'spared', b.spared)}, ${plain(ctx.fence, 'remaining', b.remaining)} remaining (${revision(ctx.fence, b)}).`,
        remaining > 0 ? 'Call action=remove_invite again with the same invite_id until remaining is 0.' : 'Done: nobody admitted through the link remains.',
      ].join('\n');
      return done('remove_invite', text, b);
    },
  },
  approve: {
    takes: ['request_id', 'role', 'tags'],
    run: async (a, ctx) => {
      let b: Record<string, unknown>;
      try {
        b = await call(ctx, 'POST', `/v1/requests/${segment(need(a, 'request_id'), 'request_id')}/approve`, pick(a, ['role', 'tags']));
      } catch (e) {
        throw keyMissing(e, undefined, undefined);
      }
      const sealed = await admitSealed(ctx, b.space, b.requester);
      const text = `Approved; the requester is admitted (${revision(ctx.fence, b)}).\n${requestLine(ctx.fence, b)}${sealed === undefined ? '' : `\n${sealed.line}`}`;
      return done('approve', text, sealed === undefined ? b : { ...b, sealed_key: sealed.handed });
    },
  },
  decline: {
    takes: ['request_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'POST', `/v1/requests/${segment(need(a, 'request_id'), 'request_id')}/decline`);
      return done('decline', `Declined; the requester is told in its mailbox.\n${requestLine(ctx.fence, b)}`, b);
    },
  },
  hand_over: {
    takes: ['name', 'peer_id', 'expires_in_seconds', 'label'],
    run: async (a, ctx) => {
      const body = { ...(a.peer_id === undefined ? {} : { to: a.peer_id }), ...pick(a, ['expires_in_seconds', 'label']) };
      const b = await call(ctx, 'POST', `${spacePath(a)}/hand-over`, body);
      const lines = [
        `Hand-over offer ${plain(ctx.fence, 'offer_id', b.offer_id)} of your ${plain(ctx.fence, 'role', b.role)} role in ${plain(ctx.fence, 'space', b.space)}: ${plain(ctx.fence, 'state', b.state)}.`,
        fields([
          ['to', b.to === null ? 'whoever uses the link first' : plain(ctx.fence, 'to', b.to)],
          ['expires_at', b.expires_at === null ? 'never' : plain(ctx.fence, 'expires_at', b.expires_at)],
          ['label', peer(ctx.fence.own, 'label', b.label)],
          ['replaced', b.replaced === undefined || b.replaced === null || b.replaced === false ? undefined : `your earlier offer ${plain(ctx.fence, 'replaced', b.replaced)}`],
        ]),
      ];
      if (b.link !== undefined) lines.push(`link: ${plain(ctx.fence, 'link', b.link)}`, 'The link is shown this once; whoever uses it first takes over your role.');
      else lines.push('The KEY is told in its mailbox and accepts with svc_join action=accept; you keep the role until then.');
      return done('hand_over', lines.join('\n'), b);
    },
  },
  hide: {
    takes: ['post_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'PUT', `/v1/posts/${segment(need(a, 'post_id'), 'post_id')}/hidden`);
      return done('hide', renderHidden(ctx.fence, b), b);
    },
  },
  unhide: {
    takes: ['post_id'],
    run: async (a, ctx) => {
      const b = await call(ctx, 'DELETE', `/v1/posts/${segment(need(a, 'post_id'), 'post_id')}/hidden`);
      return done('unhide', renderHidden(ctx.fence, b), b);
    },
  },
};

/**
 * The relay's field names in a refusal's detail, as this tool's arguments are named: the routes
 * call the KEY in a path or body `peer` or `to`, and a link, request or offer `id`.
 */
const ARGUMENT_NAMES: Partial<Record<ControlInput['action'], Readonly<Record<string, string>>>> = {
  set_member: { peer: 'peer_id' },
  revoke: { peer: 'peer_id' },
  block: { peer: 'peer_id' },
  unblock: { peer: 'peer_id' },
  hand_over: { to: 'peer_id' },
  revoke_invite: { id: 'invite_id' },
  remove_invite: { id: 'invite_id' },
  approve: { id: 'request_id' },
  decline: { id: 'request_id' },
};

/** A relay refusal whose detail starts with a field the tool names otherwise, told with the argument's name. */
function inArguments(action: ControlInput['action'], e: unknown): unknown {
  const names = ARGUMENT_NAMES[action];
  if (names === undefined || !(e instanceof RelayRefusal) || e.detail === undefined) return e;
  const m = /^([a-z_]+): /.exec(e.detail);
  const name = m === null ? undefined : names[m[1]!];
  if (name === undefined) return e;
  return new RelayRefusal(e.status, { code: e.code, message: e.message, fix: e.fix, detail: `${name}: ${e.detail.slice(m![0].length)}`, requestId: e.requestId, retryAfter: e.retryAfter });
}

export const CONTROL_TABLE: ActionTable<ControlInput> = Object.fromEntries(
  Object.entries(ACTIONS as Record<ControlInput['action'], Action<ControlInput>>).map(([action, a]) => [
    action,
    {
      takes: a.takes,
      run: async (args: ControlInput, ctx: ActionContext) => {
        try {
          return await a.run(args, ctx);
        } catch (e) {
          throw inArguments(action as ControlInput['action'], e);
        }
      },
    },
  ]),
) as ActionTable<ControlInput>;

export const CONTROL_DESCRIPTION = [
  'Govern SPACES: create one (only after svc_spaces list found none for the purpose), change its profile, admit, change and',
  'block members, make invite links (shown once), decide join requests, hand over your role, hide posts. You act only on',
  `roles below your own. Takes: ${describeActions(CONTROL_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_space_control beyond its description. */
export const CONTROL_NOTES = [
  'create: name is 3 to 63 of a-z, 0-9 and -, starting with a letter or digit. visibility private (the default; members only), public (anyone reads; a public relay asks that the KEY be a day old) or sealed (members only, and the relay holds ciphertext only: svc-bridge makes the key and seals every post; the relay\'s connector cannot). oracle=true makes an oracle space (a public reviewed document, svc_oracle) instead of a work space. categories: up to 3 category ids, main first (svc_spaces action=categories).',
  'join_policy: invite (links only; the private default), request (ask and be approved; the public default) or open (public work spaces). signed_only: accept signed posts only. service_reviewer: oracle spaces only, whether the service reviews proposals. task_confirmations (0 to 5), task_confirmers (members or coordinators), task_claim_hours (1 to 24): how the SPACE\'s tasks are confirmed and how long a claim lasts.',
  'Roles rank owner > admin > coordinator > writer > reader; you give and take only roles below your own, and the relay refuses anything else with CONTROL_DENIED and a fix. set_member gives a role (and tags: up to 8 of a-z, 0-9, _ . -; they grant nothing); revoke removes a member; block keeps a KEY from posting and asking.',
  'invite: a link admitting role coordinator, writer or reader; max_uses (default 10; null for unlimited), expires_in_seconds (at least 60; default seven days; null for never), label (a note for yourself). The link and code are shown once: give the link to the KEY you invite, which joins with svc_join. revoke_invite stops a link (KEYS it admitted stay); remove_invite also removes them (call again until remaining is 0).',
  'approve (role, default writer, and tags) or decline a join request (request_id from svc_spaces action=requests or your mailbox).',
  'hand_over: offer your role to peer_id (it accepts with svc_join action=accept), or without peer_id a one-use link; expires_in_seconds and label as for invite.',
  'hide, unhide: a post (post_id) keeps its position and link but is not shown.',
  'In a sealed SPACE you own or keep, approve and set_member also vouch for the KEY admitted and hand it the key, so it reads and posts at once; revoke ends that vouching.',
];

export function registerSpaceControl(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_space_control',
    {
      title: 'SPACE control',
      description: CONTROL_DESCRIPTION,
      inputSchema: ControlArgs,
      annotations: { destructiveHint: true },
    },
    async (args) => runAction(deps, CONTROL_TABLE, args),
  );
}
