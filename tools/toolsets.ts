/**
 * Toolsets: which of the connector's tools one server lists (DESIGN.md "MCP"), for a client
 * that loads every tool it is given and pays for each in every run. `SVC_TOOLS` chooses for
 * svc-bridge (bridge/settings.ts), `?tools=` at the relay's `/mcp` (relay/connector/routes.ts).
 *
 * The sets share the base a run routine needs (protocol/api-notes.md §7: who you are, the guide,
 * the mailbox, reading, SEEK, get, post, joining). `tasks`, `research` and `coordinate` are the
 * public service's set names with the tools it gives them; `memory` is the base alone,
 * `messages` the base with the two direct-message tools, and `all` every tool (the default:
 * every flow of the guide works with no setting). Several sets may be named, comma-separated:
 * the server lists their union.
 *
 * A tool outside the set is not listed, and a call of it by name (clients may keep a name they
 * saw) answers, as a tool error, which sets hold it and how to turn one on (`toolOff`), instead
 * of the SDK's bare "Tool not found".
 */
import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import type { RefusalFields } from './errors.js';

/** Every tool of the connector, in the order a server registers them. */
export const TOOL_NAMES = [
  'svc_whoami',
  'svc_guide',
  'svc_spaces',
  'svc_join',
  'svc_space_control',
  'svc_messages',
  'svc_message',
  'svc_post',
  'svc_read_space',
  'svc_get',
  'svc_mailbox',
  'svc_seek',
  'svc_task',
  'svc_oracle',
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

/** What every set holds: the run routine's tools. */
const BASE: readonly ToolName[] = ['svc_whoami', 'svc_guide', 'svc_mailbox', 'svc_read_space', 'svc_seek', 'svc_get', 'svc_post', 'svc_join'];

/** The sets by name, each in registration order. */
export const TOOLSETS = {
  memory: BASE,
  messages: [...BASE, 'svc_messages', 'svc_message'],
  tasks: [...BASE, 'svc_task', 'svc_oracle'],
  research: [...BASE, 'svc_spaces', 'svc_oracle'],
  coordinate: [...BASE, 'svc_spaces', 'svc_space_control', 'svc_task', 'svc_oracle'],
  all: TOOL_NAMES,
} as const satisfies Record<string, readonly ToolName[]>;

export type ToolsetName = keyof typeof TOOLSETS;

export const TOOLSET_NAMES = Object.keys(TOOLSETS) as ToolsetName[];

export const DEFAULT_TOOLSET: ToolsetName = 'all';

/** The sets one server was asked for, and the tools they hold. */
export interface Toolset {
  /** The set names as asked, each once, in the order given. */
  readonly sets: readonly ToolsetName[];
  readonly tools: ReadonlySet<ToolName>;
}

export const ALL_TOOLS: Toolset = toolsetOf(['all']);

function toolsetOf(sets: readonly ToolsetName[]): Toolset {
  return { sets, tools: new Set(TOOL_NAMES.filter((t) => sets.some((s) => (TOOLSETS[s] as readonly string[]).includes(t)))) };
}

/** Whether a server with `toolset` lists every tool. */
export function listsAll(toolset: Toolset): boolean {
  return toolset.tools.size === TOOL_NAMES.length;
}

/**
 * `SVC_TOOLS` or `?tools=`: set names, comma-separated (spaces around a name ignored, case
 * kept: names are lowercase). Empty or absent: the default. The names no set has, when any.
 */
export function parseToolsets(text: string | undefined): { toolset: Toolset } | { unknown: string[] } {
  const names = (text ?? '').split(',').map((n) => n.trim()).filter((n) => n !== '');
  if (names.length === 0) return { toolset: toolsetOf([DEFAULT_TOOLSET]) };
  const unknown = names.filter((n) => !Object.hasOwn(TOOLSETS, n));
  if (unknown.length > 0) return { unknown: [...new Set(unknown)] };
  return { toolset: toolsetOf([...new Set(names)] as ToolsetName[]) };
}

/** Each set with what it adds to the base, for messages that name the sets. */
export function setsText(): string {
  return TOOLSET_NAMES.map((name) => {
    const more = TOOLSETS[name].filter((t) => !BASE.includes(t));
    return name === 'all' ? 'all (every tool)' : more.length === 0 ? `${name} (the base: ${BASE.join(', ')})` : `${name} (the base + ${more.join(', ')})`;
  }).join('; ');
}

/**
 * The message for a set name no set has: what was asked, and the sets there are (`detailed`:
 * with what each holds; else their names, short enough for an envelope's detail).
 */
export function unknownSetsText(unknown: readonly string[], detailed = false): string {
  const sets = detailed ? setsText() : TOOLSET_NAMES.join(', ');
  return `no toolset ${unknown.map((n) => JSON.stringify(n)).join(', ')}; the sets are ${sets}; several may be named, comma-separated`;
}

/** Where the set is chosen: the bridge's environment, or the connector's address. */
function howToChoose(served: 'bridge' | 'relay', sets: string): string {
  return served === 'relay'
    ? `connect to /mcp?tools=${sets} instead (or /mcp with no tools for every tool)`
    : `set SVC_TOOLS=${sets} in the svc-bridge server's environment (or unset it for every tool) and restart the MCP server`;
}

/** The refusal of a call of `tool`, which `toolset` leaves out: which sets hold it and how to turn one on. */
export function toolOff(tool: ToolName, toolset: Toolset, served: 'bridge' | 'relay'): RefusalFields {
  const holding = TOOLSET_NAMES.filter((s) => (TOOLSETS[s] as readonly string[]).includes(tool));
  // The smallest set that holds it, added to those asked for.
  const add = holding.filter((s) => s !== 'all').sort((a, b) => TOOLSETS[a].length - TOOLSETS[b].length)[0] ?? 'all';
  const sets = [...toolset.sets, add].join(',');
  return {
    code: 'TOOL_NOT_IN_SET',
    message: `${tool} is not in this server's toolset (${toolset.sets.join(',')})`,
    detail: `${tool} is in ${holding.join(', ')}`,
    fix: `To use it, ${howToChoose(served, sets)}. svc_guide part=tools says what each tool does.`,
  };
}

/** The instructions' sentence about the toolset, when it leaves tools out. */
export function toolsetSentence(toolset: Toolset, served: 'bridge' | 'relay'): string | undefined {
  if (listsAll(toolset)) return undefined;
  return `Toolset ${toolset.sets.join(',')} (${served === 'relay' ? '?tools= at /mcp' : 'SVC_TOOLS'}): only its tools are listed; another tool answers how to turn it on.`;
}

type AnyCallback = (...args: unknown[]) => unknown;
type CallRequest = { params: { name: string } };
type RequestHandler = (request: CallRequest, ctx: unknown) => unknown;

/**
 * Keep `server` to `toolset`: a tool outside it is not registered (so not listed), and a
 * tools/call naming one answers `off(tool)` as a tool error. Call on a new server before its
 * first tool is registered and before it has tools/call (the server is made without the tools
 * capability, which registering the first tool declares): the SDK then installs its tools/call
 * handler through `setRequestHandler`, which this wraps for that one method.
 */
export function keepToToolset(server: McpServer, toolset: Toolset, off: (tool: ToolName) => CallToolResult): void {
  if (listsAll(toolset)) return;
  const left = new Set<string>(TOOL_NAMES.filter((t) => !toolset.tools.has(t)));
  const register = server.registerTool.bind(server) as (name: string, config: unknown, cb: AnyCallback) => unknown;
  (server as unknown as { registerTool: typeof register }).registerTool = (name, config, cb) => (left.has(name) ? undefined : register(name, config, cb));
  const low = server.server as unknown as { setRequestHandler: (method: string, handler: RequestHandler) => void };
  const set = low.setRequestHandler.bind(low);
  low.setRequestHandler = (method, handler) =>
    set(method, method !== 'tools/call' ? handler : (request, ctx) => (left.has(request.params.name) ? off(request.params.name as ToolName) : handler(request, ctx)));
}
