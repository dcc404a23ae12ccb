/**
 * The roles matrix of spec/1-concepts.md ("Roles matrix"), row by row and column by column, over
 * the real HTTP relay. Every action is tried by a KEY with no role, a reader, a writer, a
 * coordinator, an admin and the owner, each in a fresh SPACE built the same way, and answers
 * success or its exact code. For every refusal the SPACE's audit log head is unchanged.
 *
 * Each SPACE (private, join policy `request`) holds, besides the six actors:
 *   tW  a writer the coordinator brought in     tR  a reader the coordinator brought in
 *   tW2 a writer the owner brought in            tC  a coordinator the owner brought in
 *   tA  an admin                                  tK  a registered KEY outside the SPACE, with a
 *                                                     waiting join request
 * and one post by tW. Rows reading "public" or "open" use a public SPACE with the same members.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { ageKeys } from '../helpers/spaces.js';
import { call, freshName, rest } from '../helpers/invites.js';
import type { Answer } from '../helpers/spaces.js';
import { codeHash, newCode } from '../../relay/joining.js';
import type { SpaceRow } from '../../relay/store/spaces.js';

type Actor = 'none' | 'reader' | 'writer' | 'coordinator' | 'admin' | 'owner';
const ACTORS: readonly Actor[] = ['none', 'reader', 'writer', 'coordinator', 'admin', 'owner'];
type Target = 'tW' | 'tR' | 'tW2' | 'tC' | 'tA' | 'tK';

interface World {
  name: string;
  space: SpaceRow;
  keys: Record<Actor | Target, MintedToken>;
  requestId: string;
  postId: string;
  /** A live link made by tC (another coordinator), and one made by the acting KEY itself. */
  othersLink: string;
  ownLink: string;
}

interface Row {
  action: string;
  /** Which SPACE the row acts in. */
  kind?: 'private' | 'open';
  run(w: World, me: MintedToken): Promise<Answer>;
  /** What a success shows beyond its status (e.g. which links a list covers). */
  shows?(a: Answer, w: World): string;
  expect: Record<Actor, string>;
}

/** Shorthand for a row's six answers, in the column order of the spec's table. */
function answers(none: string, reader: string, writer: string, coordinator: string, admin: string, owner: string): Record<Actor, string> {
  return { none, reader, writer, coordinator, admin, owner };
}

const DENIED = 'CONTROL_DENIED';

const ROWS: Row[] = [
  {
    action: 'read profile',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}`, { token: me.token }),
    expect: answers('ok', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'read head_seq (private SPACE)',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}`, { token: me.token }),
    shows: (a) => (a.body.head_seq === null ? 'hidden' : 'shown'),
    expect: answers('ok:hidden', 'ok:shown', 'ok:shown', 'ok:shown', 'ok:shown', 'ok:shown'),
  },
  {
    action: 'read posts (private SPACE)',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/posts`, { token: me.token }),
    expect: answers('READ_DENIED', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'read posts and head_seq (public SPACE)',
    kind: 'open',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/posts`, { token: me.token }),
    shows: (a) => (typeof a.body.head_seq === 'string' ? 'shown' : 'hidden'),
    expect: answers('ok:shown', 'ok:shown', 'ok:shown', 'ok:shown', 'ok:shown', 'ok:shown'),
  },
  {
    action: 'read members',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/members`, { token: me.token }),
    expect: answers('READ_DENIED', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'read event log',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/events`, { token: me.token }),
    expect: answers('READ_DENIED', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'POST (private SPACE)',
    run: (w, me) => call(relay, 'POST', `/v1/spaces/${w.name}/posts`, { token: me.token, body: { kind: 'obs', body: 'seen' } }),
    expect: answers('WRITE_DENIED', 'WRITE_DENIED', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'POST (open SPACE)',
    kind: 'open',
    run: (w, me) => call(relay, 'POST', `/v1/spaces/${w.name}/posts`, { token: me.token, body: { kind: 'obs', body: 'seen' } }),
    expect: answers('ok', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'hand over own role (the owner: the SPACE)',
    run: (w, me) => call(relay, 'POST', `/v1/spaces/${w.name}/hand-over`, { token: me.token, body: { to: w.keys.tR.peerId } }),
    shows: (a) => a.body.role,
    expect: answers(DENIED, 'ok:reader', 'ok:writer', 'ok:coordinator', 'ok:admin', 'ok:owner'),
  },
  {
    action: 'leave',
    run: (w, me) => call(relay, 'DELETE', `/v1/spaces/${w.name}/members/${me.peerId}`, { token: me.token }),
    expect: answers('NOT_A_MEMBER', 'ok', 'ok', 'ok', 'ok', 'OWNER_CANNOT_LEAVE'),
  },
  {
    action: 'admit a writer by link',
    run: (w, me) => call(relay, 'POST', `/v1/spaces/${w.name}/invites`, { token: me.token, body: { role: 'writer' } }),
    expect: answers(DENIED, DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'admit a reader by id',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tK.peerId}`, { token: me.token, body: { role: 'reader' } }),
    expect: answers(DENIED, DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'admit a writer by deciding a request',
    run: (w, me) => call(relay, 'POST', `/v1/requests/${w.requestId}/approve`, { token: me.token }),
    expect: answers('REQUEST_NOT_FOUND', DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'decline a request',
    run: (w, me) => call(relay, 'POST', `/v1/requests/${w.requestId}/decline`, { token: me.token }),
    expect: answers('REQUEST_NOT_FOUND', DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'list join requests',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/requests`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'change a writer it brought in',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tW.peerId}`, { token: me.token, body: { role: 'reader' } }),
    expect: answers(DENIED, DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'remove a reader it brought in',
    run: (w, me) => call(relay, 'DELETE', `/v1/spaces/${w.name}/members/${w.keys.tR.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, 'ok', 'ok', 'ok'),
  },
  {
    action: 'change a writer another brought in',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tW2.peerId}`, { token: me.token, body: { role: 'reader' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'remove a writer another brought in',
    run: (w, me) => call(relay, 'DELETE', `/v1/spaces/${w.name}/members/${w.keys.tW2.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'make a link for coordinators',
    run: (w, me) => call(relay, 'POST', `/v1/spaces/${w.name}/invites`, { token: me.token, body: { role: 'coordinator' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'admit a coordinator by id',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tK.peerId}`, { token: me.token, body: { role: 'coordinator' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'change a coordinator',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tC.peerId}`, { token: me.token, body: { role: 'writer' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'remove a coordinator',
    run: (w, me) => call(relay, 'DELETE', `/v1/spaces/${w.name}/members/${w.keys.tC.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'list links',
    run: (w, me) => call(relay, 'GET', `/v1/spaces/${w.name}/invites`, { token: me.token }),
    shows: (a) => a.body.scope,
    expect: answers(DENIED, 'ok:own', 'ok:own', 'ok:own', 'ok:all', 'ok:all'),
  },
  {
    action: 'revoke own link',
    run: (w, me) => call(relay, 'DELETE', `/v1/invites/${w.ownLink}`, { token: me.token }),
    expect: answers('INVITE_NOT_FOUND', 'ok', 'ok', 'ok', 'ok', 'ok'),
  },
  {
    action: 'revoke another\'s link',
    run: (w, me) => call(relay, 'DELETE', `/v1/invites/${w.othersLink}`, { token: me.token }),
    expect: answers('INVITE_NOT_FOUND', 'INVITE_NOT_FOUND', 'INVITE_NOT_FOUND', 'INVITE_NOT_FOUND', 'ok', 'ok'),
  },
  {
    action: 'block a KEY ranked below from posting',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/blocks/${w.keys.tK.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'block an admin',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/blocks/${w.keys.tA.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'hide a POST by a KEY ranked below',
    run: (w, me) => call(relay, 'PUT', `/v1/posts/${w.postId}/hidden`, { token: me.token }),
    // A post the caller cannot read reads as nonexistent (spec/3-errors.md status overview).
    expect: answers('POST_NOT_FOUND', DENIED, DENIED, DENIED, 'ok', 'ok'),
  },
  {
    action: 'promote to admin',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tW2.peerId}`, { token: me.token, body: { role: 'admin' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'demote an admin',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${w.keys.tA.peerId}`, { token: me.token, body: { role: 'writer' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'revoke an admin',
    run: (w, me) => call(relay, 'DELETE', `/v1/spaces/${w.name}/members/${w.keys.tA.peerId}`, { token: me.token }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'change title',
    run: (w, me) => call(relay, 'PATCH', `/v1/spaces/${w.name}`, { token: me.token, body: { title: 'New title' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'change description',
    run: (w, me) => call(relay, 'PATCH', `/v1/spaces/${w.name}`, { token: me.token, body: { description: 'New words' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'change categories',
    run: (w, me) => call(relay, 'PATCH', `/v1/spaces/${w.name}`, { token: me.token, body: { categories: ['computing'] } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'change join policy',
    run: (w, me) => call(relay, 'PATCH', `/v1/spaces/${w.name}`, { token: me.token, body: { join_policy: 'invite' } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'ok'),
  },
  {
    action: 'set own tags',
    run: (w, me) => call(relay, 'PUT', `/v1/spaces/${w.name}/members/${me.peerId}`, { token: me.token, body: { role: 'reader', tags: ['me'] } }),
    expect: answers(DENIED, DENIED, DENIED, DENIED, DENIED, 'OWNER_IS_NOT_A_MEMBER'),
  },
  {
    action: 'change visibility',
    run: (w, me) => call(relay, 'PATCH', `/v1/spaces/${w.name}`, { token: me.token, body: { visibility: 'public' } }),
    expect: answers('INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST', 'INVALID_REQUEST'),
  },
];

let relay: RunningRelay;
let cast: Record<Actor | Target, MintedToken>;

beforeAll(async () => {
  relay = await startRelay();
  const names: (Actor | Target)[] = [...ACTORS, 'tW', 'tR', 'tW2', 'tC', 'tA', 'tK'];
  const keys = await Promise.all(names.map(() => mintToken(relay.url)));
  cast = Object.fromEntries(names.map((n, i) => [n, keys[i]!])) as Record<Actor | Target, MintedToken>;
  ageKeys(relay); // the owner may create public SPACES
});
afterAll(async () => {
  await relay.close();
});

/** A fresh SPACE holding every actor and target (see the file comment), built through the stores. */
async function build(kind: 'private' | 'open', actor: Actor): Promise<World> {
  rest(relay);
  const k = cast;
  const name = freshName(`rm-${kind}`);
  const body = kind === 'open'
    ? { name, visibility: 'public', categories: ['computing'], join_policy: 'open' }
    : { name, join_policy: 'request' };
  const created = await call(relay, 'POST', '/v1/spaces', { token: k.owner.token, body });
  if (created.status !== 201) throw new Error(`spaces.create: ${created.text}`);
  const space = (await relay.store.spaces.byName(name))!;
  const now = relay.clock.now();
  const put = async (peer: MintedToken, role: 'admin' | 'coordinator' | 'writer' | 'reader', by: MintedToken) =>
    await relay.store.members.admit(space, { peer: peer.peerId, role, tags: [], broughtInBy: by.peerId }, by.peerId, now);
  await put(k.admin, 'admin', k.owner);
  await put(k.coordinator, 'coordinator', k.owner);
  await put(k.writer, 'writer', k.owner);
  await put(k.reader, 'reader', k.owner);
  await put(k.tA, 'admin', k.owner);
  await put(k.tC, 'coordinator', k.owner);
  await put(k.tW2, 'writer', k.owner);
  await put(k.tW, 'writer', k.coordinator);
  await put(k.tR, 'reader', k.coordinator);
  // A waiting join request from tK (private SPACES take requests).
  let requestId = '';
  if (kind === 'private') {
    const ask = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: k.tK.token, body: { message: 'may I?' } });
    if (ask.status !== 202) throw new Error(`join: ${ask.text}`);
    requestId = ask.body.request_id;
  }
  const post = await call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: k.tW.token, body: { kind: 'obs', body: 'by tW' } });
  if (post.status !== 201) throw new Error(`posts.append: ${post.text}`);
  // Links: one by tC, and one by the acting KEY itself (written straight to the table, since
  // readers, writers and KEYS with no role cannot make one: they may hold links made earlier).
  const link = async (maker: MintedToken) =>
    (await relay.store.invites.create({
      space, id: `link-${name}-${maker.peerId.slice(0, 8)}`, codeHash: codeHash(newCode('invite', (n) => new Uint8Array(randomBytes(n)))),
      maker: maker.peerId, role: 'reader', tags: [], label: null, maxUses: null, expiresAt: null, now,
    })).invite.id;
  const othersLink = await link(k.tC);
  const ownLink = await link(k[actor]);
  return { name, space: (await relay.store.spaces.byName(name))!, keys: k, requestId, postId: post.body.post_id, othersLink, ownLink };
}

async function outcome(row: Row, w: World, a: Answer): Promise<string> {
  if (a.status >= 400) return String(a.body?.error?.code ?? `HTTP ${a.status}`);
  return row.shows ? `ok:${row.shows(a, w)}` : 'ok';
}

describe('roles matrix (spec/1-concepts.md)', () => {
  it('answers every action for every rank as the matrix says, and no refusal moves the audit log', async () => {
    const got: Record<string, Record<Actor, string>> = {};
    const want: Record<string, Record<Actor, string>> = {};
    const moved: string[] = [];
    for (const row of ROWS) {
      got[row.action] = {} as Record<Actor, string>;
      want[row.action] = row.expect;
      for (const actor of ACTORS) {
        const w = await build(row.kind ?? 'private', actor);
        const head = (await relay.store.events.head(w.space.id)).revision;
        const a = await row.run(w, w.keys[actor]);
        const result = await outcome(row, w, a);
        got[row.action]![actor] = result;
        if (a.status >= 400 && (await relay.store.events.head(w.space.id)).revision !== head) moved.push(`${row.action} / ${actor}`);
      }
    }
    expect(got).toEqual(want);
    expect(moved).toEqual([]);
  }, 120_000);
});
