/**
 * The relay's route fuzz (see test/relay/fuzz-1.test.ts for what it checks), split so that its
 * parts run in two files, on both of a run's workers at once: each part takes every `of`-th route
 * of the relay's listing, from its own relay and world, and the parts together take every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type RunningRelay } from '../relay.js';
import { registeredRoutes } from '../routes.js';
import { call } from '../spaces.js';
import { buildWorld, pathValues, sampleBody, type Operation, type World } from './world.js';
import { requestArbitrary, routesOf, type FuzzRoute } from './requests.js';
import type { ConnectorSurface } from './bodies.js';
import { createDriver, type RouteResult } from './drive.js';
import type { Json } from './values.js';

const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 500);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? undefined : Number(process.env.SVC_FUZZ_SEED);

/** The connector's tools and resources, read from its own tools/list and resources/list. */
async function connectorSurface(relay: RunningRelay, world: World): Promise<ConnectorSurface> {
  const ask = async (method: string) => {
    const r = await relay.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${world.owner.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
    });
    const line = r.body.split('\n').find((l) => l.startsWith('data: '));
    return JSON.parse(line === undefined ? r.body : line.slice(6)).result;
  };
  const tools = (await ask('tools/list'))?.tools ?? [];
  const resources = ((await ask('resources/list'))?.resources ?? []).map((x: { uri: string }) => x.uri);
  return { tools, resources };
}

/** Registers the fuzz of part `part` (from 1) of `of`: its routes, and the checks around them. */
export function routeFuzz(part: number, of: number): void {
  let relay: RunningRelay;
  let world: World;
  let openapi: Json;
  let routes: FuzzRoute[];

  beforeAll(async () => {
    relay = await startRelay({ rateLimits: false });
    world = await buildWorld(relay);
    openapi = JSON.parse((await relay.app.inject({ method: 'GET', url: '/openapi.json' })).body);
    routes = routesOf(openapi);
  }, 60_000);
  afterAll(async () => {
    await relay.close();
  });

  describe(`generated requests to every route, part ${part} of ${of}`, () => {
    it('cover every route the router registered, the parts together', () => {
      const fuzzed = new Set(routes.map((r) => `${r.method} ${r.path}`));
      const missing = registeredRoutes(relay.app).filter((r) => !fuzzed.has(`${r.method} ${r.path}`));
      expect(missing).toEqual([]);
      expect(routes.length).toBeGreaterThan(100);
    });

    it(`are answered in form, never a 5xx, a hang or a leak, and a refusal writes nothing (${RUNS} per route)`, async () => {
      const surface = await connectorSurface(relay, world);
      expect(surface.tools.length).toBeGreaterThan(5);
      const components = ((openapi.components as Json).schemas ?? {}) as Json;
      const queryValues = [world.space, world.sealed.name, world.postId, world.writer.peerId, world.owner.peerId, world.inviteCode, '1', '0'];
      const driver = await createDriver(relay, world);
      const results: { route: FuzzRoute; result: RouteResult }[] = [];
      const mine = routes.filter((_, i) => i % of === part - 1);
      for (const route of mine) {
        const op: Operation = { name: route.name, method: route.method, path: route.path, auth: '' };
        const arb = requestArbitrary(route, { pathValues: pathValues(world, op), queryValues, sample: sampleBody(world, op), components, surface });
        const result = await driver.run(route.name, arb, RUNS, SEED);
        results.push({ route, result });
        if (process.env.SVC_FUZZ_PROGRESS) process.stderr.write(`${route.method} ${route.path} ${result.ms.toFixed(0)} ms ${JSON.stringify(result.statuses)}${result.failure ? ' FAILED' : ''}\n`);
      }
      const total = results.reduce((n, r) => n + r.result.sent, 0);
      const ms = results.reduce((n, r) => n + r.result.ms, 0);
      const slowest = [...results].sort((a, b) => b.result.ms - a.result.ms).slice(0, 5);
      console.log(
        `fuzz, part ${part} of ${of}: ${mine.length} of ${routes.length} routes, ${RUNS} per route, ${total} requests in ${(ms / 1000).toFixed(1)} s (${((ms / total) * 1000).toFixed(0)} µs each); slowest: ${slowest
          .map((r) => `${r.route.name} ${(r.result.ms / 1000).toFixed(1)} s`)
          .join(', ')}`,
      );
      expect(results.filter((r) => r.result.failure !== undefined).map((r) => `${r.route.method} ${r.route.path} (${r.route.name}):\n${r.result.failure}`)).toEqual([]);
      expect(total).toBeGreaterThanOrEqual(RUNS * mine.length);
    }, 3_600_000);

    it('leave the relay up: /healthz answers and a post is still taken', async () => {
      const health = await relay.app.inject({ method: 'GET', url: '/healthz' });
      expect([200, 503]).toContain(health.statusCode);
      const fresh = await mintToken(relay.url);
      const space = await call(relay, 'POST', '/v1/spaces', { token: fresh.token, body: { name: `after-fuzz-${part}-${process.pid}` } });
      expect(space.status).toBe(201);
      const post = await call(relay, 'POST', `/v1/spaces/after-fuzz-${part}-${process.pid}/posts`, { token: fresh.token, body: { kind: 'obs', body: 'still here' } });
      expect(post.status).toBe(201);
    });
  });
}
