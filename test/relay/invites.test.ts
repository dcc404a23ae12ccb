/**
 * Invite links over the real HTTP relay (spec/2-endpoints.md invites.create, invites.list,
 * invites.revoke, invites.look, invites.remove; spec/1-concepts.md "Invite link"): the link and
 * code shown once and only their hash kept, defaults, rank rules, every refusal with its code,
 * and that a refused write leaves the audit log and mailboxes as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { bytesOf, numbered } from '../helpers/test-store.js';
import { admit, call, createSpace, eventsOf, expectRefused, freshName, grant, joinLink, makeLink, memberRow, rest, roleIn, snapshot } from '../helpers/invites.js';
import { sha256 } from '../../shared/hash.js';
import { toHex, utf8 } from '../../shared/encoding.js';
import { INVITE_DEFAULT_EXPIRES_SECONDS, LIVE_LINKS_PER_MAKER, RATE_LIMITS } from '../../shared/limits.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let coord: MintedToken;
let writer: MintedToken;
let outsider: MintedToken;
let space: string;

beforeAll(async () => {
  relay = await startRelay();
  [owner, admin, coord, writer, outsider] = (await Promise.all([1, 2, 3, 4, 5].map(() => mintToken(relay.url)))) as [
    MintedToken, MintedToken, MintedToken, MintedToken, MintedToken,
  ];
  space = freshName('inv');
  await createSpace(relay, owner.token, { name: space });
  await grant(relay, owner, space, admin.peerId, 'admin');
  await grant(relay, owner, space, coord.peerId, 'coordinator');
  await grant(relay, owner, space, writer.peerId, 'writer');
});
afterAll(async () => {
  await relay.close();
});

const CODE_RE = /^svc_inv_[0-9a-f]{32}$/;

describe('invites.create', () => {
  it('shows the link and code once, stores only the hash, and records invite.created without them', async () => {
    const before = relay.clock.now();
    const r = await call(relay, 'POST', `/v1/spaces/${space}/invites`, {
      token: owner.token,
      body: { role: 'writer', tags: ['ops', 'backend'], label: 'for the build agents' },
    });
    expect(r.status).toBe(201);
    expect(r.body.code).toMatch(CODE_RE);
    expect(r.body.link).toBe(`${relay.url}/join/${r.body.code}`);
    const caps = await call(relay, 'GET', '/v1/capabilities');
    expect(`${caps.body.protocol.invite_link_prefix}${r.body.code}`).toBe(r.body.link);
    expect(r.body).toMatchObject({ space, role: 'writer', tags: ['backend', 'ops'], max_uses: 10, uses: 0, state: 'live', label: 'for the build agents' });
    const expires = Date.parse(r.body.expires_at);
    expect(expires - before).toBeGreaterThanOrEqual(INVITE_DEFAULT_EXPIRES_SECONDS * 1000);
    expect(expires - relay.clock.now()).toBeLessThanOrEqual(INVITE_DEFAULT_EXPIRES_SECONDS * 1000);

    const row = await relay.store.db.prepare('SELECT * FROM invites WHERE id = ?').get(r.body.invite_id) as Record<string, unknown>;
    expect(toHex(row.code_hash as Uint8Array)).toBe(toHex(sha256(utf8(r.body.code))));
    expect(JSON.stringify(Object.values(row).map((v) => (v instanceof Uint8Array ? toHex(v) : v)))).not.toContain(r.body.code.slice(8));

    const last = (await eventsOf(relay, space)).at(-1)!;
    expect(last.event).toBe('invite.created');
    expect(String(last.revision)).toBe(r.body.revision);
    expect(last.payload).toMatchObject({ invite_id: r.body.invite_id, role: 'writer', tags: ['backend', 'ops'], max_uses: 10 });
    const text = JSON.stringify(last.payload);
    expect(text).not.toContain(r.body.code.slice(8));
    expect(text).not.toContain(toHex(sha256(utf8(r.body.code))));
  });

  it('takes null for unlimited uses and a lifetime without end', async () => {
    const r = await makeLink(relay, admin, space, { role: 'reader', max_uses: null, expires_in_seconds: null });
    expect(r).toMatchObject({ max_uses: null, expires_at: null, state: 'live', maker: admin.peerId });
  });

  it('lets admins make coordinator links and coordinators writer and reader links', async () => {
    expect((await makeLink(relay, admin, space, { role: 'coordinator' })).role).toBe('coordinator');
    expect((await makeLink(relay, coord, space, { role: 'writer' })).role).toBe('writer');
    expect((await makeLink(relay, coord, space, { role: 'reader' })).role).toBe('reader');
  });

  it('refuses bad roles, tags and bounds with their codes and writes nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ role: 'admin' }, 'INVALID_ROLE'],
      [{ role: 'boss' }, 'INVALID_ROLE'],
      [{ role: 'writer', tags: ['Bad Tag'] }, 'INVALID_TAGS'],
      [{ role: 'writer', tags: ['owner'] }, 'TAG_RESERVED'],
      [{ role: 'writer', max_uses: 0 }, 'INVALID_REQUEST'],
      [{ role: 'writer', expires_in_seconds: -5 }, 'INVALID_REQUEST'],
      [{ role: 'writer', expires_in_seconds: 1e12 }, 'INVALID_REQUEST'],
      [{ role: 'writer', colour: 'red' }, 'INVALID_REQUEST'],
    ];
    for (const [body, code] of cases) {
      const before = await snapshot(relay, space, [owner]);
      const r = await call(relay, 'POST', `/v1/spaces/${space}/invites`, { token: owner.token, body });
      expectRefused(r, code, before, await snapshot(relay, space, [owner]));
    }
  });

  it('refuses ranks that may not make the link (CONTROL_DENIED) and unknown SPACES', async () => {
    const cases: [MintedToken, string, string][] = [
      [outsider, 'reader', 'CONTROL_DENIED'],
      [writer, 'reader', 'CONTROL_DENIED'],
      [coord, 'coordinator', 'CONTROL_DENIED'],
    ];
    for (const [who, role, code] of cases) {
      const before = await snapshot(relay, space, [who]);
      const r = await call(relay, 'POST', `/v1/spaces/${space}/invites`, { token: who.token, body: { role } });
      expectRefused(r, code, before, await snapshot(relay, space, [who]));
    }
    const r = await call(relay, 'POST', '/v1/spaces/no-such-space-here/invites', { token: owner.token, body: { role: 'writer' } });
    expect(r.body.error.code).toBe('SPACE_NOT_FOUND');
  });

  it('refuses links in a sealed SPACE (SEALED_NO_LINKS) and in a closed one (SPACE_CLOSED)', async () => {
    const sealedName = freshName('sealed');
    const now = relay.clock.now();
    await relay.store.spaces.create({
      spaceId: '0d9c2a4e-5b1f-4c3a-9e7d-1a2b3c4d5e6f'.replace('1a2b', toHex(randomBytes(2))),
      name: sealedName, owner: owner.peerId, title: '', description: '', visibility: 'sealed', oracle: false,
      joinPolicy: 'request', signedOnly: false, categories: [], serviceReviewer: false,
      taskConfirmations: 0, taskConfirmers: 'members', taskClaimHours: 4, now,
    });
    let before = await snapshot(relay, sealedName, [owner]);
    let r = await call(relay, 'POST', `/v1/spaces/${sealedName}/invites`, { token: owner.token, body: { role: 'writer' } });
    expectRefused(r, 'SEALED_NO_LINKS', before, await snapshot(relay, sealedName, [owner]));

    const closed = freshName('closed');
    await createSpace(relay, owner.token, { name: closed });
    await relay.store.spaces.close((await relay.store.spaces.byName(closed))!.id, null, now);
    before = await snapshot(relay, closed, [owner]);
    r = await call(relay, 'POST', `/v1/spaces/${closed}/invites`, { token: owner.token, body: { role: 'writer' } });
    expectRefused(r, 'SPACE_CLOSED', before, await snapshot(relay, closed, [owner]));
  });

  it('refuses a maker with 100,000 live links in the SPACE, and again past 100,000 made in a day', async () => {
    const name = freshName('limit');
    const maker = await mintToken(relay.url);
    await createSpace(relay, maker.token, { name });
    const s = (await relay.store.spaces.byName(name))!;
    const now = relay.clock.now();
    await relay.store.db
      .prepare(
        `${numbered(LIVE_LINKS_PER_MAKER)}
         INSERT INTO invites (id, space_row_id, code_hash, maker, role, tags_json, label, max_uses, uses, created_at, expires_at)
         SELECT 'fill-${name}-' || i, ?, ${bytesOf(relay.store.db, `'fill-${name}-' || i`)}, ?, 'reader', '[]', NULL, 10, 0, ?, NULL FROM n`,
      )
      .run(s.id, maker.peerId, now - 1000);
    const before = await snapshot(relay, name, [maker]);
    const r = await call(relay, 'POST', `/v1/spaces/${name}/invites`, { token: maker.token, body: { role: 'writer' } });
    expectRefused(r, 'INVITE_LIMIT', before, await snapshot(relay, name, [maker]));
    expect(r.body.error.detail).toContain('live');

    // Revoke them all: no longer live, but still made within the day.
    await relay.store.db.prepare('UPDATE invites SET revoked_at = ? WHERE space_row_id = ?').run(now, s.id);
    expect(LIVE_LINKS_PER_MAKER).toBe(RATE_LIMITS.linksMade.limit);
    const r2 = await call(relay, 'POST', `/v1/spaces/${name}/invites`, { token: maker.token, body: { role: 'writer' } });
    expect(r2.body.error.code).toBe('INVITE_LIMIT');
    expect(r2.body.error.detail).toContain('a day');

    relay.clock.advance(24 * 60 * 60 * 1000 + 1000);
    const r3 = await call(relay, 'POST', `/v1/spaces/${name}/invites`, { token: maker.token, body: { role: 'writer' } });
    expect(r3.status).toBe(201);
  });
});

describe('invites.list', () => {
  it('shows every link to the owner and admins, own links to others, with uses and why dead, never the link', async () => {
    rest(relay);
    const name = freshName('list');
    await createSpace(relay, owner.token, { name });
    await grant(relay, owner, name, admin.peerId, 'admin');
    await grant(relay, owner, name, coord.peerId, 'coordinator');
    await grant(relay, owner, name, writer.peerId, 'reader');
    const a = await makeLink(relay, owner, name, { role: 'writer', max_uses: 1 });
    const b = await makeLink(relay, coord, name, { role: 'reader', expires_in_seconds: 60 });
    const c = await makeLink(relay, coord, name, { role: 'reader' });
    const joiner = await mintToken(relay.url);
    expect((await joinLink(relay, joiner, a.link)).status).toBe(200);
    expect((await call(relay, 'DELETE', `/v1/invites/${c.invite_id}`, { token: coord.token })).status).toBe(200);
    relay.clock.advance(61_000);

    const all = await call(relay, 'GET', `/v1/spaces/${name}/invites`, { token: admin.token });
    expect(all.status).toBe(200);
    expect(all.body.scope).toBe('all');
    const byId = new Map<string, any>(all.body.items.map((i: any) => [i.invite_id, i]));
    expect(byId.get(a.invite_id)).toMatchObject({ state: 'exhausted', uses: 1, max_uses: 1 });
    expect(byId.get(b.invite_id)).toMatchObject({ state: 'expired', uses: 0 });
    expect(byId.get(c.invite_id)).toMatchObject({ state: 'revoked' });
    expect(all.text).not.toContain('svc_inv_');
    expect(all.text).not.toContain('/join/');

    const own = await call(relay, 'GET', `/v1/spaces/${name}/invites`, { token: coord.token });
    expect(own.body.scope).toBe('own');
    expect(own.body.items.map((i: any) => i.invite_id).sort()).toEqual([b.invite_id, c.invite_id].sort());
    const readerOwn = await call(relay, 'GET', `/v1/spaces/${name}/invites`, { token: writer.token });
    expect(readerOwn.body.items).toEqual([]);

    const page1 = await call(relay, 'GET', `/v1/spaces/${name}/invites?limit=2`, { token: owner.token });
    expect(page1.body.items).toHaveLength(2);
    expect(page1.body.has_more).toBe(true);
    const page2 = await call(relay, 'GET', `/v1/spaces/${name}/invites?limit=2&after=${page1.body.next_after}`, { token: owner.token });
    expect(page2.body.items.map((i: any) => i.invite_id)).toEqual([c.invite_id]);
    expect(page2.body.next_after).toBeNull();

    const denied = await call(relay, 'GET', `/v1/spaces/${name}/invites`, { token: outsider.token });
    expect(denied.body.error.code).toBe('CONTROL_DENIED');
    const missing = await call(relay, 'GET', '/v1/spaces/no-such-space-here/invites', { token: owner.token });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');
  });

  it('reads a link as revoked once its maker no longer ranks above its role', async () => {
    rest(relay);
    const name = freshName('weak');
    const c2 = await mintToken(relay.url);
    await createSpace(relay, owner.token, { name });
    await grant(relay, owner, name, c2.peerId, 'coordinator');
    const link = await makeLink(relay, c2, name, { role: 'writer' });
    await grant(relay, owner, name, c2.peerId, 'writer');
    const list = await call(relay, 'GET', `/v1/spaces/${name}/invites`, { token: owner.token });
    expect(list.body.items[0]).toMatchObject({ invite_id: link.invite_id, state: 'revoked' });
    const joiner = await mintToken(relay.url);
    const r = await joinLink(relay, joiner, link.link);
    expect(r.body.error.code).toBe('INVITE_REVOKED');
  });
});

describe('invites.revoke', () => {
  it('kills a link for those who have not used it, once, with invite.revoked', async () => {
    rest(relay);
    const link = await makeLink(relay, coord, space, { role: 'reader' });
    const early = await mintToken(relay.url);
    expect((await joinLink(relay, early, link.link)).status).toBe(200);
    const r = await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: coord.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ invite_id: link.invite_id, state: 'revoked' });
    const ev = (await eventsOf(relay, space)).at(-1)!;
    expect(ev.event).toBe('invite.revoked');
    expect(String(ev.revision)).toBe(r.body.revision);

    const head = await snapshot(relay, space, [coord]);
    const again = await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: coord.token });
    expect(again.status).toBe(200);
    expect(await snapshot(relay, space, [coord])).toEqual(head);

    const late = await mintToken(relay.url);
    const refused = await joinLink(relay, late, link.link);
    expect(refused.body.error.code).toBe('INVITE_REVOKED');
    expect(await roleIn(relay, space, late.peerId)).toBeNull();
    // Whoever used it before stays, and using it again is harmless.
    const reuse = await joinLink(relay, early, link.link);
    expect(reuse.body).toMatchObject({ role: 'reader', state: 'member', changed: false });
  });

  it('lets an admin revoke anyone\'s link and tells others the id is unknown', async () => {
    rest(relay);
    const link = await makeLink(relay, coord, space, { role: 'reader' });
    for (const who of [writer, outsider]) {
      const before = await snapshot(relay, space, [who]);
      const r = await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: who.token });
      expectRefused(r, 'INVITE_NOT_FOUND', before, await snapshot(relay, space, [who]));
    }
    const unknown = await call(relay, 'DELETE', '/v1/invites/00000000-0000-4000-8000-000000000000', { token: owner.token });
    expect(unknown.body.error.code).toBe('INVITE_NOT_FOUND');
    const r = await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: admin.token });
    expect(r.body.state).toBe('revoked');
  });

  it('refuses in a closed SPACE (SPACE_CLOSED)', async () => {
    const name = freshName('shut');
    await createSpace(relay, owner.token, { name });
    const link = await makeLink(relay, owner, name, { role: 'reader' });
    await relay.store.spaces.close((await relay.store.spaces.byName(name))!.id, 'elsewhere', relay.clock.now());
    const before = await snapshot(relay, name, [owner]);
    const r = await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: owner.token });
    expectRefused(r, 'SPACE_CLOSED', before, await snapshot(relay, name, [owner]));
    const use = await joinLink(relay, outsider, link.link);
    expect(use.body.error.code).toBe('SPACE_CLOSED');
  });
});

describe('invites.look', () => {
  it('answers the SPACE, kind, role, uses, lifetime and whether the link still works', async () => {
    rest(relay);
    const link = await makeLink(relay, owner, space, { role: 'writer', tags: ['ci'], max_uses: 3 });
    const r = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { link: link.link } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ space, kind: 'admit', role: 'writer', tags: ['ci'], uses: 0, max_uses: 3, state: 'live', valid: true, expires_at: link.expires_at });
    const byCode = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { code: link.code, name: space } });
    expect(byCode.body.valid).toBe(true);
    await call(relay, 'DELETE', `/v1/invites/${link.invite_id}`, { token: owner.token });
    const dead = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { link: link.link } });
    expect(dead.body).toMatchObject({ state: 'revoked', valid: false });
    // Looking admits nobody.
    expect(await roleIn(relay, space, outsider.peerId)).toBeNull();
  });

  it('refuses what is not a link of this service (INVITE_INVALID) and an unknown SPACE name', async () => {
    const link = await makeLink(relay, owner, space, { role: 'reader' });
    const other = freshName('other');
    await createSpace(relay, owner.token, { name: other });
    const bad = [
      'hello',
      `https://elsewhere.example/join/${link.code}`,
      `${relay.url}/join/${link.code}?x=1`,
      `${relay.url}/invite/${link.code}`,
      `${relay.url}/join/svc_inv_${'0'.repeat(32)}`,
      `svc_inv_${'A'.repeat(32)}`,
      `svc_inv_${'0'.repeat(31)}`,
    ];
    for (const text of bad) {
      const r = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { link: text } });
      expect([text, r.status, r.body.error.code]).toEqual([text, 404, 'INVITE_INVALID']);
    }
    const wrongSpace = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { code: link.code, name: other } });
    expect(wrongSpace.body.error.code).toBe('INVITE_INVALID');
    const missing = await call(relay, 'POST', '/v1/invites/look', { token: outsider.token, body: { code: link.code, name: 'no-such-space-here' } });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('invites.remove', () => {
  it('removes the KEYS a link admitted and those they admitted, sparing any an owner or admin changed since', async () => {
    rest(relay);
    const name = freshName('purge');
    await createSpace(relay, owner.token, { name });
    await grant(relay, owner, name, admin.peerId, 'admin');
    const bad = await makeLink(relay, admin, name, { role: 'coordinator', max_uses: null });
    const [c1, c2, w1, w2, w3, keep] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => mintToken(relay.url)));
    for (const c of [c1!, c2!]) expect((await joinLink(relay, c, bad.link)).status).toBe(200);
    await admit(relay, c1!, name, w1!, 'writer');
    await admit(relay, c1!, name, w2!, 'writer');
    await grant(relay, c2!, name, w3!.peerId, 'reader');
    await admit(relay, owner, name, keep!, 'writer');
    // The owner changes w2 after c1 admitted it: w2 is spared.
    await grant(relay, owner, name, w2!.peerId, 'writer', ['trusted']);

    const r = await call(relay, 'POST', `/v1/invites/${bad.invite_id}/remove`, { token: admin.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ invite_id: bad.invite_id, state: 'revoked', removed: 4, spared: 1, remaining: 0 });
    for (const gone of [c1!, c2!, w1!, w3!]) expect(await roleIn(relay, name, gone.peerId)).toBeNull();
    expect(await roleIn(relay, name, w2!.peerId)).toBe('writer');
    expect(await roleIn(relay, name, keep!.peerId)).toBe('writer');
    const events = await eventsOf(relay, name);
    const revoked = events.filter((e) => e.event === 'member.revoked');
    expect(revoked.map((e) => e.payload.peer).sort()).toEqual([c1!, c2!, w1!, w3!].map((k) => k.peerId).sort());
    // Deepest first: the KEYS c1 and c2 brought in go before them.
    const order = revoked.map((e) => e.payload.peer);
    expect(order.indexOf(w1!.peerId)).toBeLessThan(order.indexOf(c1!.peerId));
    expect(order.indexOf(w3!.peerId)).toBeLessThan(order.indexOf(c2!.peerId));
    expect(events.some((e) => e.event === 'invite.revoked' && e.payload.invite_id === bad.invite_id)).toBe(true);
    const again = await joinLink(relay, c1!, bad.link);
    expect(again.body.error.code).toBe('INVITE_REVOKED');
  });

  it('works in batches until remaining is zero', async () => {
    rest(relay);
    const name = freshName('batch');
    await createSpace(relay, owner.token, { name });
    const link = await makeLink(relay, owner, name, { role: 'reader', max_uses: null });
    const keys = await Promise.all(Array.from({ length: 103 }, () => mintToken(relay.url)));
    for (let i = 0; i < keys.length; i += 20) {
      const answers = await Promise.all(keys.slice(i, i + 20).map((k) => joinLink(relay, k, link.link)));
      for (const a of answers) expect(a.status).toBe(200);
    }
    const first = await call(relay, 'POST', `/v1/invites/${link.invite_id}/remove`, { token: owner.token });
    expect(first.body).toMatchObject({ removed: 100, remaining: 3 });
    const second = await call(relay, 'POST', `/v1/invites/${link.invite_id}/remove`, { token: owner.token });
    expect(second.body).toMatchObject({ removed: 3, remaining: 0 });
    const still = [];
    for (const k of keys) if ((await memberRow(relay, name, k.peerId)) !== undefined) still.push(k);
    expect(still).toEqual([]);
    const third = await call(relay, 'POST', `/v1/invites/${link.invite_id}/remove`, { token: owner.token });
    expect(third.body).toMatchObject({ removed: 0, remaining: 0 });
  });

  it('tells anyone but the maker, the owner and admins that the id is unknown, and refuses in a closed SPACE', async () => {
    rest(relay);
    const link = await makeLink(relay, coord, space, { role: 'reader' });
    const before = await snapshot(relay, space, [writer]);
    const r = await call(relay, 'POST', `/v1/invites/${link.invite_id}/remove`, { token: writer.token });
    expectRefused(r, 'INVITE_NOT_FOUND', before, await snapshot(relay, space, [writer]));
    const unknown = await call(relay, 'POST', '/v1/invites/nothing-here/remove', { token: owner.token });
    expect(unknown.body.error.code).toBe('INVITE_NOT_FOUND');

    const name = freshName('shut2');
    await createSpace(relay, owner.token, { name });
    const l2 = await makeLink(relay, owner, name, { role: 'reader' });
    await relay.store.spaces.close((await relay.store.spaces.byName(name))!.id, null, relay.clock.now());
    const b2 = await snapshot(relay, name, [owner]);
    const closed = await call(relay, 'POST', `/v1/invites/${l2.invite_id}/remove`, { token: owner.token });
    expectRefused(closed, 'SPACE_CLOSED', b2, await snapshot(relay, name, [owner]));
  });
});
