/**
 * Hand-over over the real HTTP relay (spec/1-concepts.md "Hand-over"; spec/2-endpoints.md
 * hand_over.create, hand_over.accept, hand_over.decline, join.link with a hand-over link):
 * offers to a KEY and as one-use links, what the successor takes over, the owner handing over
 * the SPACE, one offer at a time, every refusal with its code, and that a refused write leaves
 * the audit log and mailboxes as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { bytesOf, numbered } from '../helpers/test-store.js';
import { admit, call, createSpace, eventsOf, expectRefused, freshName, grant, joinLink, makeLink, memberRow, rest, roleIn, snapshot } from '../helpers/invites.js';
import { RATE_LIMITS } from '../../shared/limits.js';
import { toHex } from '../../shared/encoding.js';

let relay: RunningRelay;
let owner: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

async function space(): Promise<string> {
  rest(relay);
  const name = freshName('ho');
  await createSpace(relay, owner.token, { name });
  return name;
}

function offer(who: MintedToken, name: string, body: Record<string, unknown> = {}) {
  return call(relay, 'POST', `/v1/spaces/${name}/hand-over`, { token: who.token, body });
}

function accept(who: MintedToken, id: string) {
  return call(relay, 'POST', `/v1/hand-overs/${id}/accept`, { token: who.token });
}

describe('hand-over of a role to a KEY', () => {
  it('offers through the mailbox; the successor takes role, tags, links and KEYS brought in; the giver leaves', async () => {
    const name = await space();
    const [giver, successor, w] = [await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'coordinator', ['lead']);
    await grant(relay, owner, name, successor.peerId, 'reader');
    const link = await makeLink(relay, giver, name, { role: 'writer' });
    await joinLink(relay, w, link.link);
    expect((await memberRow(relay, name, w.peerId))!.broughtInBy).toBe(giver.peerId);

    const r = await offer(giver, name, { to: successor.peerId, label: 'over to you' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ space: name, from: giver.peerId, role: 'coordinator', to: successor.peerId, state: 'waiting', by_link: false, replaced: null });
    expect(r.body.code).toBeUndefined();
    const box = await relay.store.mailbox.list(successor.peerId, 0, 100);
    expect(box.at(-1)).toMatchObject({ reason: 'hand_over', offerId: r.body.offer_id });

    const a = await accept(successor, r.body.offer_id);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ name, role: 'coordinator', tags: ['lead'], state: 'handed_over', changed: true, handed_over_by: giver.peerId });
    expect(await roleIn(relay, name, giver.peerId)).toBeNull();
    expect(await memberRow(relay, name, successor.peerId)).toMatchObject({ role: 'coordinator', tags: ['lead'], broughtInBy: owner.peerId });
    expect((await memberRow(relay, name, w.peerId))!.broughtInBy).toBe(successor.peerId);
    expect((await relay.store.invites.byId(link.invite_id))!.maker).toBe(successor.peerId);
    const last = (await eventsOf(relay, name)).at(-1)!;
    expect(last).toMatchObject({ event: 'member.handed_over', actor: successor.peerId, payload: { peer: giver.peerId, role: 'coordinator', successor: successor.peerId } });
    expect(String(last.revision)).toBe(a.body.revision);
    // The successor now governs what the giver brought in.
    const change = await call(relay, 'PUT', `/v1/spaces/${name}/members/${w.peerId}`, { token: successor.token, body: { role: 'reader' } });
    expect(change.status).toBe(200);
    // The offer is spent.
    expect((await accept(successor, r.body.offer_id)).body.error.code).toBe('INVITE_EXHAUSTED');
  });

  it('admits a successor from another shared SPACE as a new member with the giver\'s manager', async () => {
    const name = await space();
    const shared = await space();
    const [giver, successor] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer', ['x']);
    await grant(relay, owner, shared, giver.peerId, 'reader');
    await grant(relay, owner, shared, successor.peerId, 'reader');
    const r = await offer(giver, name, { to: successor.peerId });
    const a = await accept(successor, r.body.offer_id);
    expect(a.body).toMatchObject({ role: 'writer', tags: ['x'] });
    expect(await memberRow(relay, name, successor.peerId)).toMatchObject({ role: 'writer', broughtInBy: owner.peerId });
    const kinds = (await eventsOf(relay, name)).slice(-2).map((e) => e.event);
    expect(kinds).toEqual(['member.granted', 'member.handed_over']);
  });

  it('keeps one offer per holder: a new one replaces the last', async () => {
    const name = await space();
    const [giver, k1, k2] = [await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, k1.peerId, 'reader');
    await grant(relay, owner, name, k2.peerId, 'reader');
    const first = await offer(giver, name, { to: k1.peerId });
    const second = await offer(giver, name, { to: k2.peerId });
    expect(second.body.replaced).toBe(first.body.offer_id);
    const before = await snapshot(relay, name, [giver, k1, k2]);
    expectRefused(await accept(k1, first.body.offer_id), 'INVITE_REVOKED', before, await snapshot(relay, name, [giver, k1, k2]));
    expect((await accept(k2, second.body.offer_id)).status).toBe(200);
  });

  it('ends on decline by the offered KEY, the giver keeping its role; the giver may withdraw its own', async () => {
    const name = await space();
    const [giver, k] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, k.peerId, 'reader');
    const o = await offer(giver, name, { to: k.peerId });
    const audit = (await snapshot(relay, name, [])).audit;
    const d = await call(relay, 'POST', `/v1/hand-overs/${o.body.offer_id}/decline`, { token: k.token });
    expect(d.body).toMatchObject({ offer_id: o.body.offer_id, state: 'declined' });
    expect((await snapshot(relay, name, [])).audit).toBe(audit);
    expect(await roleIn(relay, name, giver.peerId)).toBe('writer');
    expect((await accept(k, o.body.offer_id)).body.error.code).toBe('INVITE_REVOKED');

    const o2 = await offer(giver, name, { to: k.peerId });
    const w = await call(relay, 'POST', `/v1/hand-overs/${o2.body.offer_id}/decline`, { token: giver.token });
    expect(w.body.state).toBe('revoked');
    const stranger = await call(relay, 'POST', `/v1/hand-overs/${o2.body.offer_id}/decline`, { token: owner.token });
    expect(stranger.body.error.code).toBe('INVITE_NOT_FOUND');
  });

  it('refuses offers nobody may make or take, with their codes, writing nothing', async () => {
    const name = await space();
    const [giver, member, admin, lonely, outsider] = [
      await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url),
    ];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, member.peerId, 'reader');
    await grant(relay, owner, name, admin.peerId, 'admin');
    const unregistered = toHex(randomBytes(32));
    const cases: [MintedToken, Record<string, unknown>, string][] = [
      [outsider, { to: member.peerId }, 'CONTROL_DENIED'],
      [giver, { to: giver.peerId }, 'CONTROL_DENIED'],
      [giver, { to: admin.peerId }, 'CONTROL_DENIED'],
      [giver, { to: unregistered }, 'PEER_NOT_REGISTERED'],
      [giver, { to: lonely.peerId }, 'HAND_OVER_UNREACHABLE'],
      [giver, { to: 'ABC' }, 'INVALID_REQUEST'],
      [giver, { expires_in_seconds: 0 }, 'INVALID_REQUEST'],
    ];
    for (const [who, body, code] of cases) {
      const before = await snapshot(relay, name, [who, member, admin, lonely]);
      expectRefused(await offer(who, name, body), code, before, await snapshot(relay, name, [who, member, admin, lonely]));
    }
    const missing = await call(relay, 'POST', '/v1/spaces/no-such-space-here/hand-over', { token: giver.token, body: {} });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');

    const o = await offer(giver, name, { to: member.peerId });
    const before = await snapshot(relay, name, [giver, member, admin]);
    expectRefused(await accept(giver, o.body.offer_id), 'CONTROL_DENIED', before, await snapshot(relay, name, [giver, member, admin]));
    expectRefused(await accept(admin, o.body.offer_id), 'INVITE_NOT_FOUND', before, await snapshot(relay, name, [giver, member, admin]));
    expectRefused(await accept(member, '00000000-0000-4000-8000-000000000000'), 'INVITE_NOT_FOUND', before, await snapshot(relay, name, [giver, member, admin]));
  });

  it('refuses an offer the giver can no longer honour (INVITE_REVOKED) and one past its time (INVITE_EXPIRED)', async () => {
    const name = await space();
    const [giver, k] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'coordinator');
    await grant(relay, owner, name, k.peerId, 'reader');
    const o = await offer(giver, name, { to: k.peerId });
    await grant(relay, owner, name, giver.peerId, 'writer');
    let before = await snapshot(relay, name, [giver, k]);
    expectRefused(await accept(k, o.body.offer_id), 'INVITE_REVOKED', before, await snapshot(relay, name, [giver, k]));

    const o2 = await offer(giver, name, { to: k.peerId, expires_in_seconds: 60 });
    relay.clock.advance(61_000);
    before = await snapshot(relay, name, [giver, k]);
    expectRefused(await accept(k, o2.body.offer_id), 'INVITE_EXPIRED', before, await snapshot(relay, name, [giver, k]));
  });

  it('stops announcing offers past 200 deliveries an hour from one KEY to another; the offer still stands', async () => {
    const name = await space();
    const [giver, k] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, k.peerId, 'reader');
    let made = 0;
    let last: any;
    for (;;) {
      if (made % 50 === 0) rest(relay);
      const head = await relay.store.mailbox.head(k.peerId);
      last = await offer(giver, name, { to: k.peerId });
      expect(last.status).toBe(201);
      made++;
      if (await relay.store.mailbox.head(k.peerId) === head) break;
      expect(made).toBeLessThan(400);
    }
    expect(made).toBeGreaterThan(200);
    // Unannounced, but it can be taken.
    expect((await accept(k, last.body.offer_id)).body).toMatchObject({ role: 'writer', state: 'handed_over' });
  });

  it('refuses to accept in a closed SPACE (SPACE_CLOSED)', async () => {
    const name = await space();
    const [giver, k] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'writer');
    await grant(relay, owner, name, k.peerId, 'reader');
    const o = await offer(giver, name, { to: k.peerId });
    await relay.store.spaces.close((await relay.store.spaces.byName(name))!.id, null, relay.clock.now());
    const before = await snapshot(relay, name, [giver, k]);
    expectRefused(await accept(k, o.body.offer_id), 'SPACE_CLOSED', before, await snapshot(relay, name, [giver, k]));
    expectRefused(await offer(giver, name, { to: k.peerId }), 'SPACE_CLOSED', before, await snapshot(relay, name, [giver, k]));
    expectRefused(await call(relay, 'POST', `/v1/hand-overs/${o.body.offer_id}/decline`, { token: k.token }), 'SPACE_CLOSED', before, await snapshot(relay, name, [giver, k]));
  });
});

describe('hand-over links and the SPACE itself', () => {
  it('hands the SPACE over through a one-use link: the successor owns it, the old owner leaves entirely', async () => {
    rest(relay);
    const first = await mintToken(relay.url);
    const name = freshName('own');
    await createSpace(relay, first.token, { name });
    const [c, w, next, late] = [await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, first, name, c.peerId, 'coordinator');
    await grant(relay, first, name, next.peerId, 'admin');
    const link = await makeLink(relay, first, name, { role: 'writer' });
    await joinLink(relay, w, link.link);

    const o = await offer(first, name);
    expect(o.status).toBe(201);
    expect(o.body.code).toMatch(/^svc_hand_[0-9a-f]{32}$/);
    expect(o.body.link).toBe(`${relay.url}/join/${o.body.code}`);
    expect(o.body).toMatchObject({ role: 'owner', to: null, by_link: true });
    const look = await call(relay, 'POST', '/v1/invites/look', { token: next.token, body: { link: o.body.link } });
    expect(look.body).toMatchObject({ space: name, kind: 'hand_over', role: 'owner', from: first.peerId, uses: 0, max_uses: 1, valid: true });
    // A link offer is taken with its link, never by id.
    expect((await accept(next, o.body.offer_id)).body.error.code).toBe('INVITE_NOT_FOUND');

    const r = await joinLink(relay, next, o.body.link);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name, role: 'owner', tags: [], state: 'handed_over', changed: true, handed_over_by: first.peerId });
    expect((await relay.store.spaces.byName(name))!.owner).toBe(next.peerId);
    expect(await roleIn(relay, name, first.peerId)).toBeNull();
    expect(await memberRow(relay, name, next.peerId)).toBeUndefined();
    expect((await memberRow(relay, name, w.peerId))!.broughtInBy).toBe(next.peerId);
    expect((await relay.store.invites.byId(link.invite_id))!.maker).toBe(next.peerId);
    const tail = (await eventsOf(relay, name)).slice(-2);
    expect(tail.map((e) => e.event)).toEqual(['member.handed_over', 'space.handed_over']);
    expect(tail[1]!.payload).toMatchObject({ from: first.peerId, to: next.peerId });
    const profile = await call(relay, 'GET', `/v1/spaces/${name}`, { token: next.token });
    expect(profile.body.owner).toBe(next.peerId);

    // One use: the next taker finds it spent.
    const before = await snapshot(relay, name, [late]);
    expectRefused(await joinLink(relay, late, o.body.link), 'INVITE_EXHAUSTED', before, await snapshot(relay, name, [late]));
    // The old owner cannot leave or act any more; the new one governs.
    expect((await grant(relay, next, name, c.peerId, 'writer')).status).toBe(200);
  });

  it('hands a role over through a link used by a KEY new to the SPACE', async () => {
    const name = await space();
    const [giver, k] = [await mintToken(relay.url), await mintToken(relay.url)];
    await grant(relay, owner, name, giver.peerId, 'coordinator', ['ops']);
    const o = await offer(giver, name);
    const r = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: k.token, body: { code: o.body.code } });
    expect(r.body).toMatchObject({ role: 'coordinator', tags: ['ops'], state: 'handed_over', handed_over_by: giver.peerId });
    expect(await roleIn(relay, name, giver.peerId)).toBeNull();
  });

  it('refuses hand-over links in a sealed SPACE (SEALED_NO_LINKS) and past the links made a day (INVITE_LIMIT)', async () => {
    const sealedName = freshName('sealed');
    await relay.store.spaces.create({
      spaceId: `0d9c2a4e-5b1f-4c3a-9e7d-${toHex(randomBytes(6))}`,
      name: sealedName, owner: owner.peerId, title: '', description: '', visibility: 'sealed', oracle: false,
      joinPolicy: 'request', signedOnly: false, categories: [], serviceReviewer: false,
      taskConfirmations: 0, taskConfirmers: 'members', taskClaimHours: 4, now: relay.clock.now(),
    });
    let before = await snapshot(relay, sealedName, [owner]);
    expectRefused(await offer(owner, sealedName), 'SEALED_NO_LINKS', before, await snapshot(relay, sealedName, [owner]));

    const name = await space();
    const maker = await mintToken(relay.url);
    await grant(relay, owner, name, maker.peerId, 'writer');
    const s = (await relay.store.spaces.byName(name))!;
    const now = relay.clock.now();
    await relay.store.db
      .prepare(
        `${numbered(RATE_LIMITS.linksMade.limit)}
         INSERT INTO hand_overs (id, space_row_id, giver, role, to_peer, code_hash, label, state, created_at, expires_at)
         SELECT 'fill-${name}-' || i, ?, ?, 'writer', NULL, ${bytesOf(relay.store.db, `'fill-${name}-' || i`)}, NULL, 'revoked', ?, NULL FROM n`,
      )
      .run(s.id, maker.peerId, now - 1000);
    before = await snapshot(relay, name, [maker]);
    expectRefused(await offer(maker, name), 'INVITE_LIMIT', before, await snapshot(relay, name, [maker]));
    // Hand-over links and invite links share the maker's daily allowance.
    await grant(relay, owner, name, maker.peerId, 'coordinator');
    before = await snapshot(relay, name, [maker]);
    expectRefused(await call(relay, 'POST', `/v1/spaces/${name}/invites`, { token: maker.token, body: { role: 'reader' } }), 'INVITE_LIMIT', before, await snapshot(relay, name, [maker]));
  });

  it('lets the owner offer the SPACE to a member, whose row goes as it becomes the owner', async () => {
    rest(relay);
    const first = await mintToken(relay.url);
    const name = freshName('own2');
    await createSpace(relay, first.token, { name });
    const k = await mintToken(relay.url);
    await admit(relay, first, name, k, 'writer', ['t']);
    const o = await offer(first, name, { to: k.peerId });
    const a = await accept(k, o.body.offer_id);
    expect(a.body).toMatchObject({ role: 'owner', tags: [], handed_over_by: first.peerId });
    expect(await memberRow(relay, name, k.peerId)).toBeUndefined();
    expect(await relay.store.members.roleOf((await relay.store.spaces.byName(name))!, k.peerId)).toBe('owner');
    expect((await relay.store.spaces.byName(name))!.memberCount).toBe(0);
  });
});
