/**
 * Findings, the newer API's kind `finding` and its findings read (relay/findings/,
 * relay/routes/findings.ts), against the real relay over HTTP on the test store: what the
 * public service's clients send (a finding's data with claim, status, confidence and sources,
 * unsigned and signed; a member's warn citing a finding; a task done with a finding as its
 * result, then confirmed or rejected) and what its code expects back (the list's items with
 * number, status, sources, cited_by, source_withdrawn, contested and task). Every refusal is
 * the newer API's code with the envelope, and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, codeOf, get, newSpace, post, signedPost } from '../../helpers/posts.js';
import { expectRefusedUnchanged } from '../../helpers/envelope.js';
import { call, getJson, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { act, addTask, nextTask } from '../../helpers/tasks.js';
import type { JsonObject } from '../../../shared/canonical.js';
import type { SpaceRow } from '../../../relay/store/spaces.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let checker: MintedToken;
let outsider: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  checker = await mintToken(relay.url);
  outsider = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

function append(who: MintedToken, space: string, body: Record<string, unknown>): Promise<Answer> {
  relay.clock.advance(2_100);
  return call(relay, 'POST', `/v1/spaces/${space}/posts`, { token: who.token, body });
}

async function findings(space: string, who: MintedToken | undefined, query = ''): Promise<any> {
  const r = await get(relay, `/v1/spaces/${space}/findings${query}`, who);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** A finding's data as the public service's bridge sends it. */
function finding(claim: string, extra: JsonObject = {}): JsonObject {
  return { claim, status: 'proposed', confidence: 'medium', ...extra };
}

async function workSpace(opts: Partial<Parameters<typeof newSpace>[2]> = {}): Promise<SpaceRow> {
  const space = await newSpace(relay, owner, opts);
  await admit(relay, space, writer, 'writer');
  await admit(relay, space, checker, 'writer');
  return space;
}

describe('kind finding: posted as the newer API takes it', () => {
  it('capabilities list finding among the knowledge kinds, and its data keys and limits', async () => {
    const caps = (await getJson(`${relay.url}/v1/capabilities`)).body;
    expect(caps.kinds).toContain('finding');
    expect(caps.kind_groups.knowledge).toContain('finding');
    expect(caps.data_keys.finding).toEqual({ keys: ['claim', 'status', 'confidence', 'sources'], statuses: ['proposed', 'supported', 'disputed'], confidences: ['low', 'medium', 'high'] });
    expect(caps.limits.findings).toMatchObject({ claim_chars: 500, sources: 32 });
  });

  it('an unsigned and a signed finding are taken, numbered from 1, their sources named by id and by seq', async () => {
    const space = await workSpace();
    const a = await post(relay, writer, space, { kind: 'result', title: 'bench run', body: 'p50 12 ms' });
    const b = await post(relay, checker, space, { kind: 'obs', title: 'second run' });
    const first = await post(relay, writer, space, {
      kind: 'finding',
      title: 'Cache halves p50',
      data: finding('The cache halves p50 latency on the bench', { sources: [a.post_id, b.seq] }),
    });
    const signed = signedPost(writer, space, { kind: 'finding', title: 'Signed claim' }, { data: { claim: 'Signed and checked', status: 'supported', confidence: 'high', sources: [first.post_id] } });
    const r = await append(writer, space.name, signed.submission as unknown as Record<string, unknown>);
    expect(r.status, r.text).toBe(201);
    expect(r.body.signed).toBe(true);

    const page = await findings(space.name, owner);
    expect(page).toMatchObject({ space: space.name, has_more: false, next_before: null });
    expect(page.items.map((f: any) => f.number)).toEqual([2, 1]);
    const [second, one] = page.items;
    expect(one).toMatchObject({
      number: 1,
      post_id: first.post_id,
      seq: first.seq,
      author: writer.peerId,
      claim: 'The cache halves p50 latency on the bench',
      status: 'proposed',
      confidence: 'medium',
      sources: [a.post_id, b.post_id],
      cited_by: 1,
      source_withdrawn: false,
      supersedes: null,
      superseded_by: null,
      retracted_by: null,
      task: null,
    });
    expect(one).not.toHaveProperty('contested');
    expect(one.posted_at).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
    expect(second).toMatchObject({ number: 2, post_id: r.body.post_id, claim: 'Signed and checked', status: 'supported', confidence: 'high', sources: [first.post_id], cited_by: 0 });
    expect(typeof page.tokens_estimated).toBe('number');
    expect(page.notice).toMatch(/peer content/);
  });

  it('a post of the spec\'s kinds keeps data.sources as API 0.1 takes it: any shape, accepted as sent', async () => {
    const space = await workSpace();
    const r = await append(writer, space.name, { kind: 'obs', title: 'free sources', data: { sources: ['anything', 3] } });
    expect(r.status, r.text).toBe(201);
    const elsewhere = await newSpace(relay, owner);
    const far = await post(relay, owner, elsewhere, { kind: 'obs', title: 'far' });
    const other = await append(writer, space.name, { kind: 'warn', title: 'cites another SPACE', data: { sources: [far.post_id] } });
    expect(other.status, other.text).toBe(201);
  });
});

describe('kind finding: each refusal with its code and envelope, nothing written', () => {
  let space: SpaceRow;
  let elsewhere: { post_id: string };
  let here: { post_id: string; seq: string };
  beforeAll(async () => {
    space = await workSpace();
    here = await post(relay, writer, space, { kind: 'obs', title: 'source' });
    elsewhere = await post(relay, owner, await newSpace(relay, owner), { kind: 'obs', title: 'elsewhere' });
  });

  it('no data, or data without a claim, status and confidence: INVALID_REQUEST naming each', async () => {
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'bare' }), 'INVALID_REQUEST', /^data: required for kind finding/);
    const r = await expectRefusedUnchanged(
      relay,
      () => append(writer, space.name, { kind: 'finding', title: 'wrong', data: { claim: 'two\nlines', status: 'withdrawn', confidence: 'sure' } }),
      'INVALID_REQUEST',
    );
    expect(r.body.error.detail).toContain('data.claim');
    expect(r.body.error.detail).toContain('data.status');
    expect(r.body.error.detail).toContain('data.confidence');
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'long', data: finding('x'.repeat(501)) }), 'INVALID_REQUEST', /data\.claim/);
  });

  it('data.sources not up to 32 post ids or seqs, once each: INVALID_REQUEST', async () => {
    for (const sources of [here.post_id, ['12a'], [3], [here.post_id, here.post_id], Array.from({ length: 33 }, (_, i) => String(i + 1)), ['012']]) {
      await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'bad sources', data: finding('c', { sources }) }), 'INVALID_REQUEST', /data\.sources/);
    }
  });

  it('a source that is no post of this SPACE, or a seq not yet written: SOURCE_NOT_FOUND, the value as sent its detail', async () => {
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'far', data: finding('c', { sources: [elsewhere.post_id] }) }), 'SOURCE_NOT_FOUND', new RegExp(`^${elsewhere.post_id}$`));
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'none', data: finding('c', { sources: [randomUUID()] }) }), 'SOURCE_NOT_FOUND');
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'ahead', data: finding('c', { sources: ['999'] }) }), 'SOURCE_NOT_FOUND', /^999$/);
  });

  it('one post named by its id and by its seq: INVALID_REQUEST', async () => {
    await expectRefusedUnchanged(relay, () => append(writer, space.name, { kind: 'finding', title: 'twice', data: finding('c', { sources: [here.post_id, here.seq] }) }), 'INVALID_REQUEST', /names one post twice/);
  });

  it('a signed finding is held to the same rules', async () => {
    const bad = signedPost(writer, space, { kind: 'finding', title: 'signed bad' }, { data: { claim: 'c', status: 'maybe', confidence: 'low' } });
    await expectRefusedUnchanged(relay, () => append(writer, space.name, bad.submission as unknown as Record<string, unknown>), 'INVALID_REQUEST', /data\.status/);
    const far = signedPost(writer, space, { kind: 'finding', title: 'signed far' }, { data: finding('c', { sources: [elsewhere.post_id] }) });
    await expectRefusedUnchanged(relay, () => append(writer, space.name, far.submission as unknown as Record<string, unknown>), 'SOURCE_NOT_FOUND');
  });
});

describe('contest and confirm, as the newer API records them', () => {
  it('a member\'s warn citing a finding contests it until the warn is retracted; the author\'s own warn does not', async () => {
    const space = await workSpace();
    const base = await post(relay, writer, space, { kind: 'result', title: 'base' });
    const f = await post(relay, writer, space, { kind: 'finding', title: 'claim', data: finding('Holds on arm64', { sources: [base.post_id] }) });
    await post(relay, writer, space, { kind: 'warn', title: 'own doubt', data: { sources: [f.post_id] } });
    expect((await findings(space.name, owner)).items[0]).not.toHaveProperty('contested');

    const warn = await post(relay, checker, space, { kind: 'fail', title: 'Fails on musl', data: { sources: [f.post_id] } });
    const onSource = await post(relay, owner, space, { kind: 'warn', title: 'Base run was cold', data: { sources: [base.post_id] } });
    let item = (await findings(space.name, owner)).items[0];
    expect(item.cited_by).toBe(2);
    expect(item.contested).toEqual([
      { cause: 'warn', on: base.seq, by: owner.peerId, post: onSource.seq, title: 'Base run was cold' },
      { cause: 'fail', on: f.seq, by: checker.peerId, post: warn.seq, title: 'Fails on musl' },
    ]);

    await post(relay, checker, space, { kind: 'obs', title: 'withdrawn', retracts: warn.post_id });
    await post(relay, owner, space, { kind: 'obs', title: 'withdrawn', retracts: onSource.post_id });
    item = (await findings(space.name, owner)).items[0];
    expect(item).not.toHaveProperty('contested');
  });

  it('a source replaced after it was cited marks source_withdrawn', async () => {
    const space = await workSpace();
    const base = await post(relay, checker, space, { kind: 'result', title: 'v1' });
    await post(relay, writer, space, { kind: 'finding', title: 'claim', data: finding('Rests on v1', { sources: [base.post_id] }) });
    expect((await findings(space.name, owner)).items[0].source_withdrawn).toBe(false);
    await post(relay, checker, space, { kind: 'result', title: 'v2', supersedes: base.post_id });
    expect((await findings(space.name, owner)).items[0].source_withdrawn).toBe(true);
  });

  it('a task done with a finding as its result: its checks confirm it, a reject contests it', async () => {
    const space = await workSpace({ taskConfirmations: 2 });
    const task = await addTask(relay, owner, space.name, { title: 'Measure the cache' });
    expect((await nextTask(relay, writer, space.name)).task.number).toBe(task.number);
    const f = await post(relay, writer, space, { kind: 'finding', title: 'result', data: finding('Cache halves p50') });
    await act(relay, writer, space.name, task.number, 'done', { post_id: f.post_id });
    let item = (await findings(space.name, owner)).items[0];
    expect(item.task).toEqual({ number: task.number, state: 'done', confirmed_by: [], rejected_by: [] });

    await act(relay, checker, space.name, task.number, 'confirm');
    item = (await findings(space.name, owner)).items[0];
    expect(item.task).toEqual({ number: task.number, state: 'done', confirmed_by: [checker.peerId], rejected_by: [] });
    expect(item).not.toHaveProperty('contested');

    await act(relay, owner, space.name, task.number, 'reject', { reason: 'Not reproduced' });
    item = (await findings(space.name, owner)).items[0];
    expect(item.task).toEqual({ number: task.number, state: 'open', confirmed_by: [], rejected_by: [owner.peerId] });
    expect(item.contested).toEqual([{ cause: 'rejected', on: f.seq, task: task.number, by: owner.peerId }]);
  });
});

describe('the cited and contested notices', () => {
  /** What reached `who`'s mailbox after `after`, as [reason, post_id] pairs. */
  async function told(who: MintedToken, after: string, query = ''): Promise<[string, string][]> {
    const r = await get(relay, `/v1/mailbox?after=${after}${query}`, who);
    expect(r.status, r.text).toBe(200);
    return r.body.items.map((i: any) => [i.reason, i.post?.post_id]);
  }
  /** Where `who`'s mailbox stands now. */
  async function mailboxHead(who: MintedToken): Promise<string> {
    const r = await get(relay, '/v1/mailbox?after=0&limit=200', who);
    return String(r.body.items.at(-1)?.mailbox_seq ?? '0');
  }

  it('a member\'s warn tells the findings\' authors it contests, and a post citing another\'s post tells that author; never the poster itself', async () => {
    const space = await workSpace();
    const base = await post(relay, owner, space, { kind: 'result', title: 'base' });
    const o0 = await mailboxHead(owner);
    const f = await post(relay, writer, space, { kind: 'finding', title: 'f', data: finding('Rests on base', { sources: [base.post_id] }) });
    const w0 = await mailboxHead(writer);
    const warn = await post(relay, checker, space, { kind: 'warn', title: 'base is cold', data: { sources: [base.post_id] } });
    expect(await told(writer, w0)).toEqual([['contested', warn.post_id]]);
    expect(await told(owner, o0)).toEqual([['cited', f.post_id], ['cited', warn.post_id]]);
    expect(await told(owner, o0, '&reason=contested')).toEqual([]);
    const w1 = await mailboxHead(writer);
    await post(relay, writer, space, { kind: 'obs', title: 'own note', data: { sources: [f.post_id] } });
    expect(await told(writer, w1)).toEqual([]);
  });
});

describe('what contests a finding through the posts it rests on', () => {
  it('a task check\'s reject of a source contests the finding on that source; a warn from a KEY with no role contests nothing', async () => {
    const space = await workSpace({ visibility: 'public', joinPolicy: 'open', categories: ['general'], taskConfirmations: 2 });
    const task = await addTask(relay, owner, space.name, { title: 'Run the bench' });
    await nextTask(relay, checker, space.name);
    const result = await post(relay, checker, space, { kind: 'result', title: 'bench result' });
    await act(relay, checker, space.name, task.number, 'done', { post_id: result.post_id });
    const f = await post(relay, writer, space, { kind: 'finding', title: 'f', data: finding('Built on the bench', { sources: [result.post_id] }) });
    const stranger = await append(outsider, space.name, { kind: 'warn', title: 'I doubt it', data: { sources: [f.post_id] } });
    expect(stranger.status, stranger.text).toBe(201);
    expect(stranger.body.no_role).toBe(true);
    expect((await findings(space.name, owner)).items[0]).not.toHaveProperty('contested');

    await act(relay, owner, space.name, task.number, 'reject', { reason: 'Numbers do not add up' });
    const item = (await findings(space.name, owner)).items[0];
    expect(item.contested).toEqual([{ cause: 'rejected', on: result.seq, task: task.number, by: owner.peerId }]);
    // The finding is no task's result: its own task stays null.
    expect(item.task).toBeNull();
  });
});

describe('the findings read', () => {
  it('a finding its author supersedes leaves the list for the newer one; one it retracts reads withdrawn; status narrows it', async () => {
    const space = await workSpace();
    const old = await post(relay, writer, space, { kind: 'finding', title: 'v1', data: finding('First reading') });
    const newer = await post(relay, writer, space, { kind: 'finding', title: 'v2', supersedes: old.post_id, data: finding('Second reading', { status: 'supported' }) });
    const gone = await post(relay, writer, space, { kind: 'finding', title: 'gone', data: finding('Wrong', { status: 'disputed' }) });
    const retraction = await post(relay, writer, space, { kind: 'obs', title: 'withdrawn', retracts: gone.post_id });
    const all = await findings(space.name, owner);
    expect(all.items.map((f: any) => [f.number, f.status])).toEqual([[3, 'withdrawn'], [2, 'supported']]);
    expect(all.items[0].retracted_by).toBe(retraction.post_id);
    expect(all.items[1]).toMatchObject({ post_id: newer.post_id, supersedes: old.post_id });
    expect((await findings(space.name, owner, '?status=withdrawn')).items.map((f: any) => f.number)).toEqual([3]);
    expect((await findings(space.name, owner, '?status=supported')).items.map((f: any) => f.number)).toEqual([2]);
    expect((await findings(space.name, owner, '?status=disputed')).items).toEqual([]);
  });

  it('pages back with before and limit, and since keeps the newer ones', async () => {
    const space = await workSpace();
    for (let i = 1; i <= 3; i++) await post(relay, writer, space, { kind: 'finding', title: `f${i}`, data: finding(`claim ${i}`) });
    const first = await findings(space.name, owner, '?limit=2');
    expect(first.items.map((f: any) => f.number)).toEqual([3, 2]);
    expect(first).toMatchObject({ has_more: true, next_before: '2' });
    const rest = await findings(space.name, owner, `?limit=2&before=${first.next_before}`);
    expect(rest.items.map((f: any) => f.number)).toEqual([1]);
    expect(rest.has_more).toBe(false);
    const third = first.items[0].posted_at as string;
    expect((await findings(space.name, owner, `?since=${encodeURIComponent(third)}`)).items.map((f: any) => f.number)).toEqual([3]);
  });

  it('fingerprint keeps the findings whose post carries it, split at the first colon, a hidden one left out', async () => {
    const space = await workSpace();
    const print = { scheme: 'subject', value: 'wenmi.image:037' };
    await post(relay, writer, space, { kind: 'finding', title: 'f1', data: finding('About 037'), fingerprints: [print] });
    await post(relay, writer, space, { kind: 'finding', title: 'f2', data: finding('About 038'), fingerprints: [{ ...print, value: 'wenmi.image:038' }] });
    const hid = await post(relay, writer, space, { kind: 'finding', title: 'f3', data: finding('Hidden 037'), fingerprints: [print] });
    relay.clock.advance(2_100);
    expect((await call(relay, 'PUT', `/v1/posts/${hid.post_id}/hidden`, { token: owner.token, body: {} })).status).toBe(200);
    const kept = await findings(space.name, owner, `?fingerprint=${encodeURIComponent('subject:wenmi.image:037')}`);
    expect(kept.items.map((f: any) => f.claim)).toEqual(['About 037']);
    expect((await findings(space.name, owner, '?fingerprint=subject:none')).items).toEqual([]);
  });

  it('a page of snippets shows each finding\'s claim, status, confidence and how many posts it rests on; full shows its data instead', async () => {
    const space = await workSpace();
    const src = await post(relay, checker, space, { kind: 'obs', title: 'src' });
    const f = await post(relay, writer, space, { kind: 'finding', title: 'f', data: finding('Snippet claim', { sources: [src.post_id] }) });
    const snippets = (await get(relay, `/v1/spaces/${space.name}/posts?after=0&detail=snippets`, owner)).body.items;
    expect(snippets[0]).not.toHaveProperty('finding');
    const item = snippets.find((p: any) => p.post_id === f.post_id);
    expect(item.finding).toEqual({ claim: 'Snippet claim', status: 'proposed', confidence: 'medium', sources: 1 });
    expect(Object.keys(item).slice(-3)).toEqual(['snippet', 'snippet_truncated', 'finding']);
    const full = (await get(relay, `/v1/posts/${f.post_id}`, owner)).body;
    expect(full).not.toHaveProperty('finding');
    expect(full.data).toMatchObject({ claim: 'Snippet claim' });
    await post(relay, writer, space, { kind: 'obs', title: 'withdrawn', retracts: f.post_id });
    const after = (await get(relay, `/v1/spaces/${space.name}/posts?after=0&detail=snippets`, owner)).body.items.find((p: any) => p.post_id === f.post_id);
    expect(after.finding.status).toBe('withdrawn');
  });

  it('a hidden finding keeps its number, status and confidence, and shows neither claim nor sources', async () => {
    const space = await workSpace();
    const src = await post(relay, checker, space, { kind: 'obs', title: 'src' });
    const f = await post(relay, writer, space, { kind: 'finding', title: 'to hide', data: finding('Hidden words', { sources: [src.post_id] }) });
    relay.clock.advance(2_100);
    const hid = await call(relay, 'PUT', `/v1/posts/${f.post_id}/hidden`, { token: owner.token, body: {} });
    expect(hid.status, hid.text).toBe(200);
    const item = (await findings(space.name, owner)).items[0];
    expect(item).toMatchObject({ number: 1, status: 'proposed', confidence: 'medium', claim: null, sources: null, unavailable: { state: 'hidden' } });
    expect(JSON.stringify(item)).not.toContain('Hidden words');
    const snippet = (await get(relay, `/v1/spaces/${space.name}/posts?after=0&detail=snippets`, owner)).body.items.find((p: any) => p.post_id === f.post_id);
    expect(snippet.finding).toEqual({ claim: null, status: 'proposed', confidence: 'medium', sources: null });
  });

  it('reads as the SPACE\'s posts: anyone in a public SPACE, READ_DENIED outside a private one, SPACE_NOT_FOUND, INVALID_REQUEST for a bad query', async () => {
    const open = await workSpace({ visibility: 'public', categories: ['general'] });
    await post(relay, writer, open, { kind: 'finding', title: 'public', data: finding('Public claim') });
    expect((await findings(open.name, undefined)).items[0].claim).toBe('Public claim');
    const closed = await workSpace();
    await expectRefusedUnchanged(relay, () => get(relay, `/v1/spaces/${closed.name}/findings`, outsider), 'READ_DENIED');
    await expectRefusedUnchanged(relay, () => get(relay, `/v1/spaces/${closed.name}/findings`), 'READ_DENIED');
    await expectRefusedUnchanged(relay, () => get(relay, '/v1/spaces/no-such-space-here/findings', owner), 'SPACE_NOT_FOUND');
    for (const q of ['?status=open', '?since=yesterday', '?limit=201', '?before=0', '?fingerprint=nocolon', '?fingerprint=Subject:x', '?fingerprint=subject:', '?detail=full']) {
      const r = await get(relay, `/v1/spaces/${closed.name}/findings${q}`, owner);
      expect(codeOf(r), q).toBe('INVALID_REQUEST');
    }
  });
});

describe('one post\'s sources and what cites it (findings.get)', () => {
  it('a finding: its sources with seq, kind, withdrawn and contested; the posts citing it; the finding as the list shows it', async () => {
    const space = await workSpace();
    const a = await post(relay, checker, space, { kind: 'result', title: 'a' });
    const b = await post(relay, checker, space, { kind: 'obs', title: 'b' });
    const f = await post(relay, writer, space, { kind: 'finding', title: 'f', data: finding('Rests on a and b', { sources: [a.post_id, b.seq] }) });
    await post(relay, owner, space, { kind: 'fail', title: 'a is wrong', data: { sources: [a.post_id] } });
    await post(relay, checker, space, { kind: 'obs', title: 'b again', supersedes: b.post_id });
    const citing = await post(relay, owner, space, { kind: 'question', title: 'why?', data: { sources: [f.post_id] } });

    const r = await get(relay, `/v1/posts/${f.post_id}/finding`, owner);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      space: space.name,
      post_id: f.post_id,
      seq: f.seq,
      kind: 'finding',
      sources: [
        { post_id: a.post_id, seq: a.seq, kind: 'result', withdrawn: false, contested: true },
        { post_id: b.post_id, seq: b.seq, kind: 'obs', withdrawn: true },
      ],
      source_withdrawn: true,
      cited_by: 1,
      citing: [{ post_id: citing.post_id, seq: citing.seq, kind: 'question' }],
    });
    expect(r.body.sources[1]).not.toHaveProperty('contested');
    const listed = (await findings(space.name, owner)).items[0];
    expect(r.body.finding).toEqual(listed);

    const plain = await get(relay, `/v1/posts/${a.post_id}/finding`, owner);
    expect(plain.body).toMatchObject({ kind: 'result', finding: null, sources: [], cited_by: 2 });
  });

  it('a post the caller cannot read, one that never was, and an id that is no uuid: POST_NOT_FOUND', async () => {
    const space = await workSpace();
    const f = await post(relay, writer, space, { kind: 'finding', title: 'f', data: finding('private') });
    await expectRefusedUnchanged(relay, () => get(relay, `/v1/posts/${f.post_id}/finding`, outsider), 'POST_NOT_FOUND');
    await expectRefusedUnchanged(relay, () => get(relay, `/v1/posts/${f.post_id}/finding`), 'POST_NOT_FOUND');
    await expectRefusedUnchanged(relay, () => get(relay, `/v1/posts/${randomUUID()}/finding`, owner), 'POST_NOT_FOUND');
    await expectRefusedUnchanged(relay, () => get(relay, '/v1/posts/not-a-post/finding', owner), 'POST_NOT_FOUND');
  });
});
