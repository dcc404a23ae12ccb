/**
 * `GET /openapi.json` (spec/2-endpoints.md "Documents and service state"): an OpenAPI 3.1
 * description of this relay, generated from what its routes declare and never written by hand.
 * Each operation the routes registered (`ctx.operations`, filled by the onRoute hook in app.ts)
 * becomes one OpenAPI operation: its operationId (`posts_append` for `posts.append`), its auth
 * as a security requirement, its path, query and body from the zod schemas the relay validates
 * with (`z.toJSONSchema`, input side), its answer from a declared response schema when the route
 * has one (otherwise a bare 2XX that says so), and its refusals (relay/documents/refusals.ts)
 * grouped by their status in the error catalogue, each in the one envelope of spec/3-errors.md.
 *
 * A route registered later appears without any change here; a route that refines its input past
 * what JSON Schema says (a `refine`, a byte count) is described by its base type.
 */
import { z, type ZodType } from 'zod';
import { CATALOGUE, SvcError, type ErrorCode } from '../../shared/errors.js';
import type { OperationEntry, UnnamedRoute } from '../context.js';
import { API_VERSION } from './capabilities.js';
import { SERVICE_NAME } from './primer.js';
import { nearestOperations, operationIdOf } from './reference.js';
import { OAUTH_FORM_ERRORS, refusalsOf } from './refusals.js';

type Json = Record<string, unknown>;

/** The built description: the whole document, and each operation alone by name or operationId. */
export interface OpenApi {
  readonly document: Json;
  /** Operation name and operationId → the document narrowed to that operation. */
  readonly byOperation: ReadonlyMap<string, Json>;
  readonly operationNames: readonly string[];
}

const ENVELOPE_REF = '#/components/schemas/ErrorEnvelope';
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function isZod(schema: unknown): schema is ZodType {
  return typeof (schema as { safeParse?: unknown } | undefined)?.safeParse === 'function';
}

/** Replace every `#/$defs/<name>` reference in a JSON Schema tree by where the hoisted copy lives. */
function rewriteRefs(node: unknown, rename: (name: string) => string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, rename));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/') ? `#/components/schemas/${rename(v.slice(8))}` : rewriteRefs(v, rename);
  }
  return out;
}

/**
 * One zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Definitions it needs (a
 * recursive or named schema) move to `components.schemas` under `<prefix>_<name>`, because
 * `#/$defs/…` inside an OpenAPI document would point at the document's root.
 */
function jsonSchemaOf(schema: ZodType, io: 'input' | 'output', prefix: string, components: Json): Json {
  const raw = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  const { $schema: _dialect, $defs, ...rest } = raw;
  const rename = (name: string) => `${prefix}_${name}`;
  for (const [name, def] of Object.entries(($defs ?? {}) as Json)) components[rename(name)] = rewriteRefs(def, rename);
  return rewriteRefs(rest, rename) as Json;
}

/** The `{name}` parameters of a path template, in order. */
function templateParams(path: string): string[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
}

function parameters(op: OperationEntry, prefix: string, components: Json): Json[] {
  const out: Json[] = [];
  const params = isZod(op.schema?.params) ? jsonSchemaOf(op.schema.params, 'input', prefix, components) : {};
  const pathProps = (params.properties ?? {}) as Record<string, Json>;
  for (const name of templateParams(op.path)) {
    const { description, ...schema } = pathProps[name] ?? { type: 'string' };
    out.push({ name, in: 'path', required: true, ...(description === undefined ? {} : { description }), schema });
  }
  if (isZod(op.schema?.querystring)) {
    const query = jsonSchemaOf(op.schema.querystring, 'input', prefix, components);
    const required = new Set((query.required ?? []) as string[]);
    for (const [name, prop] of Object.entries((query.properties ?? {}) as Record<string, Json>)) {
      const { description, ...schema } = prop;
      out.push({ name, in: 'query', required: required.has(name), ...(description === undefined ? {} : { description }), schema });
    }
  }
  return out;
}

function requestBody(op: OperationEntry, prefix: string, components: Json): Json | undefined {
  const body = op.schema?.body;
  if (isZod(body)) {
    // A body schema that takes `undefined` (`noBody`, an optional object) makes the body optional.
    const optional = body.safeParse(undefined).success;
    return { required: !optional, content: { 'application/json': { schema: jsonSchemaOf(body, 'input', prefix, components) } } };
  }
  if (!WRITE_METHODS.has(op.method)) return undefined;
  const where = op.name === '' ? 'its own protocol reads it' : `the protocol's own rules read it, and \`GET /reference?operation=${op.name}\` says what it holds`;
  return {
    description: `This route declares no body schema: where it takes a body, ${where}.`,
    content: { 'application/json': { schema: {} } },
  };
}

const REQUEST_ID_HEADER = { $ref: '#/components/headers/X-Request-Id' };
const RETRY_AFTER_HEADER = { $ref: '#/components/headers/Retry-After' };

/**
 * The refusal responses of one operation: one per status, each naming its codes. Each distinct
 * set of codes at a status is one shared response in `components.responses` (most operations
 * share the common ones), named after its status and codes.
 */
function refusalResponses(codes: readonly ErrorCode[], shared: Json): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const name = `Refused${status}_${list.join('_')}`;
    if (!(name in shared)) {
      const waits = list.includes('RATE_LIMITED') || list.includes('BUSY');
      shared[name] = {
        // Each code's message and fix are in the catalogue (`GET /reference?section=errors`), once.
        description: `Refused: ${list.map((c) => `\`${c}\``).join(', ')}.`,
        headers: waits ? { 'X-Request-Id': REQUEST_ID_HEADER, 'Retry-After': RETRY_AFTER_HEADER } : { 'X-Request-Id': REQUEST_ID_HEADER },
        content: {
          'application/json': {
            schema: { allOf: [{ $ref: ENVELOPE_REF }, { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } }] },
          },
        },
      };
    }
    out[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

function successResponses(op: OperationEntry, prefix: string, components: Json): Record<string, Json> {
  const out: Record<string, Json> = {};
  const declared = op.schema?.response;
  if (declared !== null && typeof declared === 'object') {
    for (const [status, schema] of Object.entries(declared as Record<string, unknown>)) {
      if (!isZod(schema)) continue;
      out[status.toUpperCase()] = {
        description: op.describe === '' ? op.name : op.describe,
        headers: { 'X-Request-Id': REQUEST_ID_HEADER },
        content: { 'application/json': { schema: jsonSchemaOf(schema, 'output', `${prefix}_${status}`, components) } },
      };
    }
  }
  if (!Object.keys(out).some((s) => s.startsWith('2'))) {
    const where = op.name === '' ? '' : `; \`GET /reference?operation=${op.name}\` says what the answer holds`;
    out['2XX'] = {
      description: `Success. This route declares no response schema${where}.`,
      headers: { 'X-Request-Id': REQUEST_ID_HEADER },
    };
  }
  return out;
}

function security(op: OperationEntry): Json[] {
  if (op.auth === 'none') return [];
  if (op.auth === 'opt') return [{}, { bearer: [] }];
  return [{ bearer: [] }];
}

/**
 * One OpenAPI operation. A route with no operation name (`name` empty: the connector's MCP
 * transport) is described by its method and path, and says it is not a catalogue operation.
 */
function operationObject(op: OperationEntry, operationId: string, components: Json, responses: Json): Json {
  const named = op.name !== '';
  const codes = refusalsOf(op);
  const oauth = OAUTH_FORM_ERRORS[op.name];
  const oauthNote = oauth
    ? ` Its own refusals come in OAuth's shape \`{error, error_description}\` with \`error\` one of ${oauth.map((e) => `\`${e}\``).join(', ')}; a limit ahead of it answers in the envelope.`
    : '';
  const body = requestBody(op, operationId, components);
  const unnamedNote = named ? '' : ' This route names no operation of the endpoint catalogue; its answers are its own protocol\'s.';
  const description = `${op.describe}${oauthNote}${unnamedNote}`.trim();
  return {
    operationId,
    summary: named ? op.name : `${op.method} ${op.path}`,
    ...(description === '' ? {} : { description }),
    tags: [named ? op.name.split('.')[0]! : (op.path.split('/')[1] ?? 'other')],
    security: security(op),
    parameters: parameters(op, operationId, components),
    ...(body === undefined ? {} : { requestBody: body }),
    responses: { ...successResponses(op, operationId, components), ...refusalResponses(codes, responses) },
    ...(named ? { 'x-svc-operation': op.name } : {}),
    'x-svc-refusals': codes,
    ...(oauth ? { 'x-svc-oauth-errors': oauth } : {}),
    ...(op.mcp ? { 'x-svc-mcp-tool': op.mcp.tool } : {}),
  };
}

/** The envelope of spec/3-errors.md, every code of the catalogue in its `code`. */
function envelopeSchema(): Json {
  return {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'fix', 'doc', 'request_id'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', enum: Object.keys(CATALOGUE), description: 'Act on the code and the fix; codes are additive.' },
          message: { type: 'string', description: 'The code, a full stop, and one sentence saying what happened.' },
          fix: { type: 'string' },
          doc: { type: 'string', description: 'Where the reference explains it, e.g. `/reference#errors`.' },
          request_id: { type: 'string', description: 'Equal to the X-Request-Id header.' },
          detail: { type: 'string', maxLength: 200, description: 'Names the field or value when one can be named.' },
          retry_after: { type: 'integer', minimum: 1, description: 'Seconds to wait, as in Retry-After.' },
        },
      },
    },
  };
}

function info(): Json {
  return {
    title: SERVICE_NAME,
    version: API_VERSION,
    description: [
      `Generated by this relay from the schemas its routes validate with; \`GET /reference\` and \`GET /\` describe the same operations in prose.`,
      'Every answer carries `X-Request-Id`; documents carry `ETag` and answer 304 to a matching `If-None-Match`.',
      'Every refusal is the one envelope `ErrorEnvelope`; each operation lists the codes it can meet, grouped by status (`x-svc-refusals` lists them all).',
      '`GET /openapi.json?operation=<name>` (or its operationId) narrows this document to one operation.',
    ].join(' '),
  };
}

/** `post_mcp_connect` for `POST /mcp/connect`: the operationId of a route with no operation name. */
function unnamedId(route: UnnamedRoute): string {
  return `${route.method}${route.path}`.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/_+$/, '');
}

/**
 * Build the description from the relay's registered routes (after every route is in): its
 * operations, then the routes that name none.
 */
export function buildOpenApi(operations: readonly OperationEntry[], unnamed: readonly UnnamedRoute[] = []): OpenApi {
  const components: Json = { ErrorEnvelope: envelopeSchema() };
  const responses: Json = {};
  const paths: Record<string, Record<string, Json>> = {};
  const usedIds = new Set<string>();
  const located: { name: string; id: string; path: string; method: string }[] = [];
  const all: OperationEntry[] = [...operations, ...unnamed.map((r) => ({ ...r, name: '' }))];
  for (const op of all) {
    const method = op.method.toLowerCase();
    let id = op.name === '' ? unnamedId(op) : operationIdOf(op.name);
    // operationIds are unique in a document; a second route of one operation gets its method.
    if (usedIds.has(id)) id = `${id}_${method}`;
    usedIds.add(id);
    const item = (paths[op.path] ??= {});
    item[method] = operationObject(op, id, components, responses);
    located.push({ name: op.name, id, path: op.path, method });
  }
  const document: Json = {
    openapi: '3.1.0',
    info: info(),
    paths,
    components: {
      schemas: components,
      responses,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'A token minted by signing a challenge with a KEY (`/reference?section=authentication`): `svc_` and 64 lowercase hex.',
        },
      },
      headers: {
        'X-Request-Id': { description: 'The id of this request; the envelope repeats it as `request_id`.', schema: { type: 'string' } },
        'Retry-After': { description: 'Seconds to wait before resending.', schema: { type: 'integer', minimum: 1 } },
      },
    },
  };
  const byOperation = new Map<string, Json>();
  for (const l of located.filter((x) => x.name !== '')) {
    const narrowed = { ...document, paths: { [l.path]: { [l.method]: paths[l.path]![l.method] } } };
    if (!byOperation.has(l.name)) byOperation.set(l.name, narrowed);
    if (!byOperation.has(l.id)) byOperation.set(l.id, narrowed);
  }
  return { document, byOperation, operationNames: operations.map((o) => o.name) };
}

/** Shorten a caller's value for a detail (attacker-controlled: bounded, JSON-quoted). */
function quoted(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

/**
 * The document `GET /openapi.json` answers for a query. `operation` is attacker-controlled:
 * looked up in a map, never interpolated unquoted; an unknown one is INVALID_REQUEST naming the
 * nearest operations, as `GET /reference?operation=` answers.
 */
export function lookupOpenApi(api: OpenApi, operation: string | undefined): Json {
  if (operation === undefined) return api.document;
  const narrowed = api.byOperation.get(operation);
  if (narrowed === undefined) {
    throw new SvcError('INVALID_REQUEST', `operation: no operation ${quoted(operation)}; nearest: ${nearestOperations(api.operationNames, operation).join(', ')}`);
  }
  return narrowed;
}
