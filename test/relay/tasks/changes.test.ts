/**
 * Reading one task, changing its words and retiring it, over the real HTTP relay (the task
 * routes served after API 0.1, with the public service's fields and codes: tasks.get with its
 * history, tasks.change with `revision` and `reason`, tasks.retire; TASK_CHANGED on a stale
 * revision and on a holder's done once the words changed under it; TASK_WAITING while a task's
 * `after` tasks are not all accepted). Every refusal leaves every written table as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, codeOf, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { refusedUnchanged as expectRefused, stateProbe } from '../../helpers/state.js';
import { act, addTask, listTasks, nextTask, taskWrite } from '../../helpers/tasks.js';

let relay: RunningRelay;
let digest: () => Promise<string>;
let owner: MintedToken;
let coordinator: MintedToken;
let alice: MintedToken;
let bob: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  digest = await stateProbe(relay);
  owner = await mintToken(relay.url);
  coordinator = await mintToken(relay.url);
  alice = await mintToken(relay.url);
  bob = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

async function workSpace() {
  const space = await newSpace(relay, owner, { taskConfirmations: 0 });
  await admit(relay, space, coordinator, 'coordinator');
  await admit(relay, space, alice, 'writer');
  await admit(relay, space, bob, 'writer');
  return space;
}

function getTask(who: MintedToken | undefined, space: string, number: number | string, query = ''): Promise<Answer> {
  return call(relay, 'GET', `/v1/spaces/${space}/tasks/${number}${query}`, { token: who?.token });
}

const refusedUnchanged = (code: string, send: () => Promise<Answer>): Promise<Answer> => expectRefused(digest, code, undefined, send);

describe('tasks.get', () => {
  it('answers one task by its number with its revision, and TASK_NOT_FOUND for a number it never gave', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'Parse', body: 'RFC 8785' });
    const r = await getTask(bob, space.name, 1);
    expect(r.status, r.text).toBe(200);
    expect(r.body.task).toMatchObject({ number: 1, title: 'Parse', state: 'open', revision: 1, retired: null });
    expect(r.body.history).toBeUndefined();
    expect(codeOf(await getTask(bob, space.name, 2))).toBe('TASK_NOT_FOUND');
    expect(codeOf(await getTask(bob, space.name, 'x'))).toBe('TASK_NOT_FOUND');
    expect(codeOf(await getTask(bob, space.name, 1, '?limit=2'))).toBe('INVALID_REQUEST');
  });
});

describe('tasks.change', () => {
  it('changes the words of an open task, naming the revision read; history keeps the old ones with who, when and why', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'Parse', body: 'old body', tag: 'code' });
    const r = await taskWrite(relay, alice, space.name, '1/change', { revision: 1, reason: 'clearer', title: 'Parse JSON', tag: null });
    expect(r.status, r.text).toBe(200);
    expect(r.body.task).toMatchObject({ number: 1, title: 'Parse JSON', body: 'old body', tag: null, revision: 2 });
    const h = await getTask(bob, space.name, 1, '?history=true');
    expect(h.status, h.text).toBe(200);
    expect(h.body.history).toEqual([
      { revision: 1, title: 'Parse', body: 'old body', tag: 'code', after: [], ended: { by: alice.peerId, at: expect.any(String), reason: 'clearer' } },
    ]);
    expect(h.body).toMatchObject({ has_more: false, next_before: null });
  });

  it('refuses a stale revision (TASK_CHANGED), another writer\'s change (TASK_DENIED) and a circle of after (TASK_AFTER_INVALID), changing nothing', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'one' });
    await addTask(relay, alice, space.name, { title: 'two', after: [1] });
    await refusedUnchanged('TASK_CHANGED', () => taskWrite(relay, alice, space.name, '1/change', { revision: 2, reason: 'x', title: 'uno' }));
    await refusedUnchanged('TASK_DENIED', () => taskWrite(relay, bob, space.name, '1/change', { revision: 1, reason: 'x', title: 'uno' }));
    await refusedUnchanged('TASK_AFTER_INVALID', () => taskWrite(relay, alice, space.name, '1/change', { revision: 1, reason: 'x', after: [2] }));
    await refusedUnchanged('TASK_AFTER_INVALID', () => taskWrite(relay, alice, space.name, '1/change', { revision: 1, reason: 'x', after: [1] }));
    await refusedUnchanged('INVALID_REQUEST', () => taskWrite(relay, alice, space.name, '1/change', { revision: 1, reason: 'nothing to change' }));
    // A coordinator changes a task another member added.
    const r = await taskWrite(relay, coordinator, space.name, '2/change', { revision: 1, reason: 'no wait', after: [] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.task).toMatchObject({ after: [], waiting: 0, revision: 2 });
  });

  it('a holder whose task changed after it took it finishes only naming the new revision (TASK_CHANGED before)', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'Parse' });
    await nextTask(relay, bob, space.name);
    await taskWrite(relay, alice, space.name, '1/change', { revision: 1, reason: 'scope grew', body: 'and print it' });
    const result = await post(relay, bob, space, { kind: 'result', body: 'parsed' });
    await refusedUnchanged('TASK_CHANGED', () => taskWrite(relay, bob, space.name, '1/done', { post_id: result.post_id }));
    await refusedUnchanged('TASK_CHANGED', () => taskWrite(relay, bob, space.name, '1/done', { post_id: result.post_id, revision: 1 }));
    const done = await act(relay, bob, space.name, 1, 'done', { post_id: result.post_id, revision: 2 });
    expect(done).toMatchObject({ state: 'accepted', done_by: bob.peerId, revision: 2 });
  });

  it('a held task given an after task not yet accepted waits: done answers TASK_WAITING until it is accepted', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'first' });
    await addTask(relay, alice, space.name, { title: 'second' });
    await nextTask(relay, bob, space.name); // bob holds task 1
    await nextTask(relay, alice, space.name); // alice holds task 2
    await taskWrite(relay, alice, space.name, '2/change', { revision: 1, reason: 'needs the first', after: [1] });
    const mine = await post(relay, alice, space, { kind: 'result', body: 'second' });
    await refusedUnchanged('TASK_WAITING', () => taskWrite(relay, alice, space.name, '2/done', { post_id: mine.post_id, revision: 2 }));
    const his = await post(relay, bob, space, { kind: 'result', body: 'first' });
    await act(relay, bob, space.name, 1, 'done', { post_id: his.post_id });
    expect(await act(relay, alice, space.name, 2, 'done', { post_id: mine.post_id, revision: 2 })).toMatchObject({ state: 'accepted' });
  });
});

describe('tasks.next with number', () => {
  it('takes the task named when it may be taken now; TASK_WAITING while its after tasks wait, TASK_NOT_OPEN under another claim', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'first' });
    await addTask(relay, alice, space.name, { title: 'second', after: [1] });
    await refusedUnchanged('TASK_WAITING', () => taskWrite(relay, bob, space.name, 'next', { number: 2 }));
    await refusedUnchanged('TASK_NOT_FOUND', () => taskWrite(relay, bob, space.name, 'next', { number: 9 }));
    await refusedUnchanged('INVALID_REQUEST', () => taskWrite(relay, bob, space.name, 'next', { number: 1, tag: 'code' }));
    const took = await nextTask(relay, bob, space.name, { number: 1 });
    expect(took).toMatchObject({ claimed: true, renewed: false, task: { number: 1, holder: bob.peerId } });
    await refusedUnchanged('TASK_NOT_OPEN', () => taskWrite(relay, alice, space.name, 'next', { number: 1 }));
  });
});

describe('tasks.retire', () => {
  it('a coordinator retires a task; those waiting for it wait for what it waited for, and it reads as retired', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'one' });
    await addTask(relay, alice, space.name, { title: 'two', after: [1] });
    await addTask(relay, alice, space.name, { title: 'three', after: [2] });
    await refusedUnchanged('TASK_DENIED', () => taskWrite(relay, alice, space.name, '2/retire', { reason: 'not needed' }));
    const r = await taskWrite(relay, coordinator, space.name, '2/retire', { reason: 'not needed' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.task).toMatchObject({ number: 2, state: 'retired', retired: { by: coordinator.peerId, reason: 'not needed' } });
    expect((await getTask(bob, space.name, 2)).body.task).toMatchObject({ state: 'retired', title: 'two' });
    expect((await getTask(bob, space.name, 3)).body.task).toMatchObject({ after: [1], waiting: 1 });
    const open = await listTasks(relay, bob, space.name);
    expect(open.body.items.map((t: any) => t.number)).toEqual([3, 1]);
    const retired = await listTasks(relay, bob, space.name, '?state=retired');
    expect(retired.body.items.map((t: any) => t.number)).toEqual([2]);
    // Task 1 accepted: task 3 is handed out next, never the retired one.
    await nextTask(relay, bob, space.name);
    const p = await post(relay, bob, space, { kind: 'result', body: 'one' });
    await act(relay, bob, space.name, 1, 'done', { post_id: p.post_id });
    expect((await nextTask(relay, alice, space.name)).task).toMatchObject({ number: 3 });
    // An accepted task is not retired; a retired one is not changed.
    await refusedUnchanged('TASK_NOT_OPEN', () => taskWrite(relay, coordinator, space.name, '1/retire', { reason: 'late' }));
    await refusedUnchanged('TASK_NOT_FOUND', () => taskWrite(relay, coordinator, space.name, '2/change', { revision: 1, reason: 'x', title: 'y' }));
    // The number stays taken.
    expect((await addTask(relay, alice, space.name, { title: 'four' })).number).toBe(4);
  });
});

describe('tasks.list with token_budget', () => {
  it('keeps the tasks the budget pays for (the first always), reports what the page cost, and continues after the last one kept', async () => {
    const space = await workSpace();
    for (let i = 1; i <= 3; i++) await addTask(relay, alice, space.name, { title: `task ${i}`, body: 'x'.repeat(600) });
    const whole = await listTasks(relay, bob, space.name);
    expect(whole.body.items).toHaveLength(3);
    expect(whole.body.tokens_estimated).toBeGreaterThan(600);
    expect(whole.body.budget_cut).toBeUndefined();
    const one = await listTasks(relay, bob, space.name, '?token_budget=1');
    expect(one.body.items.map((t: any) => t.number)).toEqual([3]);
    expect(one.body).toMatchObject({ budget_cut: true, has_more: true, next_before: 3 });
    expect(one.body.tokens_estimated).toBeGreaterThan(200);
    expect(one.body.tokens_estimated).toBeLessThan(whole.body.tokens_estimated);
    const rest = await listTasks(relay, bob, space.name, `?before=3&token_budget=100000`);
    expect(rest.body.items.map((t: any) => t.number)).toEqual([2, 1]);
    expect(codeOf(await listTasks(relay, bob, space.name, '?token_budget=0'))).toBe('INVALID_REQUEST');
  });
});

describe('capabilities', () => {
  it('name the task features served beyond API 0.1, and funding as left out', async () => {
    const r = await call(relay, 'GET', '/v1/capabilities');
    expect(r.status).toBe(200);
    expect(r.body.api_version).toBe('0.1');
    for (const name of ['task_changes', 'task_after_gating', 'task_token_budget', 'propose_change_prompt']) {
      expect(r.body.features.supported, name).toContain(name);
    }
    expect(r.body.features.by_name.funding.status).toBe('left_out');
  });
});
