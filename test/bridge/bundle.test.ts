/**
 * `/bridge.mjs`, the bridge as one file (scripts/bundle-bridge.mjs), run as a person would run
 * the file they downloaded: `node bridge.mjs` in a directory holding nothing else (no
 * node_modules, no package.json, nothing of the checkout), over stdio with the MCP SDK client,
 * against the real relay. The same run as the other bridge tests, in brief: tools/list,
 * svc_whoami, a SPACE made, a signed post checked by its receipt, read back with its proof and
 * checkpoint, and a sealed SPACE with a second bundled bridge admitted and reading what the
 * owner sealed. Launched by a client with this machine's system Node when it is too old (20),
 * it runs itself on Node 24 from the npm registry, or serves the reason where it cannot fetch it.
 * The whole suite can also run on the bundle: SVC_TEST_BRIDGE=bundle.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, runBridge, startBridge, tempHome, textOf, toolOk, type RunningBridge } from '../helpers/bridge.js';
import { bundleAlone, type LoneBundle } from '../helpers/bundle.js';
import { REPO_ROOT, startRelay, type RunningRelay } from '../helpers/relay.js';
import { freshName } from '../helpers/spaces.js';
import { nodeIsRecentEnough } from '../../launch/node-version.js';
import { BRIDGE_TOOL_NAMES } from '../../bridge/config-error-server.js';
import { cacheContent, programTextIn } from '../../bridge/code-cache.js';
import { listedInputSchemas } from '../../bridge/listed-schemas.js';
import { createKey, openKeyDirectory } from '../../bridge/keys/keys.js';

/** The system Node an MCP client would launch the bridge with, when older than the bridge needs; else why there is nothing to test. */
function systemNode(): { path: string; version: string } | { skip: string } {
  const r = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) return { skip: 'skipped: this machine has no /usr/bin/node to launch the bridge with' };
  const version = r.stdout.trim();
  if (nodeIsRecentEnough(version)) return { skip: `skipped: /usr/bin/node is ${version}, recent enough, so nothing is re-launched` };
  return { path: '/usr/bin/node', version };
}
const system = systemNode();
const older = 'path' in system ? system : undefined;
const skipOld = 'skip' in system ? ` (${system.skip})` : '';

let relay: RunningRelay;
let lone: LoneBundle;
const open: RunningBridge[] = [];

beforeAll(async () => {
  relay = await startRelay();
  lone = bundleAlone();
}, 60_000);

afterAll(async () => {
  await Promise.all(open.map((b) => b.close()));
  await relay?.close();
  lone?.remove();
});

async function bridge(home = tempHome(), env: Record<string, string> = {}): Promise<RunningBridge> {
  const b = await startBridge({ relayUrl: relay.url, home, env, bundle: lone.file });
  open.push(b);
  return b;
}

describe('node bridge.mjs, alone in a directory', () => {
  it('answers --version with the version of the package it was built from', async () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runBridge(['--version'], { home: tempHome(), bundle: lone.file });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it.skipIf(older === undefined)(
    `launched by an MCP client with the system Node, runs on Node 24: tools/list and svc_whoami answer, one line on stderr says so${skipOld}`,
    async () => {
      const a = await startBridge({ relayUrl: relay.url, home: tempHome(), bundle: lone.file, node: older!.path });
      open.push(a);
      const tools = (await a.client.listTools()).tools.map((t) => t.name);
      expect([...tools].sort()).toEqual([...BRIDGE_TOOL_NAMES].sort());
      expect(toolOk(await callTool(a, 'svc_whoami', {})).peer_id).toMatch(/^[0-9a-f]{64}$/);
      const lines = a.stderr().split('\n').filter((l) => l.includes('needs Node.js'));
      expect(lines).toEqual([expect.stringMatching(new RegExp(`^svc-bridge needs Node\\.js 22\\.13 or later and this is Node ${older!.version.slice(1)}: (running on Node 24|fetching Node 24)`))]);
    },
    120_000,
  );

  it.skipIf(older === undefined)(
    `launched with the system Node where Node 24 cannot be fetched, serves initialize, tools/list and every tool call with the reason and what to install${skipOld}`,
    async () => {
      const cache = mkdtempSync(join(tmpdir(), 'svc-empty-npm-cache-'));
      try {
        const a = await startBridge({
          relayUrl: relay.url,
          home: tempHome(),
          bundle: lone.file,
          node: older!.path,
          env: { npm_config_registry: 'http://127.0.0.1:9', npm_config_cache: cache },
        });
        open.push(a);
        const reason = `svc-bridge needs Node.js 22.13 or later and this is Node ${older!.version.slice(1)}; Node 24 could not be fetched from the npm registry (npm: ECONNREFUSED). Install Node.js 24 (or 22.13 or later) and start it again.`;
        expect(a.client.getInstructions()).toContain(reason);
        const tools = (await a.client.listTools()).tools;
        expect(tools.map((t) => t.name).sort()).toEqual([...BRIDGE_TOOL_NAMES].sort());
        for (const t of tools) {
          const r = await callTool(a, t.name, {});
          expect(r.isError, t.name).toBe(true);
          expect(textOf(r), t.name).toContain(reason);
        }
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    },
    120_000,
  );

  it('serves tools/list and svc_whoami over stdio, having made its KEY', async () => {
    const a = await bridge();
    const tools = (await a.client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['svc_whoami', 'svc_guide', 'svc_spaces', 'svc_space_control', 'svc_post', 'svc_read_space', 'svc_get', 'svc_mailbox', 'svc_seek']));
    const me = toolOk(await callTool(a, 'svc_whoami', {}));
    expect(me.peer_id).toMatch(/^[0-9a-f]{64}$/);
    expect(a.stderr()).not.toMatch(/ExperimentalWarning|Cannot find (module|package)/);
  });

  it('makes a SPACE, posts signed with the receipt checked, and reads it back with its proof and checkpoint', async () => {
    const a = await bridge();
    const space = freshName('bundle');
    toolOk(await callTool(a, 'svc_space_control', { action: 'create', name: space, title: 'From the bundle' }));
    const posted = toolOk(await callTool(a, 'svc_post', { space, kind: 'result', title: 'One file', body: 'Posted by bridge.mjs.' }));
    expect(posted.bridge).toMatchObject({ signed: true, receipt_check: { ok: true } });

    relay.clock.advance(11 * 60_000);
    await (relay.app as any).checkpointer.runOnce(relay.clock.now());
    const read = toolOk(await callTool(a, 'svc_read_space', { space, after: '0', proof: true, detail: 'full' }));
    expect(read.items).toHaveLength(1);
    expect(read.items[0]).toMatchObject({ post_id: posted.post_id, title: 'One file', body: 'Posted by bridge.mjs.' });
    expect(read.bridge.checks[0].proof.ok).toBe(true);
    expect(read.bridge.checks[0].inclusion).toMatchObject({ ok: true, checkpoint: { first: '1', last: '1' } });
    expect(read.bridge.changed_history).toBe(false);
  });

  it('keeps a sealed SPACE: the owner seals, a second bundled bridge is admitted, opens the lock and reads it', async () => {
    const owner = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const member = await bridge(tempHome(), { SVC_KEEPER_INTERVAL: '0' });
    const name = freshName('sealed-bundle');
    toolOk(await callTool(owner, 'svc_space_control', { action: 'create', name, visibility: 'sealed', title: 'Sealed by bridge.mjs' }));
    const sealed = await callTool(owner, 'svc_post', { space: name, kind: 'obs', title: 'Sealed here', body: 'Only members open this.' });
    expect(textOf(sealed)).toMatch(/sealed:\s+yes, on this machine under generation 1/);

    const asked = toolOk(await callTool(member, 'svc_join', { action: 'join', name, message: 'let me in' }));
    const approved = toolOk(await callTool(owner, 'svc_space_control', { action: 'approve', request_id: asked.request_id }));
    expect(approved.sealed_key).toEqual({ state: 'locked', generation: 1, stamped: true });

    const read = await callTool(member, 'svc_read_space', { space: name, after: '0', detail: 'full' });
    expect(textOf(read)).not.toContain('COULD NOT BE OPENED');
    expect(toolOk(read).items.map((p: any) => [p.title, p.body])).toEqual([['Sealed here', 'Only members open this.']]);
  }, 60_000);

  it('lists each tool with the argument schema its build made, the one the sources make', async () => {
    const a = await bridge();
    const listed = Object.fromEntries((await a.client.listTools()).tools.map((t) => [t.name, t.inputSchema]));
    expect(listed).toEqual(await listedInputSchemas());
  });

  it('carries its program as ASCII text, one byte a character for V8, non-ASCII strings escaped', () => {
    const text = programTextIn(readFileSync(lone.file));
    expect(text).toBeDefined();
    expect(/^[\x00-\x7f]*$/.test(text ?? '')).toBe(true);
    expect(text).toContain('\\u2212');
  });

  it("carries zod's English messages and no other language's: zod is imported as a namespace, which the bundler can trim", () => {
    // `import { z } from 'zod'` names zod's namespace object as a whole, so every export stays,
    // its 40-odd locales (400 KB of the program) included; `import * as z` keeps what is used.
    const text = programTextIn(readFileSync(lone.file)) ?? '';
    const locales = [...text.matchAll(/node_modules\/zod\/v4\/locales\/([a-zA-Z-]+)\.js/g)].map((m) => m[1]);
    expect(locales).toContain('en');
    expect(locales.filter((l) => l !== 'en' && l !== 'index')).toEqual([]);
  });

  it("builds the MCP SDK's zod schemas when first used, not as it loads (scripts/lazy-schemas.mjs)", () => {
    const text = programTextIn(readFileSync(lone.file)) ?? '';
    // The schema modules export getters; specTypeSchemas reads through them; elicitation's tables wait too.
    // The program is bundled without layout whitespace (scripts/bundle-bridge.mjs): the patterns allow for either.
    expect(text).toMatch(/function JSONRPCMessageSchema\$lazy\(\)/);
    expect(text).toMatch(/get: ?ListToolsRequestSchema\$lazy ?\}/);
    expect(text).not.toMatch(/\bJSONRPCMessageSchema ?= ?[^=>]/);
    expect(text).toMatch(/Object\.defineProperty\(_specTypeSchemas, ?name, ?\{ ?get: ?\w+, ?enumerable: ?true ?\}\)/);
    expect(text).toMatch(/function ROOT_KEYS\$lazy\(\)/);
  });

  it("a serving start loads none of Node's modules it does not use: its entry imports none as an ES module, child_process waits for an older Node", async () => {
    // An ES module import of node:fs reads all of fs's exports, loading its streams, fs/promises and readline.
    const entry = readFileSync(lone.file, 'latin1').split('\n//svc-program ')[0]!;
    expect(entry).not.toMatch(/^import\b/m);
    expect(entry).toContain('builtin("node:fs")');
    const dir = mkdtempSync(join(tmpdir(), 'svc-loaded-'));
    try {
      const hook = join(dir, 'loaded.cjs');
      const list = join(dir, 'loaded.txt');
      writeFileSync(hook, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));\n`);
      const a = await bridge(tempHome(), { NODE_OPTIONS: `--require ${hook}` });
      expect((await a.client.listTools()).tools.length).toBe(BRIDGE_TOOL_NAMES.length);
      await a.close();
      await waitFor(() => existsSync(list));
      const loaded = readFileSync(list, 'utf8').split('\n');
      expect(loaded).toContain('NativeModule sqlite');
      expect(loaded.filter((m) => /child_process|dgram|fs\/promises|fs\/streams|readline/.test(m))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers its opening requests before loading node:crypto: the KEY, read from its file at the start, is derived from when a tool first needs it', async () => {
    const home = tempHome();
    const made = createKey(openKeyDirectory(home), 'default').key;
    const dir = mkdtempSync(join(tmpdir(), 'svc-loaded-'));
    try {
      // For each answer the bridge writes to stdout: the members of its result, and whether node:crypto was loaded by then.
      const hook = join(dir, 'answers.cjs');
      const log = join(dir, 'answers.jsonl');
      writeFileSync(
        hook,
        `const { appendFileSync } = require('node:fs');\n` +
          `const write = process.stdout.write.bind(process.stdout);\n` +
          `process.stdout.write = (chunk, ...rest) => {\n` +
          `  const crypto = process.moduleLoadList.includes('NativeModule crypto');\n` +
          `  for (const line of String(chunk).split('\\n').filter(Boolean)) {\n` +
          `    appendFileSync(${JSON.stringify(log)}, JSON.stringify({ result: Object.keys(JSON.parse(line).result ?? {}), crypto }) + '\\n');\n` +
          `  }\n` +
          `  return write(chunk, ...rest);\n` +
          `};\n`,
      );
      const a = await bridge(home, { NODE_OPTIONS: `--require ${hook}` });
      expect((await a.client.listTools()).tools.length).toBe(BRIDGE_TOOL_NAMES.length);
      const me = toolOk(await callTool(a, 'svc_whoami', {}));
      expect(me.peer_id).toBe(made.peerId);
      await a.close();
      const answers = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { result: string[]; crypto: boolean });
      const answer = (member: string) => answers.find((x) => x.result.includes(member));
      expect(answer('protocolVersion')).toEqual({ result: expect.arrayContaining(['protocolVersion']), crypto: false });
      expect(answer('tools')).toEqual({ result: expect.arrayContaining(['tools']), crypto: false });
      expect(answer('structuredContent')).toEqual({ result: expect.arrayContaining(['structuredContent']), crypto: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('its compiled code, kept in the key directory', () => {
    /** The suite's bridges share one compile cache (test/setup/bridge-bundle.ts); these keep it where a person's does. */
    const inKeyDirectory = { SVC_COMPILE_CACHE: '' };
    /** The compile cache files of a key directory. */
    const compiled = (home: string) => {
      const dir = join(home, 'cache', 'compile');
      return existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : [];
    };

    it('a first serving start makes cache/compile/bridge-<hash>-node<version>-<arch>.v8; the next start serves from it and leaves it as it is', async () => {
      const home = tempHome();
      const first = await bridge(home, inKeyDirectory);
      expect((await first.client.listTools()).tools.length).toBe(BRIDGE_TOOL_NAMES.length);
      await first.close();
      await waitFor(() => compiled(home).length === 1);
      const [file] = compiled(home);
      expect(file).toMatch(new RegExp(`/cache/compile/bridge-[0-9a-f]{16}-node${process.versions.node.replace(/\./g, '\\.')}-${process.arch}\\.v8$`));
      expect(cacheContent(readFileSync(file!))).toBeDefined();
      expect(statSync(join(home, 'cache', 'compile')).mode & 0o777).toBe(0o700);
      expect(statSync(file!).mode & 0o777).toBe(0o600);
      const made = statSync(file!);

      const second = await bridge(home, inKeyDirectory);
      expect((await second.client.listTools()).tools.length).toBe(BRIDGE_TOOL_NAMES.length);
      expect(toolOk(await callTool(second, 'svc_whoami', {})).peer_id).toMatch(/^[0-9a-f]{64}$/);
      await second.close();
      expect(compiled(home)).toEqual([file]);
      const after = statSync(file!);
      expect([after.ino, after.mtimeMs, after.size]).toEqual([made.ino, made.mtimeMs, made.size]);
    });

    it('a damaged cache file does not stop it: it serves tools/list and svc_whoami compiled afresh, and puts a whole cache in its place', async () => {
      const home = tempHome();
      const first = await bridge(home, inKeyDirectory);
      await first.client.listTools();
      await first.close();
      await waitFor(() => compiled(home).length === 1);
      const [file] = compiled(home);
      for (const damage of [(b: Buffer) => b.subarray(0, b.length >> 1), (b: Buffer) => Buffer.from(b.map((x, i) => (i > 64 && i % 97 === 0 ? x ^ 0x5a : x)))]) {
        writeFileSync(file!, damage(readFileSync(file!)));
        expect(cacheContent(readFileSync(file!))).toBeUndefined();
        const b = await bridge(home, inKeyDirectory);
        expect((await b.client.listTools()).tools.length).toBe(BRIDGE_TOOL_NAMES.length);
        expect(toolOk(await callTool(b, 'svc_whoami', {})).peer_id).toMatch(/^[0-9a-f]{64}$/);
        await b.close();
        await waitFor(() => cacheContent(readFileSync(file!)) !== undefined);
      }
    });

    it('a command (id, --help) makes no cache', async () => {
      const home = tempHome();
      const r = await runBridge(['id'], { home, bundle: lone.file, env: inKeyDirectory });
      expect(r.code, r.stderr).toBe(0);
      expect((await runBridge(['--help'], { home, bundle: lone.file, env: inKeyDirectory })).code).toBe(0);
      expect(compiled(home)).toEqual([]);
    });

    it('SVC_COMPILE_CACHE names another folder, shared by key directories, or 0 for none', async () => {
      const shared = mkdtempSync(join(tmpdir(), 'svc-compile-'));
      try {
        for (const home of [tempHome(), tempHome()]) {
          const b = await bridge(home, { SVC_COMPILE_CACHE: shared });
          await b.client.listTools();
          await b.close();
          expect(compiled(home)).toEqual([]);
        }
        await waitFor(() => readdirSync(shared).filter((f) => f.endsWith('.v8')).length === 1);
        const none = tempHome();
        const b = await bridge(none, { SVC_COMPILE_CACHE: '0' });
        await b.client.listTools();
        await b.close();
        expect(compiled(none)).toEqual([]);
      } finally {
        rmSync(shared, { recursive: true, force: true });
      }
    });
  });
});

/** Wait until `done()` holds: a bridge writes its cache as it exits, after its client has closed. */
async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
  expect(done()).toBe(true);
}
