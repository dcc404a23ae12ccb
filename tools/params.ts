/**
 * Params a method does not take are the client's mistake, -32602 Invalid params (JSON-RPC 2.0
 * §5.1; MCP "Error handling"), never -32603 Internal error, which tells a client the server
 * failed. The SDK (v2) checks each request's params against its method's shape, but for the
 * methods it registers without schemas of its own (initialize, ping, server/discover, the lists,
 * resources/read, prompts/get) it throws a plain error, which it answers -32603 with the raw
 * validation dump as its message. tools/call is not among them: the SDK answers its params
 * -32602 itself.
 *
 * `paramsProblem` finds such a request by the SDK's own published schemas (`specTypeSchemas`)
 * and says what is wrong in one line. Both programs use it: the bridge answers such a request
 * -32602 on stdio before the SDK sees it (`paramsChecked`); the relay's connector relabels the
 * SDK's answer at its HTTP edge (relay/connector/params.ts).
 */
import { ProtocolErrorCode, specTypeSchemas, type JSONRPCMessage, type SpecTypeName, type Transport } from '@modelcontextprotocol/server';
import { tapTransport } from './resources/transport-tap.js';

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

export function isObject(v: unknown): v is Record<string, unknown> {
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

/**
 * `inner` with every request whose params break its method's shape answered -32602 at once, in
 * place of being handed to the server (which would answer -32603). Other messages pass as they are.
 */
export function paramsChecked(inner: Transport): Transport {
  return tapTransport(inner, {
    inbound: (message) => {
      const problem = 'id' in message && message.id !== undefined && message.id !== null ? paramsProblem(message) : undefined;
      if (problem === undefined) return message;
      const answer: JSONRPCMessage = { jsonrpc: '2.0', id: (message as { id: string | number }).id, error: { code: ProtocolErrorCode.InvalidParams, message: problem } };
      void inner.send(answer).catch(() => undefined);
      return undefined;
    },
  });
}
