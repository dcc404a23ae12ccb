/**
 * A tool's argument object: strict (an argument the tool does not take is refused, never
 * ignored), and the refusal names every argument the tool takes, so an agent that guessed a
 * name (`space_name`, `query`) can correct the call from the error alone. The MCP SDK checks
 * arguments before the tool runs and sends zod's messages back as the tool error's text.
 *
 * `jsonValue` and `jsonObject` describe free JSON an argument carries (a post's `data`): every
 * JSON value, with the protocol's number rule (spec/1-concepts.md "Encoding": a non-finite number
 * and an integer beyond ±(2^53 − 1) are refused anywhere), so the tool's JSON Schema says what
 * is taken instead of an empty schema that takes anything.
 *
 * `depthBounded` puts a nesting limit in front of such a schema: zod walks free JSON by
 * recursion and overflows the stack at about 1,500 levels, which the agent would see only as
 * "Maximum call stack size exceeded". The depth is measured first, with a loop, and a value
 * deeper than the limit is refused before the recursive schema sees it. Arguments are
 * attacker-controlled input as much as a request body is.
 */
import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../shared/canonical.js';
import { JSON_DEPTH_MAX } from '../../shared/limits.js';

export function toolArgs<S extends z.ZodRawShape>(shape: S) {
  const takes = Object.keys(shape).join(', ');
  return jsonSchemaOnce(
    z.strictObject(shape, {
      error: (issue) =>
        issue.code === 'unrecognized_keys' ? `unknown argument ${issue.keys.map((k) => `"${k}"`).join(', ')}; this tool takes ${takes}` : undefined,
    }),
  );
}

type JsonSchemaMethod = (params: { target: string; libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;

/**
 * `schema` with its JSON Schema (Standard JSON Schema, `~standard.jsonSchema`) made once per
 * target: the MCP SDK converts a tool's argument schema for every tools/list and, at the
 * relay's connector, for every tools/call of the per-request server (its Mcp-Param header
 * check), and the conversion walks the whole schema each time. A tool's schema never changes
 * after it is made, so neither does its JSON Schema; the SDK reads the result and never writes it.
 */
export function jsonSchemaOnce<T extends z.ZodType>(schema: T): T {
  const std = schema['~standard'] as { jsonSchema?: { input: JsonSchemaMethod; output: JsonSchemaMethod } };
  const methods = std.jsonSchema;
  if (methods === undefined) return schema;
  const once = (method: JsonSchemaMethod): JsonSchemaMethod => {
    const made = new Map<string, Record<string, unknown>>();
    return (params) => {
      const key = JSON.stringify(params);
      let json = made.get(key);
      if (json === undefined) made.set(key, (json = method(params)));
      return json;
    };
  };
  std.jsonSchema = { input: once(methods.input), output: once(methods.output) };
  return schema;
}

/** A JSON number: finite (zod refuses NaN and infinities), and a whole number only within ±(2^53 − 1). */
export const jsonNumber = z
  .number()
  .refine((n) => !Number.isInteger(n) || Number.isSafeInteger(n), { error: 'an integer beyond ±(2^53 − 1) is refused (it has lost precision): send it as a string' })
  .describe('A finite number; a whole number within ±(2^53 − 1).');

/** Any JSON value: string, number (as `jsonNumber`), true/false, null, a list or an object of them. */
export const jsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), jsonNumber, z.boolean(), z.null(), z.array(jsonValue), z.record(z.string(), jsonValue)]),
);

/** A JSON object whose members are any JSON values. */
export const jsonObject: z.ZodType<JsonObject> = z.record(z.string(), jsonValue);

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
