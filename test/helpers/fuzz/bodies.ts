/**
 * Generated request bodies: a well-formed sample mutated one field at a time, values built from
 * the route's body schema, other JSON, and JSON text broken in the ways strict parsers must
 * refuse (truncated, a repeated member, nesting past 64, NUL and lone-surrogate escapes, a huge
 * integer, a byte-order mark, bytes after the value, over the request limit). The connector's
 * bodies are JSON-RPC messages built from its own tool list.
 */
import fc from 'fast-check';
import { anyJson, anyText, edgeValue, fromSchema, type Json } from './values.js';

/** Break JSON text `t` in one of the ways a strict reader must refuse. */
const textMutation: fc.Arbitrary<(t: string, at: number) => string> = fc.constantFrom(
  (t: string, at: number) => t.slice(0, at % Math.max(1, t.length)),
  (t: string) => (t.startsWith('{') && t.length > 2 ? `{"a":1,"a":2,${t.slice(1)}` : `{"a":1,"a":2}`),
  () => `${'['.repeat(70)}${']'.repeat(70)}`,
  () => `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`,
  (t: string) => (t.startsWith('{') && t.length > 2 ? `{"x_nul":"a\\u0000b",${t.slice(1)}` : '"\\u0000"'),
  (t: string) => (t.startsWith('{') && t.length > 2 ? `{"x_s":"\\ud800",${t.slice(1)}` : '"\\udfff"'),
  (t: string) => (t.startsWith('{') && t.length > 2 ? `{"n":123456789012345678901234567890,${t.slice(1)}` : '1e999'),
  (t: string) => `\ufeff${t}`,
  (t: string) => `${t} trailing`,
  (t: string) => `${t}${t}`,
  (t: string, at: number) => `${t.slice(0, at % Math.max(1, t.length))}\u0000${t.slice(at % Math.max(1, t.length))}`,
  () => '',
  () => 'null',
  () => '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}',
);

/** JSON text of a value and a broken form of it. */
function brokenText(value: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc
    .tuple(value, textMutation, fc.nat())
    .map(([v, mutate, at]) => mutate(JSON.stringify(v) ?? 'null', at));
}

/** `sample` with one member replaced, removed, or one added. */
function mutatedSample(sample: Json, schema: Json | undefined, components: Json): fc.Arbitrary<unknown> {
  const keys = Object.keys(sample);
  const props = ((schema?.properties ?? {}) as Record<string, Json>);
  const replaced = fc.tuple(fc.constantFrom(...keys), fc.nat()).chain(([k, n]) => {
    const byField = k in props ? [fromSchema(props[k]!, components)] : [];
    return fc.oneof(edgeValue, anyJson, anyText, ...byField).map((v) => ({ ...sample, [k]: v, ...(n % 7 === 0 ? { zz_unknown: v } : {}) }));
  });
  const removed = fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(sample).filter(([x]) => x !== k)));
  const added = fc.tuple(anyText, anyJson).map(([k, v]) => ({ ...sample, [k]: v }));
  return keys.length === 0 ? added : fc.oneof({ arbitrary: replaced, weight: 5 }, { arbitrary: removed, weight: 1 }, { arbitrary: added, weight: 1 });
}

/** A body just over the request limit (256 KiB) or the content limit (64 KiB). */
const oversized: fc.Arbitrary<string> = fc.constantFrom(64 * 1024 + 10, 256 * 1024 + 10).map((n) => JSON.stringify({ kind: 'obs', body: 'a'.repeat(n) }));

export interface BodySource {
  /** A well-formed body from the world, when the operation reads one. */
  sample?: Json | undefined;
  /** The body's JSON Schema from /openapi.json, when the route declares one. */
  schema?: Json | undefined;
  components: Json;
}

/**
 * Bodies for a route, as text (undefined: no body). A write gets mostly JSON near the sample or
 * the schema; a read now and then gets a body it does not take.
 */
export function bodyArbitrary(src: BodySource, write: boolean): fc.Arbitrary<string | undefined> {
  const near: fc.Arbitrary<unknown>[] = [];
  if (src.sample !== undefined) near.push(fc.constant(src.sample), mutatedSample(src.sample, src.schema, src.components), mutatedSample(src.sample, src.schema, src.components));
  if (src.schema !== undefined && Object.keys(src.schema).length > 0) near.push(fromSchema(src.schema, src.components));
  if (near.length === 0) near.push(fc.dictionary(anyText, anyJson, { maxKeys: 4 }));
  const json = fc.oneof(...near).map((v) => JSON.stringify(v));
  if (!write) {
    return fc.oneof({ arbitrary: fc.constant(undefined), weight: 8 }, { arbitrary: json, weight: 1 }, { arbitrary: brokenText(anyJson), weight: 1 });
  }
  return fc.oneof(
    { arbitrary: json, weight: 12 },
    { arbitrary: brokenText(fc.oneof(...near)), weight: 4 },
    { arbitrary: anyJson.map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 1 },
    { arbitrary: oversized, weight: 1 },
  );
}

/** What the connector's bodies are built from: its tools (name and input schema) and resources. */
export interface ConnectorSurface {
  tools: { name: string; inputSchema: Json }[];
  resources: string[];
}

const RPC_METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'prompts/list',
  'prompts/get',
  'server/discover',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
];

/**
 * One JSON-RPC message to the connector. A tool's `wait` is always 0: a fuzz request must answer
 * at once, and waiting is the long-poll tests' subject. `subscriptions/listen` is left out for
 * the same reason (a live stream stays open).
 */
function rpcMessage(surface: ConnectorSurface): fc.Arbitrary<unknown> {
  const toolCall = fc
    .tuple(
      surface.tools.length > 0 ? fc.constantFrom(...surface.tools) : fc.constant({ name: 'none', inputSchema: {} }),
      fc.nat(),
    )
    .chain(([tool, n]) =>
      fc.oneof(fromSchema(tool.inputSchema, {}), fc.dictionary(anyText, anyJson, { maxKeys: 3 })).map((args) => {
        const a = args !== null && typeof args === 'object' && !Array.isArray(args) ? { ...(args as Json), wait: 0 } : args;
        return { name: n % 11 === 0 ? `${tool.name}x` : tool.name, arguments: a };
      }),
    );
  const params = (method: string): fc.Arbitrary<unknown> => {
    switch (method) {
      case 'tools/call':
        return toolCall;
      case 'initialize':
        return fc.record({ protocolVersion: fc.constantFrom('2025-11-25', '2026-07-28', '2025-06-18', '1999-01-01'), capabilities: fc.constant({}), clientInfo: fc.constant({ name: 'fuzz', version: '1' }) });
      case 'resources/read':
        return fc.record({ uri: surface.resources.length > 0 ? fc.oneof(fc.constantFrom(...surface.resources), anyText) : anyText });
      default:
        return fc.oneof(fc.constant(undefined), fc.constant({}), fc.dictionary(anyText, anyJson, { maxKeys: 2 }));
    }
  };
  return fc
    .tuple(fc.oneof({ arbitrary: fc.constantFrom(...RPC_METHODS), weight: 6 }, { arbitrary: anyText, weight: 1 }), fc.oneof(fc.nat(), fc.string({ maxLength: 5 }), fc.constant(null), fc.constant(undefined)), fc.constantFrom('2.0', '2.0', '2.0', '1.0'))
    .chain(([method, id, jsonrpc]) => params(method).map((p) => ({ jsonrpc, id, method, ...(p === undefined ? {} : { params: p }) })));
}

/** Bodies for POST /mcp and /mcp/connect: JSON-RPC messages, batches, and broken text. */
export function rpcBodyArbitrary(surface: ConnectorSurface): fc.Arbitrary<string | undefined> {
  const msg = rpcMessage(surface);
  return fc.oneof(
    { arbitrary: msg.map((m) => JSON.stringify(m)), weight: 10 },
    { arbitrary: fc.array(msg, { minLength: 1, maxLength: 3 }).map((m) => JSON.stringify(m)), weight: 1 },
    { arbitrary: brokenText(msg), weight: 3 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}
