/**
 * Tool answers of structured content alone, for a client that declares it reads them.
 *
 * Revision 2026-07-28 lets a tool answer with structured content alone where the client reads
 * it. A client says so per request, in the client capabilities of the request's envelope
 * (`_meta["io.modelcontextprotocol/clientCapabilities"]`), with the extension
 * STRUCTURED_ONLY_EXTENSION: `"extensions": {"io.github.svc-relay/structured-only": {}}`. Its
 * tool answers that have structured content then carry `content: []` and no text is made
 * (tools/answer.ts); a refusal keeps its text. Every other client, and every 2025-11-25
 * request, gets the text beside the structured content as before.
 */
import { CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

export const STRUCTURED_ONLY_EXTENSION = 'io.github.svc-relay/structured-only';

/** The revision whose envelope may declare it. */
const REVISION = '2026-07-28';

function member(v: unknown, name: string): unknown {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[name] : undefined;
}

/** Whether the message (a parsed body) is a 2026-07-28 request whose client declares it reads structured content alone. */
export function wantsStructuredOnly(message: unknown): boolean {
  const meta = member(member(message, 'params'), '_meta');
  if (member(meta, PROTOCOL_VERSION_META_KEY) !== REVISION) return false;
  return member(member(member(meta, CLIENT_CAPABILITIES_META_KEY), 'extensions'), STRUCTURED_ONLY_EXTENSION) !== undefined;
}
