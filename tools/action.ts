/**
 * What the action tools (`svc_spaces`, `svc_join`, `svc_space_control`) share.
 *
 * - One flat input object per tool with a required `action` (an MCP tool's input schema is one
 *   JSON object; a union at the root is poorly supported by clients), and a table saying which
 *   arguments each action takes. An argument the chosen action does not take is refused with
 *   INVALID_REQUEST naming what it takes (protocol/api-notes.md §6), and so is a missing one.
 * - Path segments built from arguments: percent-encoded, never `.` or `..` (the URL parser
 *   would climb out of the route).
 * - Small renderers for the relay's JSON. The relay's answer is attacker-controlled: a value
 *   shown bare must match a plain grammar (names, ids, times, roles); anything else is fenced
 *   with the peer markers like peer-written text.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { SvcError } from '../shared/errors.js';
import type { BridgeDeps } from './deps.js';
import { BridgeError } from './errors.js';
import { peerFence, type PeerFence } from './render.js';
import { guarded } from './answer.js';

export interface ActionContext {
  readonly deps: BridgeDeps;
  /** The peer fence of this answer (one nonce per answer); `by(author)` fences the caller's own words as its own. */
  readonly fence: PeerFence;
}

export interface Action<A> {
  /** Arguments this action takes besides `action`. */
  readonly takes: readonly (keyof A & string)[];
  readonly run: (args: A, ctx: ActionContext) => Promise<CallToolResult>;
}

export type ActionTable<A extends { action: string }> = { readonly [K in A['action']]: Action<A> };

/** The arguments each action takes, for tool descriptions: `get (name); members (name, role, after)`. */
export function describeActions<A extends { action: string }>(table: ActionTable<A>): string {
  return describeTakes(Object.fromEntries(Object.entries(table as Record<string, Action<A>>).map(([name, a]) => [name, a.takes])));
}

/** `describeActions` from the arguments alone: `watch (space); watching (nothing else)`. */
export function describeTakes(takes: Readonly<Record<string, readonly string[]>>): string {
  return Object.entries(takes)
    .map(([name, args]) => `${name} (${args.join(', ') || 'nothing else'})`)
    .join('; ');
}

/** Check the arguments against the chosen action, then run it; any failure is a tool error. */
export function runAction<A extends { action: string }>(deps: BridgeDeps, table: ActionTable<A>, args: A): Promise<CallToolResult> {
  return guarded(deps, async () => {
    const action = (table as Record<string, Action<A> | undefined>)[args.action];
    if (action === undefined) throw new SvcError('INVALID_REQUEST', `action: one of ${Object.keys(table).join(', ')}`);
    const extra = Object.entries(args).filter(([k, v]) => k !== 'action' && v !== undefined && !(action.takes as readonly string[]).includes(k));
    if (extra.length > 0) {
      throw new SvcError(
        'INVALID_REQUEST',
        `${extra.map(([k]) => k).join(', ')}: action=${args.action} does not take ${extra.length > 1 ? 'these' : 'it'}; it takes ${action.takes.join(', ') || 'nothing else'}`,
      );
    }
    return action.run(args, { deps, fence: peerFence({ self: deps.identity.peerId }) });
  });
}

/** An argument the action cannot do without. */
export function need<A extends { action: string }, K extends keyof A & string>(args: A, field: K): NonNullable<A[K]> {
  const v = args[field];
  if (v === undefined || v === null) throw new SvcError('INVALID_REQUEST', `${field}: action=${args.action} needs it`);
  return v as NonNullable<A[K]>;
}

/** One path segment from an argument (agent-controlled): percent-encoded, never a dot segment. */
export function segment(value: string, field: string): string {
  if (value === '' || value === '.' || value === '..') throw new SvcError('INVALID_REQUEST', `${field}: not a name or id`);
  return encodeURIComponent(value);
}

// ---- rendering -----------------------------------------------------------------------------

/** Names, ids, roles, times, numbers: shown bare when they look like one. */
const PLAIN_RE = /^[A-Za-z0-9_.:+@/-]{1,200}$/;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function items(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** A value with a fixed grammar (relay-checked): bare when it has that shape, else fenced. */
export function plain(fence: PeerFence, field: string, v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'string' && PLAIN_RE.test(v)) return v;
  return fence(field, v);
}

/**
 * A peer id: `you` when it is the reader's own KEY, else as `plain` shows it. A page of the
 * reader's own posts would otherwise repeat the same 64 hex characters on every item (about 40
 * tokens each); the structured content keeps the id, and svc_whoami gives it.
 */
export function who(fence: PeerFence, v: unknown, field = 'peer_id'): string {
  return fence.self !== undefined && v === fence.self ? 'you' : plain(fence, field, v);
}

/** A field a PEER wrote (title, description, message, label, tags, payload): always fenced. */
export function peer(fence: PeerFence, field: string, v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (v === '') return '(empty)';
  if (Array.isArray(v) && v.length === 0) return '(none)';
  if (Array.isArray(v) && v.every((t) => typeof t === 'string')) return fence(field, v.join(', '));
  return fence(field, v);
}

/** A list of plain words (categories, roles): each checked like `plain`. */
export function words(fence: PeerFence, field: string, v: unknown): string {
  if (!Array.isArray(v) || v.length === 0) return '(none)';
  return v.map((w) => plain(fence, field, w)).join(', ');
}

/** The paging line of a list answer. */
export function pageLine(fence: PeerFence, body: Record<string, unknown>): string | undefined {
  if (body.has_more === true && body.next_after !== null && body.next_after !== undefined) {
    return `more: call again with after=${plain(fence, 'next_after', body.next_after)}`;
  }
  return undefined;
}

/** The relay's answer as an object (anything else is a broken relay). */
export function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (!isObject(body)) {
    throw new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${what} is not a JSON object`, 'Check that SVC_API points at an svc relay.');
  }
  return body;
}
