/**
 * Tool answers (spec/2-endpoints.md "Connector"): a text rendering for the model plus
 * `structuredContent` with the JSON. A refusal is a tool error (`isError: true`) whose text is
 * `CODE. message (detail) fix ...` and whose structured part carries code, message and fix, so
 * an agent can act on it; protocol misuse stays a protocol error (the SDK's).
 *
 * A tool may give its text as a function of the values its structured content holds: the text
 * is then made when the answer is sent (`guarded`, where a failure is still a tool error), and
 * not at all for a client that reads structured content alone (`FaultSink.structuredOnly`: at
 * the relay's connector, a 2026-07-28 client that declares so), whose answers carry no text.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { CATALOGUE, SvcError, waitWords } from '../shared/errors.js';
import { BridgeError, RelayRefusal, type RefusalFields } from './errors.js';
import { refusalText } from './render.js';

/** Where an answer with a text made on first read keeps how to make it, and the content once made. */
const MAKE_TEXT = Symbol('make text');
const CONTENT = Symbol('content');

interface LazyAnswer {
  [MAKE_TEXT]: () => string;
  [CONTENT]: CallToolResult['content'] | undefined;
}

// One getter and one setter for every answer, reading the answer's own slots. An accessor defined
// with a new closure per object has V8 build a map (hidden class) for that object, in the old
// generation, before it turns the object's properties into a dictionary; that map holds the
// closure, so the closure and all it reaches (here the whole answer and the route's value)
// survive the next young-generation collection and are moved to the old generation, where only a
// full collection frees them. Measured at the relay's connector: 5 MB moved at every young
// collection under load, each one taking 8-10 ms instead of 1.
function madeContent(this: LazyAnswer): CallToolResult['content'] {
  return (this[CONTENT] ??= [{ type: 'text', text: this[MAKE_TEXT]() }]);
}

function givenContent(this: LazyAnswer, content: CallToolResult['content']): void {
  this[CONTENT] = content;
}

/** An answer: its text (or how to make it from the values of `structured`) and its structured content. */
export function answer(text: string | (() => string), structured: Record<string, unknown>): CallToolResult {
  if (typeof text === 'string') return { content: [{ type: 'text', text }], structuredContent: structured };
  const result = { structuredContent: structured } as CallToolResult;
  // `content` is made on first read (and then kept), an ordinary enumerable member to its readers.
  Object.defineProperty(result, MAKE_TEXT, { value: text });
  Object.defineProperty(result, CONTENT, { value: undefined, writable: true });
  Object.defineProperty(result, 'content', { enumerable: true, configurable: true, get: madeContent, set: givenContent });
  return result;
}

/** The answer as sent: structured content alone when the client reads only that, else its text made now. */
function sent(result: CallToolResult, sink: FaultSink): CallToolResult {
  if (result.isError !== true && result.structuredContent !== undefined && sink.structuredOnly === true) {
    return { content: [], structuredContent: result.structuredContent };
  }
  void result.content;
  return result;
}

/** The structured form of a refusal; `source` says who refused: the relay or this bridge. */
export function refusalObject(r: RefusalFields, source: 'relay' | 'bridge'): Record<string, unknown> {
  const error: Record<string, unknown> = { code: r.code, message: r.message, fix: r.fix, source };
  if (r.detail !== undefined) error.detail = r.detail;
  if (r.requestId !== undefined) error.request_id = r.requestId;
  if (r.retryAfter !== undefined) error.retry_after = r.retryAfter;
  return { error };
}

export function refusal(r: RefusalFields, source: 'relay' | 'bridge'): CallToolResult {
  return { content: [{ type: 'text', text: refusalText(r) }], structuredContent: refusalObject(r, source), isError: true };
}

/** Who serves the tools: where an unexpected failure is logged and what its answer names. */
export interface FaultSink {
  readonly log: (line: string) => void;
  /** The bridge (default) or the relay's connector. */
  readonly served?: 'bridge' | 'relay' | undefined;
  /** The bridge's outbox (bridge/outbox/send.ts), whose state an unreachable relay's answer tells. */
  readonly outbox?: { readonly enabled: boolean } | undefined;
  /** The client reads structured content alone: answers that have it carry no text. */
  readonly structuredOnly?: boolean | undefined;
}

/** How old something kept is, in words: "40 s old", "3 min old", "5 h old", "2 days old". */
export function ageWords(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s old`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min old`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h} h old` : `${Math.round(h / 24)} days old`;
}

/** The first line of an answer from the cache while the relay cannot be reached (`why`: a clause saying so). */
export function fromCacheLine(readAt: number, now: number, why: string): string {
  return `From the cache, ${ageWords(now - readAt)} (read at ${new Date(readAt).toISOString()}); ${why}.`;
}

/** The structured part's mark of an answer from the cache. */
export function cachedMark(readAt: number, now: number, cause: string): Record<string, unknown> {
  return { read_at: new Date(readAt).toISOString(), age_seconds: Math.max(0, Math.round((now - readAt) / 1000)), relay_unreachable: cause };
}

/** What becomes of writes while the relay is unreachable. */
export function writesWhileAway(outbox: FaultSink['outbox']): string {
  return outbox?.enabled === true
    ? "Writes are queued meanwhile: svc_post and svc_message keep what you write in this bridge's outbox and send it by themselves, in order, when the relay answers."
    : 'Writes are not queued (the outbox is off: SVC_OUTBOX_MAX_ITEMS=0): they fail until the relay answers.';
}

/**
 * The relay cannot be reached for a call the cache cannot answer: said so, with what still works
 * (queued writes; svc_whoami and a SPACE's last page from the cache).
 */
function unreachableRefusal(e: BridgeError, sink: FaultSink): RefusalFields {
  return {
    code: e.code,
    message: e.message,
    fix: `${writesWhileAway(sink.outbox)} svc_whoami, and svc_read_space of a SPACE read before, answer from the cache meanwhile. Call this again once the relay answers (svc_whoami says when); if it stays away, check SVC_API and that the relay runs.`,
    detail: e.detail,
  };
}

/**
 * A tool's INVALID_REQUEST is about its arguments: the request the relay refused was made from
 * them, and the detail names the field, which is the argument of that name. The catalogue's
 * words speak of an HTTP request's body, path or query, which a tool's caller never wrote.
 */
const ARGUMENT_REFUSAL = {
  message: 'INVALID_REQUEST. An argument of this tool call is not valid.',
  fix: 'The detail names the argument and what it takes; correct it and call again.',
};

/**
 * KEY_TOO_NEW says how long this KEY waits (the relay's `retry_after`), that a private SPACE
 * needs no wait, and, for whoever runs the relay, the setting that sets the wait.
 */
function keyTooNewFix(retryAfter: number | undefined): string {
  const left = retryAfter === undefined ? 'after the wait the relay sets (svc_guide part=capabilities: limits.public_space_key_age_seconds)' : `in ${waitWords(retryAfter)}`;
  return (
    `This KEY may create a public or oracle SPACE ${left}; a private SPACE (visibility private, no oracle) needs no wait and can be made now. ` +
    "The relay's operator sets the wait with --public-space-key-age (0: none; a relay on loopback with no public URL starts with none)."
  );
}

function relayRefusal(e: RelayRefusal): RefusalFields {
  if (e.code === 'INVALID_REQUEST') return { ...fieldsOf(e), ...ARGUMENT_REFUSAL };
  if (e.code === 'KEY_TOO_NEW') return { ...fieldsOf(e), fix: keyTooNewFix(e.retryAfter) };
  return e;
}

function fieldsOf(e: RelayRefusal): RefusalFields {
  return { code: e.code, message: e.message, fix: e.fix, detail: e.detail, requestId: e.requestId, retryAfter: e.retryAfter };
}

/** Turn what a tool threw into its answer: refusals and local failures become tool errors. */
export function failure(e: unknown, sink: FaultSink): CallToolResult {
  if (e instanceof RelayRefusal) return refusal(relayRefusal(e), 'relay');
  if (e instanceof BridgeError) return refusal(e.code === 'TRANSPORT' && sink.served !== 'relay' ? unreachableRefusal(e, sink) : e, 'bridge');
  // A protocol rule the bridge itself checked (bad argument, evidence that does not verify).
  if (e instanceof SvcError) {
    const entry = CATALOGUE[e.code];
    const words = e.code === 'INVALID_REQUEST' ? ARGUMENT_REFUSAL : { message: `${e.code}. ${entry.message}`, fix: entry.fix };
    return refusal({ code: e.code, ...words, detail: e.detail }, 'bridge');
  }
  if (sink.served === 'relay') {
    // At the relay the failure is the service's own: INTERNAL, its message kept in the relay's log only.
    sink.log(`svc-relay: connector tool failed: ${(e as Error)?.stack ?? String(e)}`);
    const entry = CATALOGUE.INTERNAL;
    return refusal({ code: 'INTERNAL', message: `INTERNAL. ${entry.message}`, fix: entry.fix }, 'relay');
  }
  sink.log(`svc-bridge: tool failed: ${(e as Error)?.stack ?? String(e)}`);
  return refusal(
    { code: 'BRIDGE_FAULT', message: `The bridge failed: ${(e as Error)?.message ?? String(e)}`, fix: 'Retry once; if it persists, report it with the bridge log (stderr).' },
    'bridge',
  );
}

/** Run a tool body and turn any failure into a tool error. */
export async function guarded(sink: FaultSink, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return sent(await body(), sink);
  } catch (e) {
    return failure(e, sink);
  }
}
