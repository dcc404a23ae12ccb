/**
 * tasks.add with a batch (the newer API's `tasks`): up to 20 tasks in one call, each added in
 * order and answered on its own, a refused one with its own envelope and nothing stored for it,
 * the others added all the same. Over real HTTP, and through svc_task at the relay's /mcp with
 * the SDK client. A call that is not a batch is answered as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../../helpers/bridge.js';
import { callConnector, connectConnector } from '../../helpers/connector.js';
import { admit, newSpace } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { listTasks, taskWrite } from '../../helpers/tasks.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
});
afterAll(async () => {
  await relay.close();
});

async function workSpace(): Promise<string> {
  const space = await newSpace(relay, owner);
  await admit(relay, space, writer, 'writer');
  return space.name;
}

async function numbers(space: string): Promise<number[]> {
  const r = await listTasks(relay, writer, space);
  return r.body.items.map((t: { number: number }) => t.number).sort((a: number, b: number) => a - b);
}

describe('tasks.add with tasks', () => {
  it('adds each task in order and answers each on its own; a refused one stores nothing and stops none after it', async () => {
    const space = await workSpace();
    const r = await taskWrite(relay, writer, space, '', {
      tasks: [{ title: 'first', body: 'do it' }, { title: 'waits for a task nobody added', after: [99] }, { title: 'third', after: [1], tag: 'docs' }, { body: 'no title' }],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.added).toBe(2);
    const [a, b, c, d] = r.body.items;
    expect(a).toMatchObject({ index: 0, status: 201, task: { number: 1, title: 'first' } });
    expect(b).toMatchObject({ index: 1, status: 422, error: { code: 'TASK_AFTER_INVALID' } });
    expect(b.error.message).toMatch(/^TASK_AFTER_INVALID\. /);
    expect(c).toMatchObject({ index: 2, status: 201, task: { number: 2, title: 'third', after: [1], tag: 'docs' } });
    expect(d).toMatchObject({ index: 3, status: 400, error: { code: 'INVALID_REQUEST' } });
    expect(d.error.detail).toMatch(/^title: /);
    expect(await numbers(space)).toEqual([1, 2]);
  });

  it('refuses a batch over 20, an empty one, and fields beside tasks, adding nothing (INVALID_REQUEST)', async () => {
    const space = await workSpace();
    const many = Array.from({ length: 21 }, (_, i) => ({ title: `t${i}` }));
    for (const body of [{ tasks: many }, { tasks: [] }, { tasks: [{ title: 'a' }], title: 'beside' }, { tasks: 'not a list' }]) {
      const r = await taskWrite(relay, writer, space, '', body);
      expect(r.body.error?.code, r.text).toBe('INVALID_REQUEST');
    }
    const item = await taskWrite(relay, writer, space, '', { tasks: [{ title: 'a', owner: 'x' }] });
    expect(item.body.items[0]).toMatchObject({ status: 400, error: { code: 'INVALID_REQUEST', detail: 'tasks[0].owner: not a field of a task' } });
    expect(await numbers(space)).toEqual([]);
    const twenty = await taskWrite(relay, writer, space, '', { tasks: many.slice(0, 20) });
    expect(twenty.body.added).toBe(20);
  });

  it('a reader of the SPACE is refused on each item, and nothing is added', async () => {
    const space = await newSpace(relay, owner);
    const reader = await mintToken(relay.url);
    await admit(relay, space, reader, 'reader');
    const r = await taskWrite(relay, reader, space.name, '', { tasks: [{ title: 'a' }, { title: 'b' }] });
    expect(r.body.added).toBe(0);
    for (const it of r.body.items) expect(it.error.code).not.toBeUndefined();
    expect((await listTasks(relay, owner, space.name)).body.items).toEqual([]);
  });

  it('svc_task action=add with tasks at /mcp: one call, each task added or refused on its own', async () => {
    const space = await workSpace();
    relay.clock.advance(2_100);
    const c = await connectConnector(relay.url, { token: writer.token });
    try {
      const r = await callConnector(c, 'svc_task', { action: 'add', space, tasks: [{ title: 'one' }, { title: 'two', after: [7] }, { title: 'three' }] });
      expect(r.isError, textOf(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ added: 2 });
      expect(textOf(r)).toContain('TASK_AFTER_INVALID');
      const beside = await callConnector(c, 'svc_task', { action: 'add', space, title: 'beside', tasks: [{ title: 'x' }] });
      expect(beside.isError).toBe(true);
    } finally {
      await c.close();
    }
    expect(await numbers(space)).toEqual([1, 2]);
  });
});
