/**
 * Reading the bodies of conversations.start and messages.send (spec/2-endpoints.md "Mailbox,
 * messages, blocks"; protocol/sealed.md §7, §9), outside the write lock. Bodies are
 * attacker-controlled; every rule that needs no database is checked here, with the codes of
 * shared/validate.ts (INVALID_REQUEST naming the field) and of the sealed checks
 * (relay/messages/sealed.ts).
 *
 * `requestHash` is what an idempotent replay compares: the normalised request (who it goes to or
 * which conversation, the body or the digests of the sealed parts, `reply_to`, `about`), so the
 * same key with the same content replays and anything else is IDEMPOTENCY_CONFLICT, across all
 * of the KEY's conversations.
 */
import { canonicalBytes, type JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { toHex } from '../../shared/encoding.js';
import { sha256 } from '../../shared/hash.js';
import {
  validateAbout,
  validateConversationRecipients,
  validateIdempotencyKey,
  validateMessageBody,
  validateMessageId,
} from '../../shared/validate.js';
import { readSealedPairStart, readSealedSend, type SealedPairStart, type SealedSend } from './sealed.js';

export interface MessageContent {
  body?: string;
  sealed?: SealedSend;
  about?: string;
  idempotencyKey?: string;
}

export interface StartInput extends MessageContent {
  /** Recipients, sorted. */
  to: string[];
  /** A sealed pair's first message with the starter's locks. */
  sealedStart?: SealedPairStart;
  requestHash: string;
}

export interface SendInput extends MessageContent {
  replyTo?: string;
  requestHash: string;
}

function hashOf(request: JsonObject): string {
  return toHex(sha256(canonicalBytes(request)));
}

/** `body` or `sealed`, exactly one; `sealed: true` asks the relay to seal, which it cannot. */
function bodyOrSealed(b: Record<string, unknown>): 'body' | 'sealed' {
  if (b.sealed === true) {
    throw new SvcError('SEALED_NEEDS_BRIDGE', 'sealed: true asks the relay to seal, and it holds no secret: run the bridge, which seals on your machine');
  }
  if (b.body !== undefined && b.sealed !== undefined) throw new SvcError('INVALID_REQUEST', 'body: send body or sealed, not both');
  if (b.body === undefined && b.sealed === undefined) throw new SvcError('INVALID_REQUEST', 'body: required (1 to 16384 bytes), or sealed in a sealed pair');
  return b.body !== undefined ? 'body' : 'sealed';
}

function common(b: Record<string, unknown>): { about?: string; idempotencyKey?: string } {
  const out: { about?: string; idempotencyKey?: string } = {};
  if (b.about !== undefined && b.about !== null) out.about = validateAbout(b.about);
  if (b.idempotency_key !== undefined) out.idempotencyKey = validateIdempotencyKey(b.idempotency_key);
  return out;
}

/** conversations.start: `{to, body | sealed, about?, idempotency_key?}`. */
export function readStart(b: Record<string, unknown>, me: string): StartInput {
  const to = validateConversationRecipients(b.to, me);
  const which = bodyOrSealed(b);
  const base = common(b);
  if (which === 'body') {
    const body = validateMessageBody(b.body);
    return { to, body, ...base, requestHash: hashOf({ op: 'start', to, body, about: base.about ?? null }) };
  }
  if (to.length !== 1) throw new SvcError('INVALID_REQUEST', 'to: a sealed conversation is a pair: one peer id');
  const start = readSealedPairStart(b.sealed, { me, peer: to[0]!, about: base.about });
  return {
    to,
    sealed: start.item,
    sealedStart: start,
    ...base,
    requestHash: hashOf({ op: 'start', to, sealed: start.item.digest, commitment: start.commitment, about: base.about ?? null }),
  };
}

/** messages.send: `{body | sealed, reply_to?, about?, idempotency_key?}`; sealed parts are checked against the conversation later. */
export function readSend(b: Record<string, unknown>, conversationId: string): SendInput {
  const which = bodyOrSealed(b);
  const base = common(b);
  const replyTo = b.reply_to === undefined || b.reply_to === null ? undefined : validateMessageId(b.reply_to);
  const tail = { ...(replyTo === undefined ? {} : { replyTo }), ...base };
  if (which === 'body') {
    const body = validateMessageBody(b.body);
    return { body, ...tail, requestHash: hashOf({ op: 'send', conversation_id: conversationId, body, reply_to: replyTo ?? null, about: base.about ?? null }) };
  }
  const sealed = readSealedSend(b.sealed);
  return {
    sealed,
    ...tail,
    requestHash: hashOf({ op: 'send', conversation_id: conversationId, sealed: sealed.digest, reply_to: replyTo ?? null, about: base.about ?? null }),
  };
}
