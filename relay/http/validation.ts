/**
 * Route input validation with zod schemas (the project's one schema library, shared with the
 * MCP tools). A route declares `schema: { body, querystring, params }` as zod schemas; this
 * compiler turns a failure into INVALID_REQUEST whose detail names each field, joined by "; "
 * (api-notes §1). Parsed values (defaults, coercions) replace the raw input.
 *
 * Bodies should use `z.strictObject` (unknown members refused); query strings arrive as
 * strings, so numbers there use `z.coerce` or explicit parsing.
 */
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import type { ZodType, core } from 'zod';
import { SvcError } from '../../shared/errors.js';

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

/** One "field: problem" per issue, joined by "; ". */
export function describeIssues(part: string, issues: readonly core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : part;
      if (issue.code === 'unrecognized_keys') {
        return `${part}: unknown member ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      }
      if (issue.code === 'invalid_type' && issue.input === undefined) return `${path}: required`;
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

export const zodValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const zod = schema as ZodType;
  if (typeof (zod as { safeParse?: unknown }).safeParse !== 'function') {
    throw new Error(`route schema for ${httpPart ?? 'input'} must be a zod schema`);
  }
  const part = PART_NAMES[httpPart ?? 'body'] ?? 'input';
  return (data: unknown) => {
    // Fastify hands `null` for an absent part.
    const input = data === null && part !== 'body' ? {} : data === null ? undefined : data;
    // reportInput: an issue then carries the value it refused, so a wrong type is told apart
    // from a missing field ("required"); the value itself never reaches the detail.
    const result = zod.safeParse(input, { reportInput: true });
    if (result.success) return { value: result.data };
    return { error: new SvcError('INVALID_REQUEST', describeIssues(part, result.error.issues)) };
  };
};

/**
 * A route's declared answers (`schema.response`: a zod schema per status) are what
 * /openapi.json publishes for it, so the answer is checked against the schema before it is sent
 * and sent as the handler made it; one that strays is the relay's fault (INTERNAL), found by the
 * tests that drive the route, rather than a published shape that is not true.
 */
export const zodSerializerCompiler: FastifySerializerCompiler<unknown> = ({ schema, method, url }) => {
  const zod = schema as ZodType;
  if (typeof (zod as { safeParse?: unknown }).safeParse !== 'function') {
    throw new Error(`response schema of ${method} ${url} must be a zod schema`);
  }
  return (data: unknown) => {
    if (!zod.safeParse(data).success) throw new SvcError('INTERNAL', 'the answer does not have the shape its route declares');
    return JSON.stringify(data);
  };
};
