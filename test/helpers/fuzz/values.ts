/**
 * Generated values for the fuzz: JSON values built from a route's JSON Schema (as /openapi.json
 * states it, from the zod schema the route validates with), values no schema takes, and texts
 * that have broken parsers before (NUL, lone surrogates, overlong escapes, huge numbers). All of
 * it is attacker-controlled input by design.
 */
import fc from 'fast-check';

export type Json = Record<string, unknown>;

/** Texts at the edges of what a field or parser takes. */
export const EDGE_STRINGS: readonly string[] = [
  '',
  ' ',
  '0',
  '-1',
  '1',
  '1.5',
  '1e3',
  '9007199254740993',
  '99999999999999999999',
  'true',
  'null',
  'undefined',
  'NaN',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u200b',
  'é',
  '😀',
  '../..',
  '%00',
  '%',
  '%zz',
  '__proto__',
  'constructor',
  "'; DROP TABLE posts; --",
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${x}',
  'a'.repeat(65),
  'a'.repeat(300),
  'A'.repeat(64),
  '0'.repeat(64),
  'f'.repeat(63),
  'g'.repeat(64),
  '00000000-0000-0000-0000-000000000000',
  'svc_' + '0'.repeat(64),
];

/** A JSON-like value of any shape, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 });

/** Values at the edges of JSON's own types. */
export const edgeValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -0, -1, 1.5, 2 ** 31, 2 ** 53 - 1, 1e308, -1e308, [], {}, [[]], { '': null }),
  fc.constantFrom(...EDGE_STRINGS),
);

/** A text of any kind: short strings of any code unit, edge strings, unicode, long runs. */
export const anyText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...EDGE_STRINGS), weight: 3 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 30, maxLength: 70 }), weight: 2 },
  { arbitrary: fc.nat({ max: 5000 }).map((n) => 'x'.repeat(n)), weight: 1 },
);

/** Follow a `$ref` into the document's components. */
function resolve(schema: Json, components: Json): Json {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  return (components[name] as Json | undefined) ?? {};
}

/**
 * Values a JSON Schema describes (mostly valid ones: the edges of each range, enum members,
 * pattern matches), to reach past validation into the handlers. Depth is bounded so a recursive
 * schema stays small.
 */
export function fromSchema(raw: Json, components: Json, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(raw, components);
  if (depth > 4) return edgeValue;
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (Array.isArray(alternatives) && alternatives.length > 0) return fc.oneof(...alternatives.map((a) => fromSchema(a, components, depth + 1)));
  switch (s.type) {
    case 'string':
      return stringOf(s);
    case 'integer': {
      const min = typeof s.minimum === 'number' ? s.minimum : -(2 ** 40);
      const max = typeof s.maximum === 'number' ? s.maximum : 2 ** 40;
      return fc.oneof(fc.constantFrom(min, max), fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) }));
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = (s.items as Json | undefined) ?? {};
      const maxLength = Math.min(typeof s.maxItems === 'number' ? s.maxItems : 4, 6);
      return fc.array(fromSchema(items, components, depth + 1), { maxLength });
    }
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Json>;
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = fromSchema(v, components, depth + 1);
      if (Object.keys(model).length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 });
      return fc.record(model, { requiredKeys: ((s.required ?? []) as string[]).filter((k) => k in model) });
    }
    default:
      return fc.oneof(anyJson, edgeValue);
  }
}

function stringOf(s: Json): fc.Arbitrary<string> {
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Number.POSITIVE_INFINITY;
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const options: fc.Arbitrary<string>[] = [fc.string({ minLength, maxLength: Math.min(maxLength, minLength + 80) })];
  if (typeof s.pattern === 'string') {
    try {
      // Cut to the schema's bound rather than filtered by it, so a long pattern never loops.
      options.push(fc.stringMatching(new RegExp(s.pattern)).map((x) => x.slice(0, maxLength)));
    } catch {
      // A pattern JavaScript cannot read: the plain strings stand in for it.
    }
  }
  if (s.format === 'uuid') options.push(fc.uuid());
  return fc.oneof(...options);
}

/** An arbitrary picking from fixed values when there are some, else from `fallback`. */
export function oneOfValues<T>(values: readonly T[], fallback: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return values.length === 0 ? fallback : fc.oneof(fc.constantFrom(...values), fallback);
}
