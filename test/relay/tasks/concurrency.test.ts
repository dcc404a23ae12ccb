/**
 * Two agents calling `tasks.next` at the same moment never hold the same task (the tasks
 * contract, "Concurrency"): 16 KEYS call it at once over real HTTP, on a list with `after`
 * dependencies, and each claimable task goes to exactly one caller; callers past the last
 * claimable task get "no task" and the rows agree with the answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, newSpace } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { addTask, listTasks } from '../../helpers/tasks.js';

const CALLERS = 16;

let relay: RunningRelay;
let owner: MintedToken;
let agents: MintedToken[];

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  agents = [];
  for (let i = 0; i < CALLERS; i++) agents.push(await mintToken(relay.url));
});
afterAll(async () => {
  await relay.close();
});

function allAtOnce(space: string, body: Record<string, unknown> = {}) {
  relay.clock.advance(2_100);
  return Promise.all(agents.map((a) => call(relay, 'POST', `/v1/spaces/${space}/tasks/next`, { token: a.token, body })));
}

describe('tasks.next under 16 concurrent callers', () => {
  it('gives each claimable task to exactly one caller and the rest no task', async () => {
    const space = await newSpace(relay, owner);
    for (const a of agents) await admit(relay, space, a, 'writer');
    // 12 claimable tasks and 6 that wait for task 1, which nobody can finish here.
    for (let i = 1; i <= 18; i++) {
      await addTask(relay, owner, space.name, { title: `t${i}`, after: i > 12 ? [1] : [] });
    }
    const answers = await allAtOnce(space.name);
    for (const r of answers) expect(r.status, r.text).toBe(200);
    const claimed = answers.filter((r) => r.body.claimed).map((r) => r.body.task.number as number);
    expect(claimed.length).toBe(12);
    expect(new Set(claimed).size).toBe(12);
    expect([...claimed].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const empty = answers.filter((r) => !r.body.claimed);
    expect(empty.length).toBe(4);
    for (const r of empty) expect(r.body).toMatchObject({ task: null, why: 'no open task whose after tasks are all accepted' });
    // The list agrees: each held task is held by the caller that was told so.
    const held = await listTasks(relay, owner, space.name, '?state=held');
    const holderOf = new Map(held.body.items.map((t: any) => [t.number, t.holder]));
    answers.forEach((r, i) => {
      if (r.body.claimed) expect(holderOf.get(r.body.task.number)).toBe(agents[i]!.peerId);
    });
  });

  it('renews, never doubles, when the same 16 holders ask again at once', async () => {
    const space = await newSpace(relay, owner);
    for (const a of agents) await admit(relay, space, a, 'writer');
    for (let i = 1; i <= 40; i++) await addTask(relay, owner, space.name, { title: `t${i}`, tag: i % 2 === 0 ? 'even' : 'odd' });
    const first = await allAtOnce(space.name, { tag: 'even' });
    const mine = first.map((r) => r.body.task.number as number);
    expect(new Set(mine).size).toBe(CALLERS);
    for (const n of mine) expect(n % 2).toBe(0);
    const again = await allAtOnce(space.name, { tag: 'even' });
    again.forEach((r, i) => expect(r.body).toMatchObject({ claimed: true, renewed: true, task: { number: mine[i] } }));
    const held = await listTasks(relay, owner, space.name, '?state=held&limit=200');
    expect(held.body.items.length).toBe(CALLERS);
  });
});
