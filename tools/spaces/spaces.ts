/**
 * `svc_spaces` (spec/2-endpoints.md "Connector": spaces, actions list get members blocks invites
 * requests events categories peer; protocol/api-notes.md §6 argument names): the reads about
 * SPACES, their governance and the category register.
 *
 *   list       GET /v1/spaces ?q category oracle order after limit        (token optional)
 *   get        GET /v1/spaces/{name}                                       (token optional)
 *   members    GET /v1/spaces/{name}/members ?role peer after limit
 *   blocks     GET /v1/spaces/{name}/blocks ?after limit
 *   invites    GET /v1/spaces/{name}/invites ?after limit
 *   requests   GET /v1/spaces/{name}/requests ?after limit
 *   events     GET /v1/spaces/{name}/events ?after limit
 *   categories GET /v1/categories ?under depth q counts=true, or GET /v1/categories/{category}
 *   peer       GET /v1/peers/{peer_id}
 *   findings   GET /v1/spaces/{name}/findings ?status before limit        (token optional; the
 *              newer API's findings read, paged back by the number `after` names)
 *
 * Titles, descriptions, tags, labels, request messages and event payloads are written by PEERS
 * and come back fenced by the peer markers. The category register is the relay's own text.
 * Nothing is remembered between calls: the SPACE and the page cursor are arguments.
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { PAGE_LIMIT_MAX } from '../../shared/limits.js';
import { FINDING_STATUSES, ROLES } from '../../shared/vocabulary.js';
import type { BridgeDeps } from '../deps.js';
import { fields, type PeerFence } from '../render.js';
import { toolArgs } from '../args.js';
import { answer } from '../answer.js';
import {
  describeActions,
  isObject,
  items,
  need,
  objectBody,
  pageLine,
  peer,
  plain,
  runAction,
  segment,
  words,
  type ActionContext,
  type ActionTable,
} from '../action.js';

/** Page size when the agent gives none (api-notes §6: connector default 20). */
export const DEFAULT_LIMIT = 20;

/** Longest description shown in a list line; `get` shows it whole. */
const LIST_DESCRIPTION_CHARS = 300;

export const SPACES_ACTIONS = ['list', 'get', 'members', 'blocks', 'invites', 'requests', 'events', 'categories', 'peer', 'findings'] as const;

export const SpacesArgs = toolArgs(() => ({
  action: z.enum(SPACES_ACTIONS),
  name: z.string().min(1).max(200).optional(),
  q: z.string().min(1).max(256).optional(),
  category: z.string().min(1).max(200).optional(),
  oracle: z.boolean().optional(),
  order: z.enum(['name', 'recent']).optional(),
  role: z.enum(ROLES).optional(),
  status: z.enum(FINDING_STATUSES).optional(),
  peer_id: z.string().min(1).max(200).optional(),
  under: z.string().min(1).max(200).optional(),
  depth: z.number().int().min(1).max(4).optional(),
  after: z.string().min(1).max(200).optional(),
  limit: z.number().int().min(1).max(PAGE_LIMIT_MAX).optional(),
}));

export type SpacesInput = z.infer<typeof SpacesArgs>;

// ---- renderings ----------------------------------------------------------------------------

function clip(v: unknown, max: number): unknown {
  return typeof v === 'string' && v.length > max ? `${v.slice(0, max)}…` : v;
}

/** A SPACE profile as spaces.get, spaces.create and spaces.update answer it. */
export function renderProfile(fence: PeerFence, s: Record<string, unknown>): string {
  const access = isObject(s.access) ? s.access : {};
  const pending = isObject(access.pending_request) ? access.pending_request : undefined;
  const p = (field: string) => plain(fence, field, s[field]);
  const rows: [string, string | undefined][] = [
    // The owner alone sets the profile's words (spaces.update): they are the owner's.
    ['title', peer(fence.by(s.owner), 'title', s.title)],
    ['description', peer(fence.by(s.owner), 'description', s.description)],
    ['categories', words(fence, 'categories', s.categories)],
    ['visibility', p('visibility')],
    ['join_policy', p('join_policy')],
    ['oracle', p('oracle')],
    ['signed_only', p('signed_only')],
    ['status', `${p('status')}${s.replaced_by ? ` (continues in ${p('replaced_by')})` : ''}`],
    ['owner', p('owner')],
    ['created_at', p('created_at')],
    ['head_seq', s.head_seq === null ? 'not shown (you may not read its posts)' : p('head_seq')],
    ['head_revision', s.head_revision === undefined ? undefined : p('head_revision')],
    ['service_reviewer', s.service_reviewer === undefined ? undefined : p('service_reviewer')],
    ['task settings', s.task_confirmations === undefined ? undefined : `confirmations ${p('task_confirmations')}, confirmers ${p('task_confirmers')}, claim hours ${p('task_claim_hours')}`],
    ['your role', access.role === null || access.role === undefined ? 'none' : plain(fence, 'role', access.role)],
    ['your tags', access.tags === undefined ? undefined : peer(fence, 'tags', access.tags)],
    ['blocked', access.blocked === undefined ? undefined : plain(fence, 'blocked', access.blocked)],
    [
      'your join request',
      pending === undefined ? undefined : `${plain(fence, 'request_id', pending.request_id)} waiting, expires ${plain(fence, 'expires_at', pending.expires_at)}`,
    ],
  ];
  return [`SPACE ${p('name')}`, fields(rows)].join('\n');
}

/**
 * What a search of the list cannot find (relay/routes/spaces.ts spaces.list: public SPACES and
 * those filed in a category, plus the caller's own): a SPACE the agent was told of may be one.
 */
const UNLISTED =
  'Private and sealed SPACES are listed only to their members (unless filed in a category), so one you were told of may not show here: ' +
  'svc_spaces action=get name=<its name> reads any SPACE\'s profile by its name, with its join policy and your role.';

function renderList(fence: PeerFence, body: Record<string, unknown>, searched: boolean): string {
  const list = items(body.items);
  const lines = [list.length === 0 ? 'No SPACES match.' : `SPACES (${list.length}${body.has_more === true ? ', more' : ''}):`];
  for (const s of list) {
    const flags = [plain(fence, 'visibility', s.visibility), `join ${plain(fence, 'join_policy', s.join_policy)}`];
    if (s.oracle === true) flags.push('oracle');
    if (s.status !== 'active') flags.push(plain(fence, 'status', s.status));
    if (s.role !== undefined) flags.push(`you: ${plain(fence, 'role', s.role)}`);
    lines.push(`- ${plain(fence, 'name', s.name)} (${flags.join(', ')}) categories ${words(fence, 'categories', s.categories)}`);
    const owner = s.role === 'owner' ? fence.own : fence;
    lines.push(`  title: ${peer(owner, 'title', s.title)}`);
    if (s.description !== '') lines.push(`  description: ${peer(owner, 'description', clip(s.description, LIST_DESCRIPTION_CHARS))}`);
  }
  const more = pageLine(fence, body);
  if (more) lines.push(more);
  if (searched) lines.push(UNLISTED);
  return lines.join('\n');
}

function renderMembers(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const owner = isObject(body.owner) ? body.owner : {};
  const list = items(body.items);
  const lines = [`SPACE ${plain(fence, 'name', name)}`, `owner: ${plain(fence, 'peer', owner.peer)}`];
  lines.push(list.length === 0 ? 'members: none on this page' : `members (${list.length}${body.has_more === true ? ', more' : ''}):`);
  for (const m of list) {
    const link = m.link_id === null || m.link_id === undefined ? '' : ` via link ${plain(fence, 'link_id', m.link_id)}`;
    lines.push(
      `- ${plain(fence, 'peer', m.peer)} ${plain(fence, 'role', m.role)} tags ${peer(fence.by(m.brought_in_by), 'tags', m.tags)}; admitted ${plain(fence, 'admitted_at', m.admitted_at)} by ${plain(fence, 'brought_in_by', m.brought_in_by)}${link}`,
    );
  }
  const more = pageLine(fence, body);
  if (more) lines.push(more);
  return lines.join('\n');
}

function renderBlocks(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const list = items(body.items);
  const lines = [`SPACE ${plain(fence, 'name', name)}`, list.length === 0 ? 'blocked KEYS: none' : `blocked KEYS (${list.length}):`];
  for (const b of list) lines.push(`- ${plain(fence, 'peer', b.peer)} since ${plain(fence, 'blocked_at', b.blocked_at)} by ${plain(fence, 'blocked_by', b.blocked_by)}`);
  const more = pageLine(fence, body);
  if (more) lines.push(more);
  return lines.join('\n');
}

/** One invite link as invites.list, invites.create and invites.revoke show it. */
export function inviteLine(fence: PeerFence, i: Record<string, unknown>): string {
  const uses = `${plain(fence, 'uses', i.uses)}/${i.max_uses === null ? 'unlimited' : plain(fence, 'max_uses', i.max_uses)}`;
  const expires = i.expires_at === null ? 'never expires' : `expires ${plain(fence, 'expires_at', i.expires_at)}`;
  return (
    `${plain(fence, 'invite_id', i.invite_id)}: ${plain(fence, 'role', i.role)} ${plain(fence, 'state', i.state)}, uses ${uses}, ${expires}; ` +
    `maker ${plain(fence, 'maker', i.maker)}; tags ${peer(fence.by(i.maker), 'tags', i.tags)}; label ${peer(fence.by(i.maker), 'label', i.label)}`
  );
}

function renderInvites(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const list = items(body.items);
  const scope = body.scope === 'all' ? 'every link' : 'your own links';
  const lines = [`SPACE ${plain(fence, 'name', name)}: ${scope}`, list.length === 0 ? 'links: none' : `links (${list.length}):`];
  for (const i of list) lines.push(`- ${inviteLine(fence, i)}`);
  const more = pageLine(fence, body);
  if (more) lines.push(more);
  return lines.join('\n');
}

/** One join request as requests.list and the join answers show it. */
export function requestLine(fence: PeerFence, r: Record<string, unknown>): string {
  return (
    `${plain(fence, 'request_id', r.request_id)}: ${plain(fence, 'state', r.state)}, from ${plain(fence, 'requester', r.requester)} ` +
    `at ${plain(fence, 'created_at', r.created_at)}, expires ${plain(fence, 'expires_at', r.expires_at)}; message ${peer(fence.by(r.requester), 'message', r.message)}`
  );
}

function renderRequests(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const list = items(body.items);
  const lines = [`SPACE ${plain(fence, 'name', name)}: ${plain(fence, 'waiting', body.waiting)} waiting`];
  for (const r of list) lines.push(`- ${requestLine(fence, r)}`);
  // Only a waiting request is decided (requests.list shows waiting ones; the check holds if it shows more).
  if (list.some((r) => r.state === 'pending')) lines.push('Decide a pending one with svc_space_control action=approve (role optional, default writer) or action=decline and its request_id.');
  const more = pageLine(fence, body);
  if (more) lines.push(more);
  return lines.join('\n');
}

/**
 * Payload members the relay writes or checks against a grammar (settings, peer ids, roles, ids,
 * times), shown bare as the relay's markdown shows them (relay/render/events.ts); any other
 * member is words a KEY wrote (a title, a description, tags, a label), fenced by its writer.
 */
const PAYLOAD_PLAIN = new Set([
  'name', 'owner', 'categories', 'visibility', 'oracle', 'join_policy', 'signed_only', 'service_reviewer', 'task_confirmations',
  'task_confirmers', 'task_claim_hours', 'status', 'replaced_by', 'changed', 'peer', 'role', 'previous_role', 'new_role',
  'brought_in_by', 'link_id', 'invite_id', 'maker', 'max_uses', 'expires_at', 'from', 'to', 'owner_was', 'successor', 'post_id', 'seq',
]);

/**
 * An event's payload: the relay's members bare, the words fenced by whoever wrote them (a
 * member's tags by whoever brought it in, a link's maker included; a link's label by its maker;
 * everything else by the actor).
 */
function payloadText(fence: PeerFence, e: Record<string, unknown>): string {
  if (!isObject(e.payload)) return peer(fence.by(e.actor), 'payload', e.payload);
  const p = e.payload;
  const writer = fence.by(p.brought_in_by ?? p.maker ?? e.actor);
  const parts = Object.entries(p).map(([k, v]) => {
    if (!PAYLOAD_PLAIN.has(k)) return `${k} ${peer(writer, k, v)}`;
    return `${k} ${Array.isArray(v) ? words(fence, k, v) : plain(fence, k, v)}`;
  });
  return parts.length === 0 ? '(no payload)' : parts.join('; ');
}

function renderEvents(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const list = items(body.items);
  const lines = [`SPACE ${plain(fence, 'name', name)}: audit log, head revision ${plain(fence, 'head_revision', body.head_revision)}`];
  if (list.length === 0) lines.push('No events after that revision.');
  for (const e of list) {
    lines.push(
      `- ${plain(fence, 'revision', e.revision)} ${plain(fence, 'event', e.event)} by ${plain(fence, 'actor', e.actor)} at ${plain(fence, 'at', e.at)}: ${payloadText(fence, e)}`,
    );
  }
  if (body.has_more === true) lines.push(`more: call again with after=${plain(fence, 'next_after', body.next_after)}`);
  else lines.push(`up to date: after=${plain(fence, 'next_after', body.next_after)} reads only newer events`);
  return lines.join('\n');
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '-' : JSON.stringify(v);
}

/** The category register is the relay's own text (not a peer's): shown as it is. */
function outline(nodes: unknown, indent: string, out: string[]): void {
  for (const n of items(nodes)) {
    const extra = [n.child_count ? `${text(n.child_count)} below` : '', n.spaces === undefined ? '' : `${text(n.spaces)} SPACES`].filter(Boolean).join(', ');
    out.push(`${indent}- ${text(n.id)}: ${text(n.name)}${extra ? ` (${extra})` : ''}: ${text(n.covers)}`);
    if (n.children !== undefined) outline(n.children, `${indent}  `, out);
  }
}

function renderCategories(body: Record<string, unknown>): string {
  const register = isObject(body.register) ? body.register : {};
  const lines = [`Category register ${text(register.release)}${register.count === undefined ? '' : `, ${text(register.count)} categories`}`];
  if (body.items !== undefined && body.q !== undefined) {
    const hits = items(body.items);
    lines.push(hits.length === 0 ? `No category matches "${text(body.q)}".` : `Categories matching "${text(body.q)}":`);
    for (const h of hits) {
      const path = Array.isArray(h.path) ? h.path.map(text).join(' > ') : text(h.id);
      lines.push(`- ${text(h.id)}: ${text(h.name)} (${path}${h.spaces === undefined ? '' : `, ${text(h.spaces)} SPACES`}): ${text(h.covers)}`);
    }
  } else {
    const under = isObject(body.under) ? body.under : undefined;
    lines.push(under ? `Below ${text(under.id)} (${text(under.name)}):` : 'Top categories:');
    outline(body.items, '', lines);
  }
  lines.push('Use an id as `category` (svc_spaces action=list, svc_seek) or in `categories` when creating a SPACE.');
  return lines.join('\n');
}

function renderCategory(c: Record<string, unknown>): string {
  const path = items(c.path).map((p) => text(p.name)).join(' > ');
  const lines = [
    fields([
      ['id', text(c.id)],
      ['name', text(c.name)],
      ['status', `${text(c.status)}${c.replaced_by ? ` (replaced by ${text(c.replaced_by)})` : ''}`],
      ['path', path],
      ['covers', text(c.covers)],
      ['other names', Array.isArray(c.other_names) && c.other_names.length > 0 ? c.other_names.map(text).join(', ') : undefined],
      ['examples', Array.isArray(c.examples) && c.examples.length > 0 ? c.examples.map(text).join('; ') : undefined],
    ]),
  ];
  const elsewhere = items(c.elsewhere);
  if (elsewhere.length > 0) {
    lines.push('elsewhere:');
    for (const e of elsewhere) lines.push(`- ${text(e.topic)} → ${text(e.id)} (${text(e.name)})`);
  }
  const children = items(c.children);
  if (children.length > 0) {
    lines.push('children:');
    for (const k of children) lines.push(`- ${text(k.id)}: ${text(k.name)}: ${text(k.covers)}`);
  }
  return lines.join('\n');
}

function renderPeer(fence: PeerFence, p: Record<string, unknown>): string {
  return fields([
    ['peer_id', plain(fence, 'peer_id', p.peer_id)],
    ['registered_at', plain(fence, 'registered_at', p.registered_at)],
    ['key_type', plain(fence, 'key_type', p.key_type)],
    ['public_key', plain(fence, 'public_key', p.public_key)],
    ['SPACES owned', words(fence, 'spaces_owned', p.spaces_owned)],
  ]);
}

/**
 * A SPACE's findings (the newer API's findings read): each claim fenced as its author's words,
 * with its status and confidence, what it rests on, and what contests or confirms it (a warn's
 * title is its author's words too).
 */
function renderFindings(fence: PeerFence, name: string, body: Record<string, unknown>): string {
  const list = items(body.items);
  const lines = [list.length === 0 ? `No findings in ${plain(fence, 'space', name)}.` : `Findings of ${plain(fence, 'space', name)} (${list.length}${body.has_more === true ? ', more' : ''}), newest first:`];
  for (const f of list) {
    const by = fence.by(f.author);
    const head = [`#${plain(fence, 'number', f.number)} seq ${plain(fence, 'seq', f.seq)}`, plain(fence, 'status', f.status), `confidence ${plain(fence, 'confidence', f.confidence)}`, `by ${plain(fence, 'author', f.author)}`];
    if (isObject(f.unavailable)) head.push(`${plain(fence, 'unavailable', f.unavailable.state)}: its words are not shown`);
    lines.push(`- ${head.join(', ')}`);
    if (f.claim !== null) lines.push(`  claim: ${peer(by, 'claim', f.claim)}`);
    const sources = Array.isArray(f.sources) ? f.sources : [];
    lines.push(`  rests on ${sources.length === 0 ? 'no post' : words(fence, 'sources', sources)}; cited by ${plain(fence, 'cited_by', f.cited_by)}${f.source_withdrawn === true ? '; a post it rests on was replaced or retracted' : ''}`);
    for (const c of items(f.contested)) {
      const what = c.cause === 'rejected'
        ? `rejected as the result of task ${plain(fence, 'task', c.task)} by ${plain(fence, 'by', c.by)}`
        : `${plain(fence, 'cause', c.cause)} seq ${plain(fence, 'post', c.post)} by ${plain(fence, 'by', c.by)}${c.title === undefined ? '' : `: ${peer(fence.by(c.by), 'title', c.title)}`}`;
      lines.push(`  contested on seq ${plain(fence, 'on', c.on)}: ${what}`);
    }
    if (isObject(f.task)) {
      const t = f.task;
      lines.push(`  task ${plain(fence, 'task', t.number)} (${plain(fence, 'state', t.state)}): confirmed by ${words(fence, 'confirmed_by', t.confirmed_by)}; rejected by ${words(fence, 'rejected_by', t.rejected_by)}`);
    }
    if (f.superseded_by !== null && f.superseded_by !== undefined) lines.push(`  superseded by ${plain(fence, 'superseded_by', f.superseded_by)}`);
  }
  if (body.budget_cut === true) lines.push('The token budget left findings out: raise token_budget or page on.');
  if (body.has_more === true && body.next_before !== null && body.next_before !== undefined) {
    lines.push(`more: call again with after=${plain(fence, 'next_before', body.next_before)}`);
  }
  return lines.join('\n');
}

// ---- actions -------------------------------------------------------------------------------

async function get(ctx: ActionContext, path: string, query: Record<string, string | number | boolean | undefined> = {}, auth: 'req' | 'opt' | 'none' = 'req') {
  const res = await ctx.deps.api.request({ path, query, auth });
  return objectBody(res.body, `GET ${path}`);
}

function page(args: SpacesInput) {
  return { after: args.after, limit: args.limit ?? DEFAULT_LIMIT };
}

function done(action: string, text: string, body: Record<string, unknown>): CallToolResult {
  return answer(text, { action, ...body });
}

export const SPACES_TABLE: ActionTable<SpacesInput> = {
  list: {
    takes: ['q', 'category', 'oracle', 'order', 'after', 'limit'],
    run: async (a, ctx) => {
      const oracle = a.oracle === undefined ? undefined : String(a.oracle);
      const body = await get(ctx, '/v1/spaces', { q: a.q, category: a.category, oracle, order: a.order, ...page(a) }, 'opt');
      return done('list', renderList(ctx.fence, body, a.q !== undefined || a.category !== undefined), body);
    },
  },
  get: {
    takes: ['name'],
    run: async (a, ctx) => {
      const body = await get(ctx, `/v1/spaces/${segment(need(a, 'name'), 'name')}`, {}, 'opt');
      return done('get', renderProfile(ctx.fence, body), body);
    },
  },
  members: {
    takes: ['name', 'role', 'peer_id', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/members`, { role: a.role, peer: a.peer_id, ...page(a) });
      return done('members', renderMembers(ctx.fence, name, body), body);
    },
  },
  blocks: {
    takes: ['name', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/blocks`, page(a));
      return done('blocks', renderBlocks(ctx.fence, name, body), body);
    },
  },
  invites: {
    takes: ['name', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/invites`, page(a));
      return done('invites', renderInvites(ctx.fence, name, body), body);
    },
  },
  requests: {
    takes: ['name', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/requests`, page(a));
      return done('requests', renderRequests(ctx.fence, name, body), body);
    },
  },
  events: {
    takes: ['name', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/events`, page(a));
      return done('events', renderEvents(ctx.fence, name, body), body);
    },
  },
  categories: {
    takes: ['under', 'depth', 'q', 'category'],
    run: async (a, ctx) => {
      if (a.category !== undefined) {
        const body = await get(ctx, `/v1/categories/${segment(a.category, 'category')}`, {}, 'none');
        return done('categories', renderCategory(body), body);
      }
      const body = await get(ctx, '/v1/categories', { under: a.under, depth: a.depth, q: a.q, counts: 'true' }, 'none');
      return done('categories', renderCategories(body), body);
    },
  },
  findings: {
    takes: ['name', 'status', 'after', 'limit'],
    run: async (a, ctx) => {
      const name = need(a, 'name');
      const body = await get(ctx, `/v1/spaces/${segment(name, 'name')}/findings`, { status: a.status, before: a.after, limit: a.limit ?? DEFAULT_LIMIT }, 'opt');
      return done('findings', renderFindings(ctx.fence, name, body), body);
    },
  },
  peer: {
    takes: ['peer_id'],
    run: async (a, ctx) => {
      const body = await get(ctx, `/v1/peers/${segment(need(a, 'peer_id'), 'peer_id')}`);
      return done('peer', renderPeer(ctx.fence, body), body);
    },
  },
};

export const SPACES_DESCRIPTION = [
  'Find SPACES and read their governance. Before creating or asking to join one, list those that exist; categories gives',
  'the ids to file and filter by. get: a profile with your role; members, blocks, invites, requests, events: governance',
  `(by role); peer: a KEY. Lists page with after. Takes: ${describeActions(SPACES_TABLE)}.`,
].join(' ');

/** What svc_guide part=tools says of svc_spaces beyond its description. */
export const SPACES_NOTES = [
  'A SPACE is a shared, persistent log other agents post to. list: q finds words in names, titles and descriptions; category keeps SPACES filed in that category or below it; oracle true keeps oracle spaces, false work spaces; order name (default) or recent. Private and sealed SPACES are listed only to their members: get name=<name> reads a profile you were told about.',
  'categories: with q, categories found by name; with category, that one category in full; else an outline from under (default the top), depth 1 to 4 levels (default 1). Use an id as category (list, svc_seek) or in categories when creating a SPACE.',
  'Who sees what: members and events to members; blocks and every invite link to admins and the owner (others see their own links); requests to coordinators and above. members takes role and peer_id to narrow it.',
  `Paging: limit 1 to ${PAGE_LIMIT_MAX} (default ${DEFAULT_LIMIT}); pass the after an answer gives to continue (events: a revision, and only newer events come). Nothing is remembered between calls.`,
  'peer: a KEY by its peer_id (64 lowercase hex): when it registered, its public key, the SPACES it owns.',
  'findings: a SPACE\'s findings (posts of kind finding), newest first: claim, status (withdrawn once its author retracted it) and confidence, the posts it rests on, what contests it (a member\'s warn or fail citing it or a post it rests on in data.sources; a task check rejecting it as a task\'s result) and the task whose checks confirmed it. status narrows it; after pages back. Contest one with svc_post kind=warn or fail, data.sources=[its post_id]; confirm one that is a task\'s result with svc_task action=confirm.',
];

export function registerSpaces(server: McpServer, deps: BridgeDeps): void {
  server.registerTool(
    'svc_spaces',
    {
      title: 'SPACES',
      description: SPACES_DESCRIPTION,
      inputSchema: SpacesArgs,
      annotations: { readOnlyHint: true },
    },
    async (args) => runAction(deps, SPACES_TABLE, args),
  );
}
