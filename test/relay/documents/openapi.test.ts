/**
 * `GET /openapi.json`: an OpenAPI 3.1 document the relay generates from its own routes, checked
 * with a maintained validator of the OpenAPI 3.1 schema, against the router's own list of
 * routes, and against the refusals of the endpoint catalogue.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CATALOGUE, type ErrorCode } from '../../../shared/errors.js';
import { buildApp } from '../../../relay/app.js';
import type { OperationEntry } from '../../../relay/context.js';
import { buildOpenApi } from '../../../relay/documents/openapi.js';
import { OPERATION_REFUSALS, refusalsOf } from '../../../relay/documents/refusals.js';
import { loadServiceKeys } from '../../../relay/service-keys.js';
import { openStore } from '../../../relay/store/index.js';
import { call, startRelay, tempDataDir, type RunningRelay } from '../../helpers/relay.js';
import { registeredRoutes } from '../../helpers/routes.js';

type Json = Record<string, any>;

let relay: RunningRelay;
let doc: Json;

beforeAll(async () => {
  relay = await startRelay();
  const a = await call(relay, 'GET', '/openapi.json');
  expect(a.status).toBe(200);
  doc = a.body;
});

afterAll(async () => {
  await relay.close();
});

async function validate(document: Json): Promise<{ valid: boolean; errors?: unknown }> {
  return new Validator().validate(structuredClone(document));
}

/** Follow a local `$ref` (`#/components/...`) to what it names, or undefined. */
function resolve(document: Json, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<any>((node, key) => (node === undefined ? undefined : node[key.replace(/~1/g, '/').replace(/~0/g, '~')]), document);
}

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

/** Every (method, path) operation of a document. */
function operationsOf(document: Json): { method: string; path: string; op: Json }[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })),
  );
}

/** The codes an operation's response at `status` names (following its `$ref`). */
function codesAt(document: Json, op: Json, status: number): string[] {
  let response = op.responses[String(status)];
  if (response === undefined) return [];
  if (response.$ref) response = resolve(document, response.$ref);
  return response.content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
}

describe('the document is valid OpenAPI 3.1', () => {
  it('the maintained OpenAPI 3.1 validator finds nothing wrong with the served document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it('the same validator refuses the document with one operation broken, so it really checks', async () => {
    const broken = structuredClone(doc);
    const first = Object.values(broken.paths as Json)[0] as Json;
    const method = Object.keys(first)[0]!;
    first[method].responses = 'none';
    expect((await validate(broken)).valid).toBe(false);
  });

  it('every $ref in the document names something the document holds', () => {
    const refs = [...new Set(refsIn(doc))];
    expect(refs.length).toBeGreaterThan(5);
    for (const ref of refs) {
      expect(ref.startsWith('#/'), ref).toBe(true);
      expect(resolve(doc, ref), ref).toBeDefined();
    }
  });
});

describe('the document covers exactly the routes the relay registers', () => {
  it('every route of the router is one operation of the document and the document has no other', () => {
    const routes = registeredRoutes(relay.app).map((r) => `${r.method} ${r.path}`).sort();
    const documented = operationsOf(doc).map((o) => `${o.method} ${o.path}`).sort();
    expect(routes.length).toBeGreaterThan(80);
    expect(documented).toEqual(routes);
  });

  it('each operation carries the operationId form of its name, its auth as security, and its tool', async () => {
    const index = (await call(relay, 'GET', '/', { headers: { accept: 'application/json' } })).body.operations as Json[];
    const ids = new Set<string>();
    for (const entry of index) {
      const op = doc.paths[entry.path][entry.method.toLowerCase()];
      expect(op.operationId, entry.name).toBe(entry.name.replace(/\./g, '_'));
      expect(op['x-svc-operation']).toBe(entry.name);
      ids.add(op.operationId);
      const expected = entry.auth === 'none' ? [] : entry.auth === 'optional' ? [{}, { bearer: [] }] : [{ bearer: [] }];
      expect(op.security, entry.name).toEqual(expected);
    }
    expect(ids.size).toBe(index.length);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/v1/spaces/{name}/posts'].post['x-svc-mcp-tool']).toBe('svc_post');
  });
});

describe('request and answer shapes come from the route schemas', () => {
  it("keys.challenge's body is the zod schema the route validates with: public_key required, 64 lowercase hex", () => {
    const body = doc.paths['/v1/keys/challenge'].post.requestBody;
    expect(body.required).toBe(true);
    const schema = body.content['application/json'].schema;
    expect(schema.required).toEqual(['public_key']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.public_key.type).toBe('string');
    expect(new RegExp(schema.properties.public_key.pattern).test('a'.repeat(64))).toBe(true);
    expect(new RegExp(schema.properties.public_key.pattern).test('A'.repeat(64))).toBe(false);
  });

  it('path parameters are required and query parameters are those of the route schema', () => {
    const read = doc.paths['/v1/spaces/{name}/posts'].get;
    const byName = new Map((read.parameters as Json[]).map((p) => [`${p.in} ${p.name}`, p]));
    expect(byName.get('path name')).toMatchObject({ required: true });
    for (const q of ['after', 'limit', 'detail', 'wait']) expect(byName.has(`query ${q}`), q).toBe(true);
    expect(byName.get('query after')!.required).toBe(false);
  });

  it('an operation that takes no body says the body is optional and empty', () => {
    const body = doc.paths['/v1/posts/{id}/hidden'].put.requestBody;
    expect(body.required).toBe(false);
    expect(body.content['application/json'].schema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('a route with no response schema is described by a bare 2XX that says so, not by invented fields', () => {
    const ok = doc.paths['/v1/me'].get.responses['2XX'];
    expect(ok.description).toMatch(/declares no response schema/);
    expect(ok.content).toBeUndefined();
  });
});

describe('refusals', () => {
  it("every operation lists its catalogue row's refusals at their statuses, with the common ones", () => {
    for (const { op } of operationsOf(doc)) {
      const name = op['x-svc-operation'] as string;
      const listed = op['x-svc-refusals'] as ErrorCode[];
      for (const code of OPERATION_REFUSALS[name] ?? []) expect(listed, `${name} ${code}`).toContain(code);
      for (const code of listed) expect(codesAt(doc, op, CATALOGUE[code].status), `${name} ${code}`).toContain(code);
      for (const code of ['INVALID_REQUEST', 'RATE_LIMITED', 'BUSY', 'INTERNAL']) expect(listed, name).toContain(code);
    }
  });

  it('token refusals belong to operations that read a token, write refusals to writes', () => {
    const posts = doc.paths['/v1/spaces/{name}/posts'];
    expect(codesAt(doc, posts.post, 401)).toEqual(['TOKEN_MISSING', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED']);
    expect(codesAt(doc, posts.post, 503)).toEqual(['BUSY', 'SERVICE_READ_ONLY']);
    expect(codesAt(doc, posts.get, 401)).toEqual(['TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED']);
    expect(codesAt(doc, posts.get, 503)).toEqual(['BUSY']);
    expect(doc.paths['/v1/capabilities'].get.responses['401']).toBeUndefined();
    expect(codesAt(doc, doc.paths['/v1/posts/{id}'].get, 404)).toEqual(['POST_NOT_FOUND']);
  });

  it('the envelope is one shared schema naming every catalogue code', () => {
    const envelope = doc.components.schemas.ErrorEnvelope;
    expect(envelope.properties.error.required).toEqual(['code', 'message', 'fix', 'doc', 'request_id']);
    expect(envelope.properties.error.properties.code.enum).toEqual(Object.keys(CATALOGUE));
  });
});

describe('query operation narrows the document', () => {
  it('posts.append and posts_append both answer the document with that one operation', async () => {
    const byName = await call(relay, 'GET', '/openapi.json?operation=posts.append');
    const byId = await call(relay, 'GET', '/openapi.json?operation=posts_append');
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual(byId.body);
    expect(Object.keys(byName.body.paths)).toEqual(['/v1/spaces/{name}/posts']);
    expect(Object.keys(byName.body.paths['/v1/spaces/{name}/posts'])).toEqual(['post']);
    expect(byName.body.paths['/v1/spaces/{name}/posts'].post.operationId).toBe('posts_append');
    expect((await validate(byName.body)).valid).toBe(true);
  });

  it('an unknown operation is INVALID_REQUEST naming the nearest, with the envelope', async () => {
    const a = await call(relay, 'GET', '/openapi.json?operation=posts.apend');
    expect(a.status).toBe(400);
    expect(a.body.error.code).toBe('INVALID_REQUEST');
    expect(a.body.error.detail).toMatch(/^operation: no operation "posts\.apend"; nearest: posts\.append/);
    expect(a.body.error.request_id).toBe(a.headers.get('x-request-id'));
  });

  it('a repeated operation or another query member is refused', async () => {
    expect((await call(relay, 'GET', '/openapi.json?operation=me&operation=seek')).body.error.code).toBe('INVALID_REQUEST');
    expect((await call(relay, 'GET', '/openapi.json?section=errors')).body.error.code).toBe('INVALID_REQUEST');
  });
});

describe('served as a document', () => {
  it('carries an ETag and X-Request-Id, and answers 304 with no body to a matching If-None-Match', async () => {
    const first = await call(relay, 'GET', '/openapi.json');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.headers.get('x-request-id')).toBeTruthy();
    const again = await call(relay, 'GET', '/openapi.json', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('x-request-id')).toBeTruthy();
    const narrowed = await call(relay, 'GET', '/openapi.json?operation=me');
    expect(narrowed.headers.get('etag')).not.toBe(etag);
    expect((await call(relay, 'GET', '/openapi.json?operation=me', { headers: { 'if-none-match': etag } })).status).toBe(200);
  });
});

describe('generated, not written', () => {
  it('routes registered by another plugin appear, named ones with their schemas, declared answer, auth and refusals, unnamed ones by method and path, with no change to the generator', async () => {
    const dataDir = tempDataDir();
    const store = await openStore(dataDir);
    const random = (n: number) => new Uint8Array(randomBytes(n));
    const serviceKeys = loadServiceKeys({ dataDir, dev: true, now: Date.now(), random });
    const app = buildApp({ config: { host: '127.0.0.1', port: 0, dataDir, publicUrl: undefined, dev: true }, store, clock: Date.now, random, serviceKeys });
    app.register(async (plugin) => {
      plugin.post(
        '/v1/widgets/:widget/polish',
        {
          schema: {
            params: z.object({ widget: z.string().regex(/^w[0-9]+$/) }),
            body: z.strictObject({ shine: z.number().int().min(1).max(9) }),
            response: { 200: z.object({ shine: z.number().int() }) },
          },
          config: { auth: 'opt', operation: 'widgets.polish', describe: 'Polish a widget.', refusals: ['SPACE_NOT_FOUND'] },
        },
        async (req) => (req.params as { widget: string }).widget === 'w0' ? { shine: 'dull' } : { shine: (req.body as { shine: number }).shine },
      );
      // A route that names no operation, taking two methods, as the connector's transport does.
      plugin.route({ method: ['GET', 'POST'], url: '/gadgets/feed', config: { auth: 'none' }, handler: async () => ({}) });
    });
    try {
      const a = await app.inject({ method: 'GET', url: '/openapi.json?operation=widgets_polish' });
      expect(a.statusCode).toBe(200);
      const narrowed = JSON.parse(a.body);
      const op = narrowed.paths['/v1/widgets/{widget}/polish'].post;
      expect(op.operationId).toBe('widgets_polish');
      expect(op.security).toEqual([{}, { bearer: [] }]);
      expect(op.parameters[0]).toMatchObject({ name: 'widget', in: 'path', required: true, schema: { type: 'string', pattern: '^w[0-9]+$' } });
      expect(op.requestBody.content['application/json'].schema.properties.shine).toEqual({ type: 'integer', minimum: 1, maximum: 9 });
      expect(codesAt(narrowed, op, 404)).toEqual(['SPACE_NOT_FOUND']);
      expect(op.responses['200'].content['application/json'].schema.properties.shine).toEqual({ type: 'integer', minimum: expect.any(Number), maximum: expect.any(Number) });
      expect(op.responses['2XX']).toBeUndefined();
      expect((await validate(narrowed)).valid).toBe(true);
      const whole = JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body);
      expect(whole.paths['/gadgets/feed'].get).toMatchObject({ operationId: 'get_gadgets_feed', summary: 'GET /gadgets/feed', security: [] });
      expect(whole.paths['/gadgets/feed'].post.operationId).toBe('post_gadgets_feed');
      expect(whole.paths['/gadgets/feed'].post['x-svc-operation']).toBeUndefined();
      expect((await validate(whole)).valid).toBe(true);
      // The declared answer is held true: an answer of that shape is sent as made, one that strays is INTERNAL.
      const polished = await app.inject({ method: 'POST', url: '/v1/widgets/w7/polish', payload: { shine: 3 } });
      expect([polished.statusCode, JSON.parse(polished.body)]).toEqual([200, { shine: 3 }]);
      const strayed = await app.inject({ method: 'POST', url: '/v1/widgets/w0/polish', payload: { shine: 3 } });
      expect(strayed.statusCode).toBe(500);
      expect(JSON.parse(strayed.body).error.code).toBe('INTERNAL');
    } finally {
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('a declared response schema becomes the answer, and a recursive one is hoisted into components', async () => {
    interface Node { name: string; children: Node[] }
    const NodeSchema: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(NodeSchema) }));
    const entry: OperationEntry = {
      name: 'trees.get',
      method: 'GET',
      path: '/v1/trees/{id}',
      auth: 'req',
      describe: 'One tree.',
      schema: { params: z.object({ id: z.string() }), response: { 200: z.object({ tree: NodeSchema }) } },
    };
    const built = buildOpenApi([entry]).document as Json;
    const ok = built.paths['/v1/trees/{id}'].get.responses['200'];
    expect(ok.content['application/json'].schema.properties.tree).toBeDefined();
    expect(built.paths['/v1/trees/{id}'].get.responses['2XX']).toBeUndefined();
    for (const ref of refsIn(built)) expect(resolve(built, ref), ref).toBeDefined();
    expect((await validate(built)).valid).toBe(true);
    expect(refusalsOf(entry)).toContain('TOKEN_MISSING');
  });
});
