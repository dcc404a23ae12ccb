/**
 * The connector's tools call the relay's routes in process and take a JSON answer as the value
 * the route made (relay/connector/in-process.ts, api.ts): the tool sees what an HTTP client of
 * that route parses, refusals included, and a request from outside that names an in-process
 * slot is answered as any other. Against the real relay, the tools through the SDK's client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../relay/app.js';
import { connectorApi } from '../../../relay/connector/api.js';
import type { Caller } from '../../../relay/connector/caller.js';
import { IN_PROCESS_HEADER } from '../../../relay/connector/in-process.js';
import { RelayRefusal } from '../../../tools/errors.js';
import { callConnector, connectConnector } from '../../helpers/connector.js';
import { newSpace, post } from '../../helpers/posts.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';
import { probeHiddenClasses } from '../../helpers/hidden-class.js';

let relay: RunningRelay;
let owner: MintedToken;
let space: string;
let postId: string;

beforeAll(async () => {
  relay = await startRelay();
  owner = await mintToken(relay.url);
  space = (await newSpace(relay, owner)).name;
  postId = (await post(relay, owner, space, { kind: 'obs', title: 'in process', body: 'the answer as the route made it' })).post_id;
}, 60_000);

afterAll(async () => {
  await relay?.close();
});

function callerOf(who: MintedToken): Caller {
  return { authorization: `Bearer ${who.token}`, identity: undefined, remoteAddress: '127.0.0.1', connect: false, scopeDenied: false };
}

describe('a route called in process', () => {
  it('answers the value an HTTP client of the route parses, and its text on demand', async () => {
    const api = connectorApi(relay.app, contextOf(relay.app), callerOf(owner));
    const inProcess = await api.request({ path: `/v1/posts/${postId}`, query: { proof: 'false' } });
    const overHttp = await call(relay, 'GET', `/v1/posts/${postId}?proof=false`, { token: owner.token });
    expect(overHttp.status).toBe(200);
    expect(inProcess.status).toBe(200);
    expect(inProcess.body).toEqual(overHttp.body);
    expect(JSON.parse(inProcess.text)).toEqual(overHttp.body);
    expect(inProcess.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(inProcess).sort()).toEqual(['body', 'headers', 'status', 'text']);
  });

  it('answers every JSON answer in one hidden class with fast properties, before and after its text and headers are read', async () => {
    const report = await probeHiddenClasses('routes');
    expect(report.before).toBe(true);
    expect(report.after).toBe(true);
  }, 30_000);

  it('throws the refusal the route answered, with its code and request id', async () => {
    const api = connectorApi(relay.app, contextOf(relay.app), callerOf(owner));
    const refused = await api.request({ path: '/v1/spaces/no-such-space-here/posts' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RelayRefusal);
    expect((refused as RelayRefusal).code).toBe('SPACE_NOT_FOUND');
    expect((refused as RelayRefusal).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('leaves a request from outside naming a slot answered in full as JSON', async () => {
    const res = await fetch(`${relay.url}/v1/posts/${postId}?proof=false`, {
      headers: { authorization: `Bearer ${owner.token}`, [IN_PROCESS_HEADER]: '00000000-0000-4000-8000-000000000000' },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { post_id: string }).post_id).toBe(postId);
  });
});

describe('a tool over the route', () => {
  it("svc_get's structured content is the route's answer", async () => {
    const c = await connectConnector(relay.url, { token: owner.token, revision: '2026-07-28' });
    try {
      const r = await callConnector(c, 'svc_get', { post_id: postId, proof: false });
      const overHttp = await call(relay, 'GET', `/v1/posts/${postId}?proof=false`, { token: owner.token });
      const { bridge: _bridge, ...route } = r.structuredContent as Record<string, unknown>;
      expect(route).toEqual(overHttp.body);
    } finally {
      await c.close();
    }
  });
});
