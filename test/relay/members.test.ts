/**
 * Members and per-SPACE blocks over the real HTTP relay: members.list, members.set,
 * members.revoke, space_blocks.list/set/remove, with every refusal the catalogue lists for them,
 * their events, and the audit head left unchanged by each refused write. Also /v1/me
 * memberships and peers.get SPACES owned.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { insertRows, privateSpaceRow, SPACES_COLUMNS } from '../helpers/test-store.js';
import { auditHead, call, createSpace, freshName, type Answer } from '../helpers/spaces.js';
import { ADMINS_PER_SPACE, GRANTED_SPACES_PER_KEY, MEMBERS_PER_SPACE, SPACES_PER_KEY } from '../../shared/limits.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let coord: MintedToken;
let coord2: MintedToken;
let writer: MintedToken;
let reader: MintedToken;
let outsider: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  [owner, admin, coord, coord2, writer, reader, outsider] = await Promise.all([
    mintToken(relay.url),
    mintToken(relay.url),
    mintToken(relay.url),
    mintToken(relay.url),
    mintToken(relay.url),
    mintToken(relay.url),
    mintToken(relay.url),
  ]);
});
afterAll(async () => {
  await relay.close();
});
// Writes are 30 a minute per KEY (burst 60): let the buckets refill between tests.
beforeEach(() => relay.clock.advance(5 * 60_000));

function put(name: string, who: MintedToken, peer: string, body: unknown): Promise<Answer> {
  return call(relay, 'PUT', `/v1/spaces/${name}/members/${peer}`, { token: who.token, body });
}
function del(name: string, who: MintedToken, peer: string): Promise<Answer> {
  return call(relay, 'DELETE', `/v1/spaces/${name}/members/${peer}`, { token: who.token });
}
async function lastEvent(name: string) {
  const space = (await relay.store.spaces.byName(name))!;
  return (await relay.store.events.list(space.id, 0, 100_000)).at(-1)!;
}
async function expectRefused(r: Answer, code: string, name: string, head: number): Promise<void> {
  expect(r.body?.error?.code, r.text).toBe(code);
  expect(await auditHead(relay, name)).toBe(head);
}

/** A SPACE owned by `owner` with admin, coordinator (x2), writer and reader admitted by the owner. */
async function staffedSpace(): Promise<string> {
  const name = freshName('team');
  await createSpace(relay, owner.token, { name });
  for (const [who, role] of [
    [admin, 'admin'],
    [coord, 'coordinator'],
    [coord2, 'coordinator'],
    [writer, 'writer'],
    [reader, 'reader'],
  ] as const) {
    const r = await put(name, owner, who.peerId, { role });
    expect(r.status, r.text).toBe(201);
  }
  return name;
}

describe('members.set', () => {
  it('admits a KEY with member.granted, naming who brought it in', async () => {
    const name = freshName('adm');
    await createSpace(relay, owner.token, { name });
    const r = await put(name, owner, writer.peerId, { role: 'writer', tags: ['ops', 'build'] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      space: name,
      peer: writer.peerId,
      role: 'writer',
      tags: ['build', 'ops'],
      brought_in_by: owner.peerId,
      link_id: null,
      state: 'granted',
      revision: '2',
    });
    const e = await lastEvent(name);
    expect(e).toMatchObject({ revision: 2, event: 'member.granted', actor: owner.peerId });
    expect(e.payload).toEqual({ peer: writer.peerId, role: 'writer', tags: ['build', 'ops'], brought_in_by: owner.peerId, link_id: null });
  });

  it('changes role and tags with member.updated, keeps tags when omitted and writes nothing when nothing differs', async () => {
    const name = freshName('chg');
    await createSpace(relay, owner.token, { name });
    await put(name, owner, writer.peerId, { role: 'writer', tags: ['x'] });
    const up = await put(name, owner, writer.peerId, { role: 'coordinator' });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ role: 'coordinator', tags: ['x'], state: 'updated', revision: '3' });
    expect((await lastEvent(name)).payload).toEqual({
      peer: writer.peerId,
      role: 'coordinator',
      tags: ['x'],
      brought_in_by: owner.peerId,
      link_id: null,
      previous_role: 'writer',
    });
    const same = await put(name, owner, writer.peerId, { role: 'coordinator', tags: ['x'] });
    expect(same.body).toMatchObject({ state: 'unchanged', revision: null });
    expect(await auditHead(relay, name)).toBe(3);
    const retag = await put(name, owner, writer.peerId, { role: 'coordinator', tags: [] });
    expect(retag.body).toMatchObject({ tags: [], state: 'updated', revision: '4' });
  });

  it('refuses bad roles with INVALID_ROLE and bad tags with INVALID_TAGS or TAG_RESERVED', async () => {
    const name = freshName('val');
    await createSpace(relay, owner.token, { name });
    const head = await auditHead(relay, name);
    for (const body of [{ role: 'owner' }, { role: 'boss' }, { role: 'Admin' }, { role: 3 }]) {
      await expectRefused(await put(name, owner, writer.peerId, body), 'INVALID_ROLE', name, head);
    }
    await expectRefused(await put(name, owner, writer.peerId, {}), 'INVALID_REQUEST', name, head);
    const nine = Array.from({ length: 9 }, (_, i) => `t${i}`);
    for (const tags of [nine, ['UPPER'], ['a', 'a'], ['_x'], 'ops', [7], ['x'.repeat(33)]]) {
      await expectRefused(await put(name, owner, writer.peerId, { role: 'writer', tags }), 'INVALID_TAGS', name, head);
    }
    for (const tags of [['admin'], ['owner'], ['svc'], ['verified'], ['operator'], ['ok', 'reader']]) {
      await expectRefused(await put(name, owner, writer.peerId, { role: 'writer', tags }), 'TAG_RESERVED', name, head);
    }
    expect(await relay.store.members.get((await relay.store.spaces.byName(name))!.id, writer.peerId)).toBeUndefined();
  });

  it('refuses the owner as a target with OWNER_IS_NOT_A_MEMBER', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    await expectRefused(await put(name, admin, owner.peerId, { role: 'reader' }), 'OWNER_IS_NOT_A_MEMBER', name, head);
    await expectRefused(await put(name, owner, owner.peerId, { role: 'admin' }), 'OWNER_IS_NOT_A_MEMBER', name, head);
  });

  it('holds the rank rule: coordinator or above, current and new rank strictly below, nobody changes their own role', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    const denied: [MintedToken, string, unknown][] = [
      [writer, outsider.peerId, { role: 'reader' }], // writers admit nobody
      [reader, outsider.peerId, { role: 'reader' }],
      [outsider, outsider.peerId, { role: 'reader' }], // no role: nothing
      [coord, outsider.peerId, { role: 'coordinator' }], // coordinators admit below coordinator only
      [coord, writer.peerId, { role: 'reader' }], // not brought in by this coordinator
      [admin, outsider.peerId, { role: 'admin' }], // only the owner makes admins
      [admin, coord.peerId, { role: 'admin' }],
      [admin, admin.peerId, { role: 'coordinator' }], // own role
      [coord, coord.peerId, { role: 'coordinator', tags: ['me'] }], // own tags
      [coord, coord2.peerId, { role: 'writer' }], // same rank
    ];
    for (const [who, peer, body] of denied) {
      const r = await put(name, who, peer, body);
      expect(r.status, `${JSON.stringify(body)} ${r.text}`).toBe(403);
      await expectRefused(r, 'CONTROL_DENIED', name, head);
    }
    // Allowed: a coordinator admits a writer and then manages exactly that one.
    const admitted = await put(name, coord, outsider.peerId, { role: 'writer' });
    expect(admitted.status).toBe(201);
    expect(admitted.body.brought_in_by).toBe(coord.peerId);
    expect((await put(name, coord, outsider.peerId, { role: 'reader' })).body.state).toBe('updated');
    await expectRefused(await put(name, coord2, outsider.peerId, { role: 'writer' }), 'CONTROL_DENIED', name, head + 2);
    // An admin changes anyone below it, whoever brought them in; the owner changes admins.
    expect((await put(name, admin, outsider.peerId, { role: 'coordinator' })).status).toBe(200);
    expect((await put(name, owner, admin.peerId, { role: 'writer' })).body.role).toBe('writer');
    expect((await put(name, owner, admin.peerId, { role: 'admin' })).body.role).toBe('admin');
  });

  it('refuses an unregistered KEY with PEER_NOT_REGISTERED and a malformed one with INVALID_REQUEST', async () => {
    const name = freshName('reg');
    await createSpace(relay, owner.token, { name });
    const ghost = randomBytes(32).toString('hex');
    await expectRefused(await put(name, owner, ghost, { role: 'reader' }), 'PEER_NOT_REGISTERED', name, 1);
    await expectRefused(await put(name, owner, ghost.toUpperCase(), { role: 'reader' }), 'INVALID_REQUEST', name, 1);
    await expectRefused(await put(name, owner, ghost.slice(0, 20), { role: 'reader' }), 'INVALID_REQUEST', name, 1);
    expect((await put('no-such-space-x', owner, writer.peerId, { role: 'reader' })).body.error.code).toBe('SPACE_NOT_FOUND');
  });

  it('refuses a SPACE at its member limit with MEMBER_LIMIT', async () => {
    const name = freshName('full');
    await createSpace(relay, owner.token, { name });
    await relay.store.db.prepare('UPDATE spaces SET member_count = ? WHERE name = ?').run(MEMBERS_PER_SPACE, name);
    const r = await put(name, owner, writer.peerId, { role: 'reader' });
    expect(r.status).toBe(409);
    await expectRefused(r, 'MEMBER_LIMIT', name, 1);
  });

  it('refuses an admin past the 10,000 a SPACE may have with ADMIN_LIMIT', async () => {
    const name = freshName('admins');
    await createSpace(relay, owner.token, { name });
    const space = (await relay.store.spaces.byName(name))!;
    const db = relay.store.db;
    const peers = Array.from({ length: ADMINS_PER_SPACE }, () => randomBytes(32).toString('hex'));
    await db.transaction(async () => {
      await insertRows(db, 'keys (peer_id, key_type, public_key, registered_at)', peers.map((p) => [p, 'ed25519', p, 0]));
      await insertRows(
        db,
        'members (space_row_id, peer_id, role, tags_json, brought_in_by, link_id, direct, admitted_at, changed_at)',
        peers.map((p) => [space.id, p, 'admin', '[]', owner.peerId, null, 0, 0, 0]),
      );
    })();
    const r = await put(name, owner, writer.peerId, { role: 'admin' });
    expect(r.status).toBe(409);
    await expectRefused(r, 'ADMIN_LIMIT', name, 1);
    // Other roles still come in.
    expect((await put(name, owner, writer.peerId, { role: 'writer' })).status).toBe(201);
    await expectRefused(await put(name, owner, writer.peerId, { role: 'admin' }), 'ADMIN_LIMIT', name, 2);
  });

  it('refuses a KEY already in 10,000 SPACES, or granted 5,000 by governors, with SPACE_LIMIT', async () => {
    const full = await mintToken(relay.url);
    const granted = await mintToken(relay.url);
    const db = relay.store.db;
    const uuid = (series: number, i: number) => `00000000-0000-4000-800${series}-${i.toString(16).padStart(12, '0')}`;
    await db.transaction(async () => {
      await insertRows(db, SPACES_COLUMNS, Array.from({ length: SPACES_PER_KEY }, (_, i) => privateSpaceRow([uuid(1, i), `lim-a-${i}`, full.peerId])));
      await insertRows(db, SPACES_COLUMNS, Array.from({ length: GRANTED_SPACES_PER_KEY }, (_, i) => privateSpaceRow([uuid(2, i), `lim-b-${i}`, owner.peerId])));
      // Granted a reader's place in each of the second series by its owner.
      await db
        .prepare(
          `INSERT INTO members (space_row_id, peer_id, role, tags_json, brought_in_by, link_id, direct, admitted_at, changed_at)
           SELECT id, ?, 'reader', '[]', ?, NULL, 1, 0, 0 FROM spaces WHERE name LIKE 'lim-b-%'`,
        )
        .run(granted.peerId, owner.peerId);
    })();
    const name = freshName('lim');
    await createSpace(relay, owner.token, { name });
    const a = await put(name, owner, full.peerId, { role: 'reader' });
    expect(a.status).toBe(409);
    await expectRefused(a, 'SPACE_LIMIT', name, 1);
    const b = await put(name, owner, granted.peerId, { role: 'reader' });
    await expectRefused(b, 'SPACE_LIMIT', name, 1);
    expect(b.body.error.detail).toMatch(/governors/);
  });
});

describe('members.revoke', () => {
  it('removes a member with member.revoked and lets a member leave with member.left', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    const r = await del(name, admin, writer.peerId);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ peer: writer.peerId, role: 'writer', event: 'member.revoked', revision: String(head + 1) });
    expect(await lastEvent(name)).toMatchObject({ event: 'member.revoked', actor: admin.peerId, payload: { peer: writer.peerId, role: 'writer' } });
    const leave = await del(name, reader, reader.peerId);
    expect(leave.body).toMatchObject({ event: 'member.left', role: 'reader', revision: String(head + 2) });
    expect(await lastEvent(name)).toMatchObject({ event: 'member.left', actor: reader.peerId });
    const leaveAdmin = await del(name, admin, admin.peerId);
    expect(leaveAdmin.body.event).toBe('member.left');
    expect((await relay.store.spaces.byName(name))!.memberCount).toBe(2);
  });

  it('refuses the owner leaving with OWNER_CANNOT_LEAVE and others removing it with OWNER_IS_NOT_A_MEMBER', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    await expectRefused(await del(name, owner, owner.peerId), 'OWNER_CANNOT_LEAVE', name, head);
    await expectRefused(await del(name, admin, owner.peerId), 'OWNER_IS_NOT_A_MEMBER', name, head);
  });

  it('refuses a KEY that is not a member with NOT_A_MEMBER, and non-governors with CONTROL_DENIED first', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    await expectRefused(await del(name, admin, outsider.peerId), 'NOT_A_MEMBER', name, head);
    await expectRefused(await del(name, outsider, outsider.peerId), 'NOT_A_MEMBER', name, head);
    await expectRefused(await del(name, writer, outsider.peerId), 'CONTROL_DENIED', name, head);
    await expectRefused(await del(name, writer, reader.peerId), 'CONTROL_DENIED', name, head);
    await expectRefused(await del(name, coord, writer.peerId), 'CONTROL_DENIED', name, head); // not brought in by it
    await expectRefused(await del(name, admin, coord.peerId.slice(1)), 'INVALID_REQUEST', name, head);
    await expectRefused(await del(name, admin, admin.peerId.replace(/.$/, 'x')), 'INVALID_REQUEST', name, head);
    await expectRefused(await del(name, coord, coord2.peerId), 'CONTROL_DENIED', name, head);
  });

  it('refuses member writes in a closed SPACE with SPACE_CLOSED', async () => {
    const name = await staffedSpace();
    await relay.store.spaces.close((await relay.store.spaces.byName(name))!.id, null, relay.clock.now());
    const head = await auditHead(relay, name);
    await expectRefused(await put(name, owner, outsider.peerId, { role: 'reader' }), 'SPACE_CLOSED', name, head);
    await expectRefused(await put(name, owner, writer.peerId, { role: 'reader' }), 'SPACE_CLOSED', name, head);
    await expectRefused(await del(name, owner, writer.peerId), 'SPACE_CLOSED', name, head);
    await expectRefused(await del(name, reader, reader.peerId), 'SPACE_CLOSED', name, head);
    const block = await call(relay, 'PUT', `/v1/spaces/${name}/blocks/${outsider.peerId}`, { token: owner.token });
    await expectRefused(block, 'SPACE_CLOSED', name, head);
  });
});

describe('members.list', () => {
  it('lists members with role, tags, who brought them in and the link, and names the owner apart', async () => {
    const name = await staffedSpace();
    await put(name, owner, writer.peerId, { role: 'writer', tags: ['night'] });
    const r = await call(relay, 'GET', `/v1/spaces/${name}/members`, { token: reader.token });
    expect(r.status).toBe(200);
    expect(r.body.owner).toEqual({ peer: owner.peerId });
    expect(r.body.items).toHaveLength(5);
    expect(r.body.items.map((i: { peer: string }) => i.peer)).toEqual([admin, coord, coord2, writer, reader].map((k) => k.peerId).sort());
    const w = r.body.items.find((i: { peer: string }) => i.peer === writer.peerId);
    expect(w).toMatchObject({ role: 'writer', tags: ['night'], brought_in_by: owner.peerId, link_id: null });
    expect(r.body.notice).toMatch(/PEER/);
    const owners = await call(relay, 'GET', `/v1/spaces/${name}/members`, { token: owner.token });
    expect(owners.status).toBe(200);
  });

  it('filters by role and peer, pages with after, and refuses a bad role with INVALID_ROLE', async () => {
    const name = await staffedSpace();
    const coords = await call(relay, 'GET', `/v1/spaces/${name}/members?role=coordinator`, { token: writer.token });
    expect(coords.body.items.map((i: { peer: string }) => i.peer).sort()).toEqual([coord.peerId, coord2.peerId].sort());
    const one = await call(relay, 'GET', `/v1/spaces/${name}/members?peer=${reader.peerId}`, { token: writer.token });
    expect(one.body.items).toHaveLength(1);
    expect(one.body.items[0].role).toBe('reader');
    const first = await call(relay, 'GET', `/v1/spaces/${name}/members?limit=2`, { token: writer.token });
    expect(first.body).toMatchObject({ has_more: true });
    const second = await call(relay, 'GET', `/v1/spaces/${name}/members?limit=10&after=${first.body.next_after}`, { token: writer.token });
    expect(second.body).toMatchObject({ has_more: false, next_after: null });
    expect(first.body.items.length + second.body.items.length).toBe(5);
    const bad = await call(relay, 'GET', `/v1/spaces/${name}/members?role=owner`, { token: writer.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_ROLE');
  });

  it('refuses a KEY with no role, even in a public SPACE, with READ_DENIED', async () => {
    relay.clock.advance(25 * 3600_000);
    const name = freshName('lpub');
    await createSpace(relay, owner.token, { name, visibility: 'public', categories: ['general'] });
    const r = await call(relay, 'GET', `/v1/spaces/${name}/members`, { token: outsider.token });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('READ_DENIED');
    const anon = await call(relay, 'GET', `/v1/spaces/${name}/members`);
    expect(anon.status).toBe(401);
  });
});

describe('space_blocks', () => {
  function block(name: string, who: MintedToken, peer: string, method: 'PUT' | 'DELETE' = 'PUT'): Promise<Answer> {
    return call(relay, method, `/v1/spaces/${name}/blocks/${peer}`, { token: who.token });
  }

  it('lets an admin block a KEY ranked below it, records peer.blocked, and shows it in the profile', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    const r = await block(name, admin, writer.peerId);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ peer: writer.peerId, blocked: true, changed: true, revision: String(head + 1) });
    expect(await lastEvent(name)).toMatchObject({ event: 'peer.blocked', actor: admin.peerId, payload: { peer: writer.peerId } });
    expect(await relay.store.blocks.isBlocked((await relay.store.spaces.byName(name))!.id, writer.peerId)).toBe(true);
    const again = await block(name, admin, writer.peerId);
    expect(again.body).toMatchObject({ blocked: true, changed: false, revision: null });
    expect(await auditHead(relay, name)).toBe(head + 1);
    const profile = await call(relay, 'GET', `/v1/spaces/${name}`, { token: writer.token });
    expect(profile.body.access.blocked).toBe(true);
    // A KEY with no role can be blocked too (from asking to join).
    expect((await block(name, admin, outsider.peerId)).body.changed).toBe(true);
  });

  it('lists blocks to admins and the owner only', async () => {
    const name = await staffedSpace();
    await block(name, owner, reader.peerId);
    await block(name, owner, outsider.peerId);
    const r = await call(relay, 'GET', `/v1/spaces/${name}/blocks`, { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: { peer: string }) => i.peer).sort()).toEqual([reader.peerId, outsider.peerId].sort());
    expect(r.body.items[0]).toMatchObject({ blocked_by: owner.peerId });
    expect(r.body.items[0].blocked_at).toMatch(/Z$/);
    const page = await call(relay, 'GET', `/v1/spaces/${name}/blocks?limit=1`, { token: owner.token });
    expect(page.body).toMatchObject({ has_more: true, next_after: page.body.items[0].peer });
    for (const who of [coord, writer, outsider]) {
      const denied = await call(relay, 'GET', `/v1/spaces/${name}/blocks`, { token: who.token });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('CONTROL_DENIED');
    }
  });

  it('unblocks with peer.unblocked, and repeating it changes nothing', async () => {
    const name = await staffedSpace();
    await block(name, owner, writer.peerId);
    const head = await auditHead(relay, name);
    const r = await block(name, admin, writer.peerId, 'DELETE');
    expect(r.body).toMatchObject({ blocked: false, changed: true, revision: String(head + 1) });
    expect(await lastEvent(name)).toMatchObject({ event: 'peer.unblocked', payload: { peer: writer.peerId } });
    const again = await block(name, admin, writer.peerId, 'DELETE');
    expect(again.body).toMatchObject({ blocked: false, changed: false, revision: null });
  });

  it('refuses coordinators, admins over admins and the owner, and anyone over itself, with CONTROL_DENIED', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    const cases: [MintedToken, string][] = [
      [coord, writer.peerId],
      [writer, outsider.peerId],
      [outsider, writer.peerId],
      [admin, owner.peerId],
      [owner, owner.peerId],
      [admin, admin.peerId],
    ];
    for (const [who, peer] of cases) {
      await expectRefused(await block(name, who, peer), 'CONTROL_DENIED', name, head);
      await expectRefused(await block(name, who, peer, 'DELETE'), 'CONTROL_DENIED', name, head);
    }
    expect((await block(name, owner, admin.peerId)).body.changed).toBe(true);
  });

  it('refuses an unregistered KEY with PEER_NOT_REGISTERED and an unknown SPACE with SPACE_NOT_FOUND', async () => {
    const name = await staffedSpace();
    const head = await auditHead(relay, name);
    const ghost = randomBytes(32).toString('hex');
    await expectRefused(await block(name, owner, ghost), 'PEER_NOT_REGISTERED', name, head);
    await expectRefused(await block(name, owner, ghost, 'DELETE'), 'PEER_NOT_REGISTERED', name, head);
    expect((await block('no-such-space-y', owner, writer.peerId)).body.error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('/v1/me and peers.get', () => {
  it('lists the SPACES a KEY owns and belongs to, by name, with role, tags, visibility and head_seq, paged', async () => {
    const me = await mintToken(relay.url);
    const names = [freshName('m-a'), freshName('m-b'), freshName('m-c')];
    await createSpace(relay, me.token, { name: names[0] });
    await createSpace(relay, owner.token, { name: names[1] });
    await createSpace(relay, owner.token, { name: names[2] });
    await put(names[1]!, owner, me.peerId, { role: 'reader', tags: ['watch'] });
    await put(names[2]!, owner, me.peerId, { role: 'coordinator' });
    const r = await call(relay, 'GET', '/v1/me', { token: me.token });
    const expected = [
      { name: names[0], role: 'owner', tags: [], visibility: 'private', head_seq: '0', behind: null },
      { name: names[1], role: 'reader', tags: ['watch'], visibility: 'private', head_seq: '0', behind: null },
      { name: names[2], role: 'coordinator', tags: [], visibility: 'private', head_seq: '0', behind: null },
    ].sort((a, b) => (a.name! < b.name! ? -1 : 1));
    expect(r.body.memberships).toEqual({ items: expected, next_after: null, has_more: false });
    const p1 = await call(relay, 'GET', '/v1/me?limit=2', { token: me.token });
    expect(p1.body.memberships).toMatchObject({ has_more: true, next_after: expected[1]!.name });
    const p2 = await call(relay, 'GET', `/v1/me?limit=2&after=${p1.body.memberships.next_after}`, { token: me.token });
    expect(p2.body.memberships).toEqual({ items: [expected[2]], next_after: null, has_more: false });
    await del(names[1]!, me, me.peerId);
    const after = await call(relay, 'GET', '/v1/me', { token: me.token });
    expect(after.body.memberships.items.map((i: { name: string }) => i.name)).not.toContain(names[1]);
  });

  it('names the SPACES a KEY owns on its peer page', async () => {
    const me = await mintToken(relay.url);
    const names = [freshName('o-b'), freshName('o-a')];
    for (const name of names) await createSpace(relay, me.token, { name });
    const r = await call(relay, 'GET', `/v1/peers/${me.peerId}`, { token: outsider.token });
    expect(r.body.spaces_owned).toEqual([...names].sort());
  });
});
