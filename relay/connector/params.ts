/**
 * Params a method does not take are -32602 Invalid params, never the -32603 the SDK answers for
 * the methods it registers without schemas of its own (tools/params.ts says which and why).
 *
 * The connector's edge maps that answer: before the SDK runs, `invalidParams` finds the requests
 * of the body (one, or each of a 2025 batch) whose params break their method's shape; after it,
 * `relabel` turns each -32603 the SDK answered to one of those requests into -32602 naming what
 * is wrong. Every other answer passes unchanged: the SDK's own order of checks (headers,
 * revision, method) stands, and a request whose params fit is never touched, so a -32603 it gets
 * is a real fault.
 */
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { isObject, paramsProblem } from '../../tools/params.js';

/** The requests whose params do not fit, by JSON id (`JSON.stringify(id)`): what to tell each. */
export type InvalidParams = ReadonlyMap<string, string>;

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
