/**
 * Item headers (protocol/sealed.md §7 "Header"): canonical JSON the relay reads, naming the
 * container, the author, the generation sealed under, a fresh salt and the routing fields.
 *
 *   message: {"author","generation","pair","salt","suite","type":"message","v"} + "about"?, "reply_to"?
 *   post:    {"author","generation","kind","salt","space_id","suite","type":"post","v"}
 *            + "reply_to"?, "retracts"?, "supersedes"?, "to"?
 *
 * Absent members are omitted, never null; at most 2,048 bytes. The salt is 16 bytes the sealing
 * software draws fresh for every item and passes in (a header must only ever be paired with one
 * content). Headers are attacker-controlled: the reader is strict, and `checkPostHeader` /
 * `checkMessageHeader` compare a header with what the request or the relay shows.
 */
import { canonicalBytes, readCanonicalObject, type JsonObject } from '../canonical.js';
import { SvcError } from '../errors.js';
import { fromHex, isHex, isUuid, toHex } from '../encoding.js';
import { RECIPIENTS_PER_POST } from '../limits.js';
import { validateKind } from '../validate.js';
import type { Kind } from '../vocabulary.js';

export const SEALED_SUITE = 1;
export const HEADER_MAX_BYTES = 2_048;
export const SALT_BYTES = 16;

export interface PostHeader {
  author: string;
  generation: number;
  kind: Kind;
  reply_to?: string;
  retracts?: string;
  salt: string;
  space_id: string;
  suite: 1;
  supersedes?: string;
  to?: string[];
  type: 'post';
  v: 1;
}

export interface MessageHeader {
  about?: string;
  author: string;
  generation: 1;
  pair: [string, string];
  reply_to?: string;
  salt: string;
  suite: 1;
  type: 'message';
  v: 1;
}

export type SealedHeader = PostHeader | MessageHeader;

export type ItemType = SealedHeader['type'];

const POST_REQUIRED = ['author', 'generation', 'kind', 'salt', 'space_id', 'suite', 'type', 'v'];
const POST_OPTIONAL = ['reply_to', 'retracts', 'supersedes', 'to'];
const MESSAGE_REQUIRED = ['author', 'generation', 'pair', 'salt', 'suite', 'type', 'v'];
const MESSAGE_OPTIONAL = ['about', 'reply_to'];
/** A SPACE name (spec "Space"): the pattern only; a header may name any SPACE. */
const SPACE_NAME_RE = /^[a-z0-9][a-z0-9-]{2,62}$/;

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

function peerId(value: unknown, field: string): string {
  if (!isHex(value, 32)) throw bad(field, 'expected a peer id, 64 lowercase hex');
  return value;
}

function uuid(value: unknown, field: string): string {
  if (!isUuid(value)) throw bad(field, 'expected a lowercase uuid');
  return value;
}

function generationOf(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw bad(field, 'expected a JSON integer of at least 1');
  return value;
}

/** 1 to 8 peer ids, strictly ascending, never the author. */
function recipients(value: unknown, author: string, field: string): string[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > RECIPIENTS_PER_POST) {
    throw bad(field, `1 to ${RECIPIENTS_PER_POST} peer ids (absent when none)`);
  }
  return value.map((p, i) => {
    const id = peerId(p, `${field}[${i}]`);
    if (id === author) throw bad(`${field}[${i}]`, 'never the author');
    if (i > 0 && !((value[i - 1] as string) < id)) throw bad(`${field}[${i}]`, 'ascending without repeats');
    return id;
  });
}

function saltHex(salt: Uint8Array): string {
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES) throw new TypeError('salt must be 16 bytes');
  return toHex(salt);
}

function finish(header: SealedHeader): { header: SealedHeader; bytes: Uint8Array } {
  const bytes = canonicalBytes(header);
  if (bytes.length > HEADER_MAX_BYTES) throw bad('header', `over ${HEADER_MAX_BYTES} bytes`);
  return { header, bytes };
}

// ---- builders -----------------------------------------------------------------------------

export interface PostHeaderFields {
  author: string;
  generation: number;
  kind: string;
  space_id: string;
  to?: readonly string[] | undefined;
  reply_to?: string | undefined;
  supersedes?: string | undefined;
  retracts?: string | undefined;
}

/**
 * A post header and its canonical bytes. `to` is sorted; an empty `to` is omitted. Throws
 * INVALID_REQUEST (INVALID_KIND for a kind) naming the field.
 */
export function buildPostHeader(fields: PostHeaderFields, salt: Uint8Array): { header: PostHeader; bytes: Uint8Array } {
  const author = peerId(fields.author, 'author');
  const header: PostHeader = {
    author,
    generation: generationOf(fields.generation, 'generation'),
    kind: validateKind(fields.kind, 'kind'),
    salt: saltHex(salt),
    space_id: uuid(fields.space_id, 'space_id'),
    suite: 1,
    type: 'post',
    v: 1,
  };
  if (fields.to !== undefined && fields.to.length > 0) header.to = recipients([...fields.to].sort(), author, 'to');
  for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
    if (fields[m] !== undefined) header[m] = uuid(fields[m], m);
  }
  if (header.supersedes !== undefined && header.retracts !== undefined) throw bad('retracts', 'never both supersedes and retracts');
  return finish(header) as { header: PostHeader; bytes: Uint8Array };
}

export interface MessageHeaderFields {
  author: string;
  /** The other KEY of the pair. */
  peer: string;
  about?: string | undefined;
  reply_to?: string | undefined;
}

/** A message header (generation 1, the pair ascending) and its canonical bytes. */
export function buildMessageHeader(fields: MessageHeaderFields, salt: Uint8Array): { header: MessageHeader; bytes: Uint8Array } {
  const author = peerId(fields.author, 'author');
  const peer = peerId(fields.peer, 'peer');
  if (peer === author) throw bad('peer', 'a pair is two different KEYS');
  const header: MessageHeader = {
    author,
    generation: 1,
    pair: author < peer ? [author, peer] : [peer, author],
    salt: saltHex(salt),
    suite: 1,
    type: 'message',
    v: 1,
  };
  if (fields.about !== undefined) {
    if (typeof fields.about !== 'string' || !SPACE_NAME_RE.test(fields.about)) throw bad('about', 'a SPACE name');
    header.about = fields.about;
  }
  if (fields.reply_to !== undefined) header.reply_to = uuid(fields.reply_to, 'reply_to');
  return finish(header) as { header: MessageHeader; bytes: Uint8Array };
}

// ---- strict reader ------------------------------------------------------------------------

function exactMembers(o: JsonObject, required: string[], optional: string[], field: string): void {
  for (const k of required) if (!Object.hasOwn(o, k)) throw bad(`${field}.${k}`, 'required');
  for (const k of Object.keys(o)) {
    if (!required.includes(k) && !optional.includes(k)) throw bad(`${field}.${k}`, 'not a member of this header');
    if (o[k] === null) throw bad(`${field}.${k}`, 'absent members are omitted, never null');
  }
}

/**
 * Read a header's bytes strictly: 1 to 2,048 bytes of canonical JSON of exactly one of the two
 * shapes (or of `type` when given). Throws INVALID_REQUEST naming the member (INVALID_KIND for a
 * post's kind).
 */
export function readSealedHeader(bytes: Uint8Array, field = 'sealed.header', type?: ItemType): SealedHeader {
  if (!(bytes instanceof Uint8Array) || bytes.length < 1 || bytes.length > HEADER_MAX_BYTES) {
    throw bad(field, `must be 1 to ${HEADER_MAX_BYTES} bytes`);
  }
  const o = readCanonicalObject(bytes, field);
  if (o.type !== 'post' && o.type !== 'message') throw bad(`${field}.type`, 'must be post or message');
  if (type !== undefined && o.type !== type) throw bad(`${field}.type`, `must be ${type}`);
  if (o.v !== 1) throw bad(`${field}.v`, 'must be 1');
  if (o.suite !== SEALED_SUITE) throw bad(`${field}.suite`, 'must be 1');
  if (!isHex(o.salt, SALT_BYTES)) throw bad(`${field}.salt`, 'expected 32 lowercase hex');
  const author = peerId(o.author, `${field}.author`);
  const generation = generationOf(o.generation, `${field}.generation`);

  if (o.type === 'post') {
    exactMembers(o, POST_REQUIRED, POST_OPTIONAL, field);
    const header: PostHeader = {
      author,
      generation,
      kind: validateKind(o.kind, `${field}.kind`),
      salt: o.salt,
      space_id: uuid(o.space_id, `${field}.space_id`),
      suite: 1,
      type: 'post',
      v: 1,
    };
    if (o.to !== undefined) header.to = recipients(o.to, author, `${field}.to`);
    for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
      if (o[m] !== undefined) header[m] = uuid(o[m], `${field}.${m}`);
    }
    if (header.supersedes !== undefined && header.retracts !== undefined) {
      throw bad(`${field}.retracts`, 'never both supersedes and retracts');
    }
    return header;
  }

  exactMembers(o, MESSAGE_REQUIRED, MESSAGE_OPTIONAL, field);
  if (generation !== 1) throw bad(`${field}.generation`, 'a message is always sealed under generation 1');
  const pair = o.pair;
  if (!Array.isArray(pair) || pair.length !== 2) throw bad(`${field}.pair`, 'two peer ids');
  const lo = peerId(pair[0], `${field}.pair[0]`);
  const hi = peerId(pair[1], `${field}.pair[1]`);
  if (!(lo < hi)) throw bad(`${field}.pair`, 'two different peer ids, ascending');
  if (author !== lo && author !== hi) throw bad(`${field}.author`, 'must be one of the pair');
  const header: MessageHeader = { author, generation: 1, pair: [lo, hi], salt: o.salt, suite: 1, type: 'message', v: 1 };
  if (o.about !== undefined) {
    if (typeof o.about !== 'string' || !SPACE_NAME_RE.test(o.about)) throw bad(`${field}.about`, 'a SPACE name');
    header.about = o.about;
  }
  if (o.reply_to !== undefined) header.reply_to = uuid(o.reply_to, `${field}.reply_to`);
  return header;
}

/** The 16 salt bytes a header names. */
export function headerSalt(header: SealedHeader): Uint8Array {
  return fromHex(header.salt, SALT_BYTES, 'salt');
}

// ---- comparison with what the request or the relay shows ----------------------------------

function mismatch(field: string, rule: string): SvcError {
  return new SvcError('SEALED_HEADER_MISMATCH', `${field}: ${rule}`);
}

export interface ExpectedPost {
  space_id: string;
  author: string;
  /** Routing fields as sent beside the header (relay) or as the relay shows them (reader). */
  kind?: string | undefined;
  to?: readonly string[] | undefined;
  reply_to?: string | null | undefined;
  supersedes?: string | null | undefined;
  retracts?: string | null | undefined;
  /** The generation the relay shows for this item (SEALED_HEADER_MISMATCH if it differs). */
  generation?: number | undefined;
  /** The generation in use, for a new post (KEY_CHANGED with it as the detail if it differs). */
  generationInUse?: number | undefined;
}

/**
 * A post header against its context (sealed.md §7 "Transport and limits", "Opening"): this
 * SPACE, this author, and each routing field that is given (undefined: not compared; null or an
 * empty `to`: must be absent from the header). Throws SEALED_HEADER_MISMATCH naming the field,
 * or KEY_CHANGED with the generation in use as the detail.
 */
export function checkPostHeader(header: PostHeader, expected: ExpectedPost): void {
  if (header.space_id !== expected.space_id) throw mismatch('space_id', 'names another SPACE');
  if (header.author !== expected.author) throw mismatch('author', 'names another author');
  if (expected.kind !== undefined && header.kind !== expected.kind) throw mismatch('kind', 'differs from the header');
  if (expected.to !== undefined) {
    const want = [...new Set(expected.to)].sort();
    const got = header.to ?? [];
    if (want.length !== got.length || want.some((p, i) => p !== got[i])) throw mismatch('to', 'not the same set as the header');
  }
  for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
    const want = expected[m];
    if (want !== undefined && (want ?? undefined) !== header[m]) throw mismatch(m, 'differs from the header');
  }
  if (expected.generation !== undefined && header.generation !== expected.generation) {
    throw mismatch('generation', 'differs from the header');
  }
  if (expected.generationInUse !== undefined && header.generation !== expected.generationInUse) {
    throw new SvcError('KEY_CHANGED', String(expected.generationInUse));
  }
}

export interface ExpectedMessage {
  /** The conversation's two peer ids, in any order. */
  pair: readonly [string, string];
  author: string;
  reply_to?: string | null | undefined;
  about?: string | null | undefined;
}

/** A message header against its conversation (SEALED_HEADER_MISMATCH naming the field). */
export function checkMessageHeader(header: MessageHeader, expected: ExpectedMessage): void {
  const [a, b] = [...expected.pair].sort();
  if (header.pair[0] !== a || header.pair[1] !== b) throw mismatch('pair', 'names another pair');
  if (header.author !== expected.author) throw mismatch('author', 'names another author');
  for (const m of ['reply_to', 'about'] as const) {
    const want = expected[m];
    if (want !== undefined && (want ?? undefined) !== header[m]) throw mismatch(m, 'differs from the header');
  }
}

