/**
 * Sealed pairs at the relay (protocol/sealed.md §3, §4, §7, §9; spec/3-errors.md
 * SEALED_HEADER_MISMATCH, CONVERSATION_SEALED, CONVERSATION_NOT_SEALED). The relay holds no
 * secret: it keeps the header, the ciphertext, the generation-1 commitment and the two locks
 * the starter made, and checks only what the header names.
 *
 * - Start: `sealed: {header, ciphertext, commitment, locks: {<starter>: lock, <peer>: lock}}`,
 *   `to` one peer, no body. The first message replies to nothing.
 * - Send: `sealed: {header, ciphertext}`.
 * - The header must be a message header (canonical, exactly the message shape), name the pair
 *   of the conversation, the caller as author, generation 1, and the `reply_to` and `about`
 *   sent beside it (absent when not sent); anything else is SEALED_HEADER_MISMATCH naming the
 *   member, and nothing is stored. Transport sizes and encodings are INVALID_REQUEST.
 * Headers are attacker-controlled.
 */
import { SvcError, isSvcError } from '../../shared/errors.js';
import { toHex } from '../../shared/encoding.js';
import { sha256 } from '../../shared/hash.js';
import { readCommitment } from '../../shared/sealed/generations.js';
import { checkMessageHeader, readSealedHeader, type MessageHeader } from '../../shared/sealed/headers.js';
import { readSealedTransport } from '../../shared/sealed/items.js';
import { readLockMap } from '../../shared/sealed/locks.js';
import { readCanonicalObject } from '../../shared/canonical.js';

export interface SealedSend {
  header: Uint8Array;
  ciphertext: Uint8Array;
  /** The header as read (its message shape checked), or the mismatch that reading found. */
  parsed: MessageHeader | SvcError;
  /** What a replay compares: digests of header and ciphertext. */
  digest: { header: string; ciphertext: string };
}

export interface SealedPairStart {
  item: SealedSend;
  /** 64 hex. */
  commitment: string;
  /** Peer id → lock (160 hex), for exactly the two KEYS. */
  locks: Map<string, string>;
}

function mismatch(detail: string): SvcError {
  return new SvcError('SEALED_HEADER_MISMATCH', detail.slice(0, 200));
}

/**
 * The header as a message header. A header of another shape, or one sealed under a generation
 * other than 1, is a mismatch (the relay names the member), never a malformed request: the
 * transport was well formed, the header names something else.
 */
function parseHeader(bytes: Uint8Array): MessageHeader | SvcError {
  try {
    const o = readCanonicalObject(bytes, 'sealed.header');
    if (o.type === 'message' && o.generation !== 1) return mismatch('sealed.header.generation: a message is sealed under generation 1');
    return readSealedHeader(bytes, 'sealed.header', 'message') as MessageHeader;
  } catch (e) {
    if (isSvcError(e)) return mismatch(e.detail ?? 'sealed.header: not a message header');
    throw e;
  }
}

function readItem(value: unknown, others: readonly string[]): SealedSend {
  const { header, ciphertext } = readSealedTransport(value, 'message', 'sealed', others);
  return {
    header,
    ciphertext,
    parsed: parseHeader(header),
    digest: { header: toHex(sha256(header)), ciphertext: toHex(sha256(ciphertext)) },
  };
}

/** messages.send's `sealed` (transport checked; the header is compared with the conversation by `checkSealedHeader`). */
export function readSealedSend(value: unknown): SealedSend {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const k of ['commitment', 'locks']) {
      if (k in value) throw new SvcError('INVALID_REQUEST', `sealed.${k}: only the first message of a sealed pair carries it`);
    }
  }
  return readItem(value, []);
}

/** The header of a sealed message against its conversation and the fields sent beside it. */
export function checkSealedHeader(
  item: SealedSend,
  expected: { pair: readonly [string, string]; author: string; replyTo: string | undefined; about: string | undefined },
): MessageHeader {
  if (item.parsed instanceof SvcError) throw item.parsed;
  checkMessageHeader(item.parsed, {
    pair: expected.pair,
    author: expected.author,
    reply_to: expected.replyTo ?? null,
    about: expected.about ?? null,
  });
  return item.parsed;
}

/** conversations.start's `sealed` for a pair of `me` and `peer`. */
export function readSealedPairStart(value: unknown, ctx: { me: string; peer: string; about: string | undefined }): SealedPairStart {
  const item = readItem(value, ['commitment', 'locks']);
  const s = value as Record<string, unknown>;
  const commitment = toHex(readCommitment(s.commitment, 'sealed.commitment'));
  const locks = readLockMap(s.locks, 'sealed.locks', 2, 2);
  for (const peer of [ctx.me, ctx.peer]) {
    if (!locks.has(peer)) throw new SvcError('INVALID_REQUEST', `sealed.locks: one lock for each of the two KEYS; none for ${peer}`);
  }
  checkSealedHeader(item, { pair: [ctx.me, ctx.peer], author: ctx.me, replyTo: undefined, about: ctx.about });
  return { item, commitment, locks: new Map([...locks].map(([p, l]) => [p, toHex(l)])) };
}

