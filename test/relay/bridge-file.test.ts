/**
 * `GET /bridge.mjs` (spec/2-endpoints.md tools.bridge, relay/routes/bridge-file.ts): the relay
 * serves the bundle it was built with, byte for byte, as a document (no KEY, ETag and 304,
 * X-Request-Id); a relay run from its sources has no bundle and says how to build one, never
 * serving a dist/ that may be older than the sources. The file served runs by itself.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtBridgeBundle, NO_BUNDLE_DETAIL } from '../../relay/routes/bridge-file.js';
import { bridgeBundle } from '../helpers/bundle.js';
import { call, REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';

let withBundle: RunningRelay;
let fromSources: RunningRelay;
let missing: RunningRelay;
const scratch = mkdtempSync(join(tmpdir(), 'svc-bridge-file-'));

beforeAll(async () => {
  withBundle = await startRelay({ bridgeBundle: bridgeBundle() });
  fromSources = await startRelay();
  missing = await startRelay({ bridgeBundle: join(scratch, 'not-built.mjs') });
});

afterAll(async () => {
  await Promise.all([withBundle, fromSources, missing].map((r) => r?.close()));
  rmSync(scratch, { recursive: true, force: true });
});

describe('GET /bridge.mjs', () => {
  it('serves the bundle byte for byte as JavaScript, with no KEY, an ETag, a request id, and 304 for the same ETag', async () => {
    const res = await fetch(`${withBundle.url}/bridge.mjs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(bridgeBundle()))).toBe(true);

    const again = await call(withBundle, 'GET', '/bridge.mjs', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
  });

  it('serves a file that runs alone: saved into an empty directory, `node bridge.mjs --help` answers', async () => {
    const text = (await call(withBundle, 'GET', '/bridge.mjs')).text;
    const file = join(scratch, 'bridge.mjs');
    writeFileSync(file, text);
    const r = spawnSync(process.execPath, [file, '--help'], { cwd: scratch, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: scratch } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('svc-bridge              serve MCP over stdio');
    expect(r.stdout).toContain(`"command": "node", "args": [${JSON.stringify(file)}]`);
  });

  it('is the operation tools.bridge of the index, with no KEY', async () => {
    const index = await call(withBundle, 'GET', '/', { headers: { accept: 'application/json' } });
    expect(index.body.operations).toContainEqual(expect.objectContaining({ name: 'tools.bridge', method: 'GET', path: '/bridge.mjs', auth: 'none' }));
  });

  it('from the sources, with no bundle, is 404 with the envelope saying to run npm run build', async () => {
    const r = await call(fromSources, 'GET', '/bridge.mjs');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 'INVALID_REQUEST', detail: NO_BUNDLE_DETAIL });
    expect(r.body.error.detail).toContain('npm run build');
    expect(r.body.error.request_id).toBe(r.headers.get('x-request-id'));
  });

  it('a bundle named in the settings but not there is 404 saying to build it, without naming the path', async () => {
    const r = await call(missing, 'GET', '/bridge.mjs');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    expect(r.body.error.detail).toContain('npm run build');
    expect(r.text).not.toContain(scratch);
  });

  it('by default is the bundle beside the compiled relay (dist/bridge.mjs), and none when the relay runs from its sources', () => {
    expect(builtBridgeBundle(pathToFileURL(join(REPO_ROOT, 'dist/relay/routes/bridge-file.js')).href)).toBe(join(REPO_ROOT, 'dist/bridge.mjs'));
    expect(builtBridgeBundle(pathToFileURL(join(REPO_ROOT, 'relay/routes/bridge-file.ts')).href)).toBeUndefined();
  });
});
