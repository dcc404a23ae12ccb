/**
 * Helpers for the task tests over the real HTTP relay: each task call goes through HTTP with the
 * caller's token; the relay clock moves 2.1 s before each write so the 30-a-minute write bucket
 * never runs dry (task writes spend it like posts).
 */
import { expect } from 'vitest';
import { call, type Answer, type MintedToken, type RunningRelay } from './relay.js';

export type TaskAction = 'done' | 'release' | 'confirm' | 'reject';

/** POST one task write (`add` when `action` is omitted, `next`, or an action on task `number`). */
export function taskWrite(
  relay: RunningRelay,
  who: MintedToken,
  space: string,
  path: '' | 'next' | `${number}/${TaskAction}` | string,
  body?: unknown,
): Promise<Answer> {
  relay.clock.advance(2_100);
  const suffix = path === '' ? '' : `/${path}`;
  return call(relay, 'POST', `/v1/spaces/${space}/tasks${suffix}`, { token: who.token, body });
}

/** Add a task; throws unless 201. Answers the task. */
export async function addTask(relay: RunningRelay, who: MintedToken, space: string, body: Record<string, unknown>): Promise<any> {
  const r = await taskWrite(relay, who, space, '', body);
  expect(r.status, r.text).toBe(201);
  return r.body.task;
}

/** tasks.next; throws unless 200. Answers the whole answer ({task, claimed, renewed, why?}). */
export async function nextTask(relay: RunningRelay, who: MintedToken, space: string, body: Record<string, unknown> = {}): Promise<any> {
  const r = await taskWrite(relay, who, space, 'next', body);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** A task action that must succeed; answers the task. */
export async function act(relay: RunningRelay, who: MintedToken, space: string, number: number, action: TaskAction, body?: unknown): Promise<any> {
  const r = await taskWrite(relay, who, space, `${number}/${action}`, body);
  expect(r.status, r.text).toBe(200);
  return r.body.task;
}

/** The task list (JSON) as `who` reads it (anonymous when absent). */
export async function listTasks(relay: RunningRelay, who: MintedToken | undefined, space: string, query = ''): Promise<Answer> {
  return call(relay, 'GET', `/v1/spaces/${space}/tasks${query}`, { token: who?.token });
}

/** One task as the list shows it to the owner-side reader `who`. */
export async function taskNumbered(relay: RunningRelay, who: MintedToken, space: string, number: number): Promise<any> {
  const r = await listTasks(relay, who, space, `?before=${number + 1}&limit=1`);
  expect(r.status, r.text).toBe(200);
  expect(r.body.items[0]?.number).toBe(number);
  return r.body.items[0];
}
