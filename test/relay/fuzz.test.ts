/**
 * Property-based fuzz of every route of the relay (fast-check), in process through Fastify's
 * `inject`: the real app on a real SQLite file, with the world of the bad-input sweep in it
 * (test/helpers/fuzz/world.ts). Routes are read from /openapi.json, which the relay generates
 * from every route it registered, and checked against the router's own listing so none is
 * missed. Each route gets `SVC_FUZZ_RUNS` generated requests: 500 in `npm test` (about 62,000
 * requests, a quarter of the time), 300 in `npm run test:postgres`, and 2,000 with `npm run fuzz`
 * (about 246,000 requests, 96 s alone on two cores), which CI runs as well and which also prints
 * each route's time and answers as it goes. A request is its address with
 * parameters from the world or not, a query from its declared parameters and others, headers (who signs in, media types, connector headers) and a body near
 * a well-formed sample or built from the route's body schema, or broken (test/helpers/fuzz/).
 *
 * Every answer: never a 5xx (only /healthz's own 503 shape), never another KEY's secret, every
 * refusal in its form (the catalogue envelope at its status with the X-Request-Id; OAuth's shape
 * at register and token; JSON-RPC errors at the connector), never a hang, and no written table
 * changed by a refusal. Rate limits are off, so every answer is about the input. Afterwards the
 * relay still answers /healthz and takes a post. `SVC_FUZZ_SEED` replays a run.
 *
 * @module-tag slow
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, startRelay, type RunningRelay } from '../helpers/relay.js';
import { registeredRoutes } from '../helpers/routes.js';
import { call } from '../helpers/spaces.js';
import { buildWorld, pathValues, sampleBody, type Operation, type World } from '../helpers/fuzz/world.js';
import { requestArbitrary, routesOf, type FuzzRoute } from '../helpers/fuzz/requests.js';
import type { ConnectorSurface } from '../helpers/fuzz/bodies.js';
import { createDriver, type RouteResult } from '../helpers/fuzz/drive.js';
import type { Json } from '../helpers/fuzz/values.js';

const RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 500);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? undefined : Number(process.env.SVC_FUZZ_SEED);

let relay: RunningRelay;
let world: World;
let openapi: Json;
let routes: FuzzRoute[];

/** The connector's tools and resources, read from its own tools/list and resources/list. */
async function connectorSurface(): Promise<ConnectorSurface> {
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

beforeAll(async () => {
  relay = await startRelay({ rateLimits: false });
  world = await buildWorld(relay);
  openapi = JSON.parse((await relay.app.inject({ method: 'GET', url: '/openapi.json' })).body);
  routes = routesOf(openapi);
}, 60_000);
afterAll(async () => {
  await relay.close();
});

describe('generated requests to every route', () => {
  it('cover every route the router registered', () => {
    const fuzzed = new Set(routes.map((r) => `${r.method} ${r.path}`));
    const missing = registeredRoutes(relay.app).filter((r) => !fuzzed.has(`${r.method} ${r.path}`));
    expect(missing).toEqual([]);
    expect(routes.length).toBeGreaterThan(100);
  });

  it(`are answered in form, never a 5xx, a hang or a leak, and a refusal writes nothing (${RUNS} per route)`, async () => {
    const surface = await connectorSurface();
    expect(surface.tools.length).toBeGreaterThan(5);
    const components = ((openapi.components as Json).schemas ?? {}) as Json;
    const queryValues = [world.space, world.sealed.name, world.postId, world.writer.peerId, world.owner.peerId, world.inviteCode, '1', '0'];
    const driver = await createDriver(relay, world);
    const results: { route: FuzzRoute; result: RouteResult }[] = [];
    for (const route of routes) {
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
      `fuzz: ${routes.length} routes, ${RUNS} per route, ${total} requests in ${(ms / 1000).toFixed(1)} s (${((ms / total) * 1000).toFixed(0)} µs each); slowest: ${slowest
        .map((r) => `${r.route.name} ${(r.result.ms / 1000).toFixed(1)} s`)
        .join(', ')}`,
    );
    expect(results.filter((r) => r.result.failure !== undefined).map((r) => `${r.route.method} ${r.route.path} (${r.route.name}):\n${r.result.failure}`)).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(RUNS * routes.length);
  }, 3_600_000);

  it('leave the relay up: /healthz answers and a post is still taken', async () => {
    const health = await relay.app.inject({ method: 'GET', url: '/healthz' });
    expect([200, 503]).toContain(health.statusCode);
    const fresh = await mintToken(relay.url);
    const space = await call(relay, 'POST', '/v1/spaces', { token: fresh.token, body: { name: `after-fuzz-${process.pid}` } });
    expect(space.status).toBe(201);
    const post = await call(relay, 'POST', `/v1/spaces/after-fuzz-${process.pid}/posts`, { token: fresh.token, body: { kind: 'obs', body: 'still here' } });
    expect(post.status).toBe(201);
  });
});
