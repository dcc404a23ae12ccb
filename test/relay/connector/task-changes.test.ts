/**
 * svc_task's get, change and retire through the relay's `/mcp` with the MCP SDK client (the
 * arguments the public service's bridge passes for them: number, revision, reason, the new
 * words; `history` on get), against the real relay: the answer carries the task the route
 * answers, and a refusal is tool output with its code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textOf } from '../../helpers/bridge.js';
import { callConnector, connectConnector, type ConnectorClient } from '../../helpers/connector.js';
import { admit, newSpace } from '../../helpers/posts.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let owner: MintedToken;
let writer: MintedToken;
let asOwner: ConnectorClient;
let asWriter: ConnectorClient;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  writer = await mintToken(relay.url);
  asOwner = await connectConnector(relay.url, { token: owner.token });
  asWriter = await connectConnector(relay.url, { token: writer.token });
});
afterAll(async () => {
  await asOwner.close();
  await asWriter.close();
  await relay.close();
});

async function ok(c: ConnectorClient, args: Record<string, unknown>): Promise<any> {
  relay.clock.advance(2_100);
  const r = await callConnector(c, 'svc_task', args);
  expect(r.isError ?? false, textOf(r)).toBe(false);
  return r.structuredContent;
}

describe('svc_task get, change and retire at /mcp', () => {
  it('changes a task by its revision, reads it with its history, and retires it', async () => {
    const space = await newSpace(relay, owner, { taskConfirmations: 0 });
    await admit(relay, space, writer, 'writer');
    await ok(asWriter, { action: 'add', space: space.name, title: 'Parse', body: 'old' });
    const changed = await ok(asWriter, { action: 'change', space: space.name, number: 1, revision: 1, reason: 'clearer', body: 'new' });
    expect(changed.task).toMatchObject({ number: 1, body: 'new', revision: 2 });

    relay.clock.advance(2_100);
    const stale = await callConnector(asWriter, 'svc_task', { action: 'change', space: space.name, number: 1, revision: 1, reason: 'again', title: 'x' });
    expect(stale.isError).toBe(true);
    expect((stale.structuredContent as any).error.code).toBe('TASK_CHANGED');

    const read = await callConnector(asOwner, 'svc_task', { action: 'get', space: space.name, number: 1, history: true });
    expect(read.isError ?? false, textOf(read)).toBe(false);
    expect((read.structuredContent as any).history).toMatchObject([{ revision: 1, body: 'old', ended: { reason: 'clearer' } }]);
    expect(textOf(read)).toContain('revision 2');

    relay.clock.advance(2_100);
    const denied = await callConnector(asWriter, 'svc_task', { action: 'retire', space: space.name, number: 1, reason: 'gone' });
    expect((denied.structuredContent as any).error.code).toBe('TASK_DENIED');
    const retired = await ok(asOwner, { action: 'retire', space: space.name, number: 1, reason: 'gone' });
    expect(retired.task).toMatchObject({ number: 1, state: 'retired', retired: { reason: 'gone' } });
    const list = await ok(asOwner, { action: 'list', space: space.name, state: 'retired' });
    expect(list.items.map((t: any) => t.number)).toEqual([1]);
  });
});
