/**
 * The tool surface as a client pays for it (DESIGN.md "MCP"): tools/list of the real bridge over
 * stdio and of the relay's `/mcp`, at both protocol revisions.
 *
 * - Size: the whole surface in at most 18,000 characters of tools/list JSON (`{"tools":[…]}`),
 *   the `memory` toolset in at most 7,000; the figure per tool is printed.
 * - Input schemas any strict validator takes: an object root closed to unknown arguments, one
 *   `type` string per node (never a list), no nullable union but where null means something an
 *   omitted argument cannot (an invite's unlimited uses, a lifetime of never), every list with
 *   its items, every `$ref` to the root's own `$defs`, no `{}` that takes anything, JSON Schema
 *   2020-12 (MCP's default dialect: no `$schema` naming another), the same at both revisions.
 * - Toolsets: SVC_TOOLS for the bridge and `?tools=` at `/mcp` list the sets' tools; a tool
 *   outside them answers which set holds it and how to turn it on; an unknown set is said at
 *   start (the bridge: every tool answers it and stderr says it; the relay: 400 with the envelope).
 * - svc_guide part=tools: every tool, or one, with what its short listing leaves out.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLSETS, TOOL_NAMES, type ToolsetName } from '../../tools/toolsets.js';
import { startBridge, textOf, type McpRevision, type RunningBridge } from '../helpers/bridge.js';
import { callConnector, connectConnector } from '../helpers/connector.js';
import { mintToken, startRelay, type MintedToken, type RunningRelay } from '../helpers/relay.js';

/** The most the whole surface may cost, and the memory set. */
const SURFACE_MAX = 18_000;
const MEMORY_MAX = 7_000;

const REVISIONS: McpRevision[] = ['2025-11-25', '2026-07-28'];

let relay: RunningRelay;
let bridge: RunningBridge;
let token: MintedToken;

beforeAll(async () => {
  relay = await startRelay();
  bridge = await startBridge({ relayUrl: relay.url });
  token = await mintToken(relay.url);
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await relay?.close();
});

/** What a client is sent: the JSON of `{tools}`. */
function listedSize(tools: Tool[]): number {
  return JSON.stringify({ tools }).length;
}

function printSizes(where: string, tools: Tool[]): void {
  const rows = tools.map((t) => `  ${t.name.padEnd(18)} ${String(JSON.stringify(t).length).padStart(5)}  description ${String((t.description ?? '').length).padStart(4)}  schema ${String(JSON.stringify(t.inputSchema).length).padStart(5)}`);
  console.log(`tools/list of ${where}: ${listedSize(tools)} characters, ${tools.length} tools\n${rows.join('\n')}`);
}

async function connectorTools(path: `/mcp?${string}` | '/mcp', revision: McpRevision): Promise<Tool[]> {
  const c = await connectConnector(relay.url, { token: token.token, revision, path });
  try {
    return (await c.client.listTools()).tools;
  } finally {
    await c.close();
  }
}

type Json = Record<string, unknown>;

/** Where a listed input schema is not what a strict validator takes; empty when it is. */
function strictProblems(tool: Tool): string[] {
  const problems: string[] = [];
  const root = tool.inputSchema as Json;
  const defs = (root.$defs ?? {}) as Json;
  // null where an omitted argument cannot say it: unlimited uses, a lifetime of never.
  const nullMeans = new Set(['svc_space_control.max_uses', 'svc_space_control.expires_in_seconds']);
  if (root.type !== 'object') problems.push('root: type is not "object"');
  if (root.additionalProperties !== false) problems.push('root: unknown arguments are not refused (additionalProperties)');
  if (root.$schema !== undefined && root.$schema !== 'https://json-schema.org/draft/2020-12/schema') problems.push(`root: $schema ${String(root.$schema)}`);
  const walk = (node: unknown, at: string, property: string | undefined): void => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      problems.push(`${at}: a schema that is not an object (${JSON.stringify(node)})`);
      return;
    }
    const n = node as Json;
    if (Object.keys(n).length === 0) problems.push(`${at}: {} takes anything`);
    if (Array.isArray(n.type)) problems.push(`${at}: type is a list ${JSON.stringify(n.type)}`);
    if ('nullable' in n) problems.push(`${at}: nullable (OpenAPI, not JSON Schema)`);
    if ('definitions' in n) problems.push(`${at}: definitions (draft-07; 2020-12 says $defs)`);
    if (at !== tool.name && '$defs' in n) problems.push(`${at}: $defs below the root`);
    if (n.type === undefined && n.$ref === undefined && n.anyOf === undefined && n.enum === undefined) problems.push(`${at}: no type`);
    if (typeof n.$ref === 'string') {
      const name = /^#\/\$defs\/(.+)$/.exec(n.$ref)?.[1];
      if (name === undefined || defs[name] === undefined) problems.push(`${at}: $ref ${n.$ref} does not reach the root's $defs`);
    }
    if (n.type === 'array') {
      if (n.items === undefined) problems.push(`${at}: a list without items`);
      else walk(n.items, `${at}[]`, property);
    }
    if (Array.isArray(n.anyOf)) {
      const branches = n.anyOf as Json[];
      if (branches.some((b) => b.type === 'null') && branches.length === 2 && !nullMeans.has(`${tool.name}.${property}`)) {
        problems.push(`${at}: a nullable union where leaving the argument out serves`);
      }
      branches.forEach((b, i) => walk(b, `${at}.anyOf[${i}]`, property));
    }
    if (typeof n.additionalProperties === 'object') walk(n.additionalProperties, `${at}.additionalProperties`, property);
    if (n.properties !== undefined) {
      for (const [name, sub] of Object.entries(n.properties as Json)) walk(sub, `${at}.${name}`, at === tool.name ? name : property);
    }
  };
  walk(root, tool.name, undefined);
  for (const [name, def] of Object.entries(defs)) walk(def, `${tool.name}.$defs.${name}`, name);
  return problems;
}

describe('tools/list: the surface in at most 18,000 characters, the memory set in 7,000', () => {
  it('the bridge over stdio lists every tool in at most 18,000 characters', async () => {
    const { tools } = await bridge.client.listTools();
    printSizes('svc-bridge (all)', tools);
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(listedSize(tools)).toBeLessThanOrEqual(SURFACE_MAX);
  });

  it("the relay's /mcp lists the same tools in at most 18,000 characters at both revisions, and ?tools=memory in at most 7,000", async () => {
    for (const revision of REVISIONS) {
      const all = await connectorTools('/mcp', revision);
      printSizes(`the relay's /mcp at ${revision}`, all);
      expect(all.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      expect(listedSize(all)).toBeLessThanOrEqual(SURFACE_MAX);
      const memory = await connectorTools('/mcp?tools=memory', revision);
      printSizes(`the relay's /mcp?tools=memory at ${revision}`, memory);
      expect(listedSize(memory)).toBeLessThanOrEqual(MEMORY_MAX);
    }
  });

  it('no description repeats the peer-marker paragraph: the instructions say it once', async () => {
    const { tools } = await bridge.client.listTools();
    for (const t of tools) expect(t.description ?? '').not.toContain('⟦');
    expect(bridge.client.getInstructions()).toContain('⟦peer <field> <nonce>⟧');
  });
});

describe('input schemas every strict validator takes', () => {
  it('every tool of the bridge, at both revisions, and of the relay: one type per node, no nullable union, items on every list, $refs to the root $defs, 2020-12', async () => {
    const listings: { where: string; tools: Tool[] }[] = [];
    for (const revision of REVISIONS) {
      const b = revision === '2025-11-25' ? bridge : await startBridge({ relayUrl: relay.url, home: bridge.home, revision });
      try {
        listings.push({ where: `bridge ${revision}`, tools: (await b.client.listTools()).tools });
      } finally {
        if (b !== bridge) await b.close();
      }
      listings.push({ where: `relay ${revision}`, tools: await connectorTools('/mcp', revision) });
    }
    for (const { where, tools } of listings) {
      const problems = tools.flatMap((t) => strictProblems(t).map((p) => `${where}: ${p}`));
      expect(problems).toEqual([]);
    }
    // The same schemas at both revisions and at both programs.
    const schemas = (tools: Tool[]) => Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
    for (const { tools } of listings.slice(1)) expect(schemas(tools)).toEqual(schemas(listings[0]!.tools));
  }, 60_000);

  it('the check finds what it is for: a list as type, a nullable union, a list without items, a dangling $ref', () => {
    const bad: Tool = {
      name: 'bad',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        properties: { a: { type: ['string', 'null'] }, b: { anyOf: [{ type: 'string' }, { type: 'null' }] }, c: { type: 'array' }, d: { $ref: '#/$defs/x' } },
      } as Tool['inputSchema'],
    };
    const problems = strictProblems(bad);
    expect(problems.some((p) => p.includes('type is a list'))).toBe(true);
    expect(problems.some((p) => p.includes('nullable union'))).toBe(true);
    expect(problems.some((p) => p.includes('without items'))).toBe(true);
    expect(problems.some((p) => p.includes('does not reach'))).toBe(true);
  });
});

describe('toolsets: SVC_TOOLS for the bridge', () => {
  it('SVC_TOOLS=memory lists the base alone in at most 7,000 characters; svc_task answers which set holds it and how to turn it on', async () => {
    const m = await startBridge({ relayUrl: relay.url, env: { SVC_TOOLS: 'memory' } });
    try {
      const { tools } = await m.client.listTools();
      printSizes('svc-bridge SVC_TOOLS=memory', tools);
      expect(tools.map((t) => t.name)).toEqual([...TOOLSETS.memory].sort((a, b) => TOOL_NAMES.indexOf(a) - TOOL_NAMES.indexOf(b)));
      expect(listedSize(tools)).toBeLessThanOrEqual(MEMORY_MAX);
      expect(m.client.getInstructions()).toContain('Toolset memory');
      const off = (await m.client.callTool({ name: 'svc_task', arguments: { action: 'list', space: 'x' } })) as CallToolResult;
      expect(off.isError).toBe(true);
      const error = (off.structuredContent as { error: { code: string; detail: string; fix: string } }).error;
      expect(error.code).toBe('TOOL_NOT_IN_SET');
      expect(error.detail).toBe('svc_task is in tasks, coordinate, all');
      expect(error.fix).toContain('SVC_TOOLS=memory,tasks');
      // The tools it lists work.
      const whoami = (await m.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(whoami.isError, textOf(whoami)).toBeFalsy();
    } finally {
      await m.close();
    }
  });

  it('several sets, comma-separated, list their union', async () => {
    const m = await startBridge({ relayUrl: relay.url, env: { SVC_TOOLS: 'messages, tasks' } });
    try {
      const names = (await m.client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual([...new Set([...TOOLSETS.messages, ...TOOLSETS.tasks])].sort());
    } finally {
      await m.close();
    }
  });

  it('an unknown set: stderr says so, and every tool answers which sets there are', async () => {
    const m = await startBridge({ relayUrl: relay.url, env: { SVC_TOOLS: 'memory,everything' } });
    try {
      const r = (await m.client.callTool({ name: 'svc_whoami', arguments: {} })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('SVC_TOOLS: no toolset "everything"');
      for (const set of Object.keys(TOOLSETS)) expect(textOf(r)).toContain(set);
      expect(m.stderr()).toContain('no toolset "everything"');
    } finally {
      await m.close();
    }
  });
});

describe("toolsets: ?tools= at the relay's /mcp", () => {
  it('each set lists exactly its tools, at both revisions', async () => {
    for (const revision of REVISIONS) {
      for (const set of Object.keys(TOOLSETS) as ToolsetName[]) {
        const names = (await connectorTools(`/mcp?tools=${set}`, revision)).map((t) => t.name).sort();
        expect(names, `${set} at ${revision}`).toEqual([...TOOLSETS[set]].sort());
      }
    }
  });

  it("the public service's sets (tasks, research, coordinate) hold at least the tools its starts name for them", async () => {
    // Its starts name these tools for each set (schellingaf_<name> there, svc_<name> here).
    const publicSets: Record<'tasks' | 'research' | 'coordinate', string[]> = {
      tasks: ['join', 'whoami', 'read_space', 'mailbox', 'oracle', 'task', 'seek', 'post'],
      research: ['whoami', 'read_space', 'mailbox', 'spaces', 'seek', 'get', 'post'],
      coordinate: ['whoami', 'mailbox', 'spaces', 'space_control', 'oracle', 'task', 'post'],
    };
    for (const [set, tools] of Object.entries(publicSets)) {
      const names = (await connectorTools(`/mcp?tools=${set}`, REVISIONS[0]!)).map((t) => t.name);
      for (const tool of tools) expect(names, set).toContain(`svc_${tool}`);
    }
  });

  it('a tool outside the set answers with the address that turns it on', async () => {
    const c = await connectConnector(relay.url, { token: token.token, path: '/mcp?tools=tasks' });
    try {
      const r = await callConnector(c, 'svc_space_control', { action: 'create', name: 'not-made' });
      expect(r.isError).toBe(true);
      const error = (r.structuredContent as { error: { code: string; fix: string } }).error;
      expect(error.code).toBe('TOOL_NOT_IN_SET');
      expect(error.fix).toContain('/mcp?tools=tasks,coordinate');
      expect(textOf(r)).toContain('svc_space_control is not in this server');
      // Nothing was made.
      expect((await fetch(`${relay.url}/v1/spaces/not-made`)).status).toBe(404);
    } finally {
      await c.close();
    }
  });

  it('an unknown set is refused 400 with the envelope, naming the sets', async () => {
    const res = await fetch(`${relay.url}/mcp?tools=tasks,nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; detail: string } };
    expect(body.error.code).toBe('INVALID_REQUEST');
    expect(body.error.detail).toContain('no toolset "nope"');
    expect(body.error.detail).toContain('coordinate');
  });
});

describe('svc_guide part=tools: what the listing leaves out', () => {
  it('names every tool, each action with its arguments, and every argument with its bounds; section narrows it to one tool', async () => {
    const all = textOf((await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'tools' } })) as CallToolResult);
    for (const name of TOOL_NAMES) expect(all).toContain(`## ${name}`);
    const control = textOf((await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'tools', section: 'space_control' } })) as CallToolResult);
    expect(control).toContain('## svc_space_control');
    expect(control).not.toContain('## svc_post');
    expect(control).toContain('invite (name, role, tags, max_uses, expires_in_seconds, label)');
    expect(control).toContain('- name: text, 1 to 200 characters.');
    expect(control).toContain('owner > admin > coordinator > writer > reader');
    const unknown = (await bridge.client.callTool({ name: 'svc_guide', arguments: { part: 'tools', section: 'svc_nothing' } })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain('svc_whoami');
  });
});
