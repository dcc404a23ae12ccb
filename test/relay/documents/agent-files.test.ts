/**
 * The files an agent's MCP client installs, from the real relay over HTTP: the skill
 * (`/skills/svc/SKILL.md`), the plugin marketplace and the plugin archive it names. The archive
 * is read here with zlib, record by record, and checked with the system's `unzip -t` where that
 * program exists, so the zip layout is not only checked against our own writer's idea of it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zipArchive } from '../../../relay/documents/zip.js';
import { startRelay, type RunningRelay } from '../../helpers/relay.js';
import { bridgeBundle } from '../../helpers/bundle.js';

let relay: RunningRelay;

beforeAll(async () => {
  relay = await startRelay({ publicUrl: 'https://relay.example' });
});
afterAll(async () => {
  await relay.close();
});

/** Every file of a zip archive, read from its central directory and local headers. */
function unzip(archive: Buffer): Map<string, Buffer> {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  expect(end).toBeGreaterThan(0);
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    expect(archive.readUInt32LE(at)).toBe(0x02014b50);
    const method = archive.readUInt16LE(at + 10);
    const crc = archive.readUInt32LE(at + 16);
    const packedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extra = archive.readUInt16LE(at + 30);
    const comment = archive.readUInt16LE(at + 32);
    const local = archive.readUInt32LE(at + 42);
    const name = archive.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    expect(archive.readUInt32LE(local)).toBe(0x04034b50);
    const dataAt = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const packed = archive.subarray(dataAt, dataAt + packedSize);
    const data = method === 8 ? inflateRawSync(packed) : Buffer.from(packed);
    expect(data.length).toBe(size);
    expect(crc32(data)).toBe(crc);
    files.set(name, data);
    at += 46 + nameLength + extra + comment;
  }
  return files;
}

const systemUnzip = ['/usr/bin/unzip', '/bin/unzip'].find((p) => existsSync(p));

describe('the agent skill', () => {
  it('is markdown with the front matter skill loaders read, naming this relay and the run routine', async () => {
    const r = await fetch(`${relay.url}/skills/svc/SKILL.md`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const text = await r.text();
    expect(text).toMatch(/^---\nname: svc\ndescription: [^\n]+\n---\n/);
    expect(text).toContain('https://relay.example');
    for (const tool of ['svc_whoami', 'svc_seek', 'svc_post', 'svc_mailbox', 'svc_read_space']) expect(text).toContain(tool);
    expect(text).toContain('never an instruction');
    const again = await fetch(`${relay.url}/skills/svc/SKILL.md`, { headers: { 'if-none-match': r.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});

describe('the plugin marketplace and archive', () => {
  it('names the archive by address and SHA-256, and the archive holds the manifest, the server configuration and the skill', async () => {
    const m = await fetch(`${relay.url}/plugins/marketplace.json`);
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const market = (await m.json()) as { name: string; owner: { name: string }; plugins: { name: string; source: string; sha256: string; version: string }[] };
    expect(market.name).toBe('svc');
    expect(market.owner.name).toBe('relay.example');
    expect(market.plugins).toHaveLength(1);
    const plugin = market.plugins[0]!;
    expect(plugin.source).toBe('https://relay.example/plugins/svc.zip');

    const z = await fetch(`${relay.url}/plugins/svc.zip`);
    expect(z.status).toBe(200);
    expect(z.headers.get('content-type')).toBe('application/zip');
    const archive = Buffer.from(await z.arrayBuffer());
    expect(createHash('sha256').update(archive).digest('hex')).toBe(plugin.sha256);

    const files = unzip(archive);
    expect([...files.keys()].sort()).toEqual(['.claude-plugin/plugin.json', '.mcp.json', 'README.md', 'skills/svc/SKILL.md']);
    const manifest = JSON.parse(files.get('.claude-plugin/plugin.json')!.toString()) as { name: string; version: string };
    expect(manifest).toMatchObject({ name: 'svc', version: plugin.version });
    const servers = JSON.parse(files.get('.mcp.json')!.toString()) as { mcpServers: Record<string, { command: string; env: Record<string, string> }> };
    expect(servers.mcpServers.svc).toMatchObject({ command: 'svc-bridge', env: { SVC_API: 'https://relay.example' } });
    const skill = await (await fetch(`${relay.url}/skills/svc/SKILL.md`)).text();
    expect(files.get('skills/svc/SKILL.md')!.toString()).toBe(skill);

    const etag = z.headers.get('etag')!;
    expect((await fetch(`${relay.url}/plugins/svc.zip`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it.skipIf(systemUnzip === undefined)(`passes the system unzip program's own test of every entry${(systemUnzip === undefined ? ' (skipped: no unzip program in /usr/bin or /bin)' : '')}`, async () => {
    const archive = Buffer.from(await (await fetch(`${relay.url}/plugins/svc.zip`)).arrayBuffer());
    const dir = mkdtempSync(join(tmpdir(), 'svc-zip-'));
    try {
      writeFileSync(join(dir, 'svc.zip'), archive);
      const out = execFileSync(systemUnzip!, ['-t', join(dir, 'svc.zip')], { encoding: 'utf8' });
      expect(out).toContain('No errors detected');
      expect(out).toContain('skills/svc/SKILL.md');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is byte-stable: the same files make the same archive, so its SHA-256 changes only with a file', () => {
    const files = [{ name: 'a/b.txt', data: Buffer.from('one') }, { name: 'c.json', data: Buffer.from('{}') }];
    expect(zipArchive(files).equals(zipArchive(files))).toBe(true);
    expect(zipArchive(files).equals(zipArchive([files[0]!, { name: 'c.json', data: Buffer.from('{ }') }]))).toBe(false);
    expect(() => zipArchive([{ name: '../escape', data: Buffer.from('x') }])).toThrow(/relative path/);
  });
});

describe('the plugin archive of a relay that has the one-file bridge', () => {
  it('carries bridge.mjs and starts it with node from the plugin folder, so the plugin needs no npm install', async () => {
    const built = await startRelay({ publicUrl: 'https://relay.example', bridgeBundle: bridgeBundle() });
    const dir = mkdtempSync(join(tmpdir(), 'svc-plugin-'));
    try {
      const archive = Buffer.from(await (await fetch(`${built.url}/plugins/svc.zip`)).arrayBuffer());
      const market = (await (await fetch(`${built.url}/plugins/marketplace.json`)).json()) as { plugins: { sha256: string }[] };
      expect(createHash('sha256').update(archive).digest('hex')).toBe(market.plugins[0]!.sha256);
      const files = unzip(archive);
      expect(files.has('bridge.mjs')).toBe(true);
      const servers = JSON.parse(files.get('.mcp.json')!.toString()) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> };
      expect(servers.mcpServers.svc).toEqual({ command: 'node', args: ['${CLAUDE_PLUGIN_ROOT}/bridge.mjs'], env: { SVC_API: 'https://relay.example' } });

      // Unpacked as a client would, the entry runs with nothing but Node.
      for (const [name, text] of files) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), text);
      }
      const args = servers.mcpServers.svc!.args.map((a) => a.replace('${CLAUDE_PLUGIN_ROOT}', dir));
      const out = execFileSync(process.execPath, [...args, '--version'], { encoding: 'utf8', cwd: dir, env: { PATH: process.env.PATH ?? '' } });
      expect(out.trim()).toMatch(/^\d+\.\d+\.\d+/);
      expect(files.get('bridge.mjs')!.equals(readFileSync(bridgeBundle()))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await built.close();
    }
  });
});
