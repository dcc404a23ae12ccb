/**
 * How svc ships to MCP hosts and registries, checked against the formats' own published rules:
 *
 * - The MCP Bundle (`.mcpb`) that `npm run build`'s script writes (scripts/bundle-bridge.mjs
 *   `--mcpb`) and the relay serves at /plugins/svc.mcpb: unpacked, its manifest read and its
 *   launch worked out by the format's reference implementation (@anthropic-ai/mcpb: its
 *   unpacker, its manifest schema for the version the manifest names, and the variable
 *   substitution a host applies to `mcp_config`), then launched with the MCP SDK's stdio client
 *   against a real relay.
 * - server.json for the MCP Registry, validated against the registry's published schema
 *   (test/vectors/published/mcp-server-2025-12-11.schema.json) and held to package.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getMcpConfigForManifest, MANIFEST_SCHEMAS, unpackExtension } from '@anthropic-ai/mcpb';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_TOOL_NAMES } from '../../bridge/config-error-server.js';
import { bridgeBundle } from '../helpers/bundle.js';
import { REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';

const PKG = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string; version: string; mcpName: string; bin: Record<string, string> };

interface Manifest {
  manifest_version: string;
  name: string;
  version: string;
  server: { type: string; entry_point: string; mcp_config: { command: string; args: string[]; env: Record<string, string> } };
  compatibility: { runtimes: { node: string } };
  user_config: Record<string, { type: string; required?: boolean; default?: string }>;
}

let relay: RunningRelay;
const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The bundle as the build's script writes it, from this run's one-file bridge. */
function buildMcpb(): string {
  const out = join(tempDir('svc-mcpb-build-'), 'svc.mcpb');
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'scripts/bundle-bridge.mjs'), '--mcpb', out, '--bridge', bridgeBundle()], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`writing the bundle failed (${r.status ?? r.signal}):\n${r.stdout}${r.stderr}`);
  return out;
}

/** Unpack a bundle with the format's own unpacker; returns the directory and its manifest. */
async function unpack(mcpbPath: string): Promise<{ dir: string; manifest: Manifest }> {
  const dir = join(tempDir('svc-mcpb-unpacked-'), 'svc');
  expect(await unpackExtension({ mcpbPath, outputDir: dir, silent: true })).toBe(true);
  return { dir, manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest };
}

/** The format's schema for the manifest's own version; the issues, empty when it passes. */
function manifestIssues(manifest: unknown): string[] {
  const version = (manifest as { manifest_version?: string }).manifest_version as keyof typeof MANIFEST_SCHEMAS;
  const schema = MANIFEST_SCHEMAS[version];
  if (schema === undefined) return [`no schema for manifest_version ${String(version)}`];
  const result = schema.safeParse(manifest);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

/**
 * Launch the unpacked bundle as a host does: the host's substitution of `mcp_config` (its own
 * Node for `node`), the person's settings as `userConfig`, and connect the MCP SDK's client.
 */
async function launchAsHost(dir: string, manifest: Manifest, userConfig: Record<string, string>, home: string) {
  const config = await getMcpConfigForManifest({
    manifest: manifest as never,
    extensionPath: dir,
    systemDirs: { HOME: home, DESKTOP: join(home, 'Desktop'), DOCUMENTS: join(home, 'Documents'), DOWNLOADS: join(home, 'Downloads') },
    userConfig,
    pathSeparator: '/',
  });
  if (config === undefined) throw new Error('the host would not start the bundle (a required setting is missing)');
  expect(config.command).toBe('node');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: config.args ?? [],
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, ...config.env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'svc-mcpb-host', version: '0.0.0' });
  try {
    await client.connect(transport);
  } catch (e) {
    throw new Error(`the bundle did not start: ${(e as Error).message}\n${err}`);
  }
  return { client, config, stderr: () => err };
}

describe('the MCP Bundle npm run build writes', () => {
  let mcpb: string;
  let unpacked: { dir: string; manifest: Manifest };

  beforeAll(async () => {
    mcpb = buildMcpb();
    unpacked = await unpack(mcpb);
  }, 60_000);

  it('unpacks to manifest.json and server/bridge.mjs, the one-file bridge unchanged', () => {
    const files = readdirSync(unpacked.dir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => join(f.parentPath, f.name).slice(unpacked.dir.length + 1));
    expect(files.sort()).toEqual(['manifest.json', 'server/bridge.mjs']);
    expect(readFileSync(join(unpacked.dir, 'server/bridge.mjs')).equals(readFileSync(bridgeBundle()))).toBe(true);
  });

  it("has a manifest the format's published schema accepts, in its current version, naming the package and its Node", () => {
    const m = unpacked.manifest;
    expect(manifestIssues(m)).toEqual([]);
    expect(m.manifest_version).toBe('0.3');
    expect(m).toMatchObject({ name: PKG.name, version: PKG.version });
    expect(m.server).toEqual({
      type: 'node',
      entry_point: 'server/bridge.mjs',
      mcp_config: { command: 'node', args: ['${__dirname}/server/bridge.mjs'], env: { SVC_API: '${user_config.relay}', SVC_HOME: '${user_config.key_directory}' } },
    });
    expect(m.compatibility.runtimes.node).toBe('>=22.13');
    expect(m.user_config.relay).toMatchObject({ type: 'string', required: true, default: 'http://127.0.0.1:8787' });
    expect(m.user_config.key_directory).toMatchObject({ type: 'directory', required: false });
    // The schema is not a rubber stamp: a manifest without its author is refused.
    const { author: _author, ...authorless } = m as unknown as Record<string, unknown>;
    expect(manifestIssues(authorless)).not.toEqual([]);
  });

  it('launched as its mcp_config says, answers tools/list against the relay, its KEY in the key directory set', async () => {
    const home = tempDir('svc-mcpb-home-');
    const keys = join(home, 'chosen-keys');
    const host = await launchAsHost(unpacked.dir, unpacked.manifest, { relay: relay.url, key_directory: keys }, home);
    try {
      expect(host.config.args).toEqual([join(unpacked.dir, 'server/bridge.mjs')]);
      expect(host.config.env).toEqual({ SVC_API: relay.url, SVC_HOME: keys });
      const tools = (await host.client.listTools()).tools.map((t) => t.name);
      expect([...tools].sort()).toEqual([...BRIDGE_TOOL_NAMES].sort());
      const whoami = await host.client.callTool({ name: 'svc_whoami', arguments: {} });
      expect(whoami.isError ?? false).toBe(false);
      expect(readdirSync(join(keys, 'keys')).length).toBeGreaterThan(0);
    } finally {
      await host.client.close();
    }
  }, 60_000);

  it('with the key directory left empty, keeps the KEY in ~/.svc, not in a directory named after the unfilled setting', async () => {
    const home = tempDir('svc-mcpb-home-');
    const host = await launchAsHost(unpacked.dir, unpacked.manifest, { relay: relay.url }, home);
    try {
      // What a host passes for an optional setting nobody filled in: its placeholder, as written.
      expect(host.config.env!.SVC_HOME).toBe('${user_config.key_directory}');
      const whoami = await host.client.callTool({ name: 'svc_whoami', arguments: {} });
      expect(whoami.isError ?? false).toBe(false);
      expect(readdirSync(join(home, '.svc', 'keys')).length).toBeGreaterThan(0);
      expect(existsSync(join(home, '${user_config.key_directory}'))).toBe(false);
    } finally {
      await host.client.close();
    }
  }, 60_000);
});

describe('GET /plugins/svc.mcpb', () => {
  it("serves the bundle as a zip download, its relay setting defaulting to the serving relay's address", async () => {
    const built = await startRelay({ publicUrl: 'https://relay.example', bridgeBundle: bridgeBundle() });
    try {
      const r = await fetch(`${built.url}/plugins/svc.mcpb`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/zip');
      expect(r.headers.get('content-disposition')).toBe('attachment; filename="svc.mcpb"');
      const file = join(tempDir('svc-mcpb-served-'), 'svc.mcpb');
      writeFileSync(file, Buffer.from(await r.arrayBuffer()));
      const { dir, manifest } = await unpack(file);
      expect(manifestIssues(manifest)).toEqual([]);
      expect(manifest.user_config.relay!.default).toBe('https://relay.example');
      expect(readFileSync(join(dir, 'server/bridge.mjs')).equals(readFileSync(bridgeBundle()))).toBe(true);
      const again = await fetch(`${built.url}/plugins/svc.mcpb`, { headers: { 'if-none-match': r.headers.get('etag')! } });
      expect(again.status).toBe(304);
    } finally {
      await built.close();
    }
  });

  it('answers 404 with the envelope on a relay run from its sources, which has no one-file bridge', async () => {
    const r = await fetch(`${relay.url}/plugins/svc.mcpb`);
    expect(r.status).toBe(404);
    const body = (await r.json()) as { error: { code: string; detail: string } };
    expect(body.error.code).toBe('INVALID_REQUEST');
    expect(body.error.detail).toContain('npm run build');
  });
});

describe('server.json for the MCP Registry', () => {
  const server = JSON.parse(readFileSync(join(REPO_ROOT, 'server.json'), 'utf8')) as {
    $schema: string;
    name: string;
    version: string;
    packages: { registryType: string; identifier: string; version: string; transport: { type: string }; environmentVariables: { name: string }[] }[];
    remotes: { type: string; url: string }[];
  };
  const schema = JSON.parse(readFileSync(join(REPO_ROOT, 'test/vectors/published/mcp-server-2025-12-11.schema.json'), 'utf8')) as { $id: string };
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const validate = ajv.compile(schema);

  it("passes the registry's published schema, the one it names", () => {
    expect(server.$schema).toBe(schema.$id);
    expect(validate(server), JSON.stringify(validate.errors)).toBe(true);
    // The schema bites: the registry caps the description at 100 characters.
    expect(validate({ ...server, description: 'x'.repeat(101) })).toBe(false);
  });

  it('names the npm package as package.json does, run over stdio with SVC_API and SVC_HOME, and the relay connector', () => {
    expect(server.name).toBe(PKG.mcpName);
    expect(PKG.mcpName).toMatch(/^io\.github\.[\w-]+\/[\w.-]+$/);
    expect(server.version).toBe(PKG.version);
    expect(server.packages).toHaveLength(1);
    const npm = server.packages[0]!;
    expect(npm).toMatchObject({ registryType: 'npm', identifier: PKG.name, version: PKG.version, transport: { type: 'stdio' } });
    expect(npm.environmentVariables.map((v) => v.name)).toEqual(['SVC_API', 'SVC_HOME']);
    // npx runs the bin named like the package: the bridge, what an MCP client launches.
    expect(PKG.bin[PKG.name]).toBe('dist/bridge.mjs');
    expect(Object.keys(PKG.bin).sort()).toEqual(['svc-bridge', 'svc-relay']);
    expect(server.remotes).toEqual([expect.objectContaining({ type: 'streamable-http', url: 'https://{relay}/mcp/connect' })]);
  });

  it('points at a connector whose OAuth protected-resource document the relay serves where the entry says', async () => {
    const r = await fetch(`${relay.url}/.well-known/oauth-protected-resource/mcp/connect`);
    expect(r.status).toBe(200);
    const doc = (await r.json()) as { resource: string; authorization_servers: string[] };
    expect(doc.resource).toBe(`${relay.url}/mcp/connect`);
    expect(doc.authorization_servers.length).toBeGreaterThan(0);
  });
});
