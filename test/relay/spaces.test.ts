/**
 * SPACES over the real HTTP relay: spaces.create, spaces.get, spaces.list, spaces.update with
 * every refusal the catalogue lists, the space.created / space.updated events, and that a
 * refused write leaves the audit head where it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../helpers/relay.js';
import { ageKeys, auditHead, call, createSpace, freshName } from '../helpers/spaces.js';
import { PUBLIC_SPACE_KEY_AGE_SECONDS } from '../../relay/policy.js';
import { SPACES_PER_KEY } from '../../shared/limits.js';
import { insertRows, privateSpaceRow, SPACES_COLUMNS } from '../helpers/test-store.js';

let relay: RunningRelay;
let alice: MintedToken;
let bob: MintedToken;
let carol: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  [alice, bob, carol] = await Promise.all([mintToken(relay.url), mintToken(relay.url), mintToken(relay.url)]);
});
afterAll(async () => {
  await relay.close();
});

async function eventsOf(name: string) {
  const space = (await relay.store.spaces.byName(name))!;
  return await relay.store.events.list(space.id, 0, 1000);
}

describe('spaces.create', () => {
  it('creates a private work space with the defaults and records space.created at revision 1', async () => {
    const name = freshName('priv');
    const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name, title: 'Notes', description: 'What we learn' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name,
      title: 'Notes',
      description: 'What we learn',
      categories: [],
      visibility: 'private',
      oracle: false,
      join_policy: 'invite',
      signed_only: false,
      task_confirmations: 0,
      task_confirmers: 'members',
      task_claim_hours: 4,
      status: 'active',
      replaced_by: null,
      owner: alice.peerId,
      head_seq: '0',
      head_revision: '1',
      revision: '1',
      access: { role: 'owner', blocked: false, pending_request: null },
    });
    expect(r.body.space_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const events = await eventsOf(name);
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe('space.created');
    expect(events[0]!.actor).toBe(alice.peerId);
    expect(events[0]!.payload).toEqual({
      name,
      owner: alice.peerId,
      title: 'Notes',
      description: 'What we learn',
      categories: [],
      visibility: 'private',
      oracle: false,
      join_policy: 'invite',
      signed_only: false,
      task_confirmations: 0,
      task_confirmers: 'members',
      task_claim_hours: 4,
    });
  });

  it('refuses a public SPACE from a KEY newer than the wait capabilities state, then allows it', async () => {
    const fresh = await mintToken(relay.url);
    const caps = await call(relay, 'GET', '/v1/capabilities');
    expect(caps.body.limits.public_space_key_age_seconds).toBe(PUBLIC_SPACE_KEY_AGE_SECONDS);
    const name = freshName('pub');
    const body = { name, visibility: 'public', categories: ['computing'] };
    const early = await call(relay, 'POST', '/v1/spaces', { token: fresh.token, body });
    expect(early.status).toBe(403);
    expect(early.body.error.code).toBe('KEY_TOO_NEW');
    expect(await relay.store.spaces.byName(name)).toBeUndefined();
    // A private SPACE needs no wait.
    await createSpace(relay, fresh.token, { name: freshName('young') });
    ageKeys(relay);
    const later = await call(relay, 'POST', '/v1/spaces', { token: fresh.token, body });
    expect(later.status).toBe(201);
    expect(later.body).toMatchObject({ visibility: 'public', join_policy: 'request', task_confirmations: 2, categories: ['computing'] });
  });

  it('refuses reserved names and the svc- prefix with NAME_RESERVED and malformed names with INVALID_REQUEST', async () => {
    for (const name of ['admin', 'spaces', 'svc', 'svc-anything']) {
      const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name } });
      expect(r.body.error.code, name).toBe('NAME_RESERVED');
    }
    for (const name of ['ab', 'Upper-case', '-leading', 'a'.repeat(64), 'under_score', 42]) {
      const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name } });
      expect(r.status, String(name)).toBe(400);
      expect(r.body.error.code).toBe('INVALID_REQUEST');
    }
  });

  it('keeps a name taken for good: a second SPACE with it is SPACE_NAME_TAKEN', async () => {
    const name = freshName('taken');
    await createSpace(relay, alice.token, { name });
    const r = await call(relay, 'POST', '/v1/spaces', { token: bob.token, body: { name } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('SPACE_NAME_TAKEN');
    expect((await relay.store.spaces.byName(name))!.owner).toBe(alice.peerId);
    expect(await auditHead(relay, name)).toBe(1);
  });

  it('requires 1 to 3 valid categories for public and oracle SPACES (INVALID_CATEGORY)', async () => {
    ageKeys(relay);
    const bad: unknown[] = [undefined, [], ['no-such-category'], ['computing', 'programming-languages'], ['a', 'b', 'c', 'd'], 'computing'];
    for (const categories of bad) {
      const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('cat'), visibility: 'public', categories } });
      expect(r.status, JSON.stringify(categories)).toBe(400);
      expect(r.body.error.code).toBe('INVALID_CATEGORY');
    }
    const unknown = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('cat'), categories: ['computin'] } });
    expect(unknown.body.error.code).toBe('INVALID_CATEGORY');
    expect(unknown.body.error.detail).toMatch(/computing/);
    // Private may have none, or some.
    const filed = await createSpace(relay, alice.token, { name: freshName('cat'), categories: ['machine-learning', 'computing'] });
    expect(filed.categories).toEqual(['machine-learning', 'computing']);
  });

  it('makes oracle spaces public only, with a reviewer and no task settings', async () => {
    ageKeys(relay);
    const priv = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('or'), oracle: true, categories: ['general'] } });
    expect(priv.body.error.code).toBe('INVALID_REQUEST');
    expect(priv.body.error.detail).toMatch(/oracle/);
    const tasks = await call(relay, 'POST', '/v1/spaces', {
      token: alice.token,
      body: { name: freshName('or'), oracle: true, visibility: 'public', categories: ['general'], task_claim_hours: 3 },
    });
    expect(tasks.body.error.code).toBe('ORACLE_HAS_NO_TASKS');
    const openOracle = await call(relay, 'POST', '/v1/spaces', {
      token: alice.token,
      body: { name: freshName('or'), oracle: true, visibility: 'public', categories: ['general'], join_policy: 'open' },
    });
    expect(openOracle.body.error.code).toBe('INVALID_REQUEST');
    const ok = await createSpace(relay, alice.token, { name: freshName('or'), oracle: true, visibility: 'public', categories: ['general'] });
    expect(ok.oracle).toBe(true);
    expect(ok.service_reviewer).toBe(true);
    expect(ok).not.toHaveProperty('task_confirmations');
    const noReviewer = await createSpace(relay, alice.token, {
      name: freshName('or'),
      oracle: true,
      visibility: 'public',
      categories: ['general'],
      service_reviewer: false,
    });
    expect(noReviewer.service_reviewer).toBe(false);
    const reviewerOnWork = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('w'), service_reviewer: true } });
    expect(reviewerOnWork.body.error.code).toBe('INVALID_REQUEST');
  });

  it('allows join_policy open only for a public work space', async () => {
    ageKeys(relay);
    const priv = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('op'), join_policy: 'open' } });
    expect(priv.status).toBe(400);
    expect(priv.body.error.detail).toMatch(/open/);
    const ok = await createSpace(relay, alice.token, { name: freshName('op'), visibility: 'public', categories: ['general'], join_policy: 'open' });
    expect(ok.join_policy).toBe('open');
  });

  it('refuses a sealed SPACE without its sealed parts with SEALED_NEEDS_BRIDGE (test/relay/sealed/sealed.test.ts creates them)', async () => {
    const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('seal'), visibility: 'sealed' } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('SEALED_NEEDS_BRIDGE');
  });

  it('takes task settings within their bounds and signed_only at creation', async () => {
    const s = await createSpace(relay, alice.token, {
      name: freshName('t'),
      task_confirmations: 5,
      task_confirmers: 'coordinators',
      task_claim_hours: 24,
      signed_only: true,
    });
    expect(s).toMatchObject({ task_confirmations: 5, task_confirmers: 'coordinators', task_claim_hours: 24, signed_only: true });
    for (const body of [{ task_confirmations: 6 }, { task_claim_hours: 0 }, { task_claim_hours: 25 }, { task_confirmers: 'everyone' }]) {
      const r = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('t'), ...body } });
      expect(r.body.error.code, JSON.stringify(body)).toBe('INVALID_REQUEST');
    }
  });

  it('refuses unknown members and missing tokens', async () => {
    const extra = await call(relay, 'POST', '/v1/spaces', { token: alice.token, body: { name: freshName('x'), colour: 'red' } });
    expect(extra.body.error.code).toBe('INVALID_REQUEST');
    const anon = await call(relay, 'POST', '/v1/spaces', { body: { name: freshName('x') } });
    expect(anon.status).toBe(401);
    expect(anon.body.error.code).toBe('TOKEN_MISSING');
  });

  it('refuses a KEY already in 10,000 SPACES with SPACE_LIMIT', async () => {
    const heavy = await mintToken(relay.url);
    // Fixture: 10,000 owned SPACES written straight into the store's tables.
    const rows = Array.from({ length: SPACES_PER_KEY }, (_, i) =>
      privateSpaceRow([`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, `bulk-${heavy.peerId.slice(0, 8)}-${i}`, heavy.peerId]),
    );
    await relay.store.db.transaction(async () => await insertRows(relay.store.db, SPACES_COLUMNS, rows))();
    const name = freshName('over');
    const r = await call(relay, 'POST', '/v1/spaces', { token: heavy.token, body: { name } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('SPACE_LIMIT');
    expect(await relay.store.spaces.byName(name)).toBeUndefined();
  });
});

describe('spaces.get', () => {
  it('shows any SPACE profile to anyone, and posts positions only where the caller may read', async () => {
    const name = freshName('get');
    await createSpace(relay, alice.token, { name, title: 'Hidden work', description: 'Private', categories: ['general'] });
    const anon = await call(relay, 'GET', `/v1/spaces/${name}`);
    expect(anon.status).toBe(200);
    expect(anon.body).toMatchObject({
      name,
      title: 'Hidden work',
      description: 'Private',
      categories: ['general'],
      visibility: 'private',
      head_seq: null,
      access: { role: null, pending_request: null },
    });
    expect(anon.body).not.toHaveProperty('head_revision');
    expect(anon.body.notice).toMatch(/PEER/);
    const stranger = await call(relay, 'GET', `/v1/spaces/${name}`, { token: bob.token });
    expect(stranger.body.access).toEqual({ role: null, blocked: false, pending_request: null });
    expect(stranger.body.head_seq).toBeNull();
  });

  it('shows head_seq of a public SPACE to anonymous readers', async () => {
    ageKeys(relay);
    const name = freshName('getpub');
    await createSpace(relay, alice.token, { name, visibility: 'public', categories: ['general'] });
    const anon = await call(relay, 'GET', `/v1/spaces/${name}`);
    expect(anon.body.head_seq).toBe('0');
    expect(anon.body.access.role).toBeNull();
  });

  it('shows a member its role, tags and the audit head', async () => {
    const name = freshName('getm');
    await createSpace(relay, alice.token, { name });
    const put = await call(relay, 'PUT', `/v1/spaces/${name}/members/${bob.peerId}`, { token: alice.token, body: { role: 'writer', tags: ['ops', 'a1'] } });
    expect(put.status).toBe(201);
    const r = await call(relay, 'GET', `/v1/spaces/${name}`, { token: bob.token });
    expect(r.body.access).toEqual({ role: 'writer', tags: ['a1', 'ops'], blocked: false, pending_request: null });
    expect(r.body.head_seq).toBe('0');
    expect(r.body.head_revision).toBe('2');
  });

  it('shows a KEY its own waiting join request, and drops it once the KEY is admitted', async () => {
    const name = freshName('ask');
    await createSpace(relay, alice.token, { name, join_policy: 'request' });
    const asker = await mintToken(relay.url);
    // The request is filed through the join-requests store (its route is another module's).
    const request = await relay.store.requests.create({
      space: (await relay.store.spaces.byName(name))!,
      id: '0f0e0d0c-0b0a-4908-8706-050403020100',
      requester: asker.peerId,
      message: 'may I?',
      now: relay.clock.now(),
    });
    const ask = { body: { request_id: request.id } };
    const r = await call(relay, 'GET', `/v1/spaces/${name}`, { token: asker.token });
    expect(r.body.access.role).toBeNull();
    expect(r.body.access.pending_request).toMatchObject({ request_id: ask.body.request_id });
    expect(r.body.access.pending_request.expires_at).toMatch(/Z$/);
    const other = await call(relay, 'GET', `/v1/spaces/${name}`, { token: carol.token });
    expect(other.body.access.pending_request).toBeNull();
    await call(relay, 'PUT', `/v1/spaces/${name}/members/${asker.peerId}`, { token: alice.token, body: { role: 'reader' } });
    const after = await call(relay, 'GET', `/v1/spaces/${name}`, { token: asker.token });
    expect(after.body.access).toMatchObject({ role: 'reader', pending_request: null });
    expect(await relay.store.requests.pendingOf((await relay.store.spaces.byName(name))!.id, asker.peerId, relay.clock.now())).toBeUndefined();
  });

  it('answers SPACE_NOT_FOUND for a name nobody holds', async () => {
    const r = await call(relay, 'GET', '/v1/spaces/no-such-space-here');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('SPACE_NOT_FOUND');
  });
});

describe('spaces.list', () => {
  const word = `zq${Date.now().toString(36)}`;
  let names: Record<string, string>;

  beforeAll(async () => {
    ageKeys(relay);
    names = {
      pub: freshName('lpub'),
      filed: freshName('lfiled'),
      bare: freshName('lbare'),
      oracle: freshName('lor'),
      bobs: freshName('lbob'),
    };
    await createSpace(relay, alice.token, { name: names.pub, visibility: 'public', categories: ['programming-languages'], title: `Rust ${word}` });
    await createSpace(relay, alice.token, { name: names.filed, categories: ['machine-learning'], description: `private but filed ${word}` });
    await createSpace(relay, alice.token, { name: names.bare, title: `bare ${word}` });
    await createSpace(relay, alice.token, { name: names.oracle, oracle: true, visibility: 'public', categories: ['general'], title: `Doc ${word.toUpperCase()}` });
    await createSpace(relay, bob.token, { name: names.bobs, title: `bob ${word}` });
  });

  async function list(query: string, token?: string): Promise<string[]> {
    const r = await call(relay, 'GET', `/v1/spaces?${query}`, token === undefined ? {} : { token });
    expect(r.status, r.text).toBe(200);
    return r.body.items.map((i: { name: string }) => i.name);
  }

  it('lists public and categorised SPACES to anyone, and a private SPACE with no category only to its own', async () => {
    const anon = await list(`q=${word}&limit=200`);
    expect(anon.sort()).toEqual([names.pub, names.filed, names.oracle].sort());
    const mine = await list(`q=${word}&limit=200`, alice.token);
    expect(mine.sort()).toEqual([names.pub, names.filed, names.bare, names.oracle].sort());
    const bobs = await list(`q=${word}&limit=200`, bob.token);
    expect(bobs.sort()).toEqual([names.pub, names.filed, names.oracle, names.bobs].sort());
  });

  it('finds by title and description, case-insensitively, and gives items their title and description', async () => {
    const r = await call(relay, 'GET', `/v1/spaces?q=${encodeURIComponent(`PRIVATE BUT FILED ${word}`)}`);
    expect(r.body.items).toHaveLength(1);
    expect(r.body.items[0]).toMatchObject({ name: names.filed, description: `private but filed ${word}`, title: '' });
  });

  it('filters by category including descendants, and refuses an unknown category with INVALID_CATEGORY', async () => {
    expect(await list(`q=${word}&category=computing`)).toEqual([names.pub]);
    expect(await list(`q=${word}&category=artificial-intelligence`)).toEqual([names.filed]);
    const r = await call(relay, 'GET', '/v1/spaces?category=computin');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_CATEGORY');
  });

  it('filters oracle spaces in or out', async () => {
    expect(await list(`q=${word}&oracle=true`)).toEqual([names.oracle]);
    expect((await list(`q=${word}&oracle=false`)).sort()).toEqual([names.pub, names.filed].sort());
  });

  it('orders by name by default and newest first with order=recent, paging with after', async () => {
    const byName = await list(`q=${word}`, alice.token);
    expect(byName).toEqual([...byName].sort());
    const recent = await list(`q=${word}&order=recent`, alice.token);
    expect(recent).toEqual([names.oracle, names.bare, names.filed, names.pub]);
    const first = await call(relay, 'GET', `/v1/spaces?q=${word}&order=recent&limit=3`, { token: alice.token });
    expect(first.body.has_more).toBe(true);
    expect(first.body.next_after).toBe(names.filed);
    const second = await call(relay, 'GET', `/v1/spaces?q=${word}&order=recent&limit=3&after=${first.body.next_after}`, { token: alice.token });
    expect(second.body.items.map((i: { name: string }) => i.name)).toEqual([names.pub]);
    expect(second.body).toMatchObject({ has_more: false, next_after: null });
  });

  it('marks the caller role on its own SPACES', async () => {
    const r = await call(relay, 'GET', `/v1/spaces?q=${word}`, { token: bob.token });
    const bobs = r.body.items.find((i: { name: string }) => i.name === names.bobs);
    expect(bobs.role).toBe('owner');
    expect(r.body.items.find((i: { name: string }) => i.name === names.pub)).not.toHaveProperty('role');
  });
});

describe('spaces.update', () => {
  let name: string;
  beforeAll(async () => {
    ageKeys(relay);
    name = freshName('upd');
    await createSpace(relay, alice.token, { name, visibility: 'public', categories: ['general'], title: 'Before' });
    const admin = await call(relay, 'PUT', `/v1/spaces/${name}/members/${bob.peerId}`, { token: alice.token, body: { role: 'admin' } });
    expect(admin.status).toBe(201);
    const writer = await call(relay, 'PUT', `/v1/spaces/${name}/members/${carol.peerId}`, { token: alice.token, body: { role: 'writer' } });
    expect(writer.status).toBe(201);
  });

  it('lets the owner change profile fields and records space.updated with the full resulting parameters', async () => {
    const before = await auditHead(relay, name);
    const r = await call(relay, 'PATCH', `/v1/spaces/${name}`, {
      token: alice.token,
      body: { title: 'After', signed_only: true, categories: ['computing', 'general'], join_policy: 'open' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ title: 'After', signed_only: true, categories: ['computing', 'general'], join_policy: 'open' });
    expect(r.body.changed).toEqual(['title', 'categories', 'join_policy', 'signed_only']);
    expect(r.body.revision).toBe(String(before + 1));
    const last = (await eventsOf(name)).at(-1)!;
    expect(last.event).toBe('space.updated');
    expect(last.revision).toBe(before + 1);
    expect(last.payload).toEqual({
      name,
      owner: alice.peerId,
      title: 'After',
      description: '',
      categories: ['computing', 'general'],
      visibility: 'public',
      oracle: false,
      join_policy: 'open',
      signed_only: true,
      task_confirmations: 2,
      task_confirmers: 'members',
      task_claim_hours: 4,
      changed: ['title', 'categories', 'join_policy', 'signed_only'],
    });
  });

  it('writes no event when nothing differs', async () => {
    const before = await auditHead(relay, name);
    const r = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token: alice.token, body: { title: 'After' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ changed: [], revision: null });
    expect(await auditHead(relay, name)).toBe(before);
  });

  it('lets an admin change task settings but not the profile', async () => {
    const before = await auditHead(relay, name);
    const ok = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token: bob.token, body: { task_confirmations: 3, task_claim_hours: 8 } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ task_confirmations: 3, task_claim_hours: 8, changed: ['task_confirmations', 'task_claim_hours'] });
    expect(await auditHead(relay, name)).toBe(before + 1);
    const denied = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token: bob.token, body: { title: 'Admin title' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('CONTROL_DENIED');
    expect(await auditHead(relay, name)).toBe(before + 1);
  });

  it('refuses writers and outsiders with CONTROL_DENIED and leaves the audit head unchanged', async () => {
    const before = await auditHead(relay, name);
    const outsider = await mintToken(relay.url);
    for (const [token, body] of [
      [carol.token, { task_claim_hours: 2 }],
      [carol.token, { description: 'x' }],
      [outsider.token, { title: 'mine now' }],
    ] as const) {
      const r = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token, body });
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('CONTROL_DENIED');
    }
    expect(await auditHead(relay, name)).toBe(before);
    expect((await relay.store.spaces.byName(name))!.title).toBe('After');
  });

  it('refuses fields fixed at creation, an empty change, a bad filing and open for a private SPACE', async () => {
    const before = await auditHead(relay, name);
    const cases: [Record<string, unknown>, string][] = [
      [{ visibility: 'private' }, 'INVALID_REQUEST'],
      [{ oracle: true }, 'INVALID_REQUEST'],
      [{ name: 'renamed' }, 'INVALID_REQUEST'],
      [{}, 'INVALID_REQUEST'],
      [{ categories: [] }, 'INVALID_CATEGORY'],
      [{ categories: ['computing', 'software-engineering'] }, 'INVALID_CATEGORY'],
      [{ service_reviewer: false }, 'INVALID_REQUEST'],
      [{ task_confirmations: 9 }, 'INVALID_REQUEST'],
    ];
    for (const [body, code] of cases) {
      const r = await call(relay, 'PATCH', `/v1/spaces/${name}`, { token: alice.token, body });
      expect(r.body.error?.code, JSON.stringify(body)).toBe(code);
    }
    const priv = freshName('updp');
    await createSpace(relay, alice.token, { name: priv });
    const open = await call(relay, 'PATCH', `/v1/spaces/${priv}`, { token: alice.token, body: { join_policy: 'open' } });
    expect(open.body.error.code).toBe('INVALID_REQUEST');
    expect(await auditHead(relay, priv)).toBe(1);
    expect(await auditHead(relay, name)).toBe(before);
  });

  it('refuses task settings on an oracle space with ORACLE_HAS_NO_TASKS', async () => {
    const oracle = freshName('updo');
    await createSpace(relay, alice.token, { name: oracle, oracle: true, visibility: 'public', categories: ['general'] });
    const r = await call(relay, 'PATCH', `/v1/spaces/${oracle}`, { token: alice.token, body: { task_claim_hours: 5 } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('ORACLE_HAS_NO_TASKS');
    const reviewer = await call(relay, 'PATCH', `/v1/spaces/${oracle}`, { token: alice.token, body: { service_reviewer: false } });
    expect(reviewer.status).toBe(200);
    expect(reviewer.body.service_reviewer).toBe(false);
    expect(await auditHead(relay, oracle)).toBe(2);
  });

  it('refuses updates to a closed SPACE with SPACE_CLOSED and to an unknown one with SPACE_NOT_FOUND', async () => {
    const closed = freshName('updc');
    await createSpace(relay, alice.token, { name: closed });
    await relay.store.spaces.close((await relay.store.spaces.byName(closed))!.id, name, relay.clock.now());
    const r = await call(relay, 'PATCH', `/v1/spaces/${closed}`, { token: alice.token, body: { title: 'late' } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('SPACE_CLOSED');
    expect(await auditHead(relay, closed)).toBe(1);
    const got = await call(relay, 'GET', `/v1/spaces/${closed}`);
    expect(got.body).toMatchObject({ status: 'closed', replaced_by: name });
    const missing = await call(relay, 'PATCH', '/v1/spaces/nobody-has-this', { token: alice.token, body: { title: 'x' } });
    expect(missing.body.error.code).toBe('SPACE_NOT_FOUND');
  });
});
