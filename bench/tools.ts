/**
 * The tools suite (`npm run bench -- tools`): what the connector's tool surface costs an agent
 * before its first call, and how many calls the scripted flows take, each beside the figure of
 * another revision: `--against <revision>`, by default HEAD~1, the commit before this one.
 *
 * - tools/list characters, the JSON of `{"tools":[…]}` a client is sent: in total, per tool, and
 *   per toolset (tools/toolsets.ts). Each revision's bridge is started from its own sources
 *   (`git archive`, as bench/appends-against.ts does) and listed over stdio with every tool; a
 *   set's figure is the JSON of its tools' entries, which is what SVC_TOOLS=<set> lists, so a
 *   revision older than the toolsets is measured by the same sets.
 * - Tool calls per scripted flow: each revision's own flows (FLOWS_MODULE, the steps the
 *   end-to-end flow test runs) run against a relay and three bridges of that revision, counted
 *   as they go. A revision without the module shows "-", as does a flow one side lacks.
 *
 * No figure here is timed: every one is a count, the same on every run of the same sources.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { TOOLSETS } from '../tools/toolsets.js';
import { tempHome } from '../test/helpers/bridge.js';
import { REPO_ROOT } from '../test/helpers/relay.js';
import { checkOut } from './appends-against.js';
import type { Suite, SuiteReport } from './harness.js';

/** The module of the scripted flows, relative to the repository root (its `runAgentFlows()`). */
export const FLOWS_MODULE = 'test/helpers/agent-flows.ts';

const DEFAULT_AGAINST = 'HEAD~1';

/** The figures of one revision. */
export interface Figures {
  readonly label: string;
  /** Characters of each tool's entry in tools/list, by name, in listing order. */
  readonly tools: ReadonlyMap<string, number>;
  readonly total: number;
  readonly sets: ReadonlyMap<string, number>;
  readonly flows: ReadonlyMap<string, number>;
}

/** `--against <revision>` or `--against=<revision>`; the default otherwise. */
function against(): string {
  const argv = process.argv.slice(2);
  const at = argv.indexOf('--against');
  if (at >= 0 && argv[at + 1] !== undefined) return argv[at + 1]!;
  return argv.find((a) => a.startsWith('--against='))?.slice('--against='.length) ?? DEFAULT_AGAINST;
}

/** tools/list of the bridge whose sources are at `root`, listing every tool. */
async function listTools(root: string): Promise<Tool[]> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[name] !== undefined) env[name] = process.env[name]!;
  // No relay is asked for a listing: the address is one nothing answers at.
  Object.assign(env, { SVC_API: 'http://127.0.0.1:9', SVC_HOME: tempHome('svc-bench-tools-'), SVC_KEEPER_INTERVAL: '0' });
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'bridge/main.ts', 'serve'], cwd: root, env, stderr: 'ignore' });
  const client = new Client({ name: 'svc-bench-tools', version: '0.0.0' });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/**
 * The tool calls of each scripted flow of the sources at `root`, run in a process of their own
 * (their relay, their bridges, this checkout's node_modules); none when they have no flows.
 */
function flowsAt(root: string): Map<string, number> {
  if (!existsSync(join(root, FLOWS_MODULE))) return new Map();
  const script =
    `const m = await import(${JSON.stringify(pathToFileURL(join(root, FLOWS_MODULE)).href)});` +
    'const reports = await m.runAgentFlows();' +
    'process.stdout.write(JSON.stringify(Object.fromEntries(reports.map((r) => [r.name, r.calls]))));';
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (run.status !== 0) throw new Error(`the scripted flows at ${root} failed (exit ${run.status}): ${run.stderr.slice(-2000)}`);
  const parsed = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('{'))) as Record<string, unknown>;
  return new Map(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number'));
}

function figuresOf(label: string, tools: Tool[], flows: Map<string, number>): Figures {
  const sizes = new Map(tools.map((t) => [t.name, JSON.stringify(t).length]));
  const listed = (entries: Tool[]) => JSON.stringify({ tools: entries }).length;
  const sets = new Map(Object.entries(TOOLSETS).map(([name, names]) => [name, listed(tools.filter((t) => (names as readonly string[]).includes(t.name)))]));
  return { label, tools: sizes, total: listed(tools), sets, flows };
}

/** The other revision's figures: its bridge's listing, its flows file. */
async function otherFigures(revision: string): Promise<Figures> {
  const { commit, root } = checkOut(revision);
  try {
    if (!existsSync(join(root, 'bridge/main.ts'))) throw new Error(`--against ${revision}: that revision has no bridge/main.ts to start`);
    return figuresOf(`${revision} (${commit.slice(0, 10)})`, await listTools(root), flowsAt(root));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The table: one row per figure, the other revision's beside this checkout's. */
export function figuresTable(before: Figures, after: Figures): string {
  const rows: string[][] = [['figure', before.label, 'this checkout', 'change']];
  const row = (name: string, b: number | undefined, a: number | undefined) => {
    const change = b === undefined || a === undefined ? '' : b === 0 ? `${a - b >= 0 ? '+' : ''}${a - b}` : `${a - b >= 0 ? '+' : ''}${a - b} (${((a / b) * 100).toFixed(0)}%)`;
    rows.push([name, b === undefined ? '-' : String(b), a === undefined ? '-' : String(a), change]);
  };
  row('tools/list characters', before.total, after.total);
  for (const name of new Set([...after.tools.keys(), ...before.tools.keys()])) row(`  ${name}`, before.tools.get(name), after.tools.get(name));
  for (const name of after.sets.keys()) row(`  toolset ${name}`, before.sets.get(name), after.sets.get(name));
  const flows = new Set([...after.flows.keys(), ...before.flows.keys()]);
  if (flows.size > 0) {
    rows.push(['tool calls per flow', '', '', '']);
    for (const name of flows) row(`  ${name}`, before.flows.get(name), after.flows.get(name));
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 || i === 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

async function run(): Promise<SuiteReport> {
  const revision = against();
  const before = await otherFigures(revision);
  const after = figuresOf('this checkout', await listTools(REPO_ROOT), flowsAt(REPO_ROOT));
  const notes = [
    'Characters of tools/list JSON ({"tools":[…]}), as a client is sent them; a toolset is its tools\' entries alone (SVC_TOOLS=<set>, /mcp?tools=<set>).',
    `Tool calls per flow: each revision's own ${FLOWS_MODULE} run against its own relay and bridges ("-": the revision has no such flow).`,
  ];
  return { rows: [], notes, table: figuresTable(before, after) };
}

export const toolsSuite: Suite = {
  name: 'tools',
  title: 'tools: tools/list characters per tool and toolset, tool calls per scripted flow, beside another revision',
  run,
};
