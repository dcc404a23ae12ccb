/**
 * Params a method does not take are the client's mistake, -32602 Invalid params (JSON-RPC 2.0
 * §5.1; MCP "Error handling"), never -32603 Internal error, which tells a client the server
 * failed. The SDK (v2) checks each request's params against its method's shape, but for the
 * methods it registers without schemas of its own (initialize, ping, server/discover, the lists,
 * resources/read, prompts/get) it throws a plain error, which it answers -32603. tools/call is
 * not among them: the SDK answers its params -32602 itself.
 *
 * The connector's edge maps that answer: before the SDK runs, `invalidParams` finds the requests
 * of the body (one, or each of a 2025 batch) whose params break their method's shape by the
 * SDK's own published schemas (`specTypeSchemas`); after it, `relabel` turns each -32603 the SDK
 * answered to one of those requests into -32602 naming what is wrong. Every other answer passes
 * unchanged: the SDK's own order of checks (headers, revision, method) stands, and a request
 * whose params fit is never touched, so a -32603 it gets is a real fault.
 */
import { ProtocolErrorCode, specTypeSchemas, type SpecTypeName } from '@modelcontextprotocol/server';

/** The methods whose params the SDK answers -32603, by the schema of their request. */
const REQUESTS: Readonly<Record<string, SpecTypeName>> = {
  initialize: 'InitializeRequest',
  ping: 'PingRequest',
  'server/discover': 'DiscoverRequest',
  'tools/list': 'ListToolsRequest',
  'resources/list': 'ListResourcesRequest',
  'resources/templates/list': 'ListResourceTemplatesRequest',
  'resources/read': 'ReadResourceRequest',
  'prompts/list': 'ListPromptsRequest',
  'prompts/get': 'GetPromptRequest',
};

/** Issues named in one error message, at most. */
const ISSUES_SHOWN = 3;

/** The requests whose params do not fit, by JSON id (`JSON.stringify(id)`): what to tell each. */
export type InvalidParams = ReadonlyMap<string, string>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Where an issue is, as `params.arguments.goal`. */
function where(path: readonly (PropertyKey | { key: PropertyKey })[] | undefined): string {
  if (path === undefined || path.length === 0) return 'params';
  return path.map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
}

/** What is wrong with the params of one message, or undefined (fine, not a request, or a method not checked here). */
export function paramsProblem(message: unknown): string | undefined {
  if (!isObject(message) || typeof message.method !== 'string' || !Object.hasOwn(REQUESTS, message.method)) return undefined;
  const { method } = message;
  const checked = specTypeSchemas[REQUESTS[method]!]['~standard'].validate({ method, ...('params' in message ? { params: message.params } : {}) });
  if (checked.issues === undefined) return undefined;
  const shown = checked.issues.slice(0, ISSUES_SHOWN).map((i) => `${where(i.path)}: ${i.message}`);
  if (checked.issues.length > ISSUES_SHOWN) shown.push(`and ${checked.issues.length - ISSUES_SHOWN} more`);
  return `Invalid params for ${method}: ${shown.join('; ')}`;
}

/** The requests of a parsed body whose params do not fit; undefined when there is none. */
export function invalidParams(body: unknown): InvalidParams | undefined {
  const found = new Map<string, string>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const id = isObject(message) ? message.id : undefined;
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    const problem = paramsProblem(message);
    if (problem !== undefined) found.set(JSON.stringify(id), problem);
  }
  return found.size === 0 ? undefined : found;
}

/** One JSON-RPC message of the SDK's answer, with its -32603 to a request of `invalid` made -32602. */
function relabelOne(message: unknown, invalid: InvalidParams): unknown {
  if (!isObject(message) || !isObject(message.error) || message.error.code !== ProtocolErrorCode.InternalError) return message;
  const problem = invalid.get(JSON.stringify(message.id));
  if (problem === undefined) return message;
  return { ...message, error: { code: ProtocolErrorCode.InvalidParams, message: problem } };
}

/** A JSON text, or an SSE event's data, with its messages relabelled; as it was when it is not JSON. */
function relabelText(text: string, invalid: InvalidParams): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  return JSON.stringify(Array.isArray(parsed) ? parsed.map((m) => relabelOne(m, invalid)) : relabelOne(parsed, invalid));
}

/**
 * The SDK's answer with each -32603 to a request of `invalid` made -32602: a JSON body, or an SSE
 * stream of JSON events (the SDK ends both once every request of the body is answered).
 */
export async function relabel(res: Response, invalid: InvalidParams): Promise<Response> {
  const type = res.headers.get('content-type') ?? '';
  const json = /^application\/json\b/i.test(type);
  const sse = /^text\/event-stream\b/i.test(type);
  if (res.body === null || (!json && !sse)) return res;
  const text = await res.text();
  const body = json
    ? relabelText(text, invalid)
    : text.replace(/^data: ?(.*)$/gm, (_line, data: string) => `data: ${relabelText(data, invalid)}`);
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  return new Response(body, { status: res.status, statusText: res.statusText, headers });
}
