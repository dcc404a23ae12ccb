/**
 * Oracle proposals over the real HTTP relay (spec/1-concepts.md "States: Oracle proposal",
 * Mailbox reasons `proposal`, `out_of_date`, `changed`, `reply`; spec/2-endpoints.md
 * posts.append): every transition of the state table, every refusal with its envelope and no
 * row changed, and who is told what. The service reviewer is off here (its rules are
 * test/relay/oracle/proposals-reviewer.test.ts), so only people decide.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit } from '../../helpers/posts.js';
import { refusedUnchanged as expectRefused } from '../../helpers/state.js';
import { oracleSpace, oracleStateProbe } from '../../helpers/oracle-documents.js';
import { call, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { createSpace, freshName } from '../../helpers/spaces.js';

let relay: RunningRelay;
let owner: MintedToken;
let admin: MintedToken;
let writer: MintedToken;
let stranger: MintedToken;
let other: MintedToken;

beforeAll(async () => {
  relay = await startRelay({ publicSpaceKeyAgeSeconds: 0 });
  [owner, admin, writer, stranger, other] = (await Promise.all([1, 2, 3, 4, 5].map(() => mintToken(relay.url)))) as [
    MintedToken,
    MintedToken,
    MintedToken,
    MintedToken,
    MintedToken,
  ];
  // Past the KEYS' first day, so the daily proposal allowance (30) is not what these tests meet.
  relay.clock.advance(25 * 60 * 60 * 1000);
});
afterAll(async () => relay.close());

/** A fresh oracle space with `admin` as an admin and `writer` as a writer. */
async function document(extra: Record<string, unknown> = {}): Promise<string> {
  const name = await oracleSpace(relay, owner, extra);
  const space = (await relay.store.spaces.byName(name))!;
  await admit(relay, space, admin, 'admin');
  await admit(relay, space, writer, 'writer');
  return name;
}

/** posts.append over HTTP; the clock moves so the write bucket never runs dry. */
function append(who: MintedToken, name: string, body: Record<string, unknown>): Promise<Answer> {
  relay.clock.advance(2_100);
  return call(relay, 'POST', `/v1/spaces/${name}/posts`, { token: who.token, body });
}

async function version(who: MintedToken, name: string, text: string, supersedes?: string): Promise<any> {
  const r = await append(who, name, { kind: 'version', title: `summary of ${text.slice(0, 20)}`, body: text, ...(supersedes ? { supersedes } : {}) });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

async function decide(who: MintedToken, name: string, kind: 'go' | 'veto', proposal: string, reason?: string): Promise<any> {
  const r = await append(who, name, { kind, reply_to: proposal, ...(reason ? { body: reason } : {}) });
  expect(r.status, r.text).toBe(201);
  return r.body;
}

async function stateOf(postId: string): Promise<string | undefined> {
  return (await relay.store.oracle.version(postId))?.state;
}

async function currentOf(name: string): Promise<string | undefined> {
  return (await relay.store.oracle.current((await relay.store.spaces.byName(name))!.id))?.postId;
}

/** `who`'s mailbox rows after position `after`, as [reason, post id]. */
async function mail(who: MintedToken, after = 0): Promise<[string, string | null][]> {
  return (await relay.store.mailbox.list(who.peerId, after, 200)).map((m) => [m.reason, m.postId]);
}

/** Expect `run` to be refused with `code` (status, envelope) and no written row to change. */
async function refusedUnchanged(run: () => Promise<Answer>, code: string, status: number): Promise<Answer> {
  return await expectRefused(await oracleStateProbe(relay), code, status, run);
}

describe('the oracle proposal state table', () => {
  it('(none) -> current: the owner\'s first version, with no supersedes, is current at once', async () => {
    const name = await document();
    const v1 = await version(owner, name, '# Intro\n\nfirst text\n');
    expect(v1.oracle).toEqual({ state: 'current', current: v1.post_id });
    expect(await stateOf(v1.post_id)).toBe('current');
    expect(await relay.store.oracle.version(v1.post_id)).toMatchObject({ supersedes: null, proposed: false, decision: null });
  });

  it('(none) -> current: an admin\'s version superseding the current one is current at once, the old one superseded', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const v2 = await version(admin, name, 'two\n', v1.post_id);
    expect(v2.oracle).toEqual({ state: 'current', current: v2.post_id });
    expect(await stateOf(v1.post_id)).toBe('superseded');
    expect((await relay.store.oracle.version(v2.post_id))?.supersedes).toBe(v1.post_id);
  });

  it('(none) -> waiting: a version by a writer or by a KEY with no role waits, naming the current version', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const byWriter = await version(writer, name, 'one\nand more\n', v1.post_id);
    const byStranger = await version(stranger, name, 'one\nand else\n', v1.post_id);
    expect(byWriter.oracle).toEqual({ state: 'waiting', current: v1.post_id });
    expect(byStranger.oracle).toEqual({ state: 'waiting', current: v1.post_id });
    expect(byStranger.no_role).toBe(true);
    expect(await relay.store.oracle.version(byStranger.post_id)).toMatchObject({ state: 'waiting', proposed: true });
    expect(await currentOf(name)).toBe(v1.post_id);
  });

  it('(none) -> waiting: the first version proposed by a KEY with no role waits while the document has none', async () => {
    const name = await document();
    const first = await version(stranger, name, 'a first text\n');
    expect(first.oracle).toEqual({ state: 'waiting', current: null });
    expect(await currentOf(name)).toBeUndefined();
  });

  it('waiting -> current by the owner\'s go: every other waiting proposal goes out of date and its author is told', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(writer, name, 'one\nA\n', v1.post_id);
    const b = await version(stranger, name, 'one\nB\n', v1.post_id);
    const strangerSeen = await relay.store.mailbox.head(stranger.peerId);
    const writerSeen = await relay.store.mailbox.head(writer.peerId);
    const go = await decide(owner, name, 'go', a.post_id);
    expect(go.oracle).toEqual({ decided: a.post_id, state: 'current' });
    expect(await stateOf(a.post_id)).toBe('current');
    expect(await stateOf(b.post_id)).toBe('out_of_date');
    expect(await stateOf(v1.post_id)).toBe('superseded');
    expect(await currentOf(name)).toBe(a.post_id);
    expect((await relay.store.oracle.version(a.post_id))?.decision).toMatchObject({ kind: 'go', by: owner.peerId, reason: null, postId: go.post_id });
    // The proposer gets the decision as a reply; the overtaken author gets out_of_date.
    expect(await mail(writer, writerSeen)).toEqual([['reply', go.post_id]]);
    expect(await mail(stranger, strangerSeen)).toEqual([['out_of_date', b.post_id]]);
  });

  it('waiting -> current by an admin\'s go', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(stranger, name, 'one\nA\n', v1.post_id);
    const go = await decide(admin, name, 'go', a.post_id);
    expect(go.oracle).toEqual({ decided: a.post_id, state: 'current' });
    expect((await relay.store.oracle.version(a.post_id))?.decision?.by).toBe(admin.peerId);
  });

  it('waiting -> declined by a veto with its reason; the proposal stays in the version list and the current version stands', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(writer, name, 'one\nA\n', v1.post_id);
    const seen = await relay.store.mailbox.head(writer.peerId);
    const veto = await decide(admin, name, 'veto', a.post_id, 'the second line is wrong');
    expect(veto.oracle).toEqual({ decided: a.post_id, state: 'declined' });
    expect(await relay.store.oracle.version(a.post_id)).toMatchObject({
      state: 'declined',
      decision: { kind: 'veto', by: admin.peerId, reason: 'the second line is wrong', postId: veto.post_id },
    });
    expect(await currentOf(name)).toBe(v1.post_id);
    const listed = (await relay.store.oracle.versions((await relay.store.spaces.byName(name))!.id, undefined, 10)).map((v) => [v.postId, v.state]);
    expect(listed).toEqual([
      [a.post_id, 'declined'],
      [v1.post_id, 'current'],
    ]);
    expect(await mail(writer, seen)).toEqual([['reply', veto.post_id]]);
  });

  it('waiting -> out_of_date when the owner posts a version directly: the proposal was based on the version it replaced', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(stranger, name, 'one\nA\n', v1.post_id);
    const seen = await relay.store.mailbox.head(stranger.peerId);
    const v2 = await version(owner, name, 'two\n', v1.post_id);
    expect(await stateOf(a.post_id)).toBe('out_of_date');
    expect(await currentOf(name)).toBe(v2.post_id);
    expect(await mail(stranger, seen)).toEqual([['out_of_date', a.post_id]]);
  });

  it('waiting -> declined when its author retracts it: shown with the reason, no longer waiting nor counted, and no more to decide', async () => {
    const name = await document();
    const spaceRow = (await relay.store.spaces.byName(name))!.id;
    const v1 = await version(owner, name, 'one\n');
    const proposer = await mintToken(relay.url);
    const mine: any[] = [];
    for (const n of [1, 2, 3]) mine.push(await version(proposer, name, `one\n${n}\n`, v1.post_id));
    const full = await refusedUnchanged(() => append(proposer, name, { kind: 'version', title: 's', body: 'one\n4\n', supersedes: v1.post_id }), 'PROPOSAL_LIMIT', 429);
    expect(full.body.error.detail).toBe('yours: 3 waiting in this SPACE');
    // Only its author retracts it: another KEY's retraction is refused as ever.
    await refusedUnchanged(() => append(writer, name, { kind: 'obs', body: 'not mine', retracts: mine[0].post_id }), 'REVISION_TARGET_NOT_FOUND', 422);
    expect(await relay.store.oracle.waitingCount(spaceRow)).toBe(3);

    const withdraw = { kind: 'obs', body: 'withdrawn: I was wrong', retracts: mine[0].post_id, idempotency_key: 'withdraw-1' };
    const retraction = await append(proposer, name, withdraw);
    expect(retraction.status, retraction.text).toBe(201);
    expect(retraction.body.oracle).toEqual({ decided: mine[0].post_id, state: 'declined' });
    const replayed = await append(proposer, name, withdraw);
    expect(replayed.body).toMatchObject({ replayed: true, post_id: retraction.body.post_id, oracle: { decided: mine[0].post_id, state: 'declined' } });
    expect(await relay.store.oracle.waitingCount(spaceRow)).toBe(2);
    expect(await relay.store.oracle.waitingCount(spaceRow, proposer.peerId)).toBe(2);
    const listed = await call(relay, 'GET', `/v1/spaces/${name}/versions`);
    expect(listed.body.items.find((v: any) => v.post_id === mine[0].post_id)).toMatchObject({
      state: 'declined',
      decision: { kind: 'veto', by: proposer.peerId, reason: 'retracted by its author', post_id: retraction.body.post_id },
    });
    expect(await currentOf(name)).toBe(v1.post_id);

    // Its place is free again, and nobody can decide it any more.
    expect((await version(proposer, name, 'one\n4\n', v1.post_id)).oracle.state).toBe('waiting');
    for (const kind of ['go', 'veto'] as const) {
      const r = await refusedUnchanged(() => append(owner, name, { kind, reply_to: mine[0].post_id, body: 'reason' }), 'PROPOSAL_DECIDED', 409);
      expect(r.body.error.detail).toBe('the proposal is declined');
    }
    // Retracting a proposal no longer waiting changes no state; the others still wait to be decided.
    const late = await append(proposer, name, { kind: 'obs', body: 'again', retracts: mine[0].post_id });
    expect(late.status).toBe(201);
    expect(late.body.oracle).toBeUndefined();
    expect((await relay.store.oracle.version(mine[0].post_id))?.decision?.postId).toBe(retraction.body.post_id);
    expect((await decide(owner, name, 'go', mine[1].post_id)).oracle).toEqual({ decided: mine[1].post_id, state: 'current' });
  });

  it('a replay of a version or of a decision answers its oracle state as it stands now', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const body = { kind: 'version', title: 's', body: 'one\nA\n', supersedes: v1.post_id, idempotency_key: 'proposal-1' };
    const first = await append(writer, name, body);
    expect(first.body.oracle).toEqual({ state: 'waiting', current: v1.post_id });
    const go = await append(owner, name, { kind: 'go', reply_to: first.body.post_id, idempotency_key: 'go-1' });
    const again = await append(writer, name, body);
    expect(again.body).toMatchObject({ replayed: true, post_id: first.body.post_id, oracle: { state: 'current', current: first.body.post_id } });
    const goAgain = await append(owner, name, { kind: 'go', reply_to: first.body.post_id, idempotency_key: 'go-1' });
    expect(goAgain.body).toMatchObject({ replayed: true, post_id: go.body.post_id, oracle: { decided: first.body.post_id, state: 'current' } });
  });

  it('a go or veto replying to a post that is no version is an ordinary reply, deciding nothing', async () => {
    const name = await document();
    const note = await append(stranger, name, { kind: 'obs', title: 'a note', body: 'text' });
    const go = await append(owner, name, { kind: 'go', reply_to: note.body.post_id });
    expect(go.status).toBe(201);
    expect(go.body.oracle).toBeUndefined();
  });
});

describe('oracle refusals change nothing', () => {
  it('NOT_AN_ORACLE: a version in a work space', async () => {
    const name = freshName('wk');
    await createSpace(relay, owner.token, { name, title: 'work', visibility: 'public', categories: ['general'] });
    await refusedUnchanged(() => append(owner, name, { kind: 'version', title: 's', body: 'text' }), 'NOT_AN_ORACLE', 409);
  });

  it('VERSION_CHANGED: a wrong base names the current version; no base once there is one; a base before the first', async () => {
    const name = await document();
    const none = await refusedUnchanged(
      () => append(owner, name, { kind: 'version', title: 's', body: 'x', supersedes: '00000000-0000-4000-8000-000000000000' }),
      'VERSION_CHANGED',
      409,
    );
    expect(none.body.error.detail).toMatch(/first version has no supersedes/);
    const v1 = await version(owner, name, 'one\n');
    const v2 = await version(owner, name, 'two\n', v1.post_id);
    for (const who of [owner, writer, stranger]) {
      const stale = await refusedUnchanged(() => append(who, name, { kind: 'version', title: 's', body: 'x', supersedes: v1.post_id }), 'VERSION_CHANGED', 409);
      expect(stale.body.error.detail).toBe(v2.post_id);
      const missing = await refusedUnchanged(() => append(who, name, { kind: 'version', title: 's', body: 'x' }), 'VERSION_CHANGED', 409);
      expect(missing.body.error.detail).toBe(v2.post_id);
    }
  });

  it('CONTROL_DENIED: a go or veto by a writer or by a KEY with no role, even the proposer\'s own', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(stranger, name, 'one\nA\n', v1.post_id);
    for (const who of [writer, stranger, other]) {
      await refusedUnchanged(() => append(who, name, { kind: 'go', reply_to: a.post_id }), 'CONTROL_DENIED', 403);
      await refusedUnchanged(() => append(who, name, { kind: 'veto', reply_to: a.post_id, body: 'no' }), 'CONTROL_DENIED', 403);
    }
    expect(await stateOf(a.post_id)).toBe('waiting');
  });

  it('PROPOSAL_DECIDED: deciding a declined, out-of-date, current or superseded version, with its state in the detail', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const declined = await version(writer, name, 'one\nA\n', v1.post_id);
    await decide(owner, name, 'veto', declined.post_id, 'no');
    const made = await version(stranger, name, 'one\nB\n', v1.post_id);
    const overtaken = await version(other, name, 'one\nC\n', v1.post_id);
    await decide(admin, name, 'go', made.post_id);
    const cases: [string, string][] = [
      [declined.post_id, 'declined'],
      [overtaken.post_id, 'out_of_date'],
      [made.post_id, 'current'],
      [v1.post_id, 'superseded'],
    ];
    for (const [id, state] of cases) {
      for (const kind of ['go', 'veto'] as const) {
        const r = await refusedUnchanged(() => append(owner, name, { kind, reply_to: id, body: 'reason' }), 'PROPOSAL_DECIDED', 409);
        expect(r.body.error.detail).toBe(`the proposal is ${state}`);
      }
    }
  });

  it('INVALID_REQUEST: a veto without a reason', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const a = await version(writer, name, 'one\nA\n', v1.post_id);
    const r = await refusedUnchanged(() => append(owner, name, { kind: 'veto', reply_to: a.post_id }), 'INVALID_REQUEST', 400);
    expect(r.body.error.detail).toMatch(/reason/);
  });
});

describe('who is told', () => {
  it('a proposal reaches the owner and the admins as `proposal`, not writers nor the proposer', async () => {
    const name = await document();
    const v1 = await version(owner, name, 'one\n');
    const heads = await Promise.all([owner, admin, writer, stranger].map(async (k) => await relay.store.mailbox.head(k.peerId)));
    const a = await version(stranger, name, 'one\nA\n', v1.post_id);
    expect(await mail(owner, heads[0])).toEqual([['proposal', a.post_id]]);
    expect(await mail(admin, heads[1])).toEqual([['proposal', a.post_id]]);
    expect(await mail(writer, heads[2])).toEqual([]);
    expect(await mail(stranger, heads[3])).toEqual([]);
  });

  it('a version made current by the owner tells no decider of a proposal', async () => {
    const name = await document();
    const head = await relay.store.mailbox.head(admin.peerId);
    await version(owner, name, 'one\n');
    expect(await mail(admin, head)).toEqual([]);
  });
});

describe('an oracle space end to end', () => {
  it('a writer proposes, the owner approves, another proposal goes out of date, a watcher receives changed', async () => {
    const name = await document();
    const watcher = await mintToken(relay.url);
    const watched = await call(relay, 'PUT', `/v1/spaces/${name}/watch`, { token: watcher.token });
    expect(watched.status, watched.text).toBe(200);
    await call(relay, 'PUT', `/v1/spaces/${name}/watch`, { token: writer.token });

    const v1 = await version(owner, name, '# Guide\n\nStart here.\n');
    const proposal = await version(writer, name, '# Guide\n\nStart here.\n\n## Setup\n\n- install\n', v1.post_id);
    const rival = await version(stranger, name, '# Guide\n\nStart there.\n', v1.post_id);
    expect([proposal.oracle.state, rival.oracle.state]).toEqual(['waiting', 'waiting']);

    const watcherSeen = await relay.store.mailbox.head(watcher.peerId);
    const writerSeen = await relay.store.mailbox.head(writer.peerId);
    const go = await decide(owner, name, 'go', proposal.post_id);
    expect(go.oracle).toEqual({ decided: proposal.post_id, state: 'current' });
    expect(await stateOf(rival.post_id)).toBe('out_of_date');

    // The watcher reads `changed` in its mailbox over HTTP; the version's own author, though
    // watching, gets its decision as a reply and no `changed`.
    const box = await call(relay, 'GET', `/v1/mailbox?after=${watcherSeen}`, { token: watcher.token });
    expect(box.status, box.text).toBe(200);
    expect(box.body.items.map((i: any) => i.reason)).toEqual(['changed']);
    expect(JSON.stringify(box.body.items[0])).toContain(proposal.post_id);
    expect(await mail(writer, writerSeen)).toEqual([['reply', go.post_id]]);

    const doc = await call(relay, 'GET', `/v1/spaces/${name}/document`);
    expect(doc.body.version.post_id).toBe(proposal.post_id);
    expect(doc.body.text).toContain('## Setup');
  });
});
