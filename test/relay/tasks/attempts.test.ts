/**
 * Numbered attempts over the real HTTP relay: a task added with `numbered_attempts: true` takes
 * any writer's done as an attempt, up to five a cycle, and its confirm and reject check one
 * attempt (`attempt`, `cycle`), as the newer API has every task; a task added without it answers
 * as API 0.1 says. Each refusal answers its catalogue code in the envelope and changes nothing
 * (test/helpers/state.ts digests every written table, the attempts included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { refusedUnchanged as expectRefused, stateProbe } from '../../helpers/state.js';
import { act, addTask, nextTask, taskWrite } from '../../helpers/tasks.js';

let relay: RunningRelay;
let digest: () => Promise<string>;
let owner: MintedToken;
let writers: MintedToken[];
let alice: MintedToken;
let bob: MintedToken;
let carol: MintedToken;
let dave: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  digest = await stateProbe(relay);
  owner = await mintToken(relay.url);
  writers = [];
  for (let i = 0; i < 7; i++) writers.push(await mintToken(relay.url));
  [alice, bob, carol, dave] = writers as [MintedToken, MintedToken, MintedToken, MintedToken];
});
afterAll(async () => {
  await relay.close();
});

/** A SPACE asking `confirmations` checks, every writer admitted. */
async function workSpace(confirmations: number) {
  const space = await newSpace(relay, owner, { taskConfirmations: confirmations });
  for (const w of writers) await admit(relay, space, w, 'writer');
  return space;
}

/** `send` is refused with `code` (and its status) and leaves every written table as it was. */
const refusedUnchanged = (code: string, status: number, send: () => Promise<Answer>): Promise<Answer> => expectRefused(digest, code, status, send);

function getTask(space: string, number: number): Promise<Answer> {
  return call(relay, 'GET', `/v1/spaces/${space}/tasks/${number}`, { token: owner.token });
}

async function result(who: MintedToken, space: { name: string }, body: string): Promise<string> {
  return (await post(relay, who, space.name, { kind: 'result', body })).post_id;
}

describe('a task added without numbered attempts', () => {
  it('answers as API 0.1: no attempt fields, done only by its holder, and a check naming an attempt is refused', async () => {
    const space = await workSpace(1);
    const t = await addTask(relay, owner, space.name, { title: 'plain' });
    expect(t).not.toHaveProperty('numbered_attempts');
    expect(t).not.toHaveProperty('attempts');
    await nextTask(relay, alice, space.name);
    const bobs = await result(bob, space, 'not the holder');
    await refusedUnchanged('TASK_NOT_CLAIMANT', 409, () => taskWrite(relay, bob, space.name, '1/done', { post_id: bobs }));
    await act(relay, alice, space.name, 1, 'done', { post_id: await result(alice, space, 'mine') });
    const r = await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, bob, space.name, '1/confirm', { attempt: 1 }));
    expect(r.body.error.detail).toContain('without numbered attempts');
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, bob, space.name, '1/reject', { reason: 'no', cycle: 1 }));
    expect((await act(relay, bob, space.name, 1, 'confirm')).state).toBe('accepted');
  });
});

describe('any writer marks a task with numbered attempts done', () => {
  it('numbers each done, takes another KEY\'s post, and accepts the attempt its confirmations reach', async () => {
    const space = await workSpace(1);
    const added = await addTask(relay, owner, space.name, { title: 'race', numbered_attempts: true });
    expect(added).toMatchObject({ numbered_attempts: true, attempt: null, attempts: [], state: 'open' });
    // alice holds it; bob, holding nothing, marks it done first: its claim ends.
    await nextTask(relay, alice, space.name);
    const bobs = await result(bob, space, 'bob result');
    const first = await act(relay, bob, space.name, 1, 'done', { post_id: bobs });
    expect(first).toMatchObject({ state: 'done', holder: null, done_by: bob.peerId, result_post_id: bobs, attempt: 1, confirmations_needed: 1 });
    expect(first.attempts).toEqual([expect.objectContaining({ attempt: 1, by: bob.peerId, post_id: bobs, author: bob.peerId, state: 'pending', confirmations: [], rejected: null })]);
    // alice joins the done task naming the owner's post: attempt 2, the attempt of record stays 1.
    const owners = await result(owner, space, 'owner notes');
    const second = await act(relay, alice, space.name, 1, 'done', { post_id: owners });
    expect(second).toMatchObject({ state: 'done', attempt: 1, done_by: bob.peerId });
    expect(second.attempts.map((a: any) => [a.attempt, a.by, a.author])).toEqual([[1, bob.peerId, bob.peerId], [2, alice.peerId, owner.peerId]]);
    // The same KEY's same post again answers the task and writes nothing.
    const before = await digest();
    const again = await taskWrite(relay, bob, space.name, '1/done', { post_id: bobs });
    expect(again.status, again.text).toBe(200);
    expect(again.body.attempt).toBe(1);
    expect(await digest()).toBe(before);
    // Two wait: a check names one.
    const which = await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, carol, space.name, '1/confirm', {}));
    expect(which.body.error.detail).toBe('attempt: name the attempt you checked: 1, 2');
    // The owner wrote attempt 2's post: it checks none of it.
    await refusedUnchanged('TASK_SELF_CHECK', 409, () => taskWrite(relay, owner, space.name, '1/confirm', { attempt: 2 }));
    const confirmed = await taskWrite(relay, carol, space.name, '1/confirm', { attempt: 2, cycle: 1 });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.attempt).toBe(2);
    expect(confirmed.body.task).toMatchObject({ state: 'accepted', attempt: 2, done_by: alice.peerId, result_post_id: owners, confirmations: [expect.objectContaining({ by: carol.peerId })] });
    expect(confirmed.body.task.attempts.map((a: any) => a.state)).toEqual(['passed', 'accepted']);
    expect((await getTask(space.name, 1)).body.task.attempt).toBe(2);
    await refusedUnchanged('TASK_NOT_OPEN', 409, () => taskWrite(relay, dave, space.name, '1/done', { post_id: owners }));
  });

  it('a reject sets one attempt aside; the task opens in a new cycle once none waits, and the rejected result is not sent again', async () => {
    const space = await workSpace(1);
    await addTask(relay, owner, space.name, { title: 'twice', numbered_attempts: true });
    const alices = await result(alice, space, 'alice try');
    const bobs = await result(bob, space, 'bob try');
    await act(relay, alice, space.name, 1, 'done', { post_id: alices });
    await act(relay, bob, space.name, 1, 'done', { post_id: bobs });
    const r1 = await act(relay, carol, space.name, 1, 'reject', { attempt: 1, reason: 'wrong numbers' });
    expect(r1).toMatchObject({ state: 'done', cycle: 1, attempt: 2, done_by: bob.peerId, result_post_id: bobs });
    expect(r1.attempts[0]).toMatchObject({ attempt: 1, state: 'rejected', rejected: { by: carol.peerId, reason: 'wrong numbers' } });
    // One pending: the check needs no attempt named.
    const r2 = await act(relay, carol, space.name, 1, 'reject', { reason: 'still wrong' });
    expect(r2).toMatchObject({ state: 'open', cycle: 2, attempt: null, done_by: null, attempts: [], rejected: { by: carol.peerId, reason: 'still wrong' } });
    // Late checks, of cycle 1 or of one of its attempts.
    const late = await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, dave, space.name, '1/confirm', { cycle: 1 }));
    expect(late.body.error.detail).toContain(`rejected by ${carol.peerId}`);
    await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, dave, space.name, '1/confirm', { attempt: 1 }));
    // A result a reject set aside.
    const aside = await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, alice, space.name, '1/done', { post_id: alices }));
    expect(aside.body.error.detail).toBe(`attempt 1: rejected by ${carol.peerId}`);
    // A new result in cycle 2 is attempt 3.
    const third = await taskWrite(relay, alice, space.name, '1/done', { post_id: await result(alice, space, 'better') });
    expect(third.status, third.text).toBe(200);
    expect(third.body.attempt).toBe(3);
    expect(third.body.task).toMatchObject({ state: 'done', cycle: 2, attempt: 3 });
  });

  it('where the SPACE asks no confirmation: accepted at once uncontested; under another KEY\'s live claim it waits for one, which a KEY with its own attempt may give', async () => {
    const space = await workSpace(0);
    await addTask(relay, owner, space.name, { title: 'quick', numbered_attempts: true });
    expect((await act(relay, alice, space.name, 1, 'done', { post_id: await result(alice, space, 'quick') }))).toMatchObject({ state: 'accepted', attempt: 1 });
    await addTask(relay, owner, space.name, { title: 'contested', numbered_attempts: true });
    await nextTask(relay, carol, space.name);
    const done = await act(relay, bob, space.name, 2, 'done', { post_id: await result(bob, space, 'bob first') });
    expect(done).toMatchObject({ state: 'done', confirmations_needed: 1 });
    await act(relay, carol, space.name, 2, 'done', { post_id: await result(carol, space, 'carol too') });
    // carol made attempt 2 here and concedes to bob's.
    const conceded = await act(relay, carol, space.name, 2, 'confirm', { attempt: 1 });
    expect(conceded).toMatchObject({ state: 'accepted', attempt: 1, done_by: bob.peerId });
  });

  it('a done one with attempts and checks retires, and keeps saying it took numbered attempts', async () => {
    const space = await workSpace(2);
    await addTask(relay, owner, space.name, { title: 'retire me', numbered_attempts: true });
    // Two attempts, one of them confirmed: the SPACE asks two, so it stays done.
    await act(relay, alice, space.name, 1, 'done', { post_id: await result(alice, space, 'a') });
    await act(relay, bob, space.name, 1, 'done', { post_id: await result(bob, space, 'b') });
    await act(relay, carol, space.name, 1, 'confirm', { attempt: 2 });
    relay.clock.advance(2_100);
    const r = await call(relay, 'POST', `/v1/spaces/${space.name}/tasks/1/retire`, { token: owner.token, body: { reason: 'not needed' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.task).toMatchObject({ state: 'retired', numbered_attempts: true });
    expect((await getTask(space.name, 1)).body.task).toMatchObject({ state: 'retired', numbered_attempts: true });
  });

  it('is added in a batch too', async () => {
    const space = await workSpace(1);
    const r = await taskWrite(relay, owner, space.name, '', { tasks: [{ title: 'a', numbered_attempts: true }, { title: 'b' }] });
    expect(r.status, r.text).toBe(201);
    expect(r.body.items[0].task.numbered_attempts).toBe(true);
    expect(r.body.items[1].task).not.toHaveProperty('numbered_attempts');
  });
});

describe('refusals of numbered attempts, each changing nothing', () => {
  it('done: TASK_NOT_OPEN for a second attempt, TASK_LIMIT past five a cycle, TASK_ALREADY_CHECKED for a checker or its post, INVALID_REQUEST for a post an attempt names', async () => {
    const space = await workSpace(2);
    await addTask(relay, owner, space.name, { title: 'crowded', numbered_attempts: true });
    const posts: string[] = [];
    for (const w of writers.slice(0, 5)) {
      posts.push(await result(w, space, 'try'));
      await act(relay, w, space.name, 1, 'done', { post_id: posts.at(-1) });
    }
    const sixth = writers[5]!;
    const spare = await result(sixth, space, 'late');
    await refusedUnchanged('TASK_NOT_OPEN', 409, () => taskWrite(relay, alice, space.name, '1/done', { post_id: spare }));
    const limit = await refusedUnchanged('TASK_LIMIT', 409, () => taskWrite(relay, sixth, space.name, '1/done', { post_id: spare }));
    expect(limit.body.error.detail).toContain('5 attempts of cycle 1');

    await addTask(relay, owner, space.name, { title: 'checked', numbered_attempts: true });
    const alices = await result(alice, space, 'alice');
    await act(relay, alice, space.name, 2, 'done', { post_id: alices });
    // Each task numbers its own attempts: alice's is task 2's attempt 1, which sixth checks.
    await act(relay, sixth, space.name, 2, 'confirm', { attempt: 1 });
    // sixth checked in this cycle: it makes no attempt, nor may its post be named.
    const sixths = await result(sixth, space, 'sixth');
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, sixth, space.name, '2/done', { post_id: sixths }));
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, bob, space.name, '2/done', { post_id: sixths }));
    const named = await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, bob, space.name, '2/done', { post_id: alices }));
    expect(named.body.error.detail).toBe('post_id: attempt 1 names that post');
  });

  it('done: TASK_POST_NOT_FOUND for a hidden post or one elsewhere, TASK_CHANGED for a stale revision, TASK_WAITING before its after tasks', async () => {
    const space = await workSpace(1);
    await addTask(relay, owner, space.name, { title: 'first' });
    await addTask(relay, owner, space.name, { title: 'gated', numbered_attempts: true, after: [1] });
    await addTask(relay, owner, space.name, { title: 'changed', numbered_attempts: true });
    const hidden = await result(bob, space, 'to hide');
    relay.clock.advance(2_100);
    expect((await call(relay, 'PUT', `/v1/posts/${hidden}/hidden`, { token: owner.token })).status).toBe(200);
    const elsewhere = await workSpace(1);
    const foreign = await result(alice, elsewhere, 'elsewhere');
    for (const postId of [hidden, foreign, '00000000-0000-4000-8000-000000000000']) {
      await refusedUnchanged('TASK_POST_NOT_FOUND', 422, () => taskWrite(relay, alice, space.name, '3/done', { post_id: postId }));
    }
    const alices = await result(alice, space, 'alice');
    await refusedUnchanged('TASK_WAITING', 409, () => taskWrite(relay, alice, space.name, '2/done', { post_id: alices }));
    relay.clock.advance(2_100);
    const changed = await call(relay, 'POST', `/v1/spaces/${space.name}/tasks/3/change`, { token: owner.token, body: { revision: 1, reason: 'clearer', title: 'changed again' } });
    expect(changed.status, changed.text).toBe(200);
    await refusedUnchanged('TASK_CHANGED', 409, () => taskWrite(relay, alice, space.name, '3/done', { post_id: alices, revision: 1 }));
    expect((await act(relay, alice, space.name, 3, 'done', { post_id: alices, revision: 2 })).state).toBe('done');
  });

  it('confirm and reject: TASK_SELF_CHECK, TASK_ALREADY_CHECKED, TASK_NOT_FOUND for an attempt it has not, INVALID_REQUEST for a cycle ahead or a bad attempt, TASK_NOT_DONE before done', async () => {
    const space = await workSpace(2);
    await addTask(relay, owner, space.name, { title: 'checks', numbered_attempts: true });
    await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, carol, space.name, '1/confirm', {}));
    await act(relay, alice, space.name, 1, 'done', { post_id: await result(alice, space, 'a') });
    await act(relay, bob, space.name, 1, 'done', { post_id: await result(bob, space, 'b') });
    await refusedUnchanged('TASK_SELF_CHECK', 409, () => taskWrite(relay, alice, space.name, '1/confirm', { attempt: 1 }));
    // bob made attempt 2, and the SPACE asks confirmations: it checks none of this cycle's.
    await refusedUnchanged('TASK_SELF_CHECK', 409, () => taskWrite(relay, bob, space.name, '1/reject', { attempt: 1, reason: 'mine is better' }));
    await act(relay, carol, space.name, 1, 'confirm', { attempt: 1 });
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, carol, space.name, '1/confirm', { attempt: 1 }));
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, carol, space.name, '1/reject', { attempt: 1, reason: 'changed my mind' }));
    await refusedUnchanged('TASK_NOT_FOUND', 404, () => taskWrite(relay, carol, space.name, '1/confirm', { attempt: 9 }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, carol, space.name, '1/confirm', { attempt: 2, cycle: 2 }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, carol, space.name, '1/confirm', { attempt: 0 }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, carol, space.name, '1/confirm', { attempt: '2' }));
  });
});
