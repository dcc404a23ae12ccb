/**
 * One generated request per draw for a route of the relay: its method (now and then another
 * one), its address with each path parameter the world's value or something else, a query
 * built from the parameters the route declares plus unknown ones and undecodable bytes, headers
 * (who signs in, content type, accept, conditional and connector headers) and a body
 * (bodies.ts). Routes come from /openapi.json, which the relay generates from every route it
 * registered, named or not.
 */
import fc from 'fast-check';
import { bodyArbitrary, rpcBodyArbitrary, type ConnectorSurface } from './bodies.js';
import { anyText, EDGE_STRINGS, type Json } from './values.js';

export interface FuzzRoute {
  /** The operation's name, or `METHOD path` for a route that names none. */
  name: string;
  method: string;
  /** The template, `{param}` for each path parameter. */
  path: string;
  query: string[];
  bodySchema?: Json | undefined;
}

/** Every route /openapi.json describes. */
export function routesOf(openapi: Json): FuzzRoute[] {
  const out: FuzzRoute[] = [];
  for (const [path, item] of Object.entries(openapi.paths as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const params = (op.parameters ?? []) as { name: string; in: string }[];
      const content = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
      out.push({
        name: typeof op['x-svc-operation'] === 'string' ? op['x-svc-operation'] : `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        query: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodySchema: content?.schema as Json | undefined,
      });
    }
  }
  return out;
}

/** Who the request says it is: resolved to a header at send time, as tokens may be renewed. */
export type AuthChoice = 'owner' | 'writer' | 'none' | 'unknown' | 'malformed' | 'basic' | 'owner-twice' | 'owner-upper';

export interface FuzzRequest {
  method: string;
  url: string;
  auth: AuthChoice;
  headers: Record<string, string>;
  payload?: string | undefined;
}

/** What the request arbitrary needs from the world. */
export interface RequestContext {
  /** The world's value of each path parameter. */
  pathValues: Record<string, string>;
  /** Values worth sending in a query (peer ids, post ids, SPACE names, cursors). */
  queryValues: string[];
  sample?: Json | undefined;
  components: Json;
  surface: ConnectorSurface;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** A path segment that is not the world's value, already as it goes on the wire. */
const otherSegment: fc.Arbitrary<string> = fc.oneof(
  anyText.map((t) => encodeURIComponent(t.replace(/[\ud800-\udfff]/g, 'x'))),
  fc.constantFrom('%', '%zz', '%ff', '%c0%af', '%ed%a0%80', '%2e%2e', '..', '.', '%2F', 'a%20b', '%00', 'x'.repeat(600)),
);

function segment(value: string | undefined): fc.Arbitrary<string> {
  if (value === undefined) return otherSegment;
  return fc.oneof(
    { arbitrary: fc.constant(value), weight: 12 },
    { arbitrary: fc.constant(value.toUpperCase()), weight: 1 },
    { arbitrary: fc.constantFrom(`${value}x`, value.slice(0, -1), `${value}%20`), weight: 1 },
    { arbitrary: otherSegment, weight: 3 },
  );
}

function pathArbitrary(template: string, values: Record<string, string>): fc.Arbitrary<string> {
  const parts = template.split(/(\{[a-z_]+\})/);
  return fc.tuple(...parts.map((p) => (p.startsWith('{') ? segment(values[p.slice(1, -1)]) : fc.constant(p)))).map((xs) => xs.join(''));
}

/**
 * A query: declared parameters with values that fit or not, unknown parameters, repeats, and
 * raw bytes that do not decode. A positive `wait` is sent as 0, so nothing waits (long polls
 * are the subject of their own tests).
 */
function queryArbitrary(names: string[], values: string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    { arbitrary: fc.constantFrom(...EDGE_STRINGS, ...values, '0', '1', '10', '100', '1000', 'full', 'brief', 'asc', 'desc', 'markdown', 'json'), weight: 4 },
    { arbitrary: anyText, weight: 2 },
  );
  const key = names.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...names), weight: 5 }, { arbitrary: anyText, weight: 1 }) : anyText;
  const pair = fc.tuple(key, value).map(([k, v]) => (k === 'wait' && /^[1-9]/.test(v) ? [k, '0'] : [k, v]));
  const encoded = fc.array(pair, { maxLength: 5 }).map((ps) =>
    ps.map(([k, v]) => `${encodeURIComponent(k!.replace(/[\ud800-\udfff]/g, 'x'))}=${encodeURIComponent(v!.replace(/[\ud800-\udfff]/g, 'x'))}`).join('&'),
  );
  const raw = fc.constantFrom('%', 'a=%ff', 'a=%zz', '&&==&', 'a[b]=1', 'limit=1&limit=2', 'x=%ed%a0%80', '=', `q=${'z'.repeat(3000)}`);
  return fc.oneof({ arbitrary: fc.constant(''), weight: 6 }, { arbitrary: encoded, weight: 4 }, { arbitrary: raw, weight: 1 }).map((q) => (q === '' ? '' : `?${q}`));
}

const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
  { arbitrary: fc.constant<AuthChoice>('owner'), weight: 10 },
  { arbitrary: fc.constantFrom<AuthChoice>('writer', 'none', 'unknown', 'malformed', 'basic', 'owner-twice', 'owner-upper'), weight: 4 },
);

function headerArbitrary(connector: boolean): fc.Arbitrary<Record<string, string>> {
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 12 },
    { arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/JSON', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', ''), weight: 2 },
  );
  const accept = connector
    ? fc.oneof({ arbitrary: fc.constant('application/json, text/event-stream'), weight: 8 }, { arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html', ''), weight: 2 })
    : fc.constantFrom(undefined, undefined, 'application/json', 'text/markdown', 'text/html', '*/*', 'application/x-ndjson', 'text/markdown;q=0.1, application/json', '');
  // Each extra header now and then; the connector's protocol version mostly a known one.
  const now = <T>(x: fc.Arbitrary<T>, weight = 1) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 - weight }, { arbitrary: x, weight });
  const extra = fc
    .record({
      'if-none-match': now(fc.constantFrom('*', '"x"', 'W/"1"', '')),
      'mcp-protocol-version': connector ? now(fc.constantFrom('2025-11-25', '2026-07-28', '2025-11-25', '2026-07-28', '2025-06-18', 'junk'), 7) : now(fc.constant('junk')),
      'mcp-session-id': now(fc.constantFrom('x', '00000000-0000-0000-0000-000000000000')),
      origin: now(fc.constantFrom('http://127.0.0.1', 'https://evil.example', 'null')),
      'x-forwarded-for': now(fc.constantFrom('10.0.0.1', '::1', 'junk')),
    })
    .map((h) => Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>);
  return fc.tuple(contentType, accept, extra).map(([ct, acc, ex]) => {
    const h: Record<string, string> = { ...ex };
    if (!connector) delete h['mcp-session-id'];
    if (ct !== '') h['content-type'] = ct;
    if (acc !== undefined && acc !== '') h.accept = acc;
    return h;
  });
}

/** The request arbitrary of one route. */
export function requestArbitrary(route: FuzzRoute, ctx: RequestContext): fc.Arbitrary<FuzzRequest> {
  const connector = route.path === '/mcp' || route.path === '/mcp/connect';
  const write = route.method !== 'GET' && route.method !== 'HEAD' && route.method !== 'OPTIONS';
  const method = fc.oneof({ arbitrary: fc.constant(route.method), weight: 15 }, { arbitrary: fc.constantFrom(...METHODS), weight: 1 });
  const body = connector && route.method === 'POST' ? rpcBodyArbitrary(ctx.surface) : bodyArbitrary({ sample: ctx.sample, schema: route.bodySchema, components: ctx.components }, write);
  return fc
    .record({
      method,
      path: pathArbitrary(route.path, ctx.pathValues),
      query: queryArbitrary(route.query, ctx.queryValues),
      auth: authChoice,
      headers: headerArbitrary(connector),
      payload: body,
    })
    .map((r) => {
      const headers = { ...r.headers };
      if (r.payload === undefined) delete headers['content-type'];
      return { method: r.method, url: `${r.path}${r.query}`, auth: r.auth, headers, payload: r.payload };
    });
}
