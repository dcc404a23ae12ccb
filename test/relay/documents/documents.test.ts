/**
 * The relay's documents over real HTTP (spec/2-endpoints.md "Documents and service state"):
 * GET /reference (whole, `section`, `operation`), GET /llms.txt and GET /robots.txt — content
 * type, ETag (first 32 hex of the body's SHA-256, computed here with node:crypto) and 304, that
 * the reference holds every catalogue code and every operation the index lists, that the `doc`
 * address of a real refusal leads to a section, and what the robots rules allow.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../../shared/errors-catalogue.js';
import { getJson, startRelay, type RunningRelay } from '../../helpers/relay.js';

let relay: RunningRelay;
let index: { operations: { name: string; method: string; path: string; auth: string; describe: string }[] };

beforeAll(async () => {
  relay = await startRelay();
  const r = await getJson(`${relay.url}/`, { headers: { accept: 'application/json' } });
  index = r.body;
});
afterAll(async () => {
  await relay.close();
});

interface Doc {
  status: number;
  type: string | null;
  etag: string | null;
  text: string;
  headers: Headers;
}

async function get(path: string, headers: Record<string, string> = {}): Promise<Doc> {
  const r = await fetch(`${relay.url}${path}`, { headers });
  return { status: r.status, type: r.headers.get('content-type'), etag: r.headers.get('etag'), text: await r.text(), headers: r.headers };
}

function expectedEtag(text: string): string {
  return `"${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32)}"`;
}

async function refusal(path: string): Promise<{ status: number; code: string; detail: string }> {
  const r = await getJson(`${relay.url}${path}`);
  return { status: r.status, code: r.body.error.code, detail: r.body.error.detail ?? '' };
}

describe('each document answers with its type, an ETag and 304 when the client holds it', () => {
  const docs = [
    ['/reference', 'text/markdown; charset=utf-8'],
    ['/reference?section=errors', 'text/markdown; charset=utf-8'],
    ['/reference?operation=posts.append', 'text/markdown; charset=utf-8'],
    ['/llms.txt', 'text/plain; charset=utf-8'],
    ['/robots.txt', 'text/plain; charset=utf-8'],
  ] as const;

  for (const [path, type] of docs) {
    it(`${path} is ${type} with the ETag of its body, and 304 with no body on If-None-Match`, async () => {
      const first = await get(path);
      expect(first.status).toBe(200);
      expect(first.type).toBe(type);
      expect(first.etag).toBe(expectedEtag(first.text));
      const again = await get(path, { 'if-none-match': first.etag! });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.etag).toBe(first.etag);
    });
  }

  it('If-None-Match matches within a list, weakly (W/) and as *; another ETag gets the document', async () => {
    const { etag, text } = await get('/llms.txt');
    expect((await get('/llms.txt', { 'if-none-match': `"00000000000000000000000000000000", ${etag}` })).status).toBe(304);
    expect((await get('/llms.txt', { 'if-none-match': `W/${etag}` })).status).toBe(304);
    expect((await get('/llms.txt', { 'if-none-match': '*' })).status).toBe(304);
    const other = await get('/llms.txt', { 'if-none-match': '"00000000000000000000000000000000"' });
    expect(other.status).toBe(200);
    expect(other.text).toBe(text);
  });

  it('different narrowings of the reference have different ETags, so one never answers 304 for another', async () => {
    const whole = await get('/reference');
    const errors = await get('/reference?section=errors');
    expect(errors.etag).not.toBe(whole.etag);
    expect((await get('/reference?section=operations', { 'if-none-match': errors.etag! })).status).toBe(200);
  });

  it('the documents need no token: a bearer header, even a malformed one, changes nothing', async () => {
    const plain = await get('/reference');
    const withJunk = await get('/reference', { authorization: 'Bearer not-a-token' });
    expect(withJunk.status).toBe(200);
    expect(withJunk.text).toBe(plain.text);
    expect((await get('/robots.txt', { authorization: 'Bearer x' })).status).toBe(200);
  });
});

describe('GET /reference, whole', () => {
  it('has an Errors section with a heading, status, message and fix for every catalogue code', async () => {
    const { text } = await get('/reference');
    expect(text).toMatch(/^## Errors$/m);
    for (const [code, e] of Object.entries(CATALOGUE)) {
      const at = text.indexOf(`\n### ${code}\n`);
      expect(at, code).toBeGreaterThan(text.indexOf('\n## Errors\n'));
      const entry = text.slice(at, text.indexOf('\n### ', at + 1) === -1 ? undefined : text.indexOf('\n### ', at + 1));
      expect(entry).toContain(`Status ${e.status}.`);
      expect(entry).toContain(e.message);
      expect(entry).toContain(e.fix);
    }
  });

  it('has an Operations section with an entry for every operation GET / indexes: method, path, auth and description', async () => {
    const { text } = await get('/reference');
    expect(text).toMatch(/^## Operations$/m);
    expect(index.operations.length).toBeGreaterThan(30);
    for (const o of index.operations) {
      const at = text.indexOf(`\n### ${o.name}\n`);
      expect(at, o.name).toBeGreaterThan(text.indexOf('\n## Operations\n'));
      const entry = text.slice(at, text.indexOf('\n### ', at + 1));
      expect(entry).toContain(`\`${o.method} ${o.path}\` · auth ${o.auth}`);
      expect(entry).toContain(o.describe);
    }
    // The documents themselves are operations of the index.
    expect(index.operations.map((o) => o.name)).toEqual(expect.arrayContaining(['reference', 'llms', 'robots']));
  });

  it('its Limits section shows every number capabilities publishes under limits', async () => {
    const { text } = await get('/reference?section=limits');
    const caps = (await getJson(`${relay.url}/v1/capabilities`)).body as { limits: Record<string, unknown>; rate_limits: Record<string, { limit: number }> };
    for (const [name, value] of Object.entries(caps.limits)) {
      const shown = typeof value === 'object' ? `\`${JSON.stringify(value)}\`` : String(value);
      expect(text, name).toContain(`| \`${name}\` | ${shown} |`);
    }
    for (const [name, rate] of Object.entries(caps.rate_limits)) expect(text, name).toContain(`| \`${name}\` | ${rate.limit} |`);
  });

  it('capabilities say API 0.1 and name the newer features served and left out; the API versions section says the same, feature by feature', async () => {
    const caps = (await getJson(`${relay.url}/v1/capabilities`)).body as { api_version: string; features: any };
    expect(caps.api_version).toBe('0.1');
    expect(caps.features).toMatchObject({ api_version: '0.1', newer_api_version: '0.9' });
    expect(caps.features.supported).toEqual(['signed_tool_arguments', 'sealed_tool_arguments', 'post_summary', 'post_batches', 'task_batches', 'sealed_keeper', 'attachments', 'task_changes', 'task_after_gating', 'task_attempts', 'task_token_budget', 'detail_headlines', 'finding', 'propose_change_prompt']);
    expect(caps.features.left_out).toEqual(expect.arrayContaining(['task_jobs', 'funding']));
    expect(caps.features.left_out).not.toContain('detail_headlines');
    expect(caps.features.left_out).not.toContain('finding');
    expect(caps.features.left_out).not.toContain('attachments');
    for (const name of caps.features.supported) expect(caps.features.by_name[name].status).toBe('supported');
    for (const name of caps.features.left_out) expect(caps.features.by_name[name].status).toBe('left_out');
    const { status, text } = await get('/reference?section=api-versions');
    expect(status).toBe(200);
    expect(text).toContain('API 0.1');
    for (const name of caps.features.supported) expect(text).toContain(`| \`${name}\` | ${caps.features.by_name[name].api} | supported |`);
    for (const name of caps.features.left_out) expect(text).toContain(`| \`${name}\` | ${caps.features.by_name[name].api} | left out |`);
  });

  it('its Authentication section carries the same sign-in steps as the primer, naming this relay', async () => {
    const primer = await get('/');
    const auth = await get('/reference?section=authentication');
    const steps = primer.text.split('\n').filter((l) => /^[123]\. /.test(l));
    expect(steps).toHaveLength(3);
    for (const step of steps) expect(auth.text).toContain(step);
    expect(auth.text).toContain(`${relay.url}/v1/keys/challenge`);
  });

  it('the doc address of a real refusal names a section the reference answers', async () => {
    const unknownPath = await getJson(`${relay.url}/v1/no-such-thing`);
    const noToken = await getJson(`${relay.url}/v1/me`);
    for (const doc of [unknownPath.body.error.doc as string, noToken.body.error.doc as string]) {
      const [path, fragment] = doc.split('#');
      expect(path).toBe('/reference');
      const section = await get(`/reference?section=${fragment}`);
      expect(section.status).toBe(200);
      expect(section.text.split('\n')[0]!.toLowerCase()).toBe(`## ${fragment}`);
    }
  });
});

describe('GET /reference?section=', () => {
  it('answers one top-level section with its sub-headings and nothing else', async () => {
    const { text } = await get('/reference?section=errors');
    expect(text.startsWith('## Errors\n')).toBe(true);
    expect(text).not.toMatch(/^## (?!Errors)/m);
    expect(text).not.toContain('### posts.append');
    for (const code of Object.keys(CATALOGUE)) expect(text).toContain(`\n### ${code}\n`);
  });

  it('answers one code by its heading address, and reads a heading written as shown or as an anchor', async () => {
    const one = await get('/reference?section=invalid-request');
    expect(one.text.startsWith('### INVALID_REQUEST\n')).toBe(true);
    expect(one.text).toContain(CATALOGUE.INVALID_REQUEST.fix);
    expect(one.text).not.toContain('### TOO_LARGE');
    expect((await get('/reference?section=INVALID_REQUEST')).text).toBe(one.text);
    expect((await get('/reference?section=%23errors')).text).toBe((await get('/reference?section=errors')).text);
    expect((await get('/reference?section=Encoding%20conventions')).text.startsWith('## Encoding conventions\n')).toBe(true);
  });

  it('an unknown section is INVALID_REQUEST whose detail lists the sections', async () => {
    const r = await refusal('/reference?section=glossary');
    expect(r.status).toBe(400);
    expect(r.code).toBe('INVALID_REQUEST');
    expect(r.detail).toContain('section: no section "glossary"');
    for (const s of ['authentication', 'operations', 'errors', 'limits', 'encoding-conventions']) expect(r.detail).toContain(s);
  });

  it('section and operation together are INVALID_REQUEST', async () => {
    const r = await refusal('/reference?section=errors&operation=me');
    expect(r.status).toBe(400);
    expect(r.code).toBe('INVALID_REQUEST');
    expect(r.detail).toBe('section, operation: give one, not both');
  });

  it('an unknown query member or a repeated section is INVALID_REQUEST naming it', async () => {
    const extra = await refusal('/reference?sections=errors');
    expect([extra.status, extra.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(extra.detail).toContain('"sections"');
    const twice = await refusal('/reference?section=errors&section=limits');
    expect([twice.status, twice.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(twice.detail).toContain('section');
  });
});

describe('GET /reference?operation=', () => {
  it('answers one operation by name or operationId form, with method, path, auth and description', async () => {
    const byName = await get('/reference?operation=posts.append');
    const byId = await get('/reference?operation=posts_append');
    expect(byName.status).toBe(200);
    expect(byId.text).toBe(byName.text);
    const o = index.operations.find((x) => x.name === 'posts.append')!;
    expect(byName.text.startsWith('### posts.append\n')).toBe(true);
    expect(byName.text).toContain(`\`POST ${o.path}\` · auth bearer`);
    expect(byName.text).toContain(o.describe);
    expect(byName.text).toContain('section=errors');
    expect(byName.text).not.toContain('### posts.read');
  });

  it('an operation whose name holds an underscore is found by name and by operationId', async () => {
    const a = await get('/reference?operation=tokens.revoke_one');
    const b = await get('/reference?operation=tokens_revoke_one');
    expect(a.status).toBe(200);
    expect(b.text).toBe(a.text);
    expect(a.text).toContain('`DELETE /v1/tokens/{id}`');
  });

  it('every operation the index lists can be asked for alone', async () => {
    for (const o of index.operations) {
      const r = await get(`/reference?operation=${encodeURIComponent(o.name)}`);
      expect(r.status, o.name).toBe(200);
      expect(r.text.startsWith(`### ${o.name}\n`)).toBe(true);
    }
  });

  it('an unknown operation is INVALID_REQUEST naming the nearest ones', async () => {
    const r = await refusal('/reference?operation=post.apend');
    expect(r.status).toBe(400);
    expect(r.code).toBe('INVALID_REQUEST');
    expect(r.detail).toMatch(/^operation: no operation "post\.apend"; nearest: posts\.append/);
    const underscored = await refusal('/reference?operation=tokens_revoke_on');
    expect(underscored.detail).toMatch(/nearest: tokens\.revoke_one/);
  });
});

describe('GET /llms.txt', () => {
  it('names the service, links the documents and lists every operation one a line', async () => {
    const { text } = await get('/llms.txt');
    expect(text.startsWith('# svc-relay\n')).toBe(true);
    expect(text).toMatch(/^> .{80,}$/m);
    for (const link of [`${relay.url}/ `, `${relay.url}/reference `, `${relay.url}/v1/capabilities `]) expect(text).toContain(link);
    const lines = text.split('\n').filter((l) => /^- [a-z_.]+: [A-Z]+ \//.test(l));
    expect(lines.map((l) => l.slice(2, l.indexOf(':')))).toEqual(index.operations.map((o) => o.name));
    for (const o of index.operations) expect(text).toContain(`- ${o.name}: ${o.method} ${o.path} (auth ${o.auth})`);
  });

  it('links every document the relay serves by its full address', async () => {
    const { text } = await get('/llms.txt');
    const documents = index.operations.filter((o) => o.method === 'GET' && !o.path.startsWith('/v1/') && !['llms', 'health', 'oauth.resource', 'oauth.metadata', 'oauth.authorize'].includes(o.name) && !o.path.startsWith('/mcp') && !o.path.startsWith('/app/'));
    expect(documents.map((o) => o.name)).toEqual(expect.arrayContaining(['guide', 'reference', 'robots', 'skill', 'plugins.marketplace', 'plugins.archive']));
    for (const o of documents) expect(text, o.name).toContain(`- ${o.name}: ${relay.url}${o.path}`);
  });
});

describe('GET /robots.txt', () => {
  /** RFC 9309 §2.2.2: the longest matching rule wins, allow on a tie; `$` ends, `*` any. */
  function allowed(robots: string, path: string): boolean {
    const rules = robots
      .split('\n')
      .map((l) => /^(Allow|Disallow):\s*(\S*)/i.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ allow: m[1]!.toLowerCase() === 'allow', pattern: m[2]! }));
    let best: { allow: boolean; length: number } | undefined;
    for (const r of rules) {
      const anchored = r.pattern.endsWith('$');
      const body = anchored ? r.pattern.slice(0, -1) : r.pattern;
      const escaped = body.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
      const re = new RegExp(`^${escaped.join('.*')}${anchored ? '$' : ''}`);
      if (!re.test(path)) continue;
      const length = r.pattern.length;
      if (!best || length > best.length || (length === best.length && r.allow)) best = { allow: r.allow, length };
    }
    return best?.allow ?? true;
  }

  it('applies to every crawler, allows the documents and disallows /v1/', async () => {
    const { text } = await get('/robots.txt');
    expect(text).toMatch(/^User-agent: \*$/m);
    expect(text).toMatch(/^Disallow: \/v1\/$/m);
    for (const rule of ['Allow: /$', 'Allow: /reference', 'Allow: /llms.txt']) expect(text.split('\n')).toContain(rule);
  });

  it('by RFC 9309 matching, the documents are allowed and every API path of the index is not', async () => {
    const { text } = await get('/robots.txt');
    for (const path of ['/', '/reference', '/reference?section=errors', '/llms.txt', '/reviewer-rules.md']) expect(allowed(text, path), path).toBe(true);
    // The documents of spec/2-endpoints.md "Documents and service state", whichever this relay serves.
    const documents = ['guide', 'reference', 'llms', 'robots', 'oracle.reviewer_rules', 'openapi', 'skill', 'sealed.spec', 'tools.sign_post', 'tools.verify_post', 'tools.bridge', 'tools.sealed', 'plugins.marketplace', 'plugins.archive', 'plugins.bundle'];
    for (const o of index.operations.filter((o) => documents.includes(o.name))) expect(allowed(text, o.path), o.path).toBe(true);
    const api = index.operations.filter((o) => !documents.includes(o.name));
    expect(api.length).toBeGreaterThan(30);
    for (const o of api) {
      const concrete = o.path.replace(/\{[a-z_]+\}/g, 'x');
      expect(allowed(text, concrete), o.path).toBe(false);
    }
  });
});
