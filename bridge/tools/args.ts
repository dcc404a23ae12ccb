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
 */
import { z } from 'zod';
import type { JsonObject, JsonValue } from '../../shared/canonical.js';

export function toolArgs<S extends z.ZodRawShape>(shape: S) {
  const takes = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown argument ${issue.keys.map((k) => `"${k}"`).join(', ')}; this tool takes ${takes}` : undefined,
  });
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
