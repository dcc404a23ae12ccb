/**
 * The npm package, packed from this checkout and installed into a temporary prefix
 * (test/helpers/package.ts), run with no checkout and no ../shared: from an empty directory,
 * with PATH holding only the prefix's bin and Node. svc-bridge answers --version and serves
 * tools/list over stdio to the MCP SDK client; svc-relay listens, answers /healthz and serves
 * the bridge bundle it was built with, the documents it reads from files and the category
 * register from its data files; the archive holds
 * what the programs read at run time.
 * Everything is removed afterwards.
 *
 * @module-tag slow
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packAndInstall, type InstalledPackage } from '../helpers/package.js';
import { REPO_ROOT } from '../helpers/relay.js';
import { TOP_IDS } from '../../relay/categories/index.js';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let pkg: InstalledPackage;
let relay: { child: ChildProcess; url: string } | undefined;

/** The environment of a person's shell with the package installed: its bin and Node on PATH, a home of its own. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: pkg.path, HOME: join(pkg.scratch, 'home'), ...extra };
}

/** Start the installed svc-relay on a free port; resolves with its address once it says it listens. */
function startInstalledRelay(): Promise<{ child: ChildProcess; url: string }> {
  const data = join(pkg.scratch, 'data');
  const child = spawn(pkg.bin.relay, ['--port', '0', '--data', data], { cwd: pkg.scratch, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`svc-relay exited (${code}) before listening:\n${out}${err}`)));
  });
}

beforeAll(() => {
  pkg = packAndInstall();
  mkdirSync(join(pkg.scratch, 'home'));
}, 240_000);

afterAll(async () => {
  if (relay !== undefined && relay.child.exitCode === null) {
    const exited = new Promise((r) => relay!.child.once('exit', r));
    relay.child.kill('SIGTERM');
    await exited;
  }
  pkg?.remove();
});

describe('the installed package', () => {
  it('holds what the programs read at run time, and no sources, tests or source maps', () => {
    const files = new Set(pkg.files);
    for (const f of [
      'package.json',
      'README.md',
      'docs/operating.md',
      'docs/bridge.md',
      'docs/trust.md',
      'dist/bridge.mjs',
      'dist/bridge/main.js',
      'dist/relay/main.js',
      'dist/relay/store/sqlite/wal-checkpoints.js',
      'dist/relay/documents/tools/sign-post.mjs',
      'dist/relay/documents/tools/verify-post.mjs',
      'dist/relay/documents/tools/sealed.mjs',
      'dist/relay/documents/tools/sealed.md',
      'dist/relay/categories/register.schema.json',
      ...TOP_IDS.map((id) => `dist/relay/categories/register/${id}.json`),
      'relay/web/authorize.html',
      'relay/web/view/index.html',
      'dist/relay/web/view/app.js',
      'keys.example/README.md',
    ]) {
      expect(files.has(f), f).toBe(true);
    }
    expect(pkg.files.filter((f) => /\.map$|\.ts$|\.mcpb$|^test\/|^bench\/|^scripts\//.test(f))).toEqual([]);
    for (const store of ['sqlite', 'postgres']) {
      expect(pkg.files.some((f) => new RegExp(`^dist/relay/store/${store}/migrations/\\d+.*\\.js$`).test(f)), store).toBe(true);
    }
  });

  it('puts svc-bridge and svc-relay on PATH, and svc-bridge --version answers the package version', () => {
    const r = spawnSync('svc-bridge', ['--version'], { cwd: pkg.scratch, env: env(), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    const help = spawnSync('svc-bridge', ['--help'], { cwd: pkg.scratch, env: env(), encoding: 'utf8' });
    // Installed and on PATH: the MCP client configuration it prints is the command itself.
    expect(help.stdout).toContain('{"mcpServers": {"svc": {"command": "svc-bridge", "env": {"SVC_API": "http://127.0.0.1:8787"}}}}');
  });

  it('svc-relay listens, answers /healthz, serves the bridge bundle it was built with at /bridge.mjs, and the category register from its data files', async () => {
    relay = await startInstalledRelay();
    const health = await fetch(`${relay.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const bundle = await fetch(`${relay.url}/bridge.mjs`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const installed = readFileSync(join(pkg.prefix, 'lib', 'node_modules', 'svc-bridge', 'dist', 'bridge.mjs'));
    expect(Buffer.from(await bundle.arrayBuffer()).equals(installed)).toBe(true);
    // The MCP Bundle, built by the installed relay from that same bridge (the package ships no .mcpb of its own).
    const mcpb = await fetch(`${relay.url}/plugins/svc.mcpb`);
    expect(mcpb.status).toBe(200);
    expect(mcpb.headers.get('content-type')).toBe('application/zip');
    // The documents read from files: the download scripts, the app approval page and the view.
    for (const path of ['/sign-post.mjs', '/verify-post.mjs', '/app/authorize', '/view/', '/view/app.js', '/view/proof.js']) expect((await fetch(`${relay.url}${path}`)).status, path).toBe(200);
    // The category register, from its data files.
    const categories = await fetch(`${relay.url}/v1/categories/rust-language`);
    expect(categories.status).toBe(200);
    expect(await categories.json()).toMatchObject({ id: 'rust-language', path: [{ id: 'computing' }, { id: 'programming-languages' }, { id: 'rust-language' }] });
  }, 60_000);

  it('svc-bridge serves tools/list over stdio to the MCP client, and svc_whoami at the installed relay', async () => {
    expect(relay, 'the relay test runs first').toBeDefined();
    const transport = new StdioClientTransport({
      command: pkg.bin.bridge,
      args: [],
      cwd: pkg.scratch,
      env: env({ SVC_API: relay!.url, SVC_HOME: join(pkg.scratch, 'svc') }),
      stderr: 'pipe',
    });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: 'svc-package-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(['svc_whoami', 'svc_post', 'svc_read_space']));
      const me = (await client.callTool({ name: 'svc_whoami', arguments: {} })) as { isError?: boolean; structuredContent?: any };
      expect(me.isError, err).toBeFalsy();
      expect(me.structuredContent.peer_id).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await client.close();
    }
  }, 60_000);
});
