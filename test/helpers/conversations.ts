/**
 * Helpers for the direct-message tests over the real HTTP relay: start, send, read and act on
 * conversations as a KEY would, make two KEYS acquainted through a shared SPACE, and "changes
 * nothing" made checkable over the message tables as well as every other written table.
 */
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { admit, newSpace } from './posts.js';
import { call, type Answer, type MintedToken, type RunningRelay } from './relay.js';
import { stateProbe, tableDump } from './state.js';

export { call, type Answer };

export const MESSAGE_TABLES = [
  'conversations',
  'conversation_members',
  'conversation_left_members',
  'messages',
  'message_idempotency',
  'message_requests_sent',
  'message_blocks',
  'mailbox',
] as const;

/** A digest of every written table, the message tables included. */
export async function messageProbe(relay: RunningRelay): Promise<() => Promise<string>> {
  const others = await stateProbe(relay);
  const dumps = await Promise.all(MESSAGE_TABLES.map(async (table) => await tableDump(relay.store.db, table)));
  return async () => {
    const h = createHash('sha256').update(await others());
    for (const d of dumps) h.update(`\u0001${(await d.get())?.t ?? ''}`);
    return h.digest('hex');
  };
}

/** `run` answers `code` with `status` and the envelope, and no written table changed. */
export async function expectRefusedUnchanged(relay: RunningRelay, run: () => Promise<Answer>, code: string, status: number): Promise<Answer> {
  const probe = await messageProbe(relay);
  const before = await probe();
  const r = await run();
  expect(r.status, r.text).toBe(status);
  expect(r.body.error.code, r.text).toBe(code);
  expect(r.body.error.message.startsWith(`${code}.`)).toBe(true);
  expect(typeof r.body.error.request_id).toBe('string');
  expect(r.headers.get('x-request-id')).toBe(r.body.error.request_id);
  expect(await probe()).toBe(before);
  return r;
}

/** Make `a` and `b` share a private SPACE (owned by `a`, `b` a writer): they know each other. */
export async function acquaint(relay: RunningRelay, a: MintedToken, b: MintedToken): Promise<void> {
  await admit(relay, await newSpace(relay, a), b, 'writer');
}

export async function start(relay: RunningRelay, who: MintedToken, to: readonly MintedToken[] | readonly string[], body: Record<string, unknown> = {}): Promise<Answer> {
  const ids = to.map((t) => (typeof t === 'string' ? t : t.peerId));
  return await call(relay, 'POST', '/v1/conversations', { token: who.token, body: { to: ids, body: 'hello', ...body } });
}

export async function send(relay: RunningRelay, who: MintedToken, id: string, body: Record<string, unknown> = {}): Promise<Answer> {
  return await call(relay, 'POST', `/v1/conversations/${id}/messages`, { token: who.token, body: { body: 'more', ...body } });
}

export async function act(relay: RunningRelay, who: MintedToken, id: string, action: string, body: unknown = {}): Promise<Answer> {
  return await call(relay, 'POST', `/v1/conversations/${id}/${action}`, { token: who.token, body });
}

export async function getConversation(relay: RunningRelay, who: MintedToken, id: string): Promise<Answer> {
  return await call(relay, 'GET', `/v1/conversations/${id}`, { token: who.token });
}

export async function list(relay: RunningRelay, who: MintedToken, query = '', headers: Record<string, string> = {}): Promise<Answer> {
  return await call(relay, 'GET', `/v1/conversations${query}`, { token: who.token, headers });
}

export async function readMessages(relay: RunningRelay, who: MintedToken, id: string, query = '', headers: Record<string, string> = {}): Promise<Answer> {
  return await call(relay, 'GET', `/v1/conversations/${id}/messages${query}`, { token: who.token, headers });
}

/** Start and expect 201; answers the body. */
export async function started(relay: RunningRelay, who: MintedToken, to: readonly MintedToken[], body: Record<string, unknown> = {}): Promise<any> {
  const r = await start(relay, who, to, body);
  if (r.status !== 201) throw new Error(`conversations.start refused: ${r.status} ${r.text}`);
  return r.body;
}
