/**
 * Every refusal of the task operations over the real HTTP relay (spec/2-endpoints.md "Tasks",
 * spec/3-errors.md), each answered with its catalogue code and status in the envelope and each
 * changing nothing: a digest of every written table (test/helpers/state.ts, task tables
 * included) is the same before and after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_LIMITS } from '../../../shared/limits.js';
import { admit, codeOf, newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type Answer, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { refusedUnchanged as expectRefused, stateProbe } from '../../helpers/state.js';
import { act, addTask, listTasks, nextTask, taskWrite } from '../../helpers/tasks.js';
import { insertRows } from '../../helpers/test-store.js';

/** The columns of a `tasks` row, in the order of the rows the TASK_LIMIT test writes. */
const TASKS_COLUMNS =
  'tasks (space_row_id, number, title, body, tag, after_json, waiting, state, holder, claim_expires_at, result_post_id, done_by, cycle, rejected_reason, rejected_by, rejected_at, created_by, created_at, updated_at, numbered_attempts)';

let relay: RunningRelay;
let digest: () => Promise<string>;
let owner: MintedToken;
let alice: MintedToken;
let bob: MintedToken;
let reader: MintedToken;
let stranger: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  digest = await stateProbe(relay);
  owner = await mintToken(relay.url);
  alice = await mintToken(relay.url);
  bob = await mintToken(relay.url);
  reader = await mintToken(relay.url);
  stranger = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

/** A SPACE with alice and bob as writers and a reader, asking `confirmations` checks. */
async function workSpace(confirmations = 1) {
  const space = await newSpace(relay, owner, { taskConfirmations: confirmations });
  await admit(relay, space, alice, 'writer');
  await admit(relay, space, bob, 'writer');
  await admit(relay, space, reader, 'reader');
  return space;
}

/** `send` is refused with `code` (and its status) and leaves every written table as it was. */
const refusedUnchanged = (code: string, status: number, send: () => Promise<Answer>): Promise<Answer> => expectRefused(digest, code, status, send);

/** Task 1 held by alice, task 2 done by alice (waiting for a check), task 3 open. */
async function staged(confirmations = 1) {
  const space = await workSpace(confirmations);
  for (let i = 1; i <= 3; i++) await addTask(relay, owner, space.name, { title: `t${i}` });
  await nextTask(relay, alice, space.name);
  await nextTask(relay, bob, space.name);
  const result = await post(relay, bob, space, { kind: 'result', body: 'two' });
  await act(relay, bob, space.name, 2, 'done', { post_id: result.post_id });
  const alicePost = await post(relay, alice, space, { kind: 'obs', body: 'mine' });
  return { space, result, alicePost };
}

describe('the SPACE', () => {
  it('SPACE_NOT_FOUND for every operation on a name no SPACE has', async () => {
    const name = 'no-such-space-tasks';
    await refusedUnchanged('SPACE_NOT_FOUND', 404, () => listTasks(relay, alice, name));
    for (const path of ['', 'next', '1/done', '1/release', '1/confirm', '1/reject']) {
      const body = path === '' ? { title: 'x' } : path.endsWith('done') ? { post_id: 'x' } : path.endsWith('reject') ? { reason: 'r' } : {};
      await refusedUnchanged('SPACE_NOT_FOUND', 404, () => taskWrite(relay, alice, name, path, body));
    }
  });

  it('ORACLE_HAS_NO_TASKS for every operation in an oracle space, and for its task settings', async () => {
    const oracle = await newSpace(relay, owner, { visibility: 'public', oracle: true, joinPolicy: 'request', categories: ['general'] });
    await admit(relay, oracle, alice, 'writer');
    await refusedUnchanged('ORACLE_HAS_NO_TASKS', 409, () => listTasks(relay, undefined, oracle.name));
    await refusedUnchanged('ORACLE_HAS_NO_TASKS', 409, () => taskWrite(relay, alice, oracle.name, '', { title: 'x' }));
    await refusedUnchanged('ORACLE_HAS_NO_TASKS', 409, () => taskWrite(relay, alice, oracle.name, 'next', {}));
    await refusedUnchanged('ORACLE_HAS_NO_TASKS', 409, () => taskWrite(relay, alice, oracle.name, '1/done', { post_id: 'x' }));
    await refusedUnchanged('ORACLE_HAS_NO_TASKS', 409, () =>
      call(relay, 'PATCH', `/v1/spaces/${oracle.name}`, { token: owner.token, body: { task_claim_hours: 2 } }),
    );
  });

  it('READ_DENIED for a private SPACE\'s list read by a stranger or anonymously', async () => {
    const space = await workSpace();
    await refusedUnchanged('READ_DENIED', 403, () => listTasks(relay, stranger, space.name));
    await refusedUnchanged('READ_DENIED', 403, () => listTasks(relay, undefined, space.name));
  });

  it('TASK_DENIED for a reader or a KEY with no role, whatever it tries; readers still read', async () => {
    const { space } = await staged();
    for (const who of [reader, stranger]) {
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, '', { title: 'x' }));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, 'next', {}));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, 'next', { verify: true }));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, '1/done', { post_id: 'x' }));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, '1/release'));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, '2/confirm'));
      await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, who, space.name, '2/reject', { reason: 'no' }));
    }
    expect((await listTasks(relay, reader, space.name)).status).toBe(200);
  });

  it('TASK_DENIED for a writer checking where task_confirmers is coordinators', async () => {
    const { space } = await staged();
    const set = await call(relay, 'PATCH', `/v1/spaces/${space.name}`, { token: owner.token, body: { task_confirmers: 'coordinators' } });
    expect(set.status).toBe(200);
    await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, alice, space.name, '2/confirm'));
    await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, alice, space.name, '2/reject', { reason: 'no' }));
    await refusedUnchanged('TASK_DENIED', 403, () => taskWrite(relay, alice, space.name, 'next', { verify: true }));
  });

  it('WRITE_BLOCKED for a blocked writer; the list still reads', async () => {
    const { space } = await staged();
    await relay.store.blocks.set(space.id, owner.peerId, alice.peerId, relay.clock.now());
    await refusedUnchanged('WRITE_BLOCKED', 403, () => taskWrite(relay, alice, space.name, '', { title: 'x' }));
    await refusedUnchanged('WRITE_BLOCKED', 403, () => taskWrite(relay, alice, space.name, 'next', {}));
    await refusedUnchanged('WRITE_BLOCKED', 403, () => taskWrite(relay, alice, space.name, '1/release'));
    await refusedUnchanged('WRITE_BLOCKED', 403, () => taskWrite(relay, alice, space.name, '2/confirm'));
    expect((await listTasks(relay, alice, space.name)).status).toBe(200);
  });

  it('SPACE_CLOSED for every task write in a closed SPACE; the list still reads', async () => {
    const { space, alicePost } = await staged();
    await relay.store.spaces.close(space.id, 'next-space', relay.clock.now());
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, alice, space.name, '', { title: 'x' }));
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, bob, space.name, 'next', {}));
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, alice, space.name, '1/done', { post_id: alicePost.post_id }));
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, alice, space.name, '1/release'));
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, alice, space.name, '2/confirm'));
    await refusedUnchanged('SPACE_CLOSED', 409, () => taskWrite(relay, alice, space.name, '2/reject', { reason: 'no' }));
    const list = await listTasks(relay, alice, space.name);
    expect(list.body.items.map((t: any) => t.state)).toEqual(['open', 'done', 'held']);
  });
});

describe('adding', () => {
  it('TASK_AFTER_INVALID for a number not in this SPACE, a repeated one, or more than eight', async () => {
    const space = await workSpace();
    await addTask(relay, alice, space.name, { title: 'one' });
    await refusedUnchanged('TASK_AFTER_INVALID', 422, () => taskWrite(relay, alice, space.name, '', { title: 'x', after: [2] }));
    await refusedUnchanged('TASK_AFTER_INVALID', 422, () => taskWrite(relay, alice, space.name, '', { title: 'x', after: [0] }));
    await refusedUnchanged('TASK_AFTER_INVALID', 422, () => taskWrite(relay, alice, space.name, '', { title: 'x', after: [1, 1] }));
    const nine = Array.from({ length: 9 }, (_, i) => i + 1);
    await refusedUnchanged('TASK_AFTER_INVALID', 422, () => taskWrite(relay, alice, space.name, '', { title: 'x', after: nine }));
  });

  it('TASK_LIMIT at 10,000 tasks not yet accepted; accepting one makes room', async () => {
    const space = await newSpace(relay, owner, { taskConfirmations: 0 });
    await admit(relay, space, alice, 'writer');
    // The list filled as tasks.insert fills it (each task open, waiting on none, and the list's
    // counters), in statements of many rows: one task at a time took 10 s on PostgreSQL.
    const now = relay.clock.now();
    const rows = Array.from({ length: TASK_LIMITS.notAcceptedPerSpace }, (_, i) => [space.id, i + 1, `t${i}`, '', null, '[]', 0, 'open', null, null, null, null, 1, null, null, null, alice.peerId, now, now, 0]);
    const db = relay.store.db;
    await db.transaction(async () => {
      await insertRows(db, TASKS_COLUMNS, rows);
      await db
        .prepare('INSERT INTO task_lists (space_row_id, last_number, not_accepted) VALUES (?, ?, ?) ON CONFLICT (space_row_id) DO UPDATE SET last_number = excluded.last_number, not_accepted = excluded.not_accepted')
        .run(space.id, rows.length, rows.length);
    }).immediate();
    const r = await refusedUnchanged('TASK_LIMIT', 409, () => taskWrite(relay, alice, space.name, '', { title: 'one too many' }));
    expect(r.body.error.detail).toMatch(/10000/);
    await nextTask(relay, alice, space.name);
    const p = await post(relay, alice, space, { kind: 'result', body: 'r' });
    expect((await act(relay, alice, space.name, 1, 'done', { post_id: p.post_id })).state).toBe('accepted');
    expect((await addTask(relay, alice, space.name, { title: 'fits now' })).number).toBe(10_001);
  });

  it('INVALID_REQUEST for a title, body, tag or field out of shape', async () => {
    const space = await workSpace();
    const bad: unknown[] = [
      {},
      { title: '' },
      { title: 'x'.repeat(513) },
      { title: 7 },
      { title: 'x', body: 'b'.repeat(16_385) },
      { title: 'x', tag: 'Upper' },
      { title: 'x', tag: 'a'.repeat(65) },
      { title: 'x', after: 'one' },
      { title: 'x', after: [1.5] },
      { title: 'x', extra: true },
    ];
    for (const body of bad) await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, alice, space.name, '', body));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, alice, space.name, 'next', { verify: 'yes' }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => listTasks(relay, alice, space.name, '?state=closed'));
    await refusedUnchanged('INVALID_REQUEST', 400, () => listTasks(relay, alice, space.name, '?limit=201'));
  });
});

describe('the state table', () => {
  it('TASK_NOT_FOUND for a number no task has, or one that is not a number', async () => {
    const { space, alicePost } = await staged();
    for (const n of ['99', '0', 'abc', '1e3', '-1']) {
      await refusedUnchanged('TASK_NOT_FOUND', 404, () => taskWrite(relay, alice, space.name, `${n}/done`, { post_id: alicePost.post_id }));
      await refusedUnchanged('TASK_NOT_FOUND', 404, () => taskWrite(relay, alice, space.name, `${n}/confirm`));
    }
  });

  it('done: TASK_NOT_OPEN past held, TASK_NOT_CLAIMANT for an open task or another\'s, TASK_POST_NOT_FOUND unless the post is the holder\'s own live post here', async () => {
    const { space, result, alicePost } = await staged();
    await refusedUnchanged('TASK_NOT_OPEN', 409, () => taskWrite(relay, bob, space.name, '2/done', { post_id: result.post_id }));
    await refusedUnchanged('TASK_NOT_CLAIMANT', 409, () => taskWrite(relay, alice, space.name, '3/done', { post_id: alicePost.post_id }));
    await refusedUnchanged('TASK_NOT_CLAIMANT', 409, () => taskWrite(relay, bob, space.name, '1/done', { post_id: result.post_id }));
    // bob's post, a post in another SPACE, an unknown id, a hidden post of alice's.
    const elsewhere = await workSpace();
    const foreign = await post(relay, alice, elsewhere, { kind: 'result', body: 'elsewhere' });
    const hidden = await post(relay, alice, space, { kind: 'result', body: 'to hide' });
    relay.clock.advance(2_100);
    expect((await call(relay, 'PUT', `/v1/posts/${hidden.post_id}/hidden`, { token: owner.token })).status).toBe(200);
    for (const postId of [result.post_id, foreign.post_id, '00000000-0000-4000-8000-000000000000', 'not-an-id', hidden.post_id]) {
      await refusedUnchanged('TASK_POST_NOT_FOUND', 422, () => taskWrite(relay, alice, space.name, '1/done', { post_id: postId }));
    }
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, alice, space.name, '1/done', {}));
  });

  it('release: TASK_NOT_OPEN past held, TASK_NOT_CLAIMANT for a writer releasing another\'s, or anyone releasing an open task', async () => {
    const { space } = await staged();
    await refusedUnchanged('TASK_NOT_OPEN', 409, () => taskWrite(relay, owner, space.name, '2/release'));
    await refusedUnchanged('TASK_NOT_CLAIMANT', 409, () => taskWrite(relay, bob, space.name, '1/release'));
    await refusedUnchanged('TASK_NOT_CLAIMANT', 409, () => taskWrite(relay, owner, space.name, '3/release'));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, alice, space.name, '1/release', { now: true }));
  });

  it('confirm and reject: TASK_NOT_DONE before done and after accepted, TASK_SELF_CHECK for the one who did it, TASK_ALREADY_CHECKED twice in a cycle', async () => {
    const { space, alicePost } = await staged(2);
    for (const n of [1, 3]) {
      await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, alice, space.name, `${n}/confirm`));
      await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, bob, space.name, `${n}/reject`, { reason: 'no' }));
    }
    await refusedUnchanged('TASK_SELF_CHECK', 409, () => taskWrite(relay, bob, space.name, '2/confirm'));
    await refusedUnchanged('TASK_SELF_CHECK', 409, () => taskWrite(relay, bob, space.name, '2/reject', { reason: 'mine' }));
    await act(relay, alice, space.name, 2, 'confirm', { post_id: alicePost.post_id });
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, alice, space.name, '2/confirm'));
    await refusedUnchanged('TASK_ALREADY_CHECKED', 409, () => taskWrite(relay, alice, space.name, '2/reject', { reason: 'changed my mind' }));
    const bobsPost = await post(relay, bob, space, { kind: 'obs', body: 'bob' });
    await refusedUnchanged('TASK_POST_NOT_FOUND', 422, () => taskWrite(relay, owner, space.name, '2/confirm', { post_id: bobsPost.post_id }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, owner, space.name, '2/reject', {}));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, owner, space.name, '2/reject', { reason: '' }));
    await refusedUnchanged('INVALID_REQUEST', 400, () => taskWrite(relay, owner, space.name, '2/reject', { reason: 'r'.repeat(2049) }));
    expect((await act(relay, owner, space.name, 2, 'confirm')).state).toBe('accepted');
    await refusedUnchanged('TASK_NOT_DONE', 409, () => taskWrite(relay, owner, space.name, '2/reject', { reason: 'late' }));
  });

  it('"no task" is an answer, not a refusal, and changes nothing', async () => {
    const space = await workSpace();
    const before = await digest();
    expect(await nextTask(relay, alice, space.name)).toMatchObject({ task: null, claimed: false });
    expect(await nextTask(relay, alice, space.name, { verify: true })).toMatchObject({ task: null, claimed: false });
    expect(await digest()).toBe(before);
  });
});

describe('rate limits', () => {
  it('spends the write bucket a post spends: past its burst a task write is refused RATE_LIMITED, and so is a post', async () => {
    const space = await workSpace();
    const writer = await mintToken(relay.url);
    await admit(relay, space, writer, 'writer');
    let refused: Answer | undefined;
    for (let i = 0; i < 100 && refused === undefined; i++) {
      const r = await call(relay, 'POST', `/v1/spaces/${space.name}/tasks`, { token: writer.token, body: { title: `t${i}` } });
      if (r.status !== 201) refused = r;
    }
    expect(codeOf(refused!)).toBe('RATE_LIMITED');
    expect(refused!.headers.get('retry-after')).not.toBeNull();
    await refusedUnchanged('RATE_LIMITED', 429, () => call(relay, 'POST', `/v1/spaces/${space.name}/tasks/next`, { token: writer.token, body: {} }));
    await refusedUnchanged('RATE_LIMITED', 429, () => call(relay, 'POST', `/v1/spaces/${space.name}/posts`, { token: writer.token, body: { kind: 'obs', body: 'x' } }));
  });
});

describe('task settings', () => {
  it('CONTROL_DENIED for task settings changed by anyone below admin', async () => {
    const space = await workSpace();
    await refusedUnchanged('CONTROL_DENIED', 403, () =>
      call(relay, 'PATCH', `/v1/spaces/${space.name}`, { token: alice.token, body: { task_confirmations: 3 } }),
    );
    await refusedUnchanged('INVALID_REQUEST', 400, () =>
      call(relay, 'PATCH', `/v1/spaces/${space.name}`, { token: owner.token, body: { task_claim_hours: 25 } }),
    );
  });
});
