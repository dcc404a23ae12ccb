/**
 * End to end: the real svc-bridge process over stdio (MCP SDK Client + StdioClientTransport)
 * against a real relay on loopback. Tools and resources are listed, svc_whoami answers as the
 * KEY's peer id, refusals are tool errors with code, message and fix, and the CLI commands work.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PEER_MARKER_NOTE } from '../../tools/render.js';
import { runBridge, startBridge, tempHome, type RunningBridge } from '../helpers/bridge.js';
import { mintToken, startRelay, type RunningRelay } from '../helpers/relay.js';

let relay: RunningRelay;
let bridge: RunningBridge;

beforeAll(async () => {
  relay = await startRelay();
  bridge = await startBridge({ relayUrl: relay.url });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await relay?.close();
});

const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

describe('the bridge over stdio', () => {
  it('introduces itself with instructions that explain peer markers', () => {
    expect(bridge.client.getServerVersion()?.name).toBe('svc-bridge');
    expect(bridge.client.getInstructions()).toContain(PEER_MARKER_NOTE);
  });

  it('lists its tools, svc_whoami and svc_guide among them, with input schemas and descriptions', async () => {
    const { tools } = await bridge.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['svc_guide', 'svc_join', 'svc_space_control', 'svc_spaces', 'svc_whoami']));
    expect(byName.get('svc_whoami')!.inputSchema.properties).toHaveProperty('after');
    expect(byName.get('svc_guide')!.inputSchema.properties).toHaveProperty('part');
    for (const t of tools) expect((t.description ?? '').length).toBeGreaterThan(80);
  });

  it('no tool\'s input schema holds an empty schema that takes anything (MCP Inspector strict mode)', async () => {
    const empty: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${at}[${i}]`));
      if (typeof node !== 'object' || node === null) return;
      if (Object.keys(node).length === 0) empty.push(at);
      for (const [k, v] of Object.entries(node)) {
        // Under properties and $defs the keys are names, each holding a schema.
        if (k === 'properties' || k === '$defs') for (const [name, sub] of Object.entries(v as object)) walk(sub, `${at}.${k}.${name}`);
        else if (typeof v === 'object') walk(v, `${at}.${k}`);
      }
    };
    const { tools } = await bridge.client.listTools();
    for (const t of tools) walk(t.inputSchema, t.name);
    expect(empty).toEqual([]);
  });

  it('svc_post lists data and budget as objects, svc_guide part=tools names their members, and a budget metric with remaining left out is posted as unknown', async () => {
    const { tools } = await bridge.client.listTools();
    const schema = tools.find((t) => t.name === 'svc_post')!.inputSchema as Record<string, any>;
    expect(schema.properties.data).toMatchObject({ type: 'object' });
    expect(schema.properties.budget).toMatchObject({ type: 'object' });
    const guide = text((await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'tools', section: 'svc_post' } })) as CallToolResult);
    for (const member of ['observed_at', 'compute', 'execution_time', 'output_tokens', 'context_available', '{remaining, unit, estimated}', 'return_status', 'attribution']) {
      expect(guide).toContain(member);
    }
    const space = `budget-${Date.now().toString(36)}`;
    expect(((await bridge.client.callTool({ name: 'svc_space_control', arguments: { action: 'create', name: space } })) as CallToolResult).isError).toBeFalsy();
    const posted = (await bridge.client.callTool({
      name: 'svc_post',
      arguments: { space, kind: 'handoff', body: 'b', budget: { observed_at: '2026-01-31T12:00:00Z', compute: { unit: 'tokens' }, output_tokens: { remaining: '10', estimated: false } } },
    })) as CallToolResult;
    expect(posted.isError, text(posted)).toBeFalsy();
    const got = (await bridge.client.callTool({ name: 'svc_get', arguments: { post_id: (posted.structuredContent as { post_id: string }).post_id } })) as CallToolResult;
    expect((got.structuredContent as { budget: unknown }).budget).toEqual({
      observed_at: '2026-01-31T12:00:00Z',
      compute: { remaining: null, unit: 'tokens', estimated: null },
      output_tokens: { remaining: '10', estimated: false },
    });
  });

  it('lists the resources svc://guide, svc://reference, svc://capabilities and svc://me', async () => {
    const { resources } = await bridge.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['svc://capabilities', 'svc://guide', 'svc://me', 'svc://reference']));
  });

  it('svc_whoami answers with the peer id of the KEY in the key directory', async () => {
    const id = await runBridge(['id'], { home: bridge.home, relayUrl: relay.url });
    expect(id.code).toBe(0);
    const peerId = id.stdout.trim();
    const r = (await bridge.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as { peer_id: string; service_epoch: string; bridge: { run_id: string; key: string } };
    expect(s.peer_id).toBe(peerId);
    expect(s.bridge.key).toBe('default');
    expect(s.bridge.run_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const caps = (await (await fetch(`${relay.url}/v1/capabilities`)).json()) as { service_epoch: string };
    expect(s.service_epoch).toBe(caps.service_epoch);
    expect(text(r)).toContain(peerId);
    expect(text(r)).toContain(s.bridge.run_id);
    // The same run keeps the same run id.
    const again = (await bridge.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
    expect((again.structuredContent as { bridge: { run_id: string } }).bridge.run_id).toBe(s.bridge.run_id);
  });

  it('svc_guide with no part gives the run routine as tool calls, part=primer the HTTP primer, and the capabilities as a summary plus the whole JSON', async () => {
    const start = (await bridge.client.callTool({ name: 'svc_guide', arguments: {} })) as CallToolResult;
    expect(start.isError).toBeFalsy();
    expect(start.structuredContent).toMatchObject({ part: 'start' });
    const routine = text(start);
    for (const call of ['svc_whoami', 'svc_read_space space=<your work SPACE> standing=true kind=["dossier"] author=<your peer id> limit=1 detail=full', 'svc_mailbox', 'svc_seek', 'svc_post', 'kind=dossier']) {
      expect(routine).toContain(call);
    }
    expect(routine.indexOf('svc_whoami')).toBeLessThan(routine.indexOf('svc_seek'));
    expect(routine).not.toContain('keys/challenge');
    const primer = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'primer' } })) as CallToolResult;
    expect(primer.isError).toBeFalsy();
    expect(text(primer)).toContain('keys/challenge');
    const caps = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'capabilities' } })) as CallToolResult;
    const json = (caps.structuredContent as { capabilities: { api_version: string; operations: unknown[] } }).capabilities;
    expect(json.api_version).toBe('0.1');
    expect(text(caps)).toMatch(/^api_version: +0\.1$/m);
    expect(text(caps)).toContain('me: GET /v1/me');
  });

  it('svc_guide part=reference gives the relay\'s reference, whole or narrowed by section or operation', async () => {
    const whole = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'reference' } })) as CallToolResult;
    expect(whole.isError).toBeFalsy();
    const served = await (await fetch(`${relay.url}/reference`)).text();
    expect((whole.structuredContent as { markdown: string }).markdown).toBe(served);
    expect(text(whole)).toContain('### INVALID_REQUEST');
    const errors = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'reference', section: 'errors' } })) as CallToolResult;
    expect(text(errors).startsWith('## Errors')).toBe(true);
    expect(text(errors)).not.toContain('## Operations');
    const op = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'reference', operation: 'posts.append' } })) as CallToolResult;
    expect(text(op)).toContain('`POST /v1/spaces/{name}/posts`');
    expect(op.structuredContent).toMatchObject({ part: 'reference', section: null, operation: 'posts.append' });
  });

  it('svc_guide part=reference with a section the relay does not have is a tool error listing the sections', async () => {
    const r = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'reference', section: 'glossary' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    const error = (r.structuredContent as { error: { code: string; detail: string } }).error;
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.detail).toContain('no section "glossary"');
    expect(error.detail).toContain('errors');
  });

  it('resources read the relay: svc://me is this KEY, svc://capabilities the document', async () => {
    const me = await bridge.client.readResource({ uri: 'svc://me' });
    const meJson = JSON.parse((me.contents[0] as { text: string }).text) as { peer_id: string };
    const whoami = (await bridge.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
    expect(meJson.peer_id).toBe((whoami.structuredContent as { peer_id: string }).peer_id);
    const caps = await bridge.client.readResource({ uri: 'svc://capabilities' });
    expect(JSON.parse((caps.contents[0] as { text: string }).text)).toHaveProperty('operations');
    const guide = await bridge.client.readResource({ uri: 'svc://guide' });
    expect(guide.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    const reference = await bridge.client.readResource({ uri: 'svc://reference' });
    expect(reference.contents[0]).toMatchObject({ mimeType: 'text/markdown' });
    const text = (reference.contents[0] as { text: string }).text;
    expect(text).toContain('INVALID_REQUEST');
    expect(text).toContain('posts.append');
  });

  it('an argument the bridge refuses is a tool error with INVALID_REQUEST and its fix', async () => {
    const r = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'primer', section: 'x' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    const e = (r.structuredContent as { error: { code: string; fix: string; detail: string; source: string } }).error;
    expect(e.code).toBe('INVALID_REQUEST');
    expect(e.source).toBe('bridge');
    expect(e.detail).toContain('section');
    expect(text(r)).toMatch(/^INVALID_REQUEST\. /);
  });

  it('an argument name the tool does not take is refused with the names it does take', async () => {
    const r = (await bridge.client.callTool({ name: 'svc_seek', arguments: { query: 'npm' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('unknown argument "query"');
    expect(text(r)).toMatch(/this tool takes q, fingerprint, fingerprint_prefix, space\b/);
    const post = (await bridge.client.callTool({ name: 'svc_post', arguments: { space_name: 'x', kind: 'obs' } })) as CallToolResult;
    expect(post.isError).toBe(true);
    expect(text(post)).toContain('unknown argument "space_name"; this tool takes space, kind, title, summary, body');
  });

  it('a fingerprint given to svc_seek as one string instead of a list is refused with the list form to use', async () => {
    const r = (await bridge.client.callTool({ name: 'svc_seek', arguments: { fingerprint: 'sha256.file:abcdef0123' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('a list of "scheme:value" strings');
    expect(text(r)).not.toContain('characters');
    expect(text(r)).not.toContain('up to 8');
  });

  it('a second bridge run on the same key directory reuses the token instead of minting', async () => {
    const second = await startBridge({ relayUrl: relay.url, home: bridge.home });
    try {
      const r = (await second.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(r.isError).toBeFalsy();
      expect(second.stderr()).not.toMatch(/minted a token|registered KEY/);
    } finally {
      await second.close();
    }
  }, 30_000);
});

describe('refusals from the relay', () => {
  it('a revoked SVC_TOKEN makes svc_whoami a tool error carrying TOKEN_REVOKED, message and fix', async () => {
    const minted = await mintToken(relay.url);
    await fetch(`${relay.url}/v1/tokens/current`, { method: 'DELETE', headers: { authorization: `Bearer ${minted.token}` } });
    const b = await startBridge({ relayUrl: relay.url, env: { SVC_TOKEN: minted.token } });
    try {
      const r = (await b.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      const e = (r.structuredContent as { error: { code: string; message: string; fix: string; request_id: string; source: string } }).error;
      expect(e).toMatchObject({ code: 'TOKEN_REVOKED', fix: 'Mint a new token.', source: 'relay' });
      expect(e.message).toMatch(/^TOKEN_REVOKED\. /);
      expect(text(r)).toContain('TOKEN_REVOKED.');
      expect(text(r)).toContain(`Request id ${e.request_id}.`);
    } finally {
      await b.close();
    }
  }, 30_000);

  it('a revoked minted token is survived without the agent noticing', async () => {
    const b = await startBridge({ relayUrl: relay.url });
    try {
      const first = (await b.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(first.isError).toBeFalsy();
      const token = await runBridge(['token'], { home: b.home, relayUrl: relay.url });
      await fetch(`${relay.url}/v1/tokens`, { method: 'DELETE', headers: { authorization: `Bearer ${token.stdout.trim()}` } });
      const second = (await b.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(second.isError).toBeFalsy();
      expect((second.structuredContent as { peer_id: string }).peer_id).toBe((first.structuredContent as { peer_id: string }).peer_id);
    } finally {
      await b.close();
    }
  }, 30_000);
});

describe('the CLI', () => {
  it('token prints a token that works; me prints the KEY\'s own view as JSON', async () => {
    const home = tempHome();
    const token = await runBridge(['token'], { home, relayUrl: relay.url });
    expect(token.code).toBe(0);
    expect(token.stdout.trim()).toMatch(/^svc_[0-9a-f]{64}$/);
    const check = await fetch(`${relay.url}/v1/me`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
    expect(check.status).toBe(200);
    const me = await runBridge(['me'], { home, relayUrl: relay.url });
    expect(me.code).toBe(0);
    const id = await runBridge(['id'], { home, relayUrl: relay.url });
    expect((JSON.parse(me.stdout) as { peer_id: string }).peer_id).toBe(id.stdout.trim());
  }, 60_000);

  it('keys new makes a KEY, keys lists it, and a taken name is refused', async () => {
    const home = tempHome();
    const made = await runBridge(['keys', 'new', 'work'], { home });
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(/^work [0-9a-f]{64}\n$/);
    const again = await runBridge(['keys', 'new', 'work'], { home });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('KEY_EXISTS');
    const list = await runBridge(['keys'], { home });
    expect(list.stdout).toContain(made.stdout.trim().split(' ')[1]);
  }, 60_000);

  it('--help explains each command, and an unknown command is a usage error', async () => {
    const home = tempHome();
    for (const cmd of [[], ['id'], ['token'], ['me'], ['keys']]) {
      const r = await runBridge([...cmd, '--help'], { home });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('svc-bridge');
      expect(r.stdout).toContain('SVC_API');
    }
    // From the sources, the client configuration it shows launches this checkout's build, not a registry package.
    const main = await runBridge(['--help'], { home, bundle: false });
    expect(main.stdout).toContain('"command": "node", "args": ["');
    expect(main.stdout).toContain('dist/bridge/main.js');
    expect(main.stdout).not.toContain('npx');
    const bad = await runBridge(['frobnicate'], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown command');
    // `help [command]` says the same as `[command] --help`.
    expect((await runBridge(['help'], { home, bundle: false })).stdout).toBe(main.stdout);
    const keysHelp = await runBridge(['keys', '--help'], { home });
    expect((await runBridge(['help', 'keys'], { home })).stdout).toBe(keysHelp.stdout);
    const noTopic = await runBridge(['help', 'frobnicate'], { home });
    expect(noTopic.code).toBe(2);
    expect(noTopic.stderr).toContain('no help for frobnicate');
  }, 60_000);
});
