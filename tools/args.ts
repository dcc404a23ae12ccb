/**
 * A tool's argument object: strict (an argument the tool does not take is refused, never
 * ignored), and the refusal names every argument the tool takes, so an agent that guessed a
 * name (`space_name`, `query`) can correct the call from the error alone. The MCP SDK checks
 * arguments before the tool runs and sends zod's messages back as the tool error's text.
 *
 * `jsonValue` and `jsonObject` describe free JSON an argument carries (a post's `data`): every
 * JSON value, with the protocol's number rule (spec/1-concepts.md "Encoding": a non-finite number
 * and an integer beyond ±(2^53 − 1) are refused anywhere). Its listing is `{"type":"object"}`:
 * a JSON object of any members, which is what it takes, without a recursive schema every
 * tools/list would pay for.
 *
 * `depthBounded` puts a nesting limit in front of such a schema: zod walks free JSON by
 * recursion and overflows the stack at about 1,500 levels, which the agent would see only as
 * "Maximum call stack size exceeded". The depth is measured first, with a loop, and a value
 * deeper than the limit is refused before the recursive schema sees it. Arguments are
 * attacker-controlled input as much as a request body is.
 *
 * The listing (`listedSchema`): what tools/list shows of an argument schema is the zod schema's
 * JSON Schema (2020-12, the dialect MCP takes when a schema names none, at both revisions the
 * SDK serves), made lean: no `$schema` (the default dialect), no string lengths or patterns, no
 * `minItems` of 1 and no `maximum` of 2^53 − 1 (zod still checks every bound, its refusal names
 * the one broken, and svc_guide part=tools lists them all; the server's instructions say what
 * ids and positions look like), a post id as `format: uuid`. Types, enums, required members,
 * integer ranges and list sizes stay: what a client or a model needs to make a valid call.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { JsonObject, JsonValue } from '../shared/canonical.js';
import { JSON_DEPTH_MAX } from '../shared/limits.js';

/** A tool's argument object of the members `shape` makes (see the header), built when first used (`lazyArgs`). */
export function toolArgs<S extends z.ZodRawShape>(shape: () => S) {
  return lazyArgs(() => {
    const made = shape();
    const takes = Object.keys(made).join(', ');
    return jsonSchemaOnce(
      z.strictObject(made, {
        error: (issue) =>
          issue.code === 'unrecognized_keys' ? `unknown argument ${issue.keys.map((k) => `"${k}"`).join(', ')}; this tool takes ${takes}` : undefined,
      }),
    );
  });
}

/**
 * The argument schema `make` builds, built when first used: a tool's first call (the MCP SDK
 * checks its arguments with `~standard.validate`), svc_guide part=tools, or a listing the build
 * did not make. Building every tool's zod schema was a good part of a start, most of them for
 * tools a session never calls; tools/list of the one-file bridge gives the JSON Schema its build
 * made (`withListedSchemas`), without building any. Everything but `~standard` is the built
 * schema's own (a Proxy: `parse`, `shape`, zod's JSON Schema conversion see the schema itself),
 * and `~standard` validates with it, so a lazy schema takes and refuses exactly what it would.
 */
function lazyArgs<T extends z.ZodType>(make: () => T): T {
  let built: T | undefined;
  const schema = () => (built ??= make());
  const listings = new Map<string, Record<string, unknown>>();
  const standard = {
    version: 1,
    vendor: 'zod',
    validate: (value: unknown) => schema()['~standard'].validate(value),
    jsonSchema: {
      input: (params: Parameters<JsonSchemaMethod>[0]) => listings.get(JSON.stringify(params)) ?? standardJson(schema()).input(params),
      output: (params: Parameters<JsonSchemaMethod>[0]) => standardJson(schema()).output(params),
    },
  };
  const lazy = new Proxy({} as T, {
    get: (_, key) => {
      if (key === '~standard') return standard;
      const value: unknown = Reflect.get(schema(), key);
      return typeof value === 'function' ? value.bind(schema()) : value;
    },
    has: (_, key) => key === '~standard' || Reflect.has(schema(), key),
    getPrototypeOf: () => Object.getPrototypeOf(schema()),
  });
  madeInputs.set(lazy, listings);
  return lazy;
}

/** A zod schema's Standard JSON Schema methods (zod 4.2 and later have them). */
function standardJson(schema: z.ZodType): { input: JsonSchemaMethod; output: JsonSchemaMethod } {
  const methods = (schema['~standard'] as { jsonSchema?: { input: JsonSchemaMethod; output: JsonSchemaMethod } }).jsonSchema;
  if (methods === undefined) throw new Error('this zod makes no JSON Schema (~standard.jsonSchema): zod 4.2 or later is needed');
  return methods;
}

type JsonSchemaMethod = (params: { target: string; libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;

/** A post id's pattern (tools/posts/reading.ts `postId`), listed as `format: uuid`. */
const POST_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

/** Keys whose value maps names to schemas (each value is a schema, each key a name). */
const NAME_MAPS = new Set(['properties', '$defs', 'patternProperties']);

/**
 * The listed form of a JSON Schema zod made (see the header): a copy, never the input changed.
 * `at` is the keyword the node sits under; under a name map the keys are names, kept as they are.
 */
export function listedSchema(node: unknown, at = ''): unknown {
  if (Array.isArray(node)) return node.map((n) => listedSchema(n, at));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  const src = node as Record<string, unknown>;
  for (const [k, v] of Object.entries(src)) {
    if (NAME_MAPS.has(at)) {
      out[k] = listedSchema(v, '');
      continue;
    }
    if (k === '$schema') continue;
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if ((k === 'minLength' || k === 'maxLength') && src.type === 'string') continue;
    if (k === 'minItems' && v === 1) continue;
    if (k === 'propertyNames' && typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'string' && Object.keys(v).length === 1) continue;
    if (k === 'pattern') {
      if (v === POST_ID_PATTERN) out.format = 'uuid';
      continue;
    }
    out[k] = listedSchema(v, k);
  }
  return out;
}

/**
 * zod's override hook for the full JSON Schema svc_guide part=tools reads: only the enums of
 * `listedAs` (the values a check after zod takes), every bound of zod's own kept.
 */
export function listedEnums(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const given = shorter.get(ctx.zodSchema as object);
  if (given === undefined || !Array.isArray(given.enum)) return;
  for (const k of ['minLength', 'maxLength', 'pattern']) delete ctx.jsonSchema[k];
  ctx.jsonSchema.enum = given.enum;
}

/** The `$ref`s to this schema's own `$defs` anywhere in `node`. */
function defsReferenced(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) defsReferenced(n, out);
  else if (typeof node === 'object' && node !== null) {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) out.add(v.slice('#/$defs/'.length));
      else defsReferenced(v, out);
    }
  }
  return out;
}

/** `root` without the `$defs` nothing outside them reaches (the free JSON value, once listed as an object). */
function withoutUnusedDefs(root: Record<string, unknown>): Record<string, unknown> {
  const defs = root.$defs as Record<string, unknown> | undefined;
  if (defs === undefined) return root;
  const { $defs: _, ...rest } = root;
  const used = defsReferenced(rest, new Set());
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of [...used]) {
      for (const more of defsReferenced(defs[name], new Set())) {
        if (!used.has(more)) {
          used.add(more);
          grew = true;
        }
      }
    }
  }
  const kept = Object.fromEntries(Object.entries(defs).filter(([name]) => used.has(name)));
  return Object.keys(kept).length === 0 ? rest : { ...rest, $defs: kept };
}

/** Schemas listed in a shorter form than zod's (`listedAs`). */
const shorter = new WeakMap<object, Record<string, unknown>>();

/**
 * `schema`, listed as `json` instead of its own JSON Schema. Two uses: a shorter type where the
 * shape is checked in full by zod and described in svc_guide part=tools (a post's budget: an
 * object); and an enum a value is checked against after zod, by the protocol's own check with its
 * catalogue code and fix (a post's kind, INVALID_KIND from shared/validate.ts), which the SDK's
 * own argument error would not carry. `json` says what the tool takes, all checks together.
 */
export function listedAs<T extends z.ZodType>(schema: T, json: Record<string, unknown>): T {
  shorter.set(schema, json);
  return schema;
}

/**
 * zod's override hook: a schema given `listedAs` is listed as given, and a free JSON object
 * (`jsonObject`, described or not) as the object it is, its description kept.
 */
function listShorter(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const given = shorter.get(ctx.zodSchema as object);
  const free = (ctx.zodSchema as { valueType?: unknown }).valueType === jsonValue();
  if (given === undefined && !free) return;
  const description = ctx.jsonSchema.description;
  for (const k of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[k];
  Object.assign(ctx.jsonSchema, given ?? { type: 'object' }, description === undefined ? {} : { description });
}

/** The JSON Schemas made of each argument schema (`jsonSchemaOnce`), by the parameters they were made for. */
const madeInputs = new WeakMap<object, Map<string, Record<string, unknown>>>();

/**
 * `schema` with its JSON Schema (Standard JSON Schema, `~standard.jsonSchema`) made once per
 * target, in its listed form (`listedSchema`): the MCP SDK converts a tool's argument schema
 * for every tools/list and, at the relay's connector, for every tools/call of the per-request
 * server (its Mcp-Param header check), and the conversion walks the whole schema each time. A
 * tool's schema never changes after it is made, so neither does its JSON Schema; the SDK reads
 * the result and never writes it.
 */
export function jsonSchemaOnce<T extends z.ZodType>(schema: T): T {
  const std = schema['~standard'] as { jsonSchema?: { input: JsonSchemaMethod; output: JsonSchemaMethod } };
  const methods = std.jsonSchema;
  if (methods === undefined) return schema;
  const once = (method: JsonSchemaMethod, made: Map<string, Record<string, unknown>>): JsonSchemaMethod => {
    return (params) => {
      const key = JSON.stringify(params);
      let json = made.get(key);
      if (json === undefined) {
        const libraryOptions = { ...params.libraryOptions, override: listShorter };
        json = withoutUnusedDefs(listedSchema(method({ ...params, libraryOptions })) as Record<string, unknown>);
        made.set(key, json);
      }
      return json;
    };
  };
  const inputs = new Map<string, Record<string, unknown>>();
  madeInputs.set(schema, inputs);
  std.jsonSchema = { input: once(methods.input, inputs), output: once(methods.output, new Map()) };
  return schema;
}

/**
 * The parameters the MCP SDK (2.4.0) converts a tool's argument schema with for tools/list
 * (`standardSchemaToJsonSchema`). A JSON Schema made for other parameters is never given out
 * for these: were the SDK to ask with others, each schema would only be made from zod again.
 */
export const LISTING_PARAMS = JSON.stringify({ target: 'draft-2020-12' });

/** Tools' argument JSON Schemas by tool name, for LISTING_PARAMS: what `withListedSchemas` takes. */
export type ListedSchemas = Readonly<Record<string, Record<string, unknown>>>;

/**
 * The one-file bridge's listed argument schemas, made from these sources when it was built
 * (bridge/listed-schemas.ts; scripts/bundle-bridge.mjs defines SVC_LISTED_SCHEMAS in the
 * bundle only): none from the sources, nor at the relay.
 */
declare const SVC_LISTED_SCHEMAS: ListedSchemas | undefined;
const BUILT_SCHEMAS: ListedSchemas | undefined = typeof SVC_LISTED_SCHEMAS === 'undefined' ? undefined : SVC_LISTED_SCHEMAS;

/**
 * Each tool registered on `server` from now on lists the JSON Schema `listed` holds for its name
 * (by default what the build made), instead of one converted from its zod schema at the first
 * tools/list of a process: that conversion walks every tool's schema, a good part of a start. A
 * tool `listed` does not name lists what its zod schema makes, as before; zod still checks every
 * call's arguments.
 */
export function withListedSchemas(server: McpServer, listed: ListedSchemas | undefined = BUILT_SCHEMAS): void {
  if (listed === undefined) return;
  const register = server.registerTool.bind(server) as (name: string, config: { inputSchema?: unknown }, cb: unknown) => unknown;
  (server as unknown as { registerTool: typeof register }).registerTool = (name, config, cb) => {
    const json = Object.hasOwn(listed, name) ? listed[name] : undefined;
    const made = typeof config.inputSchema === 'object' && config.inputSchema !== null ? madeInputs.get(config.inputSchema) : undefined;
    if (json !== undefined && made !== undefined && !made.has(LISTING_PARAMS)) made.set(LISTING_PARAMS, json);
    return register(name, config, cb);
  };
}

/**
 * The schema `make` builds, built at the first call and the same one at every call after. For
 * the schemas several tools' argument objects share: those objects are built when first used
 * (`toolArgs`), and a schema built when its module loads would be built at every start for
 * nothing, with the garbage it leaves. One instance, as a module constant was: zod's JSON Schema
 * of a tool sees a shared schema as before.
 */
export function builtOnce<T>(make: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= make());
}

/** A JSON number: finite (zod refuses NaN and infinities), and a whole number only within ±(2^53 − 1). */
export const jsonNumber = builtOnce(() =>
  z
    .number()
    .refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), { error: 'an integer beyond ±(2^53 − 1) is refused (it has lost precision): send it as a string' })
    .describe('A finite number; a whole number within ±(2^53 − 1).'),
);

/** Any JSON value: string, number (as `jsonNumber`), true/false, null, a list or an object of them. */
export const jsonValue = builtOnce(
  (): z.ZodType<JsonValue> => z.lazy(() => z.union([z.string(), jsonNumber(), z.boolean(), z.null(), z.array(jsonValue()), z.record(z.string(), jsonValue())])),
);

/** A JSON object whose members are any JSON values. */
export const jsonObject = builtOnce((): z.ZodType<JsonObject> => z.record(z.string(), jsonValue()));

/**
 * Whether `value` nests arrays and objects more than `max` deep (`{}` and `[]` count 1, a
 * scalar 0, as the relay counts a body). A loop over an explicit stack, never recursion, and
 * it stops at the first container past `max`.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.value === null || typeof top.value !== 'object') continue;
    const depth = top.depth + 1;
    if (depth > max) return true;
    for (const member of Object.values(top.value)) stack.push({ value: member, depth });
  }
  return false;
}

/**
 * `schema` for a member of a post (`data`, `budget`): the post is one level of the body that
 * carries it, so the member nests at most `max` = JSON_DEPTH_MAX − 1 deep, and a deeper value
 * is refused before `schema` runs, with a message naming the limit.
 */
export function depthBounded<T extends z.ZodType>(max: number, schema: T) {
  const message = `arrays and objects nest more than ${max} deep; a post nests at most ${JSON_DEPTH_MAX}, and this member sits one level inside it: send flatter JSON`;
  return z.preprocess((value, ctx) => {
    if (nestsDeeperThan(value, max)) ctx.addIssue({ code: 'custom', message, input: value });
    return value;
  }, schema);
}
