/**
 * The connector's direct lane: a `tools/call` that the SDK would serve, answered here with the
 * same bytes and without the SDK's per-request machinery (a web Request and Response, a transport
 * connected to a server instance, the message parsed against the wire schemas, the answer parsed
 * again and encoded). A tool call is what agents send over and over; everything else (initialize,
 * `server/discover`, tools/list, resources, prompts, live updates, batches, GET and DELETE) and
 * every call this lane is not sure of goes to the SDK's handler, which stays the reference of the
 * protocol at `/mcp`: a test sends each call both ways and compares the answers byte for byte
 * (test/relay/connector/direct.test.ts).
 *
 * A request takes this lane only when every rung of the SDK's entry ladder is known to pass:
 * - a POST with a JSON media type; the body one JSON-RPC request `{jsonrpc:"2.0", id, method:
 *   "tools/call", params}` with a string or safe-integer id and no other member, `params`
 *   `{name, arguments?, _meta?}` with `arguments` an object when given;
 * - revision 2026-07-28: `_meta` the revision's envelope and nothing else; the standard headers
 *   present and equal to the body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, not in its
 *   Base64 form, which is the SDK's to decode); classified modern at this revision by the SDK's
 *   own classifier (`classifyInboundRequest`: the envelope, the header ↔ body cross-checks);
 * - revision 2025-11-25 or 2025-06-18 (the SDK's stateless fallback): `MCP-Protocol-Version`
 *   naming it, no session header, an Accept of both JSON and event streams, `_meta` absent or a
 *   progress token alone (no tool here sends progress), classified legacy by the classifier;
 * - the tool registered on this kind of server (the toolset's), enabled, taking an argument
 *   schema, no scope challenge, no `x-mcp-header` declaration, and a handler that reads no
 *   request context (its one parameter is the arguments);
 * - the arguments valid against the tool's schema. A refusal of them is the SDK's to word, and
 *   validating twice changes nothing.
 *
 * Then the tool's handler runs in the caller's scope as under the SDK; a handler that throws is
 * answered as the SDK answers it (a tool error with the message). The result is encoded as the
 * revision's codec encodes a tools/call result and framed as the SDK frames it: at 2026-07-28
 * `resultType: "complete"` and the server's identity under
 * `_meta["io.modelcontextprotocol/serverInfo"]`, one JSON body; at 2025 revisions the result as
 * it is, in one server-sent event `message` (the stateless transport answers a POST with a stream).
 *
 * Tools are taken from a server built once per kind (`/mcp` or `/mcp/connect`, toolset) and never
 * connected: a registered tool keeps no state of a request, and its handler reads the caller
 * from the request's scope (scope.ts), so one table serves any number of calls at once.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  type CallToolResult,
  type RegisteredTool,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { isObject } from '../../tools/action.js';

/** The per-request revision this lane serves. */
export const DIRECT_REVISION = '2026-07-28';
/** The 2025 revisions it serves as the SDK's stateless fallback does. */
const LEGACY_REVISIONS: ReadonlySet<string> = new Set(['2025-11-25', '2025-06-18']);
const LEGACY_META_KEYS: ReadonlySet<string> = new Set(['progressToken']);

const ENVELOPE_KEYS: ReadonlySet<string> = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);

/** A tools/call this lane may answer. */
export interface DirectCall {
  /** `modern`: revision 2026-07-28; `legacy`: a 2025 revision, served statelessly. */
  readonly era: 'modern' | 'legacy';
  readonly id: string | number;
  readonly name: string;
  readonly arguments: Record<string, unknown> | undefined;
}

/** The server's identity as the SDK stamps it on every 2026-07-28 result. */
export interface ServerInfo {
  readonly name: string;
  readonly title: string;
  readonly version: string;
}

function onlyKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k of Object.keys(o)) if (!allowed.has(k)) return false;
  return true;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

/** The tools/call of this request when the direct lane may answer it (see the header); undefined sends it to the SDK. */
export function directCall(req: FastifyRequest, body: unknown): DirectCall | undefined {
  if (req.method !== 'POST' || !isObject(body) || !onlyKeys(body, MESSAGE_KEYS)) return undefined;
  const { id, params } = body;
  if (body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS)) return undefined;
  const { name, _meta: meta } = params;
  const args = params.arguments;
  if (typeof name !== 'string' || (args !== undefined && !isObject(args))) return undefined;
  if (!isJsonContentType(header(req, 'content-type') ?? null)) return undefined;
  const protocolVersionHeader = header(req, 'mcp-protocol-version');
  const mcpMethodHeader = header(req, 'mcp-method');
  const mcpNameHeader = header(req, 'mcp-name');
  let era: DirectCall['era'];
  if (protocolVersionHeader === DIRECT_REVISION) {
    if (!isObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS) || meta[PROTOCOL_VERSION_META_KEY] !== DIRECT_REVISION) return undefined;
    if (mcpMethodHeader !== 'tools/call' || mcpNameHeader !== name || name.startsWith('=?')) return undefined;
    era = 'modern';
  } else if (protocolVersionHeader !== undefined && LEGACY_REVISIONS.has(protocolVersionHeader)) {
    if (meta !== undefined && !(isObject(meta) && onlyKeys(meta, LEGACY_META_KEYS))) return undefined;
    if (header(req, 'mcp-session-id') !== undefined) return undefined;
    const accept = header(req, 'accept');
    if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    era = 'legacy';
  } else {
    return undefined;
  }
  if (!classifiedAs(era, { protocolVersionHeader, mcpMethodHeader, mcpNameHeader, body, id, name, meta })) return undefined;
  return { era, id, name, arguments: args };
}

/**
 * The SDK classifier's verdicts, by what they depend on. For a message of the shape `directCall`
 * has already required (one request, method tools/call, an id, params of a name, an arguments
 * object and `_meta`), the classifier reads the three headers, the id's type (JSON-RPC's
 * RequestId), the method and the `_meta` envelope; never the arguments (loose members of the
 * params) nor the id's value: test/relay/connector/direct.test.ts holds it to that. A client sends
 * the same envelope with every call, so its verdict is computed once (with zod, which allocates
 * what a busy relay then has to collect) and then looked up by that key, one short JSON text.
 */
const verdicts = new Map<string, boolean>();
/** Verdicts kept at most (a client has one or two envelopes): past this, they are computed afresh. */
const VERDICTS_KEPT = 256;
/** The longest key kept, in characters: a larger envelope is judged every time, so that what is kept stays under a megabyte. */
const VERDICT_KEY_MAX = 4096;

interface Classified {
  readonly protocolVersionHeader: string;
  readonly mcpMethodHeader: string | undefined;
  readonly mcpNameHeader: string | undefined;
  readonly body: Record<string, unknown>;
  readonly id: string | number;
  readonly name: string;
  readonly meta: unknown;
}

function classifiedAs(era: DirectCall['era'], m: Classified): boolean {
  const key = JSON.stringify([era, m.protocolVersionHeader, m.mcpMethodHeader ?? null, m.mcpNameHeader ?? null, typeof m.id, m.name, m.meta ?? null]);
  const known = verdicts.get(key);
  if (known !== undefined) return known;
  const route = classifyInboundRequest({ httpMethod: 'POST', protocolVersionHeader: m.protocolVersionHeader, mcpMethodHeader: m.mcpMethodHeader, mcpNameHeader: m.mcpNameHeader, body: m.body });
  const verdict =
    era === 'modern'
      ? route.kind === 'modern' && route.messageKind === 'request' && route.classification.revision === DIRECT_REVISION
      : route.kind === 'legacy' && route.reason === 'no-claim';
  if (key.length > VERDICT_KEY_MAX) return verdict;
  if (verdicts.size >= VERDICTS_KEPT) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}

/** Whether a registered tool may be called on this lane (see the header). */
export function directTool(tool: RegisteredTool, listedInput: Record<string, unknown> | undefined): boolean {
  if (tool.inputSchema === undefined || tool.scopeChallenge !== undefined || tool.handler.length > 1) return false;
  return listedInput === undefined || !JSON.stringify(listedInput).includes('"x-mcp-header"');
}

/**
 * The tool's answer to `call`, or undefined when its arguments are refused (the SDK words that
 * refusal). Runs in whatever scope the caller set up.
 */
export async function runDirect(tool: RegisteredTool, call: DirectCall): Promise<CallToolResult | undefined> {
  if (!tool.enabled || tool.inputSchema === undefined) return undefined;
  const checked = await tool.inputSchema['~standard'].validate(call.arguments ?? {});
  if (checked.issues !== undefined && checked.issues.length > 0) return undefined;
  const handler = tool.handler as (args: unknown) => CallToolResult | Promise<CallToolResult>;
  try {
    return await handler((checked as { value: unknown }).value);
  } catch (e) {
    return { content: [{ type: 'text', text: e instanceof Error ? e.message : String(e) }], isError: true };
  }
}

/** A direct call's answer as the SDK sends it: the body's bytes and the headers it sets. */
export interface DirectAnswer {
  readonly body: Buffer;
  readonly headers: Readonly<Record<string, string>>;
}

/** The SDK's JSON answer's media type, with the charset Fastify adds when the SDK's text is sent on. */
const MODERN_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
/** What the stateless transport sets on the event stream it answers a POST with. */
const LEGACY_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' };

/**
 * A direct call's answer, as the SDK sends it: the result's members in the order its result
 * schema puts them (content, structuredContent, isError, then any other); at 2026-07-28 with
 * `resultType` and `_meta` stamped after them as the revision's encoder stamps them, in a JSON
 * body; at a 2025 revision as they are, in one server-sent event.
 */
export function directAnswer(call: DirectCall, result: CallToolResult, serverInfo: ServerInfo): DirectAnswer {
  const given = result as Record<string, unknown>;
  const rest: Record<string, unknown> = {};
  if (given.structuredContent !== undefined) rest.structuredContent = given.structuredContent;
  if (given.isError !== undefined) rest.isError = given.isError;
  for (const [k, v] of Object.entries(given)) if (k !== 'content' && !(k in rest) && k !== 'resultType' && k !== '_meta') rest[k] = v;
  if (call.era === 'legacy') {
    if (given._meta !== undefined) rest._meta = given._meta;
    return { body: messageBytes('event: message\ndata: ', given.content, rest, call.id, '\n\n'), headers: LEGACY_HEADERS };
  }
  rest.resultType = given.resultType ?? 'complete';
  const meta = given._meta;
  if (meta === undefined) rest._meta = { [SERVER_INFO_META_KEY]: serverInfo };
  else if (isObject(meta) && meta[SERVER_INFO_META_KEY] === undefined) rest._meta = { ...meta, [SERVER_INFO_META_KEY]: serverInfo };
  else rest._meta = meta;
  return { body: messageBytes('', given.content, rest, call.id, ''), headers: MODERN_HEADERS };
}

/**
 * The bytes of `before` + `{"result":{"content":…,…rest},"jsonrpc":"2.0","id":…}` + `after`: the
 * text JSON.stringify writes for that message, encoded as UTF-8. The content (a text that carries
 * the peer markers ⟦ ⟧, characters V8 keeps two bytes wide) is written and encoded apart from the
 * rest, so that the structured content, nearly always one byte a character, is not widened into
 * one two-byte string with it (for a page of thirteen posts with text, 83 µs to write and encode
 * against 118 in one string, measured apart from the relay).
 */
function messageBytes(before: string, content: unknown, rest: Record<string, unknown>, id: string | number, after: string): Buffer {
  const members = JSON.stringify(rest);
  const tail = `${members === '{}' ? '}' : `,${members.slice(1)}`},"jsonrpc":"2.0","id":${JSON.stringify(id)}}${after}`;
  const head = Buffer.from(`${before}{"result":{"content":${JSON.stringify(content ?? [])}`, 'utf8');
  const end = Buffer.from(tail, 'utf8');
  return Buffer.concat([head, end], head.length + end.length);
}
