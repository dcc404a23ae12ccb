/**
 * Oracle documents over the real HTTP relay (spec/2-endpoints.md "Oracle spaces"):
 * oracle.document (whole, one section, an earlier version), oracle.versions and links.list,
 * each refusal with its envelope and nothing changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type MintedToken, type RunningRelay, startRelay } from '../../helpers/relay.js';
import { ageKeys, call, createSpace, freshName } from '../../helpers/spaces.js';
import { get, post } from '../../helpers/posts.js';
import { oracleSpace, postVersion } from '../../helpers/oracle-documents.js';
import { stateProbe } from '../../helpers/state.js';

let relay: RunningRelay;
let owner: MintedToken;
let other: MintedToken;
let probe: () => Promise<string>;

beforeAll(async () => {
  relay = await startRelay();
  [owner, other] = await Promise.all([mintToken(relay.url), mintToken(relay.url)]);
  ageKeys(relay);
  probe = await stateProbe(relay);
});
afterAll(async () => {
  await relay.close();
});

const TEXT = [
  'Preamble naming [[preamble-space]].',
  '# Intro',
  'See [[linked-space|the linked one]] and `[[not-a-link]]`.',
  '## Setup',
  '- install with [[https://example.org/setup|setup guide]]',
  '```',
  '# not a heading',
  '[[inside-code]]',
  '```',
  '# Reference',
  'Post [[linked-space/2]] and file [[sha256.file:ab12cd]].',
  '',
].join('\n');

/** Expect a refusal with its envelope, and that nothing changed. */
async function refused(run: () => Promise<{ status: number; body: any }>, code: string, status: number): Promise<any> {
  const before = await probe();
  const r = await run();
  expect(r.status).toBe(status);
  expect(r.body.error).toMatchObject({ code, message: expect.any(String), fix: expect.any(String), request_id: expect.any(String) });
  expect(await probe()).toBe(before);
  return r.body.error;
}

describe('oracle.document', () => {
  it('answers version null and an empty text before the first version', async () => {
    const name = await oracleSpace(relay, owner);
    const r = await get(relay, `/v1/spaces/${name}/document`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ space: name, version: null, text: '', sections: [], references: [], notice: expect.stringMatching(/PEERS/) });
  });

  it('answers the current text with its sections and references, to anyone, nothing inside code counted', async () => {
    const name = await oracleSpace(relay, owner);
    const v = await postVersion(relay, owner, name, TEXT, { title: 'First text' });
    const r = await get(relay, `/v1/spaces/${name}/document`);
    expect(r.status).toBe(200);
    expect(r.body.version).toEqual({
      post_id: v.post_id,
      seq: v.seq,
      author: owner.peerId,
      posted_at: v.posted_at,
      summary: 'First text',
      state: 'current',
    });
    expect(r.body.text).toBe(TEXT);
    expect(r.body.sections).toEqual([
      { number: 1, level: 1, heading: 'Intro', path: 'Intro', bytes: Buffer.byteLength('# Intro\nSee [[linked-space|the linked one]] and `[[not-a-link]]`.\n') },
      { number: 2, level: 2, heading: 'Setup', path: 'Intro/Setup', bytes: expect.any(Number) },
      { number: 3, level: 1, heading: 'Reference', path: 'Reference', bytes: expect.any(Number) },
    ]);
    expect(r.body.references).toEqual([
      { kind: 'space', target: 'preamble-space', label: null, section: null },
      { kind: 'space', target: 'linked-space', label: 'the linked one', section: 1 },
      { kind: 'url', target: 'https://example.org/setup', label: 'setup guide', section: 2 },
      { kind: 'post', target: 'linked-space/2', label: null, section: 3 },
      { kind: 'fingerprint', target: 'sha256.file:ab12cd', label: null, section: 3 },
    ]);
  });

  it('answers one section by heading (any case), by number or by path, with only its references', async () => {
    const name = await oracleSpace(relay, owner);
    await postVersion(relay, owner, name, TEXT);
    for (const section of ['setup', '2', 'INTRO/SETUP']) {
      const r = await get(relay, `/v1/spaces/${name}/document?section=${encodeURIComponent(section)}`);
      expect(r.status, section).toBe(200);
      expect(r.body.section).toBe(2);
      expect(r.body.text).toBe('## Setup\n- install with [[https://example.org/setup|setup guide]]\n```\n# not a heading\n[[inside-code]]\n```\n');
      expect(r.body.sections).toHaveLength(3);
      expect(r.body.references).toEqual([{ kind: 'url', target: 'https://example.org/setup', label: 'setup guide', section: 2 }]);
    }
  });

  it('refuses a section that names none with INVALID_REQUEST naming the headings', async () => {
    const name = await oracleSpace(relay, owner);
    await postVersion(relay, owner, name, TEXT);
    const error = await refused(() => get(relay, `/v1/spaces/${name}/document?section=Nowhere`), 'INVALID_REQUEST', 400);
    expect(error.detail).toMatch(/"Intro".*"Setup".*"Reference"/);
  });

  it('answers an earlier version by its id, with its state', async () => {
    const name = await oracleSpace(relay, owner);
    const first = await postVersion(relay, owner, name, '# Old\nold words\n');
    await postVersion(relay, owner, name, '# New\nnew words\n', { supersedes: first.post_id });
    const r = await get(relay, `/v1/spaces/${name}/document?version=${first.post_id}`);
    expect(r.status).toBe(200);
    expect(r.body.version).toMatchObject({ post_id: first.post_id, state: 'superseded' });
    expect(r.body.text).toBe('# Old\nold words\n');
    expect(r.body.sections.map((s: any) => s.heading)).toEqual(['Old']);
  });

  it('refuses a version that is no version of this SPACE with POST_NOT_FOUND', async () => {
    const name = await oracleSpace(relay, owner);
    const elsewhere = await oracleSpace(relay, owner);
    const v = await postVersion(relay, owner, name, 'text');
    const note = await post(relay, owner, name, { kind: 'obs', body: 'not a version' });
    const foreign = await postVersion(relay, owner, elsewhere, 'other text');
    for (const id of [note.post_id, foreign.post_id, 'not-an-id', '00000000-0000-4000-8000-000000000000']) {
      await refused(() => get(relay, `/v1/spaces/${name}/document?version=${id}`), 'POST_NOT_FOUND', 404);
    }
    expect((await get(relay, `/v1/spaces/${name}/document?version=${v.post_id}`)).status).toBe(200);
  });

  it('refuses a work space with NOT_AN_ORACLE, an unknown name with SPACE_NOT_FOUND, a private SPACE with READ_DENIED', async () => {
    const work = freshName('work');
    await createSpace(relay, owner.token, { name: work, visibility: 'public', categories: ['general'] });
    await refused(() => get(relay, `/v1/spaces/${work}/document`), 'NOT_AN_ORACLE', 409);
    await refused(() => get(relay, `/v1/spaces/${freshName('none')}/document`), 'SPACE_NOT_FOUND', 404);
    const secret = freshName('priv');
    await createSpace(relay, owner.token, { name: secret });
    await refused(() => get(relay, `/v1/spaces/${secret}/document`, other), 'READ_DENIED', 403);
    await refused(() => get(relay, `/v1/spaces/${secret}/document`, owner), 'NOT_AN_ORACLE', 409);
  });

  it('shows no words of a hidden current version: an empty text and the unavailable marker', async () => {
    const name = await oracleSpace(relay, owner);
    const v = await postVersion(relay, owner, name, '# Secret\nwords\n');
    const hide = await call(relay, 'PUT', `/v1/posts/${v.post_id}/hidden`, { token: owner.token });
    expect(hide.status).toBe(200);
    const r = await get(relay, `/v1/spaces/${name}/document`);
    expect(r.body).toMatchObject({ text: '', sections: [], references: [], version: { post_id: v.post_id, summary: null, unavailable: { state: 'hidden' } } });
  });
});

describe('oracle.versions', () => {
  it('lists versions newest first with summary, snippet, state, supersedes and decision; declined ones stay', async () => {
    const name = await oracleSpace(relay, owner);
    const long = `# Long\n${'x'.repeat(400)}`;
    const first = await postVersion(relay, owner, name, long, { title: 'The first' });
    const vetoed = await postVersion(relay, other, name, 'a worse text', { title: 'Proposal A', supersedes: first.post_id });
    expect(vetoed.oracle.state).toBe('waiting');
    const veto = await post(relay, owner, name, { kind: 'veto', reply_to: vetoed.post_id, body: 'Loses the long section' });
    const approved = await postVersion(relay, other, name, 'a better text', { title: 'Proposal B', supersedes: first.post_id });
    const go = await post(relay, owner, name, { kind: 'go', reply_to: approved.post_id });

    const r = await get(relay, `/v1/spaces/${name}/versions`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => [i.post_id, i.state])).toEqual([
      [approved.post_id, 'current'],
      [vetoed.post_id, 'declined'],
      [first.post_id, 'superseded'],
    ]);
    const [b, a, f] = r.body.items;
    expect(b).toMatchObject({ summary: 'Proposal B', snippet: 'a better text', snippet_truncated: false, supersedes: first.post_id, author: other.peerId });
    expect(b.decision).toEqual({ kind: 'go', by: owner.peerId, reason: null, post_id: go.post_id, at: go.posted_at });
    expect(a.decision).toEqual({ kind: 'veto', by: owner.peerId, reason: 'Loses the long section', post_id: veto.post_id, at: veto.posted_at });
    expect(f).toMatchObject({ summary: 'The first', supersedes: null, decision: null, snippet_truncated: true, seq: first.seq });
    expect(f.snippet).toBe(long.slice(0, 280));
    expect(r.body).toMatchObject({ space: name, next_before: null, has_more: false, notice: expect.stringMatching(/PEERS/) });
  });

  it('pages with before and limit', async () => {
    const name = await oracleSpace(relay, owner);
    let prev: string | undefined;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const v = await postVersion(relay, owner, name, `text ${i}`, prev ? { supersedes: prev } : {});
      ids.unshift(v.post_id);
      prev = v.post_id;
    }
    const p1 = await get(relay, `/v1/spaces/${name}/versions?limit=2`);
    expect(p1.body.items.map((i: any) => i.post_id)).toEqual(ids.slice(0, 2));
    expect(p1.body.has_more).toBe(true);
    const p2 = await get(relay, `/v1/spaces/${name}/versions?limit=2&before=${p1.body.next_before}`);
    expect(p2.body.items.map((i: any) => i.post_id)).toEqual(ids.slice(2));
    expect(p2.body).toMatchObject({ has_more: false, next_before: null });
  });

  it('refuses a work space with NOT_AN_ORACLE and a malformed before with INVALID_REQUEST', async () => {
    const work = freshName('work');
    await createSpace(relay, owner.token, { name: work, visibility: 'public', categories: ['general'] });
    await refused(() => get(relay, `/v1/spaces/${work}/versions`), 'NOT_AN_ORACLE', 409);
    const name = await oracleSpace(relay, owner);
    await refused(() => get(relay, `/v1/spaces/${name}/versions?before=abc`), 'INVALID_REQUEST', 400);
  });
});

describe('links.list', () => {
  it('lists the oracle spaces whose current text links to a SPACE, and to one of its posts by seq or id', async () => {
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    const p1 = await post(relay, owner, target, { kind: 'obs', body: 'one' });
    const a = await oracleSpace(relay, owner);
    const b = await oracleSpace(relay, owner);
    const va = await postVersion(relay, owner, a, `Top [[${target}]]\n# S\n[[${target}|again]] and [[${target}/1|first post]]\n`);
    const vb = await postVersion(relay, owner, b, `# One\n# Two\nsee [[${target}/1]]\n`);

    const r = await get(relay, `/v1/spaces/${target}/links`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      space: target,
      items: [
        { space: a, version: va.post_id, section: null, label: null },
        { space: a, version: va.post_id, section: 1, label: 'again' },
      ],
      next_after: null,
      has_more: false,
      notice: expect.any(String),
    });
    for (const ref of ['1', p1.post_id]) {
      const byPost = await get(relay, `/v1/spaces/${target}/links?post=${ref}`);
      expect(byPost.body.post).toBe('1');
      expect(byPost.body.items).toEqual([
        { space: a, version: va.post_id, section: 1, label: 'first post' },
        { space: b, version: vb.post_id, section: 2, label: null },
      ]);
    }
    const paged = await get(relay, `/v1/spaces/${target}/links?limit=1`);
    expect(paged.body.has_more).toBe(true);
    const rest = await get(relay, `/v1/spaces/${target}/links?limit=1&after=${paged.body.next_after}`);
    expect(rest.body.items).toEqual([{ space: a, version: va.post_id, section: 1, label: 'again' }]);
  });

  it('follows the current text: a new version without the link removes it, a proposal that waits changes nothing', async () => {
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    const doc = await oracleSpace(relay, owner);
    const v1 = await postVersion(relay, owner, doc, `[[${target}]]`);
    const waiting = await postVersion(relay, other, doc, 'no link any more', { supersedes: v1.post_id });
    expect(waiting.oracle.state).toBe('waiting');
    expect((await get(relay, `/v1/spaces/${target}/links`)).body.items).toHaveLength(1);
    await post(relay, owner, doc, { kind: 'go', reply_to: waiting.post_id });
    expect((await get(relay, `/v1/spaces/${target}/links`)).body.items).toEqual([]);
    await postVersion(relay, owner, doc, `back: [[${target}|here]]`, { supersedes: waiting.post_id });
    expect((await get(relay, `/v1/spaces/${target}/links`)).body.items).toEqual([
      { space: doc, version: expect.any(String), section: null, label: 'here' },
    ]);
  });

  it('lists no links of a hidden current version, and lists them again once it is shown', async () => {
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    await post(relay, owner, target, { kind: 'obs', body: 'the first post' });
    const doc = await oracleSpace(relay, owner);
    const v1 = await postVersion(relay, owner, doc, `old [[${target}|old]]`);
    const v2 = await postVersion(relay, owner, doc, `now [[${target}|now]] and [[${target}/1]]`, { supersedes: v1.post_id });
    const listed = async () => ({
      space: (await get(relay, `/v1/spaces/${target}/links`)).body.items.map((l: any) => [l.space, l.version, l.label]),
      post: (await get(relay, `/v1/spaces/${target}/links?post=1`)).body.items.map((l: any) => l.version),
    });
    const shown = { space: [[doc, v2.post_id, 'now']], post: [v2.post_id] };
    expect(await listed()).toEqual(shown);

    // Hiding a version that is no longer current changes no links.
    expect((await call(relay, 'PUT', `/v1/posts/${v1.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(await listed()).toEqual(shown);

    expect((await call(relay, 'PUT', `/v1/posts/${v2.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(await listed()).toEqual({ space: [], post: [] });
    expect((await call(relay, 'DELETE', `/v1/posts/${v2.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(await listed()).toEqual(shown);

    // A proposal hidden while it waits and then approved is current with its words hidden: no links.
    const waiting = await postVersion(relay, other, doc, `next [[${target}|next]]`, { supersedes: v2.post_id });
    expect((await call(relay, 'PUT', `/v1/posts/${waiting.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect((await post(relay, owner, doc, { kind: 'go', reply_to: waiting.post_id })).oracle).toEqual({ decided: waiting.post_id, state: 'current' });
    expect(await listed()).toEqual({ space: [], post: [] });
    expect((await call(relay, 'DELETE', `/v1/posts/${waiting.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    expect(await listed()).toEqual({ space: [[doc, waiting.post_id, 'next']], post: [] });
  });

  it('refuses an unknown SPACE, a private one, a post that is not there and a malformed post', async () => {
    await refused(() => get(relay, `/v1/spaces/${freshName('none')}/links`), 'SPACE_NOT_FOUND', 404);
    const secret = freshName('priv');
    await createSpace(relay, owner.token, { name: secret });
    await refused(() => get(relay, `/v1/spaces/${secret}/links`, other), 'READ_DENIED', 403);
    expect((await get(relay, `/v1/spaces/${secret}/links`, owner)).status).toBe(200);
    const target = freshName('tgt');
    await createSpace(relay, owner.token, { name: target, visibility: 'public', categories: ['general'] });
    await refused(() => get(relay, `/v1/spaces/${target}/links?post=7`), 'POST_NOT_FOUND', 404);
    await refused(() => get(relay, `/v1/spaces/${target}/links?post=00000000-0000-4000-8000-000000000000`), 'POST_NOT_FOUND', 404);
    await refused(() => get(relay, `/v1/spaces/${target}/links?post=x7`), 'INVALID_REQUEST', 400);
  });
});
