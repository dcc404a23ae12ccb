/**
 * The bridge's two failure kinds (STYLE.md 5: wire errors apart from local ones).
 *
 * - `RelayRefusal`: the relay answered with the error envelope of spec/3-errors.md
 *   (`{"error":{code,message,fix,doc,request_id,detail?,retry_after?}}`). Codes are additive
 *   (spec "Versioning" 2), so `code` is any well-formed code string, not only the catalogue's.
 * - `BridgeError`: something on this machine or between here and the relay failed (settings,
 *   key files, the network, an answer that is not what the protocol promises). It carries a
 *   bridge-local code, a message and a fix, so a tool can show it the same way as a refusal.
 */

import { SvcError } from '../shared/errors.js';

export interface RefusalFields {
  readonly code: string;
  readonly message: string;
  readonly fix: string;
  readonly detail?: string | undefined;
  readonly requestId?: string | undefined;
  readonly retryAfter?: number | undefined;
}

/** The relay refused: the envelope's fields, as the relay sent them. */
export class RelayRefusal extends Error implements RefusalFields {
  readonly code: string;
  readonly fix: string;
  readonly detail: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly status: number;

  constructor(status: number, fields: RefusalFields) {
    super(fields.message);
    this.name = 'RelayRefusal';
    this.status = status;
    this.code = fields.code;
    this.fix = fields.fix;
    this.detail = fields.detail;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
  }
}

/** Bridge-local failure codes (never sent by a relay). */
export type BridgeErrorCode =
  | 'CONFIG' // a setting is missing or unusable
  | 'INSECURE_API' // SVC_API would send a token in clear text to a remote host
  | 'KEY_FILE' // a key or token file cannot be read, written or parsed
  | 'KEY_NOT_FOUND' // SVC_KEY names a KEY the directory does not hold
  | 'KEY_AMBIGUOUS' // several KEYS and no SVC_KEY to choose
  | 'KEY_EXISTS' // `keys new` for a name already taken
  | 'KEYCHAIN' // the OS keychain failed
  | 'AUDIENCE_MISMATCH' // a challenge asks for a signature bound to another host
  | 'TRANSPORT' // the relay could not be reached or the connection failed
  | 'BAD_RESPONSE' // the relay's answer breaks the protocol
  | 'OUTBOX_FULL' // the relay cannot be reached and the outbox holds as much as it may (bridge/outbox/store.ts)
  | 'RELAY_CHANGED' // another relay (another service root key) answers at the address of the one pinned (tools/verify/relay-identity.ts)
  // Sealed SPACES (protocol/sealed.md §5, §10; bridge/sealed/trust.ts): what a member's software refuses.
  | 'SEALED_ROLLBACK' // the relay shows an older keeper list or generation than this bridge saw
  | 'SEALED_LIST_FORGED' // a keeper list not signed by the owner in place (reference bridge code)
  | 'SEALED_OWNER_UNTRUSTED' // a new owner no keeper list of the previous owner names
  | 'SEALED_NO_KEY' // no secret for a generation: no acceptable lock, or the back links do not reach it
  | 'SEALED_DOWNGRADE' // the relay says a SPACE this bridge saw sealed is not sealed
  | 'SEALED_PAIR_CHANGED' // the relay shows a sealed pair this bridge kept with another commitment or other members
  | 'ENCRYPTION_KEY_CONFLICT' // the relay shows another encryption key for this KEY than its own
  // Tasks and oracle spaces (tools/tasks/task.ts, tools/oracle/oracle.ts): refused before anything is sent.
  | 'TASK_WORDS_NOT_SEALED' // a task added to a sealed SPACE without plain_words: its words would not be sealed
  | 'DOCUMENT_CHANGED'; // the part of an oracle document a proposal replaces changed since it was read

export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  readonly fix: string;
  readonly detail: string | undefined;

  constructor(code: BridgeErrorCode, message: string, fix: string, detail?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BridgeError';
    this.code = code;
    this.fix = fix;
    this.detail = detail;
  }
}

export function isRelayRefusal(e: unknown, ...codes: string[]): e is RelayRefusal {
  return e instanceof RelayRefusal && (codes.length === 0 || codes.includes(e.code));
}

export function isBridgeError(e: unknown, code?: BridgeErrorCode): e is BridgeError {
  return e instanceof BridgeError && (code === undefined || e.code === code);
}

/** Plain words for a failure (a refusal, the bridge's own, a protocol check), for an item that could not be opened. */
export function failureWords(e: unknown): string {
  if (e instanceof BridgeError || e instanceof RelayRefusal) return `${e.code}: ${e.message}${e.detail ? ` (${e.detail})` : ''}`;
  if (e instanceof SvcError) return `${e.code}${e.detail ? `: ${e.detail}` : ''}`;
  return (e as Error)?.message ?? String(e);
}
