/**
 * Generated JSON-RPC requests for the connector's own methods (fast-check), by method: the
 * params a method takes near their shape (every tool by name with arguments from its input
 * schema, every resource address and template filled with generated parts, every prompt with
 * generated arguments) and far from it (values of any JSON type where an object, a string or a
 * string map belongs), at either protocol revision: 2025-11-25 as a bare request, 2026-07-28
 * with the per-request envelope in `_meta` and the `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name` headers a client sends (sometimes broken too), and now and then as a 2025-11-25
 * batch. A tool's `wait` is always 0: a fuzz request must answer at once.
 */
import fc from 'fast-check';
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { anyJson, anyText, edgeValue, fromSchema, type Json } from './values.js';

export type Revision = '2025-11-25' | '2026-07-28';

/** What the connector serves, read from its own lists. */
export interface RpcSurface {
  tools: { name: string; inputSchema: Json }[];
  resources: string[];
  templates: string[];
  prompts: { name: string; arguments: string[] }[];
  /** Names and ids of the test's world, to fill addresses and arguments with things that exist. */
  known: string[];
}

export interface RpcRequest {
  method: string;
  params: unknown;
  revision: Revision;
  /** Headers beside the body (the 2026-07-28 standard headers, as sent or broken). */
  headers: Record<string, string>;
  body: string;
}

/** A value of any JSON type, often one that is not the type a field takes. */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(edgeValue, anyJson);

/** An object of generated members (or, sometimes, not an object at all). */
const looseObject: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.dictionary(anyText, anyJson, { maxKeys: 3 }), weight: 3 },
  { arbitrary: wrongType, weight: 1 },
);

function text(known: readonly string[]): fc.Arbitrary<string> {
  return known.length === 0 ? anyText : fc.oneof(fc.constantFrom(...known), anyText);
}

/** An address: a resource, a template with its parts filled, or any text. */
function uri(s: RpcSurface): fc.Arbitrary<unknown> {
  const part = fc.oneof(text(s.known), fc.string({ maxLength: 12 }).map(encodeURIComponent), fc.constantFrom('%', '%E0%A4%A', '..', '', '%2F'));
  const filled = fc.tuple(fc.constantFrom(...s.templates), part).map(([t, p]) => t.replace(/\{[^}]+\}/g, p));
  return fc.oneof(
    { arbitrary: fc.constantFrom(...s.resources), weight: 3 },
    { arbitrary: filled, weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...s.resources), anyText).map(([r, t]) => `${r}${t}`), weight: 1 },
    { arbitrary: anyText, weight: 1 },
    { arbitrary: wrongType, weight: 1 },
  );
}

function toolArguments(tool: { name: string; inputSchema: Json }, s: RpcSurface): fc.Arbitrary<unknown> {
  const props = Object.keys((tool.inputSchema.properties ?? {}) as Json);
  const near = fc.oneof(
    fromSchema(tool.inputSchema, {}),
    fc.dictionary(props.length > 0 ? fc.constantFrom(...props) : anyText, fc.oneof(text(s.known), wrongType), { maxKeys: 4 }),
  );
  return fc.oneof({ arbitrary: near, weight: 5 }, { arbitrary: looseObject, weight: 1 }).map((a) =>
    a !== null && typeof a === 'object' && !Array.isArray(a) ? { ...(a as Json), wait: 0 } : a,
  );
}

/** The params of `method`, near its shape and far from it. */
export function paramsOf(method: string, s: RpcSurface, tool?: string): fc.Arbitrary<unknown> {
  switch (method) {
    case 'initialize': {
      const version = fc.constantFrom('2025-11-25', '2025-06-18', '2024-11-05', '2026-07-28', '1999-01-01');
      const clientInfo = fc.constant({ name: 'fuzz', version: '1' });
      return fc.oneof(
        { arbitrary: fc.record({ protocolVersion: version, capabilities: fc.constant({}), clientInfo }), weight: 2 },
        {
          arbitrary: fc.record(
            {
              protocolVersion: fc.oneof(version, wrongType),
              capabilities: fc.oneof(fc.constant({}), fc.record({ roots: looseObject, sampling: looseObject, elicitation: looseObject }, { requiredKeys: [] }), wrongType),
              clientInfo: fc.oneof(clientInfo, fc.record({ name: wrongType, version: wrongType }, { requiredKeys: [] }), wrongType),
            },
            { requiredKeys: [] },
          ),
          weight: 3,
        },
      );
    }
    case 'tools/call': {
      const t = s.tools.find((x) => x.name === tool) ?? { name: tool ?? 'none', inputSchema: {} };
      return fc.record({ name: fc.oneof({ arbitrary: fc.constant(t.name), weight: 8 }, { arbitrary: wrongType, weight: 1 }), arguments: toolArguments(t, s) }, { requiredKeys: ['name'] });
    }
    case 'resources/read':
      return fc.record({ uri: uri(s) }, { requiredKeys: [] });
    case 'prompts/get': {
      const prompt = fc.constantFrom(...s.prompts);
      return prompt.chain((p) =>
        fc.record(
          {
            name: fc.oneof({ arbitrary: fc.constant(p.name), weight: 8 }, { arbitrary: wrongType, weight: 1 }),
            arguments: fc.oneof(
              { arbitrary: fc.dictionary(p.arguments.length > 0 ? fc.constantFrom(...p.arguments) : anyText, text(s.known), { maxKeys: 4 }), weight: 3 },
              { arbitrary: fc.dictionary(anyText, fc.oneof(text(s.known), wrongType), { maxKeys: 4 }), weight: 2 },
              { arbitrary: wrongType, weight: 1 },
            ),
          },
          { requiredKeys: ['name'] },
        ),
      );
    }
    case 'resources/list':
    case 'resources/templates/list':
    case 'tools/list':
    case 'prompts/list':
      return fc.oneof(fc.constant(undefined), fc.record({ cursor: fc.oneof(anyText, wrongType) }, { requiredKeys: [] }), looseObject);
    case 'subscriptions/listen':
      return fc.oneof(
        fc.record({ notifications: fc.oneof(fc.record({ resourceSubscriptions: fc.oneof(fc.array(uri(s), { maxLength: 3 }), wrongType) }, { requiredKeys: [] }), wrongType) }, { requiredKeys: [] }),
        looseObject,
      );
    default:
      return fc.oneof(fc.constant(undefined), looseObject);
  }
}

/** The 2026-07-28 per-request envelope in `_meta` (sometimes broken). */
const envelope: fc.Arbitrary<Json> = fc.oneof(
  { arbitrary: fc.constant({ [PROTOCOL_VERSION_META_KEY]: '2026-07-28', [CLIENT_INFO_META_KEY]: { name: 'fuzz', version: '1' }, [CLIENT_CAPABILITIES_META_KEY]: {} }), weight: 8 },
  {
    arbitrary: fc.record({ [PROTOCOL_VERSION_META_KEY]: fc.oneof(fc.constant('2026-07-28'), wrongType), [CLIENT_INFO_META_KEY]: wrongType, [CLIENT_CAPABILITIES_META_KEY]: wrongType }, { requiredKeys: [] }),
    weight: 2,
  },
);

/** A header value as a client writes `Mcp-Name`: plain ASCII as it is, anything else in the Base64 sentinel. */
function headerValue(v: string): string {
  return /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(v) && !v.startsWith('=?base64?') ? v : `=?base64?${Buffer.from(v, 'utf8').toString('base64')}?=`;
}

const NAME_SOURCE: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** One request of `method` (a tools/call of `tool`) at a generated revision. */
export function rpcRequest(method: fc.Arbitrary<string>, s: RpcSurface, tool?: string): fc.Arbitrary<RpcRequest> {
  return fc
    .tuple(method, fc.constantFrom<Revision>('2025-11-25', '2026-07-28'), fc.oneof(fc.nat(), fc.string({ maxLength: 5 })), fc.nat({ max: 19 }))
    .chain(([m, revision, id, quirk]) =>
      fc.tuple(paramsOf(m, s, tool), envelope).map(([p, env]): RpcRequest => {
        let params = p;
        const headers: Record<string, string> = { 'mcp-protocol-version': revision };
        if (revision === '2026-07-28') {
          const isObject = params !== null && typeof params === 'object' && !Array.isArray(params);
          if (params === undefined || isObject) params = { ...((params ?? {}) as Json), _meta: env };
          headers['mcp-method'] = headerValue(quirk === 0 ? `${m}x` : m);
          const field = NAME_SOURCE[m];
          const named = field !== undefined && isObject ? (params as Json)[field] : undefined;
          if (typeof named === 'string' && quirk !== 1) headers['mcp-name'] = headerValue(named);
        }
        const message = { jsonrpc: '2.0', id, method: m, ...(params === undefined ? {} : { params }) };
        // Now and then a 2025-11-25 batch, which the SDK still takes there, with a ping beside it.
        const batch = revision === '2025-11-25' && quirk === 2;
        const body = JSON.stringify(batch ? [message, { jsonrpc: '2.0', id: `${String(id)}-ping`, method: 'ping' }] : message);
        return { method: m, params, revision, headers, body };
      }),
    );
}
