/**
 * Joining a SPACE over the real HTTP relay (spec/1-concepts.md "Join request", "Invite link",
 * "Mailbox"; spec/2-endpoints.md join, join.link, requests.*, keys.verify `invite`): joining by
 * link and by policy, asking and deciding, the mailbox rows each step writes, every refusal with
 * its code, and that a refused write leaves the audit log and mailboxes as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mintToken, type MintedToken, type RunningRelay, startRelay, tempDataDir } from '../helpers/relay.js';
import { rmSync } from 'node:fs';
import { ageKeys } from '../helpers/spaces.js';
import { admit, call, createSpace, eventsOf, expectRefused, freshName, grant, joinLink, makeLink, memberRow, rest, roleIn, snapshot } from '../helpers/invites.js';
import { JOIN_REQUEST_TTL_MS } from '../../relay/store/requests.js';
import { MEMBERS_PER_SPACE, SPACES_PER_KEY } from '../../shared/limits.js';
import { insertRows, privateSpaceRow, SPACES_COLUMNS } from '../helpers/test-store.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let coord: MintedToken;
let writer: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  [owner, admin, coord, writer] = (await Promise.all([1, 2, 3, 4].map(() => mintToken(relay.url)))) as [MintedToken, MintedToken, MintedToken, MintedToken];
});
afterAll(async () => {
  await relay.close();
});

/** A private SPACE with an admin, a coordinator and a writer, under `policy`. */
async function team(policy: 'request' | 'invite' = 'request'): Promise<string> {
  rest(relay);
  const name = freshName('team');
  await createSpace(relay, owner.token, { name, join_policy: policy });
  await grant(relay, owner, name, admin.peerId, 'admin');
  await grant(relay, owner, name, coord.peerId, 'coordinator');
  await grant(relay, owner, name, writer.peerId, 'writer');
  return name;
}

async function mailboxOf(peer: MintedToken) {
  return await relay.store.mailbox.list(peer.peerId, 0, 1000);
}

async function ask(who: MintedToken, space: string, message = 'I keep the build notes; may I join?') {
  return call(relay, 'POST', `/v1/spaces/${space}/join`, { token: who.token, body: { message } });
}

describe('mailbox rows', () => {
  it('numbers each KEY stream from one without gaps, apart from other KEYS', async () => {
    const a = await mintToken(relay.url, new Uint8Array(randomBytes(32)));
    const b = await mintToken(relay.url, new Uint8Array(randomBytes(32)));
    const mb = relay.store.mailbox;
    const now = relay.clock.now();
    expect(await mb.head(a.peerId)).toBe(0);
    expect(await mb.deliver(a.peerId, 'request', { requestId: 'r1' }, now)).toBe(1);
    expect(await mb.deliver(b.peerId, 'hand_over', { offerId: 'o1' }, now)).toBe(1);
    expect(await mb.deliver(a.peerId, 'decision', { requestId: 'r1' }, now)).toBe(2);
    expect(await mb.head(a.peerId)).toBe(2);
    expect((await mb.list(a.peerId, 0, 10)).map((r) => [r.mailboxSeq, r.reason, r.requestId])).toEqual([
      [1, 'request', 'r1'],
      [2, 'decision', 'r1'],
    ]);
    expect((await mb.list(a.peerId, 0, 10, ['decision'])).map((r) => r.mailboxSeq)).toEqual([2]);
  });

  it('assigns no position when the surrounding write rolls back', async () => {
    const a = await mintToken(relay.url);
    const db = relay.store.db;
    const mb = relay.store.mailbox;
    const now = relay.clock.now();
    await mb.deliver(a.peerId, 'to', { postId: 'p1' }, now);
    await expect(
      db.transaction(async () => {
        await mb.deliver(a.peerId, 'to', { postId: 'p2' }, now);
        throw new Error('refused later in the same write');
      }).immediate(),
    ).rejects.toThrow(/refused later/);
    expect(await mb.head(a.peerId)).toBe(1);
    expect(await mb.deliver(a.peerId, 'to', { postId: 'p3' }, now)).toBe(2);
  });

  it('refuses a row naming no subject or two', async () => {
    const a = await mintToken(relay.url);
    const mb = relay.store.mailbox;
    await expect(mb.deliver(a.peerId, 'to', {}, 0)).rejects.toThrow();
    await expect(mb.deliver(a.peerId, 'to', { postId: 'p', offerId: 'o' }, 0)).rejects.toThrow();
    expect(await mb.head(a.peerId)).toBe(0);
  });
});

describe('join with an invite link', () => {
  it('admits with the link role and tags, managed by the maker, spending one use', async () => {
    const space = await team();
    const link = await makeLink(relay, coord, space, { role: 'reader', tags: ['docs'], max_uses: 2 });
    const k = await mintToken(relay.url);
    const r = await joinLink(relay, k, link.link);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: space, role: 'reader', tags: ['docs'], state: 'joined', changed: true });
    const ev = (await eventsOf(relay, space)).at(-1)!;
    expect(ev.event).toBe('member.granted');
    expect(String(ev.revision)).toBe(r.body.revision);
    expect(await memberRow(relay, space, k.peerId)).toMatchObject({ role: 'reader', broughtInBy: coord.peerId, linkId: link.invite_id });
    expect((await relay.store.invites.byId(link.invite_id))!.uses).toBe(1);
  });

  it('takes the code with the SPACE name, and re-using a link burns no use and answers the same membership', async () => {
    const space = await team();
    const link = await makeLink(relay, owner, space, { role: 'writer', max_uses: 1 });
    const k = await mintToken(relay.url);
    const r = await call(relay, 'POST', `/v1/spaces/${space}/join`, { token: k.token, body: { code: link.code } });
    expect(r.body).toMatchObject({ role: 'writer', state: 'joined', changed: true });
    const before = await snapshot(relay, space, [k, owner]);
    const again = await joinLink(relay, k, link.link);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ role: 'writer', state: 'member', changed: false, revision: r.body.revision });
    expect(await snapshot(relay, space, [k, owner])).toEqual(before);
    expect((await relay.store.invites.byId(link.invite_id))!.uses).toBe(1);
    // The one use is spent: someone else is refused.
    const other = await mintToken(relay.url);
    expect((await joinLink(relay, other, link.link)).body.error.code).toBe('INVITE_EXHAUSTED');
  });

  it('leaves a member or the owner as they are, burning no use', async () => {
    const space = await team();
    const link = await makeLink(relay, owner, space, { role: 'coordinator' });
    for (const [who, role] of [[writer, 'writer'], [owner, 'owner']] as const) {
      const r = await joinLink(relay, who, link.link);
      expect(r.body).toMatchObject({ role, state: 'member', changed: false });
    }
    expect((await relay.store.invites.byId(link.invite_id))!.uses).toBe(0);
  });

  it('refuses expired, exhausted, revoked and unknown links, and a link of another SPACE by name', async () => {
    const space = await team();
    const other = await team();
    const expired = await makeLink(relay, owner, space, { role: 'reader', expires_in_seconds: 60 });
    const exhausted = await makeLink(relay, owner, space, { role: 'reader', max_uses: 1 });
    const revoked = await makeLink(relay, owner, space, { role: 'reader' });
    const elsewhere = await makeLink(relay, owner, other, { role: 'reader' });
    await joinLink(relay, await mintToken(relay.url), exhausted.link);
    await call(relay, 'DELETE', `/v1/invites/${revoked.invite_id}`, { token: owner.token });
    relay.clock.advance(61_000);
    const k = await mintToken(relay.url);
    const cases: [string, Record<string, unknown>, string][] = [
      ['/v1/join', { link: expired.link }, 'INVITE_EXPIRED'],
      ['/v1/join', { link: exhausted.link }, 'INVITE_EXHAUSTED'],
      ['/v1/join', { link: revoked.link }, 'INVITE_REVOKED'],
      ['/v1/join', { link: `${relay.url}/join/svc_inv_${'f'.repeat(32)}` }, 'INVITE_INVALID'],
      ['/v1/join', { link: 'https://evil.example/join/' + revoked.code }, 'INVITE_INVALID'],
      [`/v1/spaces/${space}/join`, { code: elsewhere.code }, 'INVITE_INVALID'],
      [`/v1/spaces/${space}/join`, { code: 'svc_inv_nope' }, 'INVITE_INVALID'],
    ];
    for (const [path, body, code] of cases) {
      const before = await snapshot(relay, space, [k, owner]);
      const r = await call(relay, 'POST', path, { token: k.token, body });
      expectRefused(r, code, before, await snapshot(relay, space, [k, owner]));
    }
    expect(await roleIn(relay, space, k.peerId)).toBeNull();
    const missing = await call(relay, 'POST', '/v1/spaces/no-such-space-here/join', { token: k.token, body: { code: expired.code } });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');
    const missingByName = await call(relay, 'POST', '/v1/join', { token: k.token, body: { code: expired.code, name: 'no-such-space-here' } });
    expect(missingByName.body.error.code).toBe('SPACE_NOT_FOUND');
  });

  it('spends a use again after a KEY that used the link left', async () => {
    const space = await team();
    const link = await makeLink(relay, owner, space, { role: 'reader', max_uses: 2 });
    const k = await mintToken(relay.url);
    await joinLink(relay, k, link.link);
    expect((await call(relay, 'DELETE', `/v1/spaces/${space}/members/${k.peerId}`, { token: k.token })).status).toBe(200);
    const back = await joinLink(relay, k, link.link);
    expect(back.body).toMatchObject({ state: 'joined', changed: true });
    expect((await relay.store.invites.byId(link.invite_id))!.uses).toBe(2);
  });

  it('refuses past the SPACE member limit (MEMBER_LIMIT) and the KEY SPACE limit (SPACE_LIMIT)', async () => {
    const space = await team();
    const link = await makeLink(relay, owner, space, { role: 'reader', max_uses: null });
    const s = (await relay.store.spaces.byName(space))!;
    const count = s.memberCount;
    await relay.store.db.prepare('UPDATE spaces SET member_count = ? WHERE id = ?').run(MEMBERS_PER_SPACE, s.id);
    const k = await mintToken(relay.url);
    let before = await snapshot(relay, space, [k, owner]);
    expectRefused(await joinLink(relay, k, link.link), 'MEMBER_LIMIT', before, await snapshot(relay, space, [k, owner]));
    await relay.store.db.prepare('UPDATE spaces SET member_count = ? WHERE id = ?').run(count, s.id);

    // Give k 10,000 SPACES of its own.
    const tag = randomBytes(4).toString('hex');
    const rows = Array.from({ length: SPACES_PER_KEY }, (_, i) => privateSpaceRow([`${tag}-${i}`, `fill-${tag}-${i}`, k.peerId]));
    await relay.store.db.transaction(async () => await insertRows(relay.store.db, SPACES_COLUMNS, rows))();
    before = await snapshot(relay, space, [k, owner]);
    expectRefused(await joinLink(relay, k, link.link), 'SPACE_LIMIT', before, await snapshot(relay, space, [k, owner]));
  });

  it('joins in the same call as a first sign-in (keys.verify invite), or says why not and still mints', async () => {
    const space = await team();
    const link = await makeLink(relay, owner, space, { role: 'writer', tags: ['new'] });
    const k = await mintToken(relay.url, undefined, { invite: link.link });
    expect(k.registered).toBe(true);
    expect(k.answer.joined).toEqual({ name: space, role: 'writer', tags: ['new'], state: 'joined', changed: true, revision: expect.stringMatching(/^[0-9]+$/) });
    expect(await roleIn(relay, space, k.peerId)).toBe('writer');

    const refused = await mintToken(relay.url, undefined, { invite: 'https://evil.example/join/x' });
    expect(refused.answer.joined).toBeUndefined();
    expect(refused.answer.join_refused).toMatchObject({ code: 'INVITE_INVALID', message: expect.stringMatching(/^INVITE_INVALID\. /), fix: expect.any(String) });
    const me = await call(relay, 'GET', '/v1/me', { token: refused.token });
    expect(me.status).toBe(200);
  });
});

describe('join by policy', () => {
  it('refuses without a link under policy invite (JOIN_BY_INVITE_ONLY)', async () => {
    const space = await team('invite');
    const k = await mintToken(relay.url);
    const before = await snapshot(relay, space, [k, owner, admin]);
    expectRefused(await ask(k, space), 'JOIN_BY_INVITE_ONLY', before, await snapshot(relay, space, [k, owner, admin]));
  });

  it('admits at once as a writer in an open public SPACE', async () => {
    rest(relay);
    const pubOwner = await mintToken(relay.url);
    ageKeys(relay);
    const name = freshName('open');
    await createSpace(relay, pubOwner.token, { name, visibility: 'public', categories: ['computing'], join_policy: 'open' });
    const k = await mintToken(relay.url);
    const r = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: k.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name, role: 'writer', state: 'joined', changed: true });
    expect(await memberRow(relay, name, k.peerId)).toMatchObject({ role: 'writer', broughtInBy: pubOwner.peerId });
    const again = await call(relay, 'POST', `/v1/spaces/${name}/join`, { token: k.token, body: {} });
    expect(again.body).toMatchObject({ state: 'member', changed: false });
  });

  it('files a request that reaches the owner and admins, and refuses a second while one waits', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const heads = await Promise.all([owner, admin, coord, writer].map(async (p) => await relay.store.mailbox.head(p.peerId)));
    const auditBefore = (await snapshot(relay, space, [])).audit;
    const r = await ask(k, space, 'hello');
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ space, requester: k.peerId, message: 'hello', state: 'pending', role: null });
    const id = r.body.request_id;
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.created_at)).toBe(JOIN_REQUEST_TTL_MS);
    // Told: the owner and the admin, one row each at the next position; nobody else.
    const after = await Promise.all([owner, admin, coord, writer].map(async (p) => await relay.store.mailbox.head(p.peerId)));
    expect(after).toEqual([heads[0]! + 1, heads[1]! + 1, heads[2], heads[3]]);
    for (const p of [owner, admin]) expect((await mailboxOf(p)).at(-1)).toMatchObject({ reason: 'request', requestId: id });
    expect((await snapshot(relay, space, [])).audit).toBe(auditBefore);

    const before = await snapshot(relay, space, [k, owner, admin]);
    const again = await ask(k, space, 'hello again');
    expectRefused(again, 'REQUEST_PENDING', before, await snapshot(relay, space, [k, owner, admin]));
    expect(again.body.error.detail).toContain(id);

    const profile = await call(relay, 'GET', `/v1/spaces/${space}`, { token: k.token });
    expect(profile.body.access.pending_request).toMatchObject({ request_id: id });
  });

  it('reaches only the first 32 admins', async () => {
    rest(relay);
    const name = freshName('many');
    await createSpace(relay, owner.token, { name, join_policy: 'request' });
    const admins: MintedToken[] = [];
    for (let i = 0; i < 34; i++) admins.push(await mintToken(relay.url));
    const s = (await relay.store.spaces.byName(name))!;
    for (const [i, a] of admins.entries()) await relay.store.members.admit(s, { peer: a.peerId, role: 'admin', tags: [], broughtInBy: owner.peerId }, owner.peerId, relay.clock.now() + i);
    const k = await mintToken(relay.url);
    const r = await ask(k, name);
    expect(r.status).toBe(202);
    const told = await Promise.all(admins.map(async (a) => await relay.store.mailbox.head(a.peerId)));
    expect(told).toEqual([...Array(32).fill(1), 0, 0]);
  });

  it('allows two asks a day per KEY and SPACE, then RATE_LIMITED with the wait', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    for (let i = 0; i < 2; i++) {
      const r = await ask(k, space);
      expect(r.status).toBe(202);
      expect((await call(relay, 'POST', `/v1/requests/${r.body.request_id}/withdraw`, { token: k.token })).status).toBe(200);
    }
    const before = await snapshot(relay, space, [k, owner, admin]);
    const third = await ask(k, space);
    expectRefused(third, 'RATE_LIMITED', before, await snapshot(relay, space, [k, owner, admin]));
    const wait = Number(third.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(23 * 3600);
    expect(wait).toBeLessThanOrEqual(24 * 3600);
    relay.clock.advance(wait * 1000);
    expect((await ask(k, space)).status).toBe(202);
  });

  it('refuses a KEY blocked in the SPACE (WRITE_BLOCKED), and answers a member its membership', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    expect((await call(relay, 'PUT', `/v1/spaces/${space}/blocks/${k.peerId}`, { token: owner.token })).status).toBeLessThan(300);
    const before = await snapshot(relay, space, [k, owner, admin]);
    expectRefused(await ask(k, space), 'WRITE_BLOCKED', before, await snapshot(relay, space, [k, owner, admin]));
    const r = await ask(writer, space);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ name: space, role: 'writer', state: 'member', changed: false });
  });

  it('refuses to ask in a closed SPACE (SPACE_CLOSED)', async () => {
    const space = await team();
    await relay.store.spaces.close((await relay.store.spaces.byName(space))!.id, null, relay.clock.now());
    const k = await mintToken(relay.url);
    const before = await snapshot(relay, space, [k, owner, admin]);
    expectRefused(await ask(k, space), 'SPACE_CLOSED', before, await snapshot(relay, space, [k, owner, admin]));
  });
});

describe('deciding join requests', () => {
  it('lists waiting asks with their messages and count to coordinators and above only', async () => {
    const space = await team();
    const [a, b] = [await mintToken(relay.url), await mintToken(relay.url)];
    const ra = await ask(a, space, 'first');
    await ask(b, space, 'second');
    await call(relay, 'POST', `/v1/requests/${ra.body.request_id}/withdraw`, { token: a.token });
    const c = await ask(await mintToken(relay.url), space, 'third');
    for (const who of [owner, admin, coord]) {
      const r = await call(relay, 'GET', `/v1/spaces/${space}/requests`, { token: who.token });
      expect(r.status).toBe(200);
      expect(r.body.waiting).toBe(2);
      expect(r.body.items.map((i: any) => i.message)).toEqual(['second', 'third']);
    }
    const page = await call(relay, 'GET', `/v1/spaces/${space}/requests?limit=1`, { token: owner.token });
    expect(page.body).toMatchObject({ has_more: true, waiting: 2 });
    const next = await call(relay, 'GET', `/v1/spaces/${space}/requests?limit=1&after=${page.body.next_after}`, { token: owner.token });
    expect(next.body.items.map((i: any) => i.request_id)).toEqual([c.body.request_id]);
    for (const who of [writer, a]) {
      const r = await call(relay, 'GET', `/v1/spaces/${space}/requests`, { token: who.token });
      expect(r.body.error.code).toBe('CONTROL_DENIED');
    }
  });

  it('approves as writer by default, tells the requester and records member.granted', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    const r = await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: coord.token });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ request_id: id, state: 'approved', role: 'writer', member: { peer: k.peerId, role: 'writer', brought_in_by: coord.peerId } });
    expect((await eventsOf(relay, space)).at(-1)).toMatchObject({ event: 'member.granted', revision: Number(r.body.revision) });
    expect(await mailboxOf(k)).toEqual([expect.objectContaining({ mailboxSeq: 1, reason: 'decision', requestId: id })]);
    const again = await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: owner.token });
    expect(again.body.error.code).toBe('REQUEST_NOT_PENDING');
  });

  it('approves with a role below the approver and tags, and refuses a role not below it', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    const cases: [MintedToken, Record<string, unknown>, string][] = [
      [coord, { role: 'coordinator' }, 'CONTROL_DENIED'],
      [admin, { role: 'admin' }, 'CONTROL_DENIED'],
      [writer, {}, 'CONTROL_DENIED'],
      [await mintToken(relay.url), {}, 'REQUEST_NOT_FOUND'],
      [owner, { role: 'boss' }, 'INVALID_ROLE'],
      [owner, { tags: ['NO'] }, 'INVALID_TAGS'],
      [owner, { tags: ['admin'] }, 'TAG_RESERVED'],
    ];
    for (const [who, body, code] of cases) {
      const before = await snapshot(relay, space, [k, who]);
      const r = await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: who.token, body });
      expectRefused(r, code, before, await snapshot(relay, space, [k, who]));
    }
    const ok = await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: admin.token, body: { role: 'coordinator', tags: ['triage'] } });
    expect(ok.body.member).toMatchObject({ role: 'coordinator', tags: ['triage'] });
    const unknown = await call(relay, 'POST', '/v1/requests/00000000-0000-4000-8000-000000000000/approve', { token: owner.token });
    expect(unknown.body.error.code).toBe('REQUEST_NOT_FOUND');
  });

  it('declines: the requester is told, nothing public; a later decision is REQUEST_NOT_PENDING', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    const audit = (await snapshot(relay, space, [])).audit;
    const r = await call(relay, 'POST', `/v1/requests/${id}/decline`, { token: coord.token });
    expect(r.body).toMatchObject({ request_id: id, state: 'declined' });
    expect((await snapshot(relay, space, [])).audit).toBe(audit);
    expect((await mailboxOf(k)).at(-1)).toMatchObject({ reason: 'decision', requestId: id });
    expect(await roleIn(relay, space, k.peerId)).toBeNull();
    for (const path of ['approve', 'decline']) {
      const before = await snapshot(relay, space, [k, owner]);
      expectRefused(await call(relay, 'POST', `/v1/requests/${id}/${path}`, { token: owner.token }), 'REQUEST_NOT_PENDING', before, await snapshot(relay, space, [k, owner]));
    }
    const stranger = await call(relay, 'POST', `/v1/requests/${id}/decline`, { token: (await mintToken(relay.url)).token });
    expect(stranger.body.error.code).toBe('REQUEST_NOT_FOUND');
  });

  it('withdraws for the requester alone, telling nobody', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    const before = await snapshot(relay, space, [k, owner, admin]);
    for (const who of [owner, writer]) {
      expectRefused(await call(relay, 'POST', `/v1/requests/${id}/withdraw`, { token: who.token }), 'REQUEST_NOT_FOUND', before, await snapshot(relay, space, [k, owner, admin]));
    }
    const r = await call(relay, 'POST', `/v1/requests/${id}/withdraw`, { token: k.token });
    expect(r.body).toMatchObject({ request_id: id, state: 'withdrawn' });
    expect(await snapshot(relay, space, [k, owner, admin])).toEqual(before);
    const again = await call(relay, 'POST', `/v1/requests/${id}/withdraw`, { token: k.token });
    expect(again.body.error.code).toBe('REQUEST_NOT_PENDING');
    expect((await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: owner.token })).body.error.code).toBe('REQUEST_NOT_PENDING');
  });

  it('lapses after thirty days (REQUEST_EXPIRED) and the KEY may ask again', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    relay.clock.advance(JOIN_REQUEST_TTL_MS + 1000);
    const before = await snapshot(relay, space, [k, owner]);
    expectRefused(await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: owner.token }), 'REQUEST_EXPIRED', before, await snapshot(relay, space, [k, owner]));
    expectRefused(await call(relay, 'POST', `/v1/requests/${id}/decline`, { token: owner.token }), 'REQUEST_EXPIRED', before, await snapshot(relay, space, [k, owner]));
    const list = await call(relay, 'GET', `/v1/spaces/${space}/requests`, { token: owner.token });
    expect(list.body.waiting).toBe(0);
    const again = await ask(k, space);
    expect(again.status).toBe(202);
    expect((await relay.store.requests.byId(id, relay.clock.now()))!.state).toBe('expired');
  });

  it('is overtaken by a direct grant, which withdraws it', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    await grant(relay, coord, space, k.peerId, 'reader');
    expect((await relay.store.requests.byId(id, relay.clock.now()))!.state).toBe('withdrawn');
    expect((await call(relay, 'POST', `/v1/requests/${id}/approve`, { token: owner.token })).body.error.code).toBe('REQUEST_NOT_PENDING');
    // Joining by link overtakes one too.
    const k2 = await mintToken(relay.url);
    const id2 = (await ask(k2, space)).body.request_id;
    await admit(relay, owner, space, k2, 'reader');
    expect((await relay.store.requests.byId(id2, relay.clock.now()))!.state).toBe('withdrawn');
  });

  it('refuses decisions in a closed SPACE (SPACE_CLOSED)', async () => {
    const space = await team();
    const k = await mintToken(relay.url);
    const id = (await ask(k, space)).body.request_id;
    await relay.store.spaces.close((await relay.store.spaces.byName(space))!.id, null, relay.clock.now());
    for (const [who, path] of [[owner, 'approve'], [owner, 'decline'], [k, 'withdraw']] as const) {
      const before = await snapshot(relay, space, [k, owner]);
      expectRefused(await call(relay, 'POST', `/v1/requests/${id}/${path}`, { token: who.token }), 'SPACE_CLOSED', before, await snapshot(relay, space, [k, owner]));
    }
  });
});

describe('after a restart', () => {
  it('keeps links, waiting requests, offers and mailbox positions', async () => {
    const dir = tempDataDir();
    let r1: RunningRelay | undefined = await startRelay({ dataDir: dir });
    try {
      const o = await mintToken(r1.url);
      const [a, b, c, d] = [await mintToken(r1.url), await mintToken(r1.url), await mintToken(r1.url), await mintToken(r1.url)];
      const name = freshName('restart');
      const created = await call(r1, 'POST', '/v1/spaces', { token: o.token, body: { name, join_policy: 'request' } });
      expect(created.status).toBe(201);
      const link = (await call(r1, 'POST', `/v1/spaces/${name}/invites`, { token: o.token, body: { role: 'writer' } })).body;
      const asked = await call(r1, 'POST', `/v1/spaces/${name}/join`, { token: b.token, body: { message: 'later' } });
      expect(asked.status).toBe(202);
      const joinedC = await call(r1, 'POST', '/v1/join', { token: c.token, body: { link: link.link } });
      expect(joinedC.status).toBe(200);
      expect((await call(r1, 'POST', '/v1/join', { token: d.token, body: { link: link.link } })).status).toBe(200);
      const offered = await call(r1, 'POST', `/v1/spaces/${name}/hand-over`, { token: c.token, body: { to: d.peerId } });
      expect(offered.status).toBe(201);
      const heads = await Promise.all([o, d].map(async (k) => await r1!.store.mailbox.head(k.peerId)));
      await r1.close();
      r1 = undefined;

      const r2 = await startRelay({ dataDir: dir });
      try {
        expect(await Promise.all([o, d].map(async (k) => await r2.store.mailbox.head(k.peerId)))).toEqual(heads);
        expect(heads.every((h) => h > 0)).toBe(true);
        // Tokens survive too: the same KEYS act on what they left.
        const j = await call(r2, 'POST', '/v1/join', { token: a.token, body: { link: link.link.replace(r1Url(link.link), r2.url) } });
        expect(j.body).toMatchObject({ role: 'writer', state: 'joined' });
        const list = await call(r2, 'GET', `/v1/spaces/${name}/requests`, { token: o.token });
        expect(list.body.items.map((i: any) => i.request_id)).toEqual([asked.body.request_id]);
        const took = await call(r2, 'POST', `/v1/hand-overs/${offered.body.offer_id}/accept`, { token: d.token });
        expect(took.body).toMatchObject({ role: 'writer', state: 'handed_over', handed_over_by: c.peerId });
      } finally {
        await r2.close();
      }
    } finally {
      if (r1) await r1.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The origin a link was made under (each run listens on a new port). */
function r1Url(link: string): string {
  return new URL(link).origin;
}
