/**
 * What a KEY outside a conversation learns of it, over the real HTTP relay, as a table (like
 * test/relay/roles-matrix.test.ts): each row is a read, each column an outsider, each cell one
 * comparison that must hold exactly.
 *
 * - `unrelated` (never a member) and `blocked` (a KEY a member blocks, not in the conversation):
 *   every read by conversation id answers exactly as for an id that never existed (status, code,
 *   message, detail) and changes nothing; reads that take no id (conversations.list, /v1/me,
 *   the mailbox, peers.get of the members) answer the same before the conversation existed and
 *   after everything that happened in it.
 * - `left` (a member who left a group): sees up to its leaving only; every read answers the same
 *   right after it left and after the others wrote more, one more member left and the group
 *   was read (head, latest, unread, list order, cursors, mail, counts).
 * - `declined` (the sender of a request its recipient declined): nobody is told; the sender's
 *   every read answers the same before and after the decline.
 * - `blocked-sender` (a KEY whose waiting request its recipient declined by blocking it): told
 *   nothing by reads; the same before and after the block.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import { acquaint, act, call, messageProbe, send, start, type Answer } from '../../helpers/conversations.js';

let relay: RunningRelay;

type Column = 'unrelated' | 'blocked' | 'left' | 'declined' | 'blocked-sender';
const COLUMNS: readonly Column[] = ['unrelated', 'blocked', 'left', 'declined', 'blocked-sender'];

/** A read by `who` of conversation `id`. */
type Read = (who: MintedToken, id: string) => Promise<Answer>;

const get = (path: string): Read => (who) => call(relay, 'GET', path, { token: who.token });
/** The same read as markdown (relay/http/markdown.ts), built from the same view. */
const markdown = (path: string): Read => (who) => call(relay, 'GET', path, { token: who.token, headers: { accept: 'text/markdown' } });
const byId = (method: string, suffix: string, body?: unknown): Read => (who, id) =>
  call(relay, method, `/v1/conversations/${id}${suffix}`, { token: who.token, body });

interface Row {
  read: string;
  run: Read;
  /** Columns the row applies to (all when absent). */
  only?: readonly Column[];
}

/** Reads that name the conversation. */
const BY_ID: readonly Row[] = [
  // mark_read first: it moves a member's own read position once, before anything is compared
  { read: 'conversations.mark_read', run: byId('POST', '/read', {}) },
  { read: 'conversations.mark_read far seq', run: byId('POST', '/read', { seq: '999' }) },
  { read: 'conversations.get', run: byId('GET', '') },
  { read: 'messages.read', run: byId('GET', '/messages') },
  { read: 'messages.read order=desc', run: byId('GET', '/messages?order=desc&limit=5') },
  { read: 'messages.read after a far seq', run: byId('GET', '/messages?after=999') },
  { read: 'messages.read detail=ids', run: byId('GET', '/messages?detail=ids') },
  { read: 'conversations.accept', run: byId('POST', '/accept', {}) },
  { read: 'conversations.decline', run: byId('POST', '/decline', {}) },
  { read: 'conversations.leave', run: byId('POST', '/leave', {}) },
  { read: 'messages.send', run: byId('POST', '/messages', { body: 'let me in' }), only: ['unrelated', 'blocked', 'left', 'declined'] },
  // Clearing changes a member's own view, so it is compared for members apart (below).
  { read: 'conversations.clear', run: byId('POST', '/clear', {}), only: ['unrelated', 'blocked'] },
];

/** Reads that take no conversation id. */
const GLOBAL: readonly Row[] = [
  { read: 'conversations.list', run: get('/v1/conversations') },
  { read: 'conversations.list state=requested', run: get('/v1/conversations?state=requested') },
  { read: 'conversations.list limit=1', run: get('/v1/conversations?limit=1') },
  { read: 'conversations.list as markdown', run: markdown('/v1/conversations') },
  { read: '/v1/me', run: get('/v1/me') },
  { read: 'mailbox', run: get('/v1/mailbox?detail=full') },
  { read: 'mailbox reason=message', run: get('/v1/mailbox?reason=message&reason=message_request') },
  { read: 'mailbox as markdown', run: markdown('/v1/mailbox?detail=full') },
  { read: 'peers.get of the starter', run: (who) => get(`/v1/peers/${w.starter.peerId}`)(who, '') },
  { read: 'peers.get of the other party', run: (who) => get(`/v1/peers/${w.other.peerId}`)(who, '') },
];

/** What two answers must share: a refusal's status, code, message and detail; a success's whole body. */
function view(a: Answer): unknown {
  if (a.status >= 400) {
    const e = a.body?.error ?? {};
    return { status: a.status, code: e.code, message: e.message, detail: e.detail, retry_after: e.retry_after };
  }
  // A markdown page's fence nonce is new with every answer (shared/peer-markers.ts).
  return { status: a.status, body: a.body ?? a.text.replace(/ [0-9a-f]{8}⟧/g, ' <nonce>⟧') };
}

interface World {
  starter: MintedToken;
  other: MintedToken;
  /** A group of starter, other, member and leaver; leaver left it. */
  group: string;
  /** The pair sender → recipient, declined by recipient. */
  declinedPair: string;
  /** The pair blockedSender → starter, declined when starter blocked blockedSender. */
  blockedPair: string;
  who: Record<Column, MintedToken>;
}

let w: World;
const never = randomUUID();

/** Answers of each cell: `a` and `b` must be equal. */
const cells = new Map<string, { a: unknown; b: unknown; digestMoved?: boolean }>();
const key = (column: Column, read: string) => `${column} | ${read}`;

function created(r: Answer): Answer {
  if (r.status !== 201) throw new Error(`refused: ${r.status} ${r.text}`);
  return r;
}

/** Let every bucket refill (writes 30 a minute, direct messages 60 a minute). */
const rest = () => relay.clock.advance(5 * 60_000);

/** Run every row for `column` (the conversation `id` for rows by id); answers views by row. */
async function views(column: Column, rows: readonly Row[], id: string): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const row of rows) {
    if (row.only && !row.only.includes(column)) continue;
    out.set(row.read, view(await row.run(w.who[column], id)));
    relay.clock.advance(1000);
  }
  rest();
  return out;
}

beforeAll(async () => {
  relay = await startRelay();
  const [starter, other, member, leaver, outsider, blocked, sender, recipient, blockedSender, friend] = await Promise.all(
    Array.from({ length: 10 }, () => mintToken(relay.url)),
  ) as [MintedToken, MintedToken, MintedToken, MintedToken, MintedToken, MintedToken, MintedToken, MintedToken, MintedToken, MintedToken];
  for (const k of [other, member, leaver]) await acquaint(relay, starter, k);
  await acquaint(relay, outsider, friend);
  await acquaint(relay, blocked, friend);
  w = {
    starter,
    other,
    group: '',
    declinedPair: '',
    blockedPair: '',
    who: { unrelated: outsider, blocked, left: leaver, declined: sender, 'blocked-sender': blockedSender },
  };
  // The outsiders have conversations of their own, so their lists and mail are not empty.
  created(await start(relay, outsider, [friend], { body: 'outsider’s own' }));
  created(await start(relay, friend, [blocked], { body: 'to the blocked KEY' }));
  expect((await call(relay, 'PUT', `/v1/blocks/${blocked.peerId}`, { token: starter.token })).status).toBe(200);
  rest();

  // Before the group exists: what the unrelated and the blocked KEY see without an id.
  const globalBefore = { unrelated: await views('unrelated', GLOBAL, ''), blocked: await views('blocked', GLOBAL, '') };

  // The group: starter, other, member, leaver (all acquainted with the starter: accepted).
  w.group = created(await start(relay, starter, [other, member, leaver], { body: 'group hello' })).body.conversation.conversation_id;
  created(await send(relay, other, w.group, { body: 'reply 1' }));
  created(await send(relay, leaver, w.group, { body: 'from the leaver' }));
  expect((await act(relay, leaver, w.group, 'leave')).status).toBe(200);
  // A message the leaver can see arrives in another conversation after the leave, so that
  // the group is older in its list; later activity in the group must not move it ahead.
  created(await start(relay, leaver, [starter], { body: 'leaver to starter, after leaving' }));
  rest();

  // The pair whose recipient will decline; the pair whose recipient will block its sender.
  w.declinedPair = created(await start(relay, sender, [recipient], { body: 'may I?' })).body.conversation.conversation_id;
  w.blockedPair = created(await start(relay, blockedSender, [starter], { body: 'hello stranger' })).body.conversation.conversation_id;
  rest();

  // Before: the leaver right after leaving, the senders before decline and block.
  const before = {
    left: { byId: await views('left', BY_ID, w.group), global: await views('left', GLOBAL, '') },
    declined: { byId: await views('declined', BY_ID, w.declinedPair), global: await views('declined', GLOBAL, '') },
    'blocked-sender': { byId: await views('blocked-sender', BY_ID, w.blockedPair), global: await views('blocked-sender', GLOBAL, '') },
  };

  // What happens next: the group goes on without the leaver, one more member leaves, members
  // read; the recipient declines; the starter blocks the blocked sender.
  created(await send(relay, starter, w.group, { body: 'after the leave 1' }));
  created(await send(relay, other, w.group, { body: 'after the leave 2' }));
  expect((await act(relay, member, w.group, 'leave')).status).toBe(200);
  expect((await act(relay, other, w.group, 'read')).status).toBe(200);
  expect((await act(relay, recipient, w.declinedPair, 'decline')).status).toBe(200);
  expect((await call(relay, 'PUT', `/v1/blocks/${blockedSender.peerId}`, { token: starter.token })).status).toBe(200);
  rest();

  // After.
  for (const column of ['left', 'declined', 'blocked-sender'] as const) {
    const id = column === 'left' ? w.group : column === 'declined' ? w.declinedPair : w.blockedPair;
    const after = { byId: await views(column, BY_ID, id), global: await views(column, GLOBAL, '') };
    for (const [read, a] of before[column].byId) cells.set(key(column, read), { a, b: after.byId.get(read) });
    for (const [read, a] of before[column].global) cells.set(key(column, read), { a, b: after.global.get(read) });
  }

  // The unrelated and the blocked KEY: by id, the group against an id that never existed,
  // and nothing written; without an id, before the group existed against now.
  for (const column of ['unrelated', 'blocked'] as const) {
    const probe = await messageProbe(relay);
    const state = await probe();
    const real = await views(column, BY_ID, w.group);
    const none = await views(column, BY_ID, never);
    const moved = await probe() !== state;
    for (const [read, a] of real) cells.set(key(column, read), { a, b: none.get(read), digestMoved: moved });
    const globalAfter = await views(column, GLOBAL, '');
    for (const [read, a] of globalBefore[column]) cells.set(key(column, read), { a, b: globalAfter.get(read) });
  }
}, 120_000);

afterAll(async () => {
  await relay.close();
});

describe.each([...BY_ID, ...GLOBAL].map((row) => [row.read, row] as const))('%s', (read, row) => {
  it.each(COLUMNS.filter((c) => !row.only || row.only.includes(c)))('tells the %s KEY nothing of the conversation', (column) => {
    const cell = cells.get(key(column, read));
    expect(cell, `no answer recorded for ${key(column, read)}`).toBeDefined();
    expect(cell!.b).toEqual(cell!.a);
    expect(cell!.digestMoved ?? false).toBe(false);
  });
});

describe('the outsiders were really outside', () => {
  it('an id that never existed is CONVERSATION_NOT_FOUND for the unrelated KEY', () => {
    expect(cells.get(key('unrelated', 'conversations.get'))!.b).toMatchObject({ status: 404, code: 'CONVERSATION_NOT_FOUND' });
  });

  it('the leaver still reads the group up to its leaving, and the others read past it', async () => {
    const mine = await call(relay, 'GET', `/v1/conversations/${w.group}`, { token: w.who.left.token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.state).toBe('left');
    const theirs = await call(relay, 'GET', `/v1/conversations/${w.group}`, { token: w.starter.token });
    expect(Number(theirs.body.head_seq)).toBeGreaterThan(Number(mine.body.head_seq));
  });

  it('the leaver, clearing after the others wrote more, clears up to its leaving only', async () => {
    const head = (await call(relay, 'GET', `/v1/conversations/${w.group}`, { token: w.who.left.token })).body.head_seq;
    const r = await act(relay, w.who.left, w.group, 'clear');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ conversation_id: w.group, state: 'left', cleared_seq: head });
    const after = await call(relay, 'GET', `/v1/conversations/${w.group}`, { token: w.who.left.token });
    expect(after.body).toMatchObject({ head_seq: head, latest: null, unread: false });
  });

  it('the declined sender sees its recipient as requested, and the blocked sender likewise', async () => {
    for (const [column, id] of [['declined', w.declinedPair], ['blocked-sender', w.blockedPair]] as const) {
      const r = await call(relay, 'GET', `/v1/conversations/${id}`, { token: w.who[column].token });
      expect(r.status, r.text).toBe(200);
      expect(r.body.members.map((m: { state: string }) => m.state).sort()).toEqual(['accepted', 'requested']);
    }
  });
});
