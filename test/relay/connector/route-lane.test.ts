/**
 * The routes the connector's tools call with no HTTP request of their own (`config.inProcess`,
 * relay/connector/in-process.ts): each answers what the same call through `app.inject` answers,
 * refusals included; the request's admission (authentication, the rate limits and read gates, the
 * read-only mode of a restore) applies unchanged; Fastify's router decides which route a path is;
 * the metrics count such a call in the route's one series. Against the real relay and its store.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextOf } from '../../../relay/app.js';
import { connectorApi } from '../../../relay/connector/api.js';
import type { Caller } from '../../../relay/connector/caller.js';
import { addInProcessRoute, callRoute } from '../../../relay/connector/in-process.js';
import { tokenHash } from '../../../relay/http/auth.js';
import type { InProcessRoute } from '../../../relay/context.js';
import { READ_ONLY_KEY } from '../../../relay/service-mode.js';
import type { ApiRequest, ApiResponse } from '../../../tools/api.js';
import { RelayRefusal } from '../../../tools/errors.js';
import { callConnector, connectConnector } from '../../helpers/connector.js';
import { newSpace, post } from '../../helpers/posts.js';
import { onPostgres } from '../../helpers/test-store.js';
import { call, mintToken, startRelay, type MintedToken, type RunningRelay } from '../../helpers/relay.js';

const SECRET = 'metrics-secret-0123456789abcdef0123456789abcdef';

let relay: RunningRelay;
let owner: MintedToken;
let other: MintedToken;
let space: string;
let postId: string;

beforeAll(async () => {
  relay = await startRelay({ config: { metrics: { token: SECRET } } });
  owner = await mintToken(relay.url);
  other = await mintToken(relay.url);
  space = (await newSpace(relay, owner)).name;
  for (let i = 0; i < 3; i++) postId = (await post(relay, owner, space, { kind: 'obs', title: `merkle ${i}`, body: `the route's own answer ${i}` })).post_id;
  await post(relay, other, (await newSpace(relay, other)).name, { kind: 'obs', title: 'elsewhere', body: 'not readable by the owner' });
}, 60_000);

afterAll(async () => {
  await relay?.close();
});

function callerOf(authorization: string | undefined, remoteAddress = '127.0.0.1'): Caller {
  return { authorization, identity: undefined, remoteAddress, connect: false, scopeDenied: false };
}

/** The same call in process (`lane`) and through `app.inject` (the connector with its in-process calls off). */
function bothWays(caller: Caller) {
  const ctx = contextOf(relay.app);
  return {
    lane: connectorApi(relay.app, ctx, caller),
    injected: connectorApi(relay.app, { ...ctx, connectorDirect: false }, caller),
  };
}

type Outcome = { status: number; body: unknown; type: string | null } | { refused: Record<string, unknown> };

async function outcome(res: Promise<ApiResponse>): Promise<Outcome> {
  try {
    const r = await res;
    // Markdown fences peer-written text with a nonce drawn for each answer: the same for both ways here.
    const nonce = typeof r.body === 'string' ? /⟦\/peer ([0-9a-f]{8})⟧/.exec(r.body)?.[1] : undefined;
    const body = nonce === undefined ? r.body : (r.body as string).replaceAll(nonce, 'NONCE');
    return { status: r.status, body, type: r.headers.get('content-type') };
  } catch (e) {
    if (!(e instanceof RelayRefusal)) throw e;
    const { requestId, ...fields } = e;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    return { refused: { ...fields, message: e.message } };
  }
}

describe('a route called in process', () => {
  it('answers the routes the tools call most as app.inject does, refusals included', async () => {
    const calls: [string, ApiRequest][] = [
      ['posts.get with its proof', { path: `/v1/posts/${postId}` }],
      ['posts.get without', { path: `/v1/posts/${postId}`, query: { proof: 'false' } }],
      ['posts.get of a bad id', { path: '/v1/posts/not-a-uuid' }],
      ['posts.get of a proof value not taken', { path: `/v1/posts/${postId}`, query: { proof: 'maybe' } }],
      ['posts.batch', { path: '/v1/posts', query: { ids: postId, detail: 'snippets' } }],
      ['posts.batch with no ids', { path: '/v1/posts' }],
      ['posts.proof', { path: `/v1/spaces/${space}/posts/2/proof` }],
      ['posts.read newest first', { path: `/v1/spaces/${space}/posts`, query: { order: 'desc', limit: 2, token_budget: 3000 } }],
      ['posts.read headlines', { path: `/v1/spaces/${space}/posts`, query: { detail: 'headlines' } }],
      ['posts.read of an unknown member', { path: `/v1/spaces/${space}/posts`, query: { colour: 'red' } }],
      ['posts.read of a limit out of range', { path: `/v1/spaces/${space}/posts`, query: { limit: 0 } }],
      ['posts.read of a SPACE that is not there', { path: '/v1/spaces/no-such-space-at-all/posts' }],
      ['posts.read of a name percent-encoded', { path: `/v1/spaces/%41${space}/posts` }],
      ['posts.standing', { path: `/v1/spaces/${space}/standing` }],
      ['spaces.get', { path: `/v1/spaces/${space}`, auth: 'opt' }],
      ['spaces.get as markdown', { path: `/v1/spaces/${space}`, accept: 'text/markdown' }],
      ['seek', { path: '/v1/seek', query: { q: 'merkle', limit: 20, token_budget: 3000 } }],
      ['seek with nothing to seek', { path: '/v1/seek' }],
      ['mailbox', { path: '/v1/mailbox', query: { after: '0' } }],
      ['me', { path: '/v1/me', query: { limit: 5 } }],
      ['me of a limit not taken', { path: '/v1/me', query: { limit: 'lots' } }],
    ];
    for (const who of [callerOf(`Bearer ${owner.token}`), callerOf(undefined), callerOf(`Bearer svc_${'0'.repeat(64)}`, '127.0.0.9'), callerOf('Basic eA==', '127.0.0.9')]) {
      const { lane, injected } = bothWays(who);
      for (const [what, req] of calls) {
        const viaInject = await outcome(injected.request(req));
        const inProcess = await outcome(lane.request(req));
        expect(inProcess, `${what} (${who.authorization ?? 'no token'})`).toEqual(viaInject);
      }
    }
  });

  it('appends as app.inject does: 201 with the receipt, a replay answered as a replay, a refused body refused alike', async () => {
    const { lane, injected } = bothWays(callerOf(`Bearer ${owner.token}`));
    const path = `/v1/spaces/${space}/posts`;
    const shapes: unknown[][] = [];
    for (const api of [lane, injected]) {
      relay.clock.advance(2_100);
      const key = `lane-${shapes.length}-${postId}`;
      const first = await api.request({ method: 'POST', path, body: { kind: 'obs', title: 'in process', body: 'appended', idempotency_key: key } });
      const again = await api.request({ method: 'POST', path, body: { kind: 'obs', title: 'in process', body: 'appended', idempotency_key: key } });
      const refused = await outcome(api.request({ method: 'POST', path, body: { kind: 'obs', title: 'in process', body: 'x', colour: 'red' } }));
      const b = first.body as Record<string, unknown>;
      expect(first.status).toBe(201);
      expect((again.body as Record<string, unknown>).replayed).toBe(true);
      expect((again.body as Record<string, unknown>).post_id).toBe(b.post_id);
      shapes.push([first.status, Object.keys(b).sort(), again.status, refused]);
      // What the route stored is what any reader reads.
      const read = await call(relay, 'GET', `/v1/posts/${b.post_id as string}?proof=false`, { token: owner.token });
      expect(read.status).toBe(200);
      expect((read.body as { title: string }).title).toBe('in process');
    }
    expect(shapes[0]).toEqual(shapes[1]);
    expect(shapes[0]![3]).toMatchObject({ refused: { code: 'INVALID_REQUEST' } });
  });

  it('leaves to app.inject what no route called in process answers: bytes, a route with hooks of its own, a path the router refuses, an unknown path', async () => {
    const ctx = contextOf(relay.app);
    const at = (path: string, method = 'GET') => callRoute(relay.app, ctx, { method, path, query: '', headers: {}, body: undefined, remoteAddress: '127.0.0.1' });
    expect(await at(`/v1/spaces/${space}/files/${'0'.repeat(64)}`)).toBeUndefined();
    expect(await at('/v1/categories')).toBeUndefined();
    expect(await at('/v1/passkeys/challenge', 'POST')).toBeUndefined();
    expect(await at(`/v1/spaces/${'a'.repeat(1001)}`)).toBeUndefined();
    expect(await at('/v1/spaces/%E0%A4%A')).toBeUndefined();
    expect(await at('/v1/nothing/here/at/all')).toBeUndefined();
    expect(await at(`/v1/spaces/${space}/posts`, 'DELETE')).toBeUndefined();
    expect(await at('/healthz')).toBeUndefined();
    // And what they answer through the connector is the route's refusal, as over HTTP.
    const { lane } = bothWays(callerOf(`Bearer ${owner.token}`));
    const long = await outcome(lane.request({ path: `/v1/spaces/${'a'.repeat(1001)}` }));
    expect(long).toMatchObject({ refused: { code: 'INVALID_REQUEST', status: 400 } });
    // A route called in process has its parameter decoded as the router decodes it.
    const found = await at(`/v1/spaces/${space}`);
    expect(found?.status).toBe(200);
    expect((found?.value as { name: string }).name).toBe(space);
  });

  it("reuses the bearer's hash the connector computed, for that token's text only", async () => {
    const ctx = contextOf(relay.app);
    const me = async (authorization: string, bearer?: { token: string; hash: Uint8Array }) => {
      const res = await callRoute(relay.app, ctx, { method: 'GET', path: '/v1/me', query: '', headers: { authorization }, body: undefined, remoteAddress: '127.0.0.1', bearer });
      return (res?.value as { peer_id?: string }).peer_id;
    };
    expect(await me(`Bearer ${owner.token}`)).toBe(owner.peerId);
    // A hash given for this text is what the route looks the token up by (here, on purpose, another token's: the
    // connector only ever gives the hash of the very text, so this shows the route took it instead of hashing).
    expect(await me(`Bearer ${owner.token}`, { token: owner.token, hash: tokenHash(other.token) })).toBe(other.peerId);
    // A hash given for another text is not used: the header's own token is hashed and looked up.
    expect(await me(`Bearer ${owner.token}`, { token: other.token, hash: tokenHash(other.token) })).toBe(owner.peerId);
  });

  it('calls the literal route where the router finds one beside a parameter route of the same length', async () => {
    // DELETE /v1/tokens/current (tokens.revoke: the token in use) beside DELETE /v1/tokens/:id.
    const spare = await mintToken(relay.url, new Uint8Array(32).fill(21));
    const ctx = contextOf(relay.app);
    const revoked = await callRoute(relay.app, ctx, { method: 'DELETE', path: '/v1/tokens/current', query: '', headers: { authorization: `Bearer ${spare.token}` }, body: undefined, remoteAddress: '127.0.0.1' });
    expect(revoked?.status).toBeLessThan(300);
    const after = await call(relay, 'GET', '/v1/me', { token: spare.token });
    expect(after.status).toBe(401);
    expect((after.body as { error: { code: string } }).error.code).toBe('TOKEN_REVOKED');
  });

  it("calls in process only routes whose hooks are the app's own, so that no hook a plugin adds is passed over", () => {
    // Fastify's printout of every route with the hooks that run for it (a tree: a node's text
    // starts four columns to the right of its parent's, each method group's hooks below it).
    const text = relay.app.printRoutes({ includeHooks: true, commonPrefix: false });
    const hooks = new Map<string, Record<string, string[]>>();
    const path: string[] = [];
    let current: Record<string, string[]>[] = [];
    for (const line of text.split('\n')) {
      const route = /^(.*?)(?:[├└]── )?([^ │├└─•].*) \(([A-Z, ]+)\)$/u.exec(line);
      if (route !== null) {
        const depth = line.indexOf(route[2]!) / 4;
        path.length = depth;
        path[depth - 1] = route[2]!;
        current = route[3]!.split(', ').map((m) => {
          const own: Record<string, string[]> = {};
          hooks.set(`${m} ${path.join('')}`, own);
          return own;
        });
        continue;
      }
      const hook = /• \((\w+)\) (\[.*\])$/u.exec(line);
      if (hook !== null) for (const own of current) own[hook[1]!] = JSON.parse(hook[2]!) as string[];
    }
    expect(hooks.get('GET /v1/categories')?.onRequest).toEqual(['admitRequest()', 'onRequest()']);
    const lane = [...contextOf(relay.app).inProcessRoutes.values()].flat();
    expect(lane.length).toBeGreaterThan(60);
    for (const r of lane) {
      expect(hooks.get(`${r.method} ${r.url}`), `${r.method} ${r.url}`).toEqual({
        onRequest: ['admitRequest()'],
        preSerialization: ['keepAnswer()'],
        onSend: ['answerHeaders()'],
        onResponse: ['countAnswer()'],
      });
    }
  });

  it('refuses to call in process a route that has hooks of its own or a pattern it cannot match', () => {
    const table = new Map<string, InProcessRoute[]>();
    const handler = async () => ({});
    expect(() => addInProcessRoute(table, { method: 'GET', url: '/v1/x/:id', handler, preHandler: async () => {} }, ['GET'])).toThrow(/hooks of its own \(preHandler\)/);
    expect(() => addInProcessRoute(table, { method: 'GET', url: '/v1/x/*', handler }, ['GET'])).toThrow(/whole-segment parameters/);
    expect(() => addInProcessRoute(table, { method: 'GET', url: '/v1/x/:a-:b', handler }, ['GET'])).toThrow(/whole-segment parameters/);
    addInProcessRoute(table, { method: 'GET', url: '/v1/x/:id', handler }, ['GET']);
    expect(table.get('GET 3')?.map((r) => r.url)).toEqual(['/v1/x/:id']);
  });
});

describe('the admission of a request, in process', () => {
  it('counts unknown tokens against the address and refuses the address once its bucket is spent', async () => {
    const { lane } = bothWays(callerOf(`Bearer svc_${'1'.repeat(64)}`, '127.0.0.77'));
    const codes: string[] = [];
    for (let i = 0; i < 25; i++) codes.push(((await outcome(lane.request({ path: '/v1/me' }))) as { refused: { code: string } }).refused.code);
    expect(codes.slice(0, 20).every((c) => c === 'TOKEN_INVALID')).toBe(true);
    expect(codes.slice(20)).toContain('RATE_LIMITED');
    // Another address is not refused for it.
    const elsewhere = bothWays(callerOf(`Bearer svc_${'1'.repeat(64)}`, '127.0.0.78')).lane;
    expect(await outcome(elsewhere.request({ path: '/v1/me' }))).toMatchObject({ refused: { code: 'TOKEN_INVALID' } });
  });

  it("holds a KEY's waiting reads to their limit while a long poll waits in process, and frees its place when the call ends", async () => {
    const reader = await mintToken(relay.url);
    const own = (await newSpace(relay, reader)).name;
    const { lane } = bothWays(callerOf(`Bearer ${reader.token}`));
    const head = (await call(relay, 'GET', `/v1/spaces/${own}/posts`, { token: reader.token })).body as { next_after: string };
    const wait = { after: head.next_after, wait: 20 };
    // Two waiting reads per KEY: one over HTTP, one in process.
    const overHttp = call(relay, 'GET', `/v1/spaces/${own}/posts?after=${head.next_after}&wait=20`, { token: reader.token });
    await new Promise((r) => setTimeout(r, 200));
    const inProcess = lane.request({ path: `/v1/spaces/${own}/posts`, query: wait });
    await new Promise((r) => setTimeout(r, 200));
    expect(await outcome(lane.request({ path: `/v1/spaces/${own}/posts`, query: wait }))).toMatchObject({ refused: { code: 'BUSY', retryAfter: 1 } });
    // A post wakes both, the one in process included, and each returns it.
    await post(relay, reader, own, { kind: 'obs', title: 'wakes them', body: 'now' });
    expect(((await inProcess).body as { items: { title: string }[] }).items.map((p) => p.title)).toEqual(['wakes them']);
    expect(((await overHttp).body as { items: { title: string }[] }).items.map((p) => p.title)).toEqual(['wakes them']);
    // Both places are free again: two waits in process at once, each woken by the next post.
    const next = ((await call(relay, 'GET', `/v1/spaces/${own}/posts`, { token: reader.token })).body as { next_after: string }).next_after;
    const two = [0, 1].map(() => lane.request({ path: `/v1/spaces/${own}/posts`, query: { after: next, wait: 20 } }));
    await new Promise((r) => setTimeout(r, 200));
    await post(relay, reader, own, { kind: 'obs', title: 'and again', body: 'now' });
    for (const r of await Promise.all(two)) expect((r.body as { items: { title: string }[] }).items.map((p) => p.title)).toEqual(['and again']);
  });

  it('answers a write SERVICE_READ_ONLY while a restore holds the database, reads still served, and takes it once the restore is done', async () => {
    const { lane } = bothWays(callerOf(`Bearer ${owner.token}`));
    const path = `/v1/spaces/${space}/posts`;
    // What a restore in another process writes (relay/service-mode.ts): on SQLite through a
    // connection of its own (the relay sees it by the file's data_version), on PostgreSQL in the
    // shared database (the relay reads the state again each second).
    const db = onPostgres ? undefined : new Database(join(relay.dataDir, 'relay.sqlite'));
    const mark = async (on: boolean) => {
      if (db === undefined) await (on ? relay.store.state.set(READ_ONLY_KEY, 'test-restore') : relay.store.state.remove(READ_ONLY_KEY));
      else if (on) db.prepare('INSERT INTO service_state (key, value) VALUES (?, ?)').run(READ_ONLY_KEY, 'test-restore');
      else db.prepare('DELETE FROM service_state WHERE key = ?').run(READ_ONLY_KEY);
      await new Promise((r) => setTimeout(r, 1_100));
    };
    try {
      await mark(true);
      const refused = await outcome(lane.request({ method: 'POST', path, body: { kind: 'obs', title: 'while restoring', body: 'waits' } }));
      expect(refused).toMatchObject({ refused: { code: 'SERVICE_READ_ONLY', status: 503, retryAfter: 30 } });
      expect((await lane.request({ path: `/v1/posts/${postId}`, query: { proof: 'false' } })).status).toBe(200);
      // Through /mcp too: the tools that read are served, the write is the route's refusal as tool output.
      for (const revision of ['2026-07-28', '2025-11-25'] as const) {
        const c = await connectConnector(relay.url, { token: owner.token, revision });
        try {
          const got = await callConnector(c, 'svc_get', { post_id: postId, proof: false });
          expect(got.isError ?? false).toBe(false);
          expect((got.structuredContent as { post_id: string }).post_id).toBe(postId);
          const posted = await callConnector(c, 'svc_post', { space, kind: 'obs', title: 'while restoring', body: 'waits' });
          expect(posted.isError).toBe(true);
          expect(JSON.stringify(posted.content)).toContain('SERVICE_READ_ONLY');
        } finally {
          await c.close();
        }
      }
      await mark(false);
    } finally {
      db?.close();
    }
    relay.clock.advance(2_100);
    expect((await lane.request({ method: 'POST', path, body: { kind: 'obs', title: 'after the restore', body: 'taken' } })).status).toBe(201);
    const titles = ((await call(relay, 'GET', `${path}?order=desc&limit=5`, { token: owner.token })).body as { items: { title: string }[] }).items.map((p) => p.title);
    expect(titles).toContain('after the restore');
    expect(titles).not.toContain('while restoring');
  });
});

describe('the metrics of a call in process', () => {
  it("count it in the route's one series and in the appends", async () => {
    const scrape = async () => (await call(relay, 'GET', '/metrics', { headers: { authorization: `Bearer ${SECRET}` } })).text;
    const appended = (text: string) => Number(/^svc_relay_appends_total\{outcome="accepted"\} (\d+)/m.exec(text)?.[1] ?? Number.NaN);
    const before = await scrape();
    const { lane } = bothWays(callerOf(`Bearer ${owner.token}`));
    relay.clock.advance(2_100);
    expect((await lane.request({ method: 'POST', path: `/v1/spaces/${space}/posts`, body: { kind: 'obs', title: 'counted', body: 'once' } })).status).toBe(201);
    await post(relay, owner, space, { kind: 'obs', title: 'counted over HTTP', body: 'once' });
    const after = await scrape();
    expect(appended(after) - appended(before)).toBe(2);
    const series = after.split('\n').filter((l) => l.startsWith('svc_relay_http_request_duration_seconds_count{') && l.includes('route="/v1/spaces/:name/posts"') && l.includes('method="POST"'));
    expect(series).toHaveLength(1);
    const counted = (text: string) => Number(/ (\d+)$/.exec(text.split('\n').find((l) => l.startsWith('svc_relay_http_request_duration_seconds_count{') && l.includes('route="/v1/spaces/:name/posts"') && l.includes('method="POST"')) ?? '')?.[1] ?? 0);
    expect(counted(after) - counted(before)).toBe(2);
  });
});
