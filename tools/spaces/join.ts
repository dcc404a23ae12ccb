/**
 * `svc_join` (spec/2-endpoints.md "Connector": join, actions join look accept decline withdraw
 * leave; protocol/api-notes.md §6 routes):
 *
 *   join     with `link`: POST /v1/join {link, name?}; else POST /v1/spaces/{name}/join {code?, message?}
 *            (200: admitted, already a member, or handed over; 202: a join request now waits)
 *   look     POST /v1/invites/look {link} or {code, name}: what a link would do, before using it
 *   accept   POST /v1/hand-overs/{offer_id}/accept
 *   decline  POST /v1/hand-overs/{offer_id}/decline
 *   withdraw POST /v1/requests/{request_id}/withdraw
 *   leave    DELETE /v1/spaces/{name}/members/{own peer id} (members.revoke of yourself)
 *
 * Links and codes are secrets a peer handed over: sent to the relay, never echoed back. The
 * tags and labels in the answers were written by PEERS and come back fenced.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import type { BridgeDeps } from '../deps.js';
import { fields, type PeerFence } from '../render.js';
import { toolArgs } from '../args.js';
import { answer } from '../answer.js';
import { describeActions, need, objectBody, peer, plain, runAction, segment, type ActionContext, type ActionTable } from '../action.js';
import { requestLine } from './spaces.js';

export const JOIN_ACTIONS = ['join', 'look', 'accept', 'decline', 'withdraw', 'leave'] as const;

export const JoinArgs = toolArgs(() => ({
  action: z.enum(JOIN_ACTIONS),
  name: z.string().min(1).max(200).optional(),
  link: z.string().min(1).max(4096).optional(),
  code: z.string().min(1).max(4096).optional(),
  message: z.string().min(1).max(1024).optional(),
  offer_id: z.string().min(1).max(200).optional(),
  request_id: z.string().min(1).max(200).optional(),
}));

export type JoinInput = z.infer<typeof JoinArgs>;

async function post(ctx: ActionContext, path: string, body?: Record<string, unknown>) {
  const send = () => ctx.deps.api.request({ method: 'POST', path, ...(body === undefined ? {} : { body }) });
  // A sealed SPACE takes only KEYS with an encryption key: publish it on this first need (bridge/sealed/sealing.ts).
  const res = ctx.deps.sealing === undefined ? await send() : await ctx.deps.sealing.withKey(send);
  return { status: res.status, body: objectBody(res.body, `POST ${path}`) };
}

/** A join answer: admitted (or already a member, or handed over), or a request that waits. */
function renderJoin(fence: PeerFence, status: number, b: Record<string, unknown>): string {
  if (status === 202) {
    return [
      `Asked to join ${plain(fence, 'space', b.space)}: request ${requestLine(fence, b)}.`,
      'Save the request_id. The decision arrives in your mailbox (reason decision); svc_join action=withdraw takes the request back.',
    ].join('\n');
  }
  const state = b.state;
  const what =
    state === 'member'
      ? `You already hold a role in ${plain(fence, 'name', b.name)}; nothing changed.`
      : state === 'handed_over'
        ? `You took over the ${plain(fence, 'role', b.role)} role in ${plain(fence, 'name', b.name)}${b.handed_over_by ? ` from ${plain(fence, 'handed_over_by', b.handed_over_by)}` : ''}.`
        : `Joined ${plain(fence, 'name', b.name)}.`;
  return [
    what,
    fields([
      ['role', plain(fence, 'role', b.role)],
      ['tags', peer(fence, 'tags', b.tags)],
      ['revision', plain(fence, 'revision', b.revision)],
    ]),
    `Read it with svc_read_space space=${plain(fence, 'name', b.name)}.`,
  ].join('\n');
}

function renderLook(fence: PeerFence, b: Record<string, unknown>): string {
  const lines = [
    `${b.kind === 'hand_over' ? 'A hand-over link' : 'An invite link'} for SPACE ${plain(fence, 'space', b.space)} (${plain(fence, 'visibility', b.visibility)})`,
    fields([
      ['title', peer(fence, 'title', b.title)],
      ['gives role', plain(fence, 'role', b.role)],
      ['tags', b.tags === undefined ? undefined : peer(fence, 'tags', b.tags)],
      ['from', b.from === undefined ? undefined : plain(fence, 'from', b.from)],
      ['uses', `${plain(fence, 'uses', b.uses)} of ${b.max_uses === null ? 'unlimited' : plain(fence, 'max_uses', b.max_uses)}`],
      ['expires_at', b.expires_at === null ? 'never' : plain(fence, 'expires_at', b.expires_at)],
      ['state', plain(fence, 'state', b.state)],
    ]),
    b.valid === true ? 'It works: use it with svc_join action=join and the same link.' : 'It no longer works: ask whoever gave it for a new one.',
  ];
  return lines.join('\n');
}

function renderOffer(fence: PeerFence, b: Record<string, unknown>): string {
  return [
    `Hand-over offer ${plain(fence, 'offer_id', b.offer_id)} in ${plain(fence, 'space', b.space)}: ${plain(fence, 'state', b.state)}`,
    fields([
      ['role', plain(fence, 'role', b.role)],
      ['from', plain(fence, 'from', b.from)],
      ['to', b.to === null ? 'whoever uses the link' : plain(fence, 'to', b.to)],
      ['label', peer(fence.by(b.from), 'label', b.label)],
      ['expires_at', b.expires_at === null ? 'never' : plain(fence, 'expires_at', b.expires_at)],
    ]),
  ].join('\n');
}

function done(action: string, text: string, body: Record<string, unknown>): CallToolResult {
  return answer(text, { action, ...body });
}

export const JOIN_TABLE: ActionTable<JoinInput> = {
  join: {
    takes: ['name', 'link', 'code', 'message'],
    run: async (a, ctx) => {
      if (a.link !== undefined && a.code !== undefined) throw new SvcError('INVALID_REQUEST', 'link, code: give one, not both');
      if (a.message !== undefined && (a.link !== undefined || a.code !== undefined)) {
        throw new SvcError('INVALID_REQUEST', 'message: only for asking to join without a link or code');
      }
      const r =
        a.link !== undefined
          ? await post(ctx, '/v1/join', { link: a.link, ...(a.name === undefined ? {} : { name: a.name }) })
          : await post(ctx, `/v1/spaces/${segment(need(a, 'name'), 'name')}/join`, {
              ...(a.code === undefined ? {} : { code: a.code }),
              ...(a.message === undefined ? {} : { message: a.message }),
            });
      return done('join', renderJoin(ctx.fence, r.status, r.body), { ...r.body, waiting: r.status === 202 });
    },
  },
  look: {
    takes: ['link', 'code', 'name'],
    run: async (a, ctx) => {
      if ((a.link === undefined) === (a.code === undefined)) throw new SvcError('INVALID_REQUEST', 'link, code: give the link, or the code with name');
      const body = a.link !== undefined ? { link: a.link, ...(a.name === undefined ? {} : { name: a.name }) } : { code: a.code, name: need(a, 'name') };
      const r = await post(ctx, '/v1/invites/look', body);
      return done('look', renderLook(ctx.fence, r.body), r.body);
    },
  },
  accept: {
    takes: ['offer_id'],
    run: async (a, ctx) => {
      const r = await post(ctx, `/v1/hand-overs/${segment(need(a, 'offer_id'), 'offer_id')}/accept`);
      return done('accept', renderJoin(ctx.fence, r.status, r.body), r.body);
    },
  },
  decline: {
    takes: ['offer_id'],
    run: async (a, ctx) => {
      const r = await post(ctx, `/v1/hand-overs/${segment(need(a, 'offer_id'), 'offer_id')}/decline`);
      return done('decline', renderOffer(ctx.fence, r.body), r.body);
    },
  },
  withdraw: {
    takes: ['request_id'],
    run: async (a, ctx) => {
      const r = await post(ctx, `/v1/requests/${segment(need(a, 'request_id'), 'request_id')}/withdraw`);
      return done('withdraw', `Join request withdrawn: ${requestLine(ctx.fence, r.body)}`, r.body);
    },
  },
  leave: {
    takes: ['name'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const path = `/v1/spaces/${segment(name, 'name')}/members/${ctx.deps.identity.peerId}`;
      const res = await ctx.deps.api.request({ method: 'DELETE', path });
      const b = objectBody(res.body, `DELETE ${path}`);
      const text = `You left ${plain(ctx.fence, 'space', b.space)} (you held ${plain(ctx.fence, 'role', b.role)}); audit revision ${plain(ctx.fence, 'revision', b.revision)}.`;
      return done('leave', text, b);
    },
  },
};

export const JOIN_DESCRIPTION = [
  'Join a SPACE or settle your joining. With an invite link, join with it first (look shows what it gives); by name, an',
  `open SPACE admits you or you ask (decided in your mailbox). Takes: ${describeActions(JOIN_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_join beyond its description. */
export const JOIN_NOTES = [
  'join with link: the invite or hand-over link exactly as you were given it (name, when given, must be the SPACE it is for). join with name: an open SPACE admits you at once; one that admits by request files a join request (message: a short note to its coordinators), whose request_id the answer gives; the decision arrives in your mailbox (reason decision), and withdraw (request_id) takes the request back. code: the code of a link instead of the link, with name.',
  'look: what a link (or code with name) would do, its SPACE and role, before you use it.',
  'accept, decline: a hand-over offer from your mailbox (offer_id); accept gives you the offered role.',
  'leave: give up your role in a SPACE (name).',
  'A sealed SPACE takes only KEYS with an encryption key: svc-bridge publishes yours on this first need.',
];

export function registerJoin(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_join',
    {
      title: 'Join',
      description: JOIN_DESCRIPTION,
      inputSchema: JoinArgs,
      annotations: { destructiveHint: false },
    },
    async (args) => runAction(deps, JOIN_TABLE, args),
  );
}
