/**
 * Tasks end to end through the bridge (spec/1-concepts.md "Task", the Task state table,
 * "Verification"; spec/2-endpoints.md "Tasks"): the real relay in-process and three real bridge
 * processes over stdio with the MCP SDK client, one key directory each.
 *
 * Ann owns a private work SPACE that asks one confirmation per task and adds three tasks (the
 * third waits for the first); Ben and Cat take one each, post their results and mark them done;
 * Cat finds nothing open while the third waits and may not check her own; Ann confirms Ben's and
 * rejects Cat's with a reason, which Ben then takes in its new cycle. A task added with numbered
 * attempts is marked done by Ben and Cat alike, and Ann checks each attempt by its number. The start_run prompt names
 * svc_task where a SPACE keeps tasks, and a sealed SPACE takes a task only once the agent says it
 * knows the words are not sealed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, type RunningBridge } from '../helpers/bridge.js';
import { startRelay, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';

const WHO = ['ann', 'ben', 'cat'] as const;
type Who = (typeof WHO)[number];

let relay: RunningRelay;
const home = Object.fromEntries(WHO.map((w) => [w, tempHome()])) as Record<Who, string>;
const id = {} as Record<Who, string>;
const bridges: Partial<Record<Who, RunningBridge>> = {};
const space = freshName('tasks');

async function tool(who: Who, name: string, args: Record<string, unknown>) {
  const r = await callTool(bridges[who]!, name, args);
  return { r, text: textOf(r), data: r.structuredContent as any };
}

async function ok(who: Who, name: string, args: Record<string, unknown>) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBeFalsy();
  return out;
}

async function refused(who: Who, name: string, args: Record<string, unknown>, code: string) {
  const out = await tool(who, name, args);
  expect(out.r.isError, out.text).toBe(true);
  expect(out.data.error.code, out.text).toBe(code);
  return out;
}

/** A result post by `who`; answers its post_id. */
async function result(who: Who, title: string): Promise<string> {
  const posted = await ok(who, 'svc_post', { space, kind: 'result', title, body: `${title}: done and tested.` });
  return posted.data.post_id;
}

async function promptText(who: Who, args: Record<string, string>): Promise<string> {
  const p = await bridges[who]!.client.getPrompt({ name: 'start_run', arguments: args });
  return (p.messages[0]!.content as { text: string }).text;
}

beforeAll(async () => {
  relay = await startRelay();
  await Promise.all(
    WHO.map(async (who) => {
      id[who] = (await runBridge(['id'], { home: home[who] })).stdout.trim();
      bridges[who] = await startBridge({ relayUrl: relay.url, home: home[who], env: { SVC_KEEPER_INTERVAL: '0' } });
      await callTool(bridges[who]!, 'svc_whoami', {});
    }),
  );
  await ok('ann', 'svc_space_control', { action: 'create', name: space, title: 'Parser work', task_confirmations: 1 });
  for (const who of ['ben', 'cat'] as const) await ok('ann', 'svc_space_control', { action: 'set_member', name: space, peer_id: id[who], role: 'writer' });
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(bridges).map((b) => b?.close()));
  await relay?.close();
});

describe('a task list worked by three bridges', () => {
  it('adds tasks, one waiting for another, and lists them with their words fenced as the adder\'s', async () => {
    const first = await ok('ann', 'svc_task', { action: 'add', space, title: 'Port the parser', body: 'Port parse.c to TypeScript.' });
    expect(first.text).toContain(`Added task 1 to ${space}.`);
    expect(first.data.task).toMatchObject({ number: 1, state: 'open', created_by: id.ann });
    // The SPACE asks one confirmation: the answer says so and how a check is made.
    expect(first.text).toContain(`Confirmations: 1 in ${space}: a task marked done is accepted once 1 other member checked it (svc_task action=next space=${space} verify=true`);
    await ok('ann', 'svc_task', { action: 'add', space, title: 'Write the docs', tag: 'docs' });
    const third = await ok('ann', 'svc_task', { action: 'add', space, title: 'Release it', after: [1] });
    expect(third.text).toContain('after: 1 (taken only once these are accepted)');

    const list = await ok('ben', 'svc_task', { action: 'list', space });
    expect(list.data.items.map((t: any) => t.number)).toEqual([3, 2, 1]);
    expect(list.text).toMatch(/title: ⟦peer title [0-9a-f]{8}⟧Port the parser⟦\/peer [0-9a-f]{8}⟧/);
    expect(list.text).toMatch(/tag ⟦peer tag [0-9a-f]{8}⟧docs⟦\/peer [0-9a-f]{8}⟧/);
    const own = await ok('ann', 'svc_task', { action: 'list', space, detail: 'full' });
    expect(own.text).toMatch(/body: ⟦own body [0-9a-f]{8}⟧Port parse\.c to TypeScript\.⟦\/own [0-9a-f]{8}⟧/);
  }, 60_000);

  it('hands each taker its own task and says to do the work, post the result and mark it done with that post', async () => {
    const ben = await ok('ben', 'svc_task', { action: 'next', space });
    expect(ben.data).toMatchObject({ claimed: true, task: { number: 1, state: 'held', holder: id.ben } });
    expect(ben.text).toContain('You hold task 1 now:');
    expect(ben.text).toContain(`post the result with svc_post space=${space}`);
    expect(ben.text).toContain(`svc_task action=done space=${space} number=1 post_id=<that post's post_id>`);
    const cat = await ok('cat', 'svc_task', { action: 'next', space });
    expect(cat.data.task).toMatchObject({ number: 2, holder: id.cat });
    const again = await ok('cat', 'svc_task', { action: 'next', space });
    expect(again.text).toContain('You already hold task 2 (one at a time): its claim is renewed.');

    const benDone = await ok('ben', 'svc_task', { action: 'done', space, number: 1, post_id: await result('ben', 'Parser ported') });
    expect(benDone.text).toContain('Task 1 is done; other members check it now.');
    expect(benDone.text).toContain('You finished it. It waits for 1 more confirmation by other members.');
    await ok('cat', 'svc_task', { action: 'done', space, number: 2, post_id: await result('cat', 'Docs written') });
  }, 60_000);

  it('says why there is no task while the only open one waits for an unaccepted task, and refuses a self-check', async () => {
    const none = await ok('cat', 'svc_task', { action: 'next', space });
    expect(none.data).toMatchObject({ task: null, claimed: false });
    expect(none.text).toContain('No task for you: no open task whose after tasks are all accepted.');
    expect(none.text).toContain(`svc_task action=next space=${space} verify=true`);
    const check = await ok('cat', 'svc_task', { action: 'next', space, verify: true });
    expect(check.data.task).toMatchObject({ number: 1, state: 'done', done_by: id.ben });
    expect(check.text).toContain('Task 1 waits for your check (nothing is claimed):');
    await refused('cat', 'svc_task', { action: 'confirm', space, number: 2 }, 'TASK_SELF_CHECK');
  }, 60_000);

  it('lets the third bridge confirm one task and reject the other, which reopens in a new cycle with the reason', async () => {
    const first = await ok('ann', 'svc_task', { action: 'next', space, verify: true });
    expect(first.data.task.number).toBe(1);
    expect(first.text).toContain(`svc_task action=confirm space=${space} number=1`);
    const confirmed = await ok('ann', 'svc_task', { action: 'confirm', space, number: 1 });
    expect(confirmed.data.task.state).toBe('accepted');
    expect(confirmed.text).toContain('Confirmed: task 1 has its confirmations and is accepted.');

    const second = await ok('ann', 'svc_task', { action: 'next', space, verify: true });
    expect(second.data.task.number).toBe(2);
    const rejected = await ok('ann', 'svc_task', { action: 'reject', space, number: 2, reason: 'The setup step is missing.' });
    expect(rejected.data.task).toMatchObject({ state: 'open', cycle: 2 });
    expect(rejected.text).toContain('Rejected task 2: it is open again in cycle 2');
    await refused('ann', 'svc_task', { action: 'reject', space, number: 2 }, 'INVALID_REQUEST');

    // The lowest open task whose after tasks are accepted: 2 before 3.
    const retake = await ok('ben', 'svc_task', { action: 'next', space });
    expect(retake.data.task).toMatchObject({ number: 2, cycle: 2, holder: id.ben });
    expect(retake.text).toMatch(new RegExp(`last rejected by ${id.ann} at [^:]+:[^:]+:[^:]+: ⟦peer reason [0-9a-f]{8}⟧The setup step is missing\\.⟦/peer [0-9a-f]{8}⟧`));
    const open = await ok('cat', 'svc_task', { action: 'list', space, state: 'open' });
    expect(open.data.items.map((t: any) => t.number)).toEqual([3]);
  }, 60_000);

  it('names svc_task next in the start_run prompt for a SPACE that keeps tasks, and leaves the step out elsewhere', async () => {
    const withTasks = await promptText('ben', { space });
    expect(withTasks).toContain(`svc_task action=next space="${space}"`);
    expect(withTasks).toContain('verify=true');
    expect(withTasks.indexOf('svc_mailbox')).toBeLessThan(withTasks.indexOf('svc_task'));
    expect(withTasks.indexOf('svc_task')).toBeLessThan(withTasks.indexOf('svc_seek'));
    // Without a SPACE named, the memberships are asked.
    expect(await promptText('cat', {})).toContain(`svc_task action=next space="${space}"`);
    const empty = freshName('notasks');
    await ok('ann', 'svc_space_control', { action: 'create', name: empty, title: 'No tasks' });
    const without = await promptText('ann', { space: empty });
    expect(without).not.toContain(`space="${empty}" number`);
    expect(without).not.toContain(`svc_task action=next space="${empty}"`);
  }, 60_000);
});

describe('numbered attempts through svc_task', () => {
  it('adds a task any writer marks done, each done an attempt, and checks one attempt by its number', async () => {
    const added = await ok('ann', 'svc_task', { action: 'add', space, title: 'Race to fix the lexer', numbered_attempts: true });
    const n = added.data.task.number as number;
    expect(added.data.task).toMatchObject({ numbered_attempts: true, attempts: [] });
    expect(added.text).toContain('Numbered attempts: any writer may mark it done');
    // Neither holds it: each marks it done with its own result.
    await ok('ben', 'svc_task', { action: 'done', space, number: n, post_id: await result('ben', 'Lexer fix by ben') });
    const both = await ok('cat', 'svc_task', { action: 'done', space, number: n, post_id: await result('cat', 'Lexer fix by cat') });
    expect(both.data.task.attempts.map((a: any) => a.by)).toEqual([id.ben, id.cat]);
    expect(both.text).toContain(`attempt 1 by ${id.ben}, `);
    expect(both.text).toContain('attempt 2 by you, ');
    await refused('ann', 'svc_task', { action: 'confirm', space, number: n }, 'INVALID_REQUEST');
    const rejected = await ok('ann', 'svc_task', { action: 'reject', space, number: n, attempt: 1, reason: 'breaks on tabs' });
    expect(rejected.text).toContain(`Rejected attempt 1 at task ${n}: attempt 2 still waits for its checks.`);
    const accepted = await ok('ann', 'svc_task', { action: 'confirm', space, number: n, attempt: 2 });
    expect(accepted.data.task).toMatchObject({ state: 'accepted', attempt: 2, done_by: id.cat });
  });
});

describe('tasks in a sealed SPACE', () => {
  const sealed = freshName('sealtasks');

  it('refuses to add a task until the agent says it knows task words are not sealed, then adds it and says so again', async () => {
    await ok('ann', 'svc_space_control', { action: 'create', name: sealed, visibility: 'sealed', title: 'Sealed work' });
    const refusal = await refused('ann', 'svc_task', { action: 'add', space: sealed, title: 'Rotate the secret' }, 'TASK_WORDS_NOT_SEALED');
    expect(refusal.text).toContain('task words are not sealed');
    expect(refusal.text).toContain('Nothing was added');
    expect(refusal.text).toContain('plain_words=true');
    expect((await ok('ann', 'svc_task', { action: 'list', space: sealed })).data.items).toEqual([]);

    const added = await ok('ann', 'svc_task', { action: 'add', space: sealed, title: 'Rotate the key', plain_words: true });
    expect(added.data.task.number).toBe(1);
    expect(added.data.bridge).toEqual({ sealed_space: true, words_sealed: false });
    expect(added.text).toContain('Task words are NOT sealed');
    // A sealed SPACE asks no confirmation by default: the answer says done is accepted at once, and it is.
    expect(added.text).toContain(`Confirmations: none in ${sealed} (task_confirmations 0): a task marked done with its result post is accepted at once`);
  }, 60_000);

  it('says in the answer of add that a private SPACE made with the defaults accepts a task marked done at once, which it does', async () => {
    const plain = freshName('tdef');
    await ok('ann', 'svc_space_control', { action: 'create', name: plain, title: 'Defaults' });
    const added = await ok('ann', 'svc_task', { action: 'add', space: plain, title: 'Count the lines' });
    expect(added.text).toContain(`Confirmations: none in ${plain} (task_confirmations 0): a task marked done with its result post is accepted at once`);
    await ok('ann', 'svc_task', { action: 'next', space: plain });
    const posted = await ok('ann', 'svc_post', { space: plain, kind: 'result', body: '1,204 lines.' });
    const done = await ok('ann', 'svc_task', { action: 'done', space: plain, number: 1, post_id: posted.data.post_id });
    expect(done.data.task.state).toBe('accepted');
  }, 60_000);
});
