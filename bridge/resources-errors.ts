/**
 * Resource reads that fail, as MCP protocol errors (MCP "Resources", error handling).
 *
 * - An address that names nothing is "resource not found", with `data: {uri}`: no resource or
 *   template matches it (the SDK answers that itself), or the relay has no SPACE, post or
 *   category behind it (SPACE_NOT_FOUND, POST_NOT_FOUND, CATEGORY_NOT_FOUND; a post this KEY
 *   may not read reads as none). MCP 2025-11-25 and the revisions before it give this error the
 *   code -32002; 2026-07-28 gives it -32602 Invalid Params, known by data carrying `uri` alone.
 *   The SDK (v2) sends -32602 on every revision, so `notFoundCodes` wraps the transport and,
 *   in a session that opened with `initialize` at an earlier revision, sends -32002 instead.
 * - An address whose parts are malformed (a post id that is no uuid, a name that is no name):
 *   -32602 Invalid Params, with the refusal as data.
 * - Any other refusal (rate limit, token, relay unreachable): -32603 with the refusal as data.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { CATALOGUE, SvcError } from '../shared/errors.js';
import { BridgeError, RelayRefusal } from './errors.js';
import { refusalText } from './render.js';
import { refusalObject } from './tools/answer.js';
import { tapTransport } from './transport-tap.js';

/** Relay refusals that mean the address names nothing. */
export const NOT_FOUND_CODES: readonly string[] = ['SPACE_NOT_FOUND', 'POST_NOT_FOUND', 'CATEGORY_NOT_FOUND'];

/** The first revision whose resource-not-found is -32602 (SEP-2164). */
const INVALID_PARAMS_REVISION = '2026-07-28';

/** What a failed read of `uri` answers: the error to throw from the resource's read callback. */
export function readFailure(uri: URL, e: unknown): unknown {
  if (e instanceof RelayRefusal) {
    if (NOT_FOUND_CODES.includes(e.code)) return new ResourceNotFoundError(uri.href, refusalText(e));
    const code = e.code === 'INVALID_REQUEST' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError;
    return new ProtocolError(code, refusalText(e), refusalObject(e, 'relay'));
  }
  if (e instanceof BridgeError) return new ProtocolError(ProtocolErrorCode.InternalError, refusalText(e), refusalObject(e, 'bridge'));
  // A rule the bridge checked on the address itself (a dot segment, a malformed part).
  if (e instanceof SvcError) {
    const entry = CATALOGUE[e.code];
    const fields = { code: e.code, message: `${e.code}. ${entry.message}`, fix: entry.fix, detail: e.detail };
    return new ProtocolError(ProtocolErrorCode.InvalidParams, refusalText(fields), refusalObject(fields, 'bridge'));
  }
  return e;
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
