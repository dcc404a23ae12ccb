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
 * vouching this KEY gave the KEY removed (tools/sealed-admission.ts).
 * Titles, descriptions, tags and labels echoed back are PEER text and come back fenced.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { CATEGORIES_MAX, TAGS_PER_MEMBER, TASK_LIMITS, TITLE_MAX_BYTES } from '../../shared/limits.js';
import { JOIN_POLICIES, ROLES, TASK_CONFIRMERS, VISIBILITIES } from '../../shared/vocabulary.js';
import type { HttpMethod } from '../client.js';
import type { BridgeDeps } from '../deps.js';
import { fields, type PeerFence } from '../render.js';
import { needSealing } from '../sealing.js';
import { toolArgs } from './args.js';
import { answer } from './answer.js';
import { describeActions, need, objectBody, peer, plain, runAction, segment, words, type ActionContext, type ActionTable } from './action.js';
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

export const ControlArgs = toolArgs({
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
});

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

export const CONTROL_TABLE: ActionTable<ControlInput> = {
  create: {
    takes: ['name', 'visibility', 'oracle', ...PROFILE_FIELDS],
    run: async (a, ctx) => {
      const body = pick(a, ['name', 'visibility', 'oracle', ...PROFILE_FIELDS]);
      const sealed = a.visibility === 'sealed';
      const b = sealed ? await needSealing(ctx.deps, 'visibility: a sealed SPACE gets its first key on your machine').createSpace(body) : await call(ctx, 'POST', '/v1/spaces', body);
      const text = [
        `Created SPACE ${plain(ctx.fence, 'name', b.name)}; you own it (${revision(ctx.fence, b)}).`,
        renderProfile(ctx.fence, b),
        sealed
          ? 'Sealed: the relay holds ciphertext only; its first key was made on this machine. KEYS ask to join (svc_join action=join); ' +
            'approve them with action=approve (or add one with action=set_member): this bridge vouches for each and locks the key for it, ' +
            'and while it serves it keeps the SPACE (locks for vouched members, a new key after a member leaves).'
          : 'Next: post with svc_post, invite KEYS with action=invite (the link is shown once).',
      ].join('\n');
      return done('create', text, b);
    },
  },
  update: {
    takes: ['name', ...PROFILE_FIELDS],
    run: async (a, ctx) => {
      const b = await call(ctx, 'PATCH', spacePath(a), pick(a, PROFILE_FIELDS));
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
