/**
 * Resource reads that fail (MCP "Resources", error handling). A client's mistake is never -32603
 * Internal error, which tells a client the server failed; that code is left for real faults,
 * and each is logged.
 *
 * - An address that names nothing is "resource not found", with `data: {uri}`: no resource or
 *   template matches it (the SDK answers that itself), or the relay has no SPACE, post or
 *   category behind it (SPACE_NOT_FOUND, POST_NOT_FOUND, CATEGORY_NOT_FOUND; a post this KEY
 *   may not read reads as none). MCP 2025-11-25 and the revisions before it give this error the
 *   code -32002; 2026-07-28 gives it -32602 Invalid Params, known by data carrying `uri` alone.
 *   The SDK (v2) sends -32602 on every revision, so `notFoundCodes` wraps the transport and,
 *   in a session that opened with `initialize` at an earlier revision, sends -32002 instead.
 * - At the relay's connector, a refusal of the caller's token (none sent, unknown, expired,
 *   revoked, an app token at /mcp, a blocked KEY) is the read's ordinary answer, text saying
 *   what is wrong and how to fix it, as every token problem at `/mcp` is ordinary output
 *   (spec/3-errors.md). At the bridge, which holds and renews its own token, it is a fault.
 * - Any other refusal of the caller's request (a 4xx: a malformed part, a SPACE it may not read,
 *   a rate limit): -32602 Invalid Params, with the refusal as data. So is a rule the bridge
 *   checked on the address itself (a dot segment, a malformed part).
 * - What the service could not do (a 5xx refusal: INTERNAL, BUSY, SERVICE_READ_ONLY; the relay
 *   unreachable; anything unexpected): -32603 with the refusal as data, logged.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type JSONRPCMessage, type ReadResourceResult, type Transport } from '@modelcontextprotocol/server';
import { CATALOGUE, SvcError } from '../../shared/errors.js';
import { BridgeError, RelayRefusal } from '../errors.js';
import { refusalText } from '../render.js';
import { refusalObject, type FaultSink } from '../answer.js';
import { tapTransport } from './transport-tap.js';

/** Relay refusals that mean the address names nothing. */
export const NOT_FOUND_CODES: readonly string[] = ['SPACE_NOT_FOUND', 'POST_NOT_FOUND', 'CATEGORY_NOT_FOUND'];

/** Relay refusals of the caller's token itself. */
export const TOKEN_CODES: readonly string[] = ['TOKEN_MISSING', 'TOKEN_INVALID', 'TOKEN_EXPIRED', 'TOKEN_REVOKED', 'KEY_BLOCKED'];

/** The first revision whose resource-not-found is -32602 (SEP-2164). */
const INVALID_PARAMS_REVISION = '2026-07-28';

/** -32603 for what the service could not do, logged. */
function fault(uri: URL, message: string, data: Record<string, unknown> | undefined, sink: FaultSink): ProtocolError {
  sink.log(`${sink.served === 'relay' ? 'svc-relay: connector' : 'svc-bridge:'} resource read failed: ${uri.href}: ${message}`);
  return new ProtocolError(ProtocolErrorCode.InternalError, message, data);
}

/** What a failed read of `uri` answers: the error to throw from the resource's read callback. */
export function readFailure(uri: URL, e: unknown, sink: FaultSink): unknown {
  if (e instanceof RelayRefusal) {
    if (NOT_FOUND_CODES.includes(e.code)) return new ResourceNotFoundError(uri.href, refusalText(e));
    const data = refusalObject(e, 'relay');
    if (e.status >= 500 || TOKEN_CODES.includes(e.code)) return fault(uri, refusalText(e), data, sink);
    return new ProtocolError(ProtocolErrorCode.InvalidParams, refusalText(e), data);
  }
  if (e instanceof BridgeError) return fault(uri, refusalText(e), refusalObject(e, 'bridge'), sink);
  // A rule the bridge checked on the address itself (a dot segment, a malformed part).
  if (e instanceof SvcError) {
    const entry = CATALOGUE[e.code];
    const fields = { code: e.code, message: `${e.code}. ${entry.message}`, fix: entry.fix, detail: e.detail };
    return new ProtocolError(ProtocolErrorCode.InvalidParams, refusalText(fields), refusalObject(fields, 'bridge'));
  }
  // A protocol error the read chose itself (an address part that does not decode) is the client's.
  if (e instanceof ProtocolError && e.code !== ProtocolErrorCode.InternalError) return e;
  return fault(uri, (e as Error)?.stack ?? String(e), undefined, sink);
}

/**
 * The answer to a read of `uri` that threw `e`: at the relay's connector, a token problem as the
 * read's ordinary text; everything else thrown as `readFailure` says.
 */
export function failedRead(uri: URL, e: unknown, sink: FaultSink): ReadResourceResult {
  if (sink.served === 'relay' && e instanceof RelayRefusal && TOKEN_CODES.includes(e.code)) {
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Not read: ${uri.href} needs a KEY's token. ${refusalText(e)}` }] };
  }
  throw readFailure(uri, e, sink);
}

/** The error of a resources/read that means "not found": -32602 whose data is `{uri}` alone. */
function isNotFound(m: JSONRPCMessage): boolean {
  if (!('error' in m) || m.error.code !== ProtocolErrorCode.InvalidParams) return false;
  const data = m.error.data;
  return typeof data === 'object' && data !== null && !Array.isArray(data) && Object.keys(data).length === 1 && typeof (data as { uri?: unknown }).uri === 'string';
}

/**
 * Wrap the stdio transport: in a session opened with `initialize` that settled on a revision
 * before 2026-07-28, a resources/read answered "not found" carries code -32002 (that revision's
 * code), data unchanged. Every other message passes as it is.
 */
export function notFoundCodes(inner: Transport): Transport {
  /** The revision the initialize handshake settled on; undefined without one (2026-07-28). */
  let revision: string | undefined;
  const reads = new Set<string | number>();
  const initializes = new Set<string | number>();
  const outbound = (m: JSONRPCMessage): JSONRPCMessage => {
    if (!('id' in m) || m.id === null || m.id === undefined || 'method' in m) return m;
    if (initializes.delete(m.id) && 'result' in m && typeof m.result.protocolVersion === 'string') revision = m.result.protocolVersion;
    if (!reads.delete(m.id)) return m;
    if (revision === undefined || revision >= INVALID_PARAMS_REVISION || !isNotFound(m) || !('error' in m)) return m;
    return { ...m, error: { ...m.error, code: ProtocolErrorCode.ResourceNotFound } };
  };
  const inbound = (m: JSONRPCMessage): JSONRPCMessage => {
    if ('method' in m && 'id' in m && m.id !== undefined && m.id !== null) {
      if (m.method === 'resources/read') reads.add(m.id);
      else if (m.method === 'initialize') initializes.add(m.id);
    }
    return m;
  };
  return tapTransport(inner, { inbound, outbound });
}
