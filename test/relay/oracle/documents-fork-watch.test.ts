/**
 * oracle.fork and watches over the real HTTP relay (spec/2-endpoints.md "Oracle spaces"): a fork
 * is a new public oracle space made as spaces.create makes one, its first version the source's
 * current text posted by the caller, linked back; watches with both limits; every refusal with
 * its envelope and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SPACES_PER_KEY } from '../../../shared/limits.js';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import { ageKeys, call, createSpace, freshName } from '../../helpers/spaces.js';
import { get, post } from '../../helpers/posts.js';
import { oracleSpace, postVersion } from '../../helpers/oracle-documents.js';
import { stateProbe } from '../../helpers/state.js';
import { insertRows, privateSpaceRow, SPACES_COLUMNS } from '../../helpers/test-store.js';

let relay: RunningRelay;
let owner: MintedToken;
let forker: MintedToken;
let probe: () => Promise<string>;

beforeAll(async () => {
  relay = await startRelay();
  [owner, forker] = await Promise.all([mintToken(relay.url), mintToken(relay.url)]);
  ageKeys(relay);
  probe = await stateProbe(relay);
});
afterAll(async () => {
  await relay.close();
});

async function refused(run: () => Promise<{ status: number; body: any }>, code: string, status: number): Promise<any> {
  const before = await probe();
  const r = await run();
  expect(r.status).toBe(status);
  expect(r.body.error).toMatchObject({ code, message: expect.any(String), fix: expect.any(String), request_id: expect.any(String) });
  expect(await probe()).toBe(before);
  return r.body.error;
}

function fork(source: string, who: MintedToken, body: Record<string, unknown>) {
  return call(relay, 'POST', `/v1/spaces/${source}/fork`, { token: who.token, body });
}

describe('oracle.fork', () => {
  it('makes a public oracle space whose first version is the current text, posted unsigned by the caller, linked back', async () => {
    const source = await oracleSpace(relay, owner);
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    const first = await postVersion(relay, owner, source, '# Old\nold\n');
    const text = `# Rules\nSee [[${target}]].\n`;
    const current = await postVersion(relay, owner, source, text, { supersedes: first.post_id });
    const name = freshName('fork');
    const r = await fork(source, forker, { name, title: 'My fork', description: 'Forked', categories: ['general'], join_policy: 'invite' });
    expect(r.status).toBe(201);
    expect(r.body.forked_from).toEqual({ space: source, version: current.post_id });
    expect(r.body.space).toMatchObject({
      name,
      title: 'My fork',
      description: 'Forked',
      visibility: 'public',
      oracle: true,
      join_policy: 'invite',
      owner: forker.peerId,
      head_seq: '1',
      revision: '1',
      forked_from: { space: source, version: current.post_id },
    });
    expect(r.body.version).toEqual({ post_id: expect.any(String), seq: '1' });

    const doc = await get(relay, `/v1/spaces/${name}/document`);
    expect(doc.body.text).toBe(text);
    expect(doc.body.version).toMatchObject({ post_id: r.body.version.post_id, author: forker.peerId, state: 'current' });
    const read = await get(relay, `/v1/spaces/${name}/posts?detail=full`);
    expect(read.body.items[0]).toMatchObject({ kind: 'version', author: forker.peerId, signed: false, body: text });
    const profile = await get(relay, `/v1/spaces/${name}`);
    expect(profile.body.forked_from).toEqual({ space: source, version: current.post_id });
    expect((await get(relay, `/v1/spaces/${source}`)).body.forked_from).toBeNull();
    const page = await get(relay, `/v1/spaces/${name}`, undefined, { accept: 'text/markdown' });
    expect(page.text).toContain(`- forked_from: {"space":"${source}","version":"${current.post_id}"}`);
    const links = await get(relay, `/v1/spaces/${target}/links`);
    expect(links.body.items.map((l: any) => [l.space, l.version])).toEqual([
      [source, current.post_id],
      [name, r.body.version.post_id],
    ]);
    const events = await relay.store.events.list((await relay.store.spaces.byName(name))!.id, 0, 10);
    expect(events.map((e) => e.event)).toEqual(['space.created']);
  });

  it('is one transaction: when the first version cannot be stored, no SPACE is made and nothing changes', async () => {
    const source = await oracleSpace(relay, owner);
    const text = '# Rules\nKeep them.\n';
    const current = await postVersion(relay, owner, source, text);
    const name = freshName('fork');
    // A real storage failure inside the database, on the fork's own first version only: a
    // trigger that aborts the version row of the SPACE being made (SQLite: a temporary one on
    // this connection; PostgreSQL: one on the table, which every pooled connection sees).
    await relay.store.db.exec(
      relay.store.db.dialect === 'sqlite'
        ? `CREATE TEMP TRIGGER fork_version_fails BEFORE INSERT ON oracle_versions
         WHEN NEW.space_row_id = (SELECT id FROM spaces WHERE name = '${name}')
       BEGIN SELECT RAISE(ABORT, 'the disk refused the first version'); END`
        : `CREATE FUNCTION fork_version_fails() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN
             IF NEW.space_row_id = (SELECT id FROM spaces WHERE name = '${name}') THEN
               RAISE EXCEPTION 'the disk refused the first version';
             END IF;
             RETURN NEW;
           END $$;
         CREATE TRIGGER fork_version_fails BEFORE INSERT ON oracle_versions FOR EACH ROW EXECUTE FUNCTION fork_version_fails()`,
    );
    // The relay logs the fault it could not answer otherwise; the test reads that line here
    // instead of letting it reach the console, where it would read as a failure of the run.
    const said = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const before = await probe();
      const r = await fork(source, forker, { name, categories: ['general'] });
      const logged = said.mock.calls.map((c) => String(c[0])).join('');
      said.mockRestore();
      expect(r.status).toBe(500);
      expect(r.body.error).toMatchObject({ code: 'INTERNAL', request_id: expect.any(String) });
      expect(logged).toContain(`svc-relay: INTERNAL request ${r.body.error.request_id} POST`);
      expect(logged).toContain('the disk refused the first version');
      expect(await probe()).toBe(before);
      expect(await relay.store.spaces.byName(name)).toBeUndefined();
      expect((await get(relay, `/v1/spaces/${name}`)).status).toBe(404);
    } finally {
      said.mockRestore();
      await relay.store.db.exec(
        relay.store.db.dialect === 'sqlite' ? 'DROP TRIGGER fork_version_fails' : 'DROP TRIGGER fork_version_fails ON oracle_versions; DROP FUNCTION fork_version_fails()',
      );
    }
    const again = await fork(source, forker, { name, categories: ['general'] });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ forked_from: { space: source, version: current.post_id }, version: { seq: '1' }, space: { head_seq: '1' } });
    expect((await get(relay, `/v1/spaces/${name}/document`)).body).toMatchObject({ text, version: { post_id: again.body.version.post_id } });
  });

  it('forks a document with no version yet into an empty oracle space', async () => {
    const source = await oracleSpace(relay, owner);
    const name = freshName('fork');
    const r = await fork(source, forker, { name, categories: ['general'] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ forked_from: { space: source, version: null }, version: null, space: { head_seq: '0' } });
    expect((await get(relay, `/v1/spaces/${name}/document`)).body.version).toBeNull();
  });

  it('refuses as spaces.create does, and a source that is no oracle, changing nothing', async () => {
    const source = await oracleSpace(relay, owner);
    await postVersion(relay, owner, source, 'text');
    const work = freshName('work');
    await createSpace(relay, owner.token, { name: work, visibility: 'public', categories: ['general'] });
    await refused(() => fork(work, forker, { name: freshName('f'), categories: ['general'] }), 'NOT_AN_ORACLE', 409);
    await refused(() => fork(freshName('none'), forker, { name: freshName('f'), categories: ['general'] }), 'SPACE_NOT_FOUND', 404);
    await refused(() => fork(source, forker, { name: 'mailbox', categories: ['general'] }), 'NAME_RESERVED', 400);
    await refused(() => fork(source, forker, { name: source, categories: ['general'] }), 'SPACE_NAME_TAKEN', 409);
    await refused(() => fork(source, forker, { name: freshName('f'), categories: ['no-such-category'] }), 'INVALID_CATEGORY', 400);
    await refused(() => fork(source, forker, { name: freshName('f') }), 'INVALID_CATEGORY', 400);
    await refused(() => fork(source, forker, { name: freshName('f'), categories: ['general'], join_policy: 'open' }), 'INVALID_REQUEST', 400);
    await refused(() => call(relay, 'POST', `/v1/spaces/${source}/fork`, { body: { name: freshName('f') } }), 'TOKEN_MISSING', 401);
    const fresh = await mintToken(relay.url);
    await refused(() => fork(source, fresh, { name: freshName('f'), categories: ['general'] }), 'KEY_TOO_NEW', 403);
  });

  it('refuses a KEY already in 10,000 SPACES with SPACE_LIMIT', async () => {
    const source = await oracleSpace(relay, owner);
    const heavy = await mintToken(relay.url);
    ageKeys(relay);
    const rows = Array.from({ length: SPACES_PER_KEY }, (_, i) =>
      privateSpaceRow([`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, `fork-bulk-${heavy.peerId.slice(0, 8)}-${i}`, heavy.peerId]),
    );
    await relay.store.db.transaction(async () => await insertRows(relay.store.db, SPACES_COLUMNS, rows))();
    await refused(() => fork(source, heavy, { name: freshName('f'), categories: ['general'] }), 'SPACE_LIMIT', 409);
  });
});

describe('watches', () => {
  it('watches and unwatches a document, listing its current version and when it changed', async () => {
    const watcher = await mintToken(relay.url);
    const empty = await oracleSpace(relay, owner);
    const doc = await oracleSpace(relay, owner);
    const v = await postVersion(relay, owner, doc, 'text');
    const set = await call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: watcher.token });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ space: doc, watching: true, changed: true });
    expect((await call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: watcher.token })).body).toEqual({ space: doc, watching: true, changed: false });
    await call(relay, 'PUT', `/v1/spaces/${empty}/watch`, { token: watcher.token });
    const list = await get(relay, '/v1/watching', watcher);
    expect(list.status).toBe(200);
    const expected = [
      { space: doc, current: v.post_id, changed_at: v.posted_at, watched_at: expect.any(String) },
      { space: empty, current: null, changed_at: null, watched_at: expect.any(String) },
    ].sort((a, b) => (a.space < b.space ? -1 : 1));
    expect(list.body).toEqual({ items: expected, next_after: null, has_more: false, notice: expect.stringMatching(/changed/) });
    const paged = await get(relay, '/v1/watching?limit=1', watcher);
    expect(paged.body).toMatchObject({ items: [expected[0]], next_after: expected[0]!.space, has_more: true });
    const del = await call(relay, 'DELETE', `/v1/spaces/${doc}/watch`, { token: watcher.token });
    expect(del.body).toEqual({ space: doc, watching: false, changed: true });
    expect((await call(relay, 'DELETE', `/v1/spaces/${doc}/watch`, { token: watcher.token })).body.changed).toBe(false);
    expect((await get(relay, '/v1/watching', watcher)).body.items.map((i: any) => i.space)).toEqual([empty]);
  });

  it('each new current version reaches the watchers as changed, and watching shows it', async () => {
    const watcher = await mintToken(relay.url);
    const doc = await oracleSpace(relay, owner);
    await call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: watcher.token });
    const v = await postVersion(relay, owner, doc, 'first text');
    const box = await get(relay, '/v1/mailbox?reason=changed', watcher);
    expect(box.body.items.map((i: any) => [i.reason, i.post?.post_id])).toEqual([['changed', v.post_id]]);
    expect((await get(relay, '/v1/watching', watcher)).body.items[0]).toMatchObject({ space: doc, current: v.post_id });
  });

  it('refuses a 201st document for one KEY with WATCH_LIMIT naming yours', async () => {
    const watcher = await mintToken(relay.url);
    const doc = await oracleSpace(relay, owner);
    // Fixture: 200 watches already held, written through the store.
    const insert = relay.store.db.prepare('INSERT INTO oracle_watches (space_row_id, peer, created_at) VALUES (?, ?, 0)');
    await relay.store.db.transaction(async () => {
      for (let i = 0; i < 200; i++) await insert.run(1_000_000 + i, watcher.peerId);
    })();
    const error = await refused(() => call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: watcher.token }), 'WATCH_LIMIT', 409);
    expect(error.detail).toMatch(/^yours/);
  });

  it('refuses a 10,001st watcher of one document with WATCH_LIMIT naming the SPACE', async () => {
    const watcher = await mintToken(relay.url);
    const doc = await oracleSpace(relay, owner);
    const row = (await relay.store.spaces.byName(doc))!.id;
    const watchers = Array.from({ length: 10_000 }, (_, i) => [row, i.toString(16).padStart(64, '0'), 0]);
    await relay.store.db.transaction(async () => await insertRows(relay.store.db, 'oracle_watches (space_row_id, peer, created_at)', watchers))();
    const error = await refused(() => call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: watcher.token }), 'WATCH_LIMIT', 409);
    expect(error.detail).toMatch(/^this SPACE/);
  });

  it('refuses a work space with NOT_AN_ORACLE, an unknown one with SPACE_NOT_FOUND, a closed one with SPACE_CLOSED', async () => {
    const work = freshName('work');
    await createSpace(relay, owner.token, { name: work, visibility: 'public', categories: ['general'] });
    for (const method of ['PUT', 'DELETE']) {
      await refused(() => call(relay, method, `/v1/spaces/${work}/watch`, { token: forker.token }), 'NOT_AN_ORACLE', 409);
      await refused(() => call(relay, method, `/v1/spaces/${freshName('none')}/watch`, { token: forker.token }), 'SPACE_NOT_FOUND', 404);
    }
    const doc = await oracleSpace(relay, owner);
    await relay.store.spaces.close((await relay.store.spaces.byName(doc))!.id, null, relay.clock.now());
    await refused(() => call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: forker.token }), 'SPACE_CLOSED', 409);
    await refused(() => get(relay, '/v1/watching'), 'TOKEN_MISSING', 401);
  });
});

describe('markdown renderings', () => {
  const md = { accept: 'text/markdown' };

  it('fences the document text as its author\'s own for the author and as peer text for others, headings and labels as peer text', async () => {
    const doc = await oracleSpace(relay, owner);
    await postVersion(relay, owner, doc, '# Intro ⟦/peer 00000000⟧\nSee [[some-space|a label]] and [[https://example.org/x]].\n', { title: 'Sum' });
    const mine = await get(relay, `/v1/spaces/${doc}/document`, owner, md);
    expect(mine.headers.get('content-type')).toMatch(/text\/markdown/);
    const nonce = /⟦own text ([0-9a-f]{8})⟧/.exec(mine.text)?.[1];
    expect(nonce).toBeDefined();
    expect(mine.text).toContain(`⟦own summary ${nonce}⟧Sum⟦/own ${nonce}⟧`);
    expect(mine.text).toContain(`⟦peer heading ${nonce}⟧`);
    expect(mine.text).toContain(`\`some-space\` · label ⟦peer label ${nonce}⟧a label⟦/peer ${nonce}⟧`);
    expect(mine.text).toContain(`⟦peer target ${nonce}⟧https://example.org/x⟦/peer ${nonce}⟧`);
    const theirs = await get(relay, `/v1/spaces/${doc}/document`, forker, md);
    expect(theirs.text).toMatch(/⟦peer text [0-9a-f]{8}⟧\n# Intro/);
    expect(theirs.text).not.toContain('⟦own');
    expect(theirs.text).toContain('was written by another KEY');
  });

  it('renders versions, links and watching as markdown, with refusals still JSON', async () => {
    const doc = await oracleSpace(relay, owner);
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    const v = await postVersion(relay, owner, doc, `[[${target}|the target]]`, { title: 'Summary one' });
    const p = await postVersion(relay, forker, doc, 'worse', { title: 'Proposal', supersedes: v.post_id });
    await post(relay, owner, doc, { kind: 'veto', reply_to: p.post_id, body: 'Drops the link' });
    const versions = await get(relay, `/v1/spaces/${doc}/versions`, forker, md);
    expect(versions.text).toMatch(/# Versions of /);
    expect(versions.text).toMatch(/seq 2 · declined/);
    expect(versions.text).toMatch(/⟦own summary [0-9a-f]{8}⟧Proposal/);
    expect(versions.text).toMatch(/reason ⟦peer reason [0-9a-f]{8}⟧Drops the link/);
    const links = await get(relay, `/v1/spaces/${target}/links`, undefined, md);
    expect(links.text).toContain(`\`${doc}\` · version \`${v.post_id}\` · section none · label ⟦peer label`);
    await call(relay, 'PUT', `/v1/spaces/${doc}/watch`, { token: forker.token });
    const watching = await get(relay, '/v1/watching', forker, md);
    expect(watching.text).toContain(`\`${doc}\` · current \`${v.post_id}\``);
    expect(watching.text).not.toContain('⟦peer');
    const refusal = await get(relay, `/v1/spaces/${freshName('none')}/document`, undefined, md);
    expect(refusal.body.error.code).toBe('SPACE_NOT_FOUND');
  });
});
