/**
 * Sealed items (protocol/sealed.md §7): content, sealing and opening, the transport encoding
 * and its limits, and the object a sealed post carries.
 *
 *   hd = H(L("sealed-header") || header)
 *   k  = HKDF(salt = the header's 16 salt bytes, ikm = secret_g, info = L("sealed-item") || hd, 16)
 *   ct = AES(k, content, aad = hd)                  (all-zero nonce: k encrypts one content)
 *
 * Content is canonical JSON the relay cannot read or check, so it is checked before sealing and
 * again after opening:
 *   message: {"body"}                body 1 to 16,384 bytes
 *   post:    {"body"?,"budget"?,"data"?,"fingerprints"?,"run_id"?,"title"?}   the limits of any post
 * Transport: {"header": b64u, "ciphertext": b64u}; header 1 to 2,048 bytes; ciphertext 17 to
 * 65,536 (message) or 184,320 (post) bytes. Content whose JSON makes the ciphertext longer
 * cannot be sealed (TOO_LARGE).
 *
 * Headers and ciphertexts to open are attacker-controlled; any failure leaves nothing shown.
 */
import { canonicalBytes, readCanonicalObject, type JsonObject } from '../canonical.js';
import { SvcError } from '../errors.js';
import { concatBytes, fromBase64url, toBase64url } from '../encoding.js';
import { type Signer } from '../identity.js';
import { label, labelledHash } from '../labels.js';
import { FINGERPRINTS_PER_POST } from '../limits.js';
import {
  buildSealedPostObject,
  sealedDigests,
  signSealedPost,
  type PostForm,
  type SealedPostFields,
  type SealedPostObject,
  type SignedPost,
} from '../objects.js';
import {
  compareFingerprints,
  validateBody,
  validateBudget,
  validateData,
  validateFingerprint,
  validateFingerprints,
  validateMessageBody,
  validateRunId,
  validateTitle,
  type Fingerprint,
} from '../validate.js';
import { aesOpenOnce, aesSealOnce, GCM_TAG_BYTES } from './aes-gcm.js';
import { SealedError } from './errors.js';
import { SECRET_BYTES } from './generations.js';
import {
  buildMessageHeader,
  buildPostHeader,
  HEADER_MAX_BYTES,
  headerSalt,
  readSealedHeader,
  type ItemType,
  type MessageHeader,
  type MessageHeaderFields,
  type PostHeader,
  type PostHeaderFields,
  type SealedHeader,
} from './headers.js';
import { hkdf } from './hkdf.js';

export const CIPHERTEXT_MIN_BYTES = 17;
export const MESSAGE_CIPHERTEXT_MAX_BYTES = 65_536;
export const POST_CIPHERTEXT_MAX_BYTES = 184_320;
const ITEM_KEY_BYTES = 16;

export function ciphertextMaxBytes(type: ItemType): number {
  return type === 'post' ? POST_CIPHERTEXT_MAX_BYTES : MESSAGE_CIPHERTEXT_MAX_BYTES;
}

function bad(field: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${field}: ${rule}`);
}

// ---- content ------------------------------------------------------------------------------

export interface PostContent {
  body?: string;
  budget?: JsonObject;
  data?: JsonObject;
  fingerprints?: Fingerprint[];
  run_id?: string;
  title?: string;
}

export interface MessageContent {
  body: string;
}

export interface PostContentFields {
  title?: string | undefined;
  /** `""` is treated as absent. */
  body?: string | undefined;
  fingerprints?: readonly Fingerprint[] | undefined;
  data?: JsonObject | undefined;
  budget?: JsonObject | undefined;
  run_id?: string | undefined;
}

function checkSealable(bytes: Uint8Array, type: ItemType): Uint8Array {
  const max = ciphertextMaxBytes(type) - GCM_TAG_BYTES;
  if (bytes.length > max) throw new SvcError('TOO_LARGE', `content: ${bytes.length} bytes as JSON; at most ${max} can be sealed`);
  return bytes;
}

/**
 * A post's content bytes, checked with the limits of an unsealed post (shared/validate.ts):
 * fingerprints sorted with repeats dropped, empty lists and an empty body omitted.
 */
export function buildPostContent(fields: PostContentFields): { content: PostContent; bytes: Uint8Array } {
  const content: PostContent = {};
  if (fields.body !== undefined && fields.body !== '') content.body = validateBody(fields.body, 'body');
  if (fields.budget !== undefined) content.budget = validateBudget(fields.budget, 'budget');
  if (fields.data !== undefined) content.data = validateData(fields.data, 'data');
  if (fields.fingerprints !== undefined) {
    const fps = validateFingerprints(fields.fingerprints, 'fingerprints');
    if (fps.length > 0) content.fingerprints = fps;
  }
  if (fields.run_id !== undefined) content.run_id = validateRunId(fields.run_id, 'run_id');
  if (fields.title !== undefined) content.title = validateTitle(fields.title, 'title');
  return { content, bytes: checkSealable(canonicalBytes(content), 'post') };
}

const POST_CONTENT_MEMBERS = ['body', 'budget', 'data', 'fingerprints', 'run_id', 'title'];

/** Read opened post content strictly: canonical, only its members, every limit of a post. */
export function readPostContent(bytes: Uint8Array, field = 'content'): PostContent {
  const o = readCanonicalObject(bytes, field);
  for (const [k, v] of Object.entries(o)) {
    if (!POST_CONTENT_MEMBERS.includes(k)) throw bad(`${field}.${k}`, 'not a member of post content');
    if (v === null) throw bad(`${field}.${k}`, 'absent members are omitted, never null');
  }
  const content: PostContent = {};
  if (o.body !== undefined) {
    if (o.body === '') throw bad(`${field}.body`, 'an empty body is omitted, never ""');
    content.body = validateBody(o.body, `${field}.body`);
  }
  if (o.budget !== undefined) content.budget = validateBudget(o.budget, `${field}.budget`);
  if (o.data !== undefined) content.data = validateData(o.data, `${field}.data`);
  if (o.fingerprints !== undefined) {
    const list = o.fingerprints;
    if (!Array.isArray(list) || list.length < 1 || list.length > FINGERPRINTS_PER_POST) {
      throw bad(`${field}.fingerprints`, `1 to ${FINGERPRINTS_PER_POST} fingerprints (absent when none)`);
    }
    const fps = list.map((fp, i) => validateFingerprint(fp, `${field}.fingerprints[${i}]`));
    fps.forEach((fp, i) => {
      if (i > 0 && compareFingerprints(fps[i - 1]!, fp) >= 0) {
        throw bad(`${field}.fingerprints[${i}]`, 'ascending by scheme then value, without repeats');
      }
    });
    content.fingerprints = fps;
  }
  if (o.run_id !== undefined) content.run_id = validateRunId(o.run_id, `${field}.run_id`);
  if (o.title !== undefined) content.title = validateTitle(o.title, `${field}.title`);
  return content;
}

/** A message's content bytes: {"body"} with a body of 1 to 16,384 bytes. */
export function buildMessageContent(body: string): { content: MessageContent; bytes: Uint8Array } {
  const content: MessageContent = { body: validateMessageBody(body, 'body') };
  return { content, bytes: checkSealable(canonicalBytes(content), 'message') };
}

/** Read opened message content strictly. */
export function readMessageContent(bytes: Uint8Array, field = 'content'): MessageContent {
  const o = readCanonicalObject(bytes, field);
  for (const k of Object.keys(o)) if (k !== 'body') throw bad(`${field}.${k}`, 'not a member of message content');
  if (o.body === undefined) throw bad(`${field}.body`, 'required');
  return { body: validateMessageBody(o.body, `${field}.body`) };
}

// ---- sealing and opening ------------------------------------------------------------------

/** hd = H(L("sealed-header") || header). */
export function headerDigest(header: Uint8Array): Uint8Array {
  return labelledHash('sealed-header', header);
}

/** k = HKDF(salt16, secret_g, L("sealed-item") || hd, 16). */
export function itemKey(secret: Uint8Array, salt: Uint8Array, hd: Uint8Array): Uint8Array {
  if (!(secret instanceof Uint8Array) || secret.length !== SECRET_BYTES) throw new TypeError('secret must be 32 bytes');
  return hkdf(salt, secret, concatBytes(label('sealed-item'), hd), ITEM_KEY_BYTES);
}

/**
 * ct of `content` under `header` (bytes, read strictly for its salt) and secret_g. The caller
 * has drawn the header's salt fresh for this content: a header is never sealed with another.
 */
export function sealItem(header: Uint8Array, content: Uint8Array, secret: Uint8Array): Uint8Array {
  const h = readSealedHeader(header, 'header');
  checkSealable(content, h.type);
  const hd = headerDigest(header);
  return aesSealOnce(itemKey(secret, headerSalt(h), hd), content, hd);
}

/** The content bytes of an item; throws SealedError('aead-open') when it does not authenticate. */
export function openItem(header: Uint8Array, ciphertext: Uint8Array, secret: Uint8Array): Uint8Array {
  const h = readSealedHeader(header, 'header');
  const hd = headerDigest(header);
  const content = aesOpenOnce(itemKey(secret, headerSalt(h), hd), ciphertext, hd);
  if (content === undefined) throw new SealedError('aead-open', 'the item does not open under this secret and header');
  return content;
}

export interface SealedItem<H extends SealedHeader> {
  header: H;
  headerBytes: Uint8Array;
  contentBytes: Uint8Array;
  ciphertext: Uint8Array;
}

/** Build the header (with the fresh `salt`) and content of a post, and seal it under secret_g. */
export function sealPost(input: {
  header: PostHeaderFields;
  content: PostContentFields;
  secret: Uint8Array;
  salt: Uint8Array;
}): SealedItem<PostHeader> {
  const { header, bytes: headerBytes } = buildPostHeader(input.header, input.salt);
  const { bytes: contentBytes } = buildPostContent(input.content);
  return { header, headerBytes, contentBytes, ciphertext: sealItem(headerBytes, contentBytes, input.secret) };
}

/** Build the header (with the fresh `salt`) and content of a message, and seal it under secret_1. */
export function sealMessage(input: {
  header: MessageHeaderFields;
  body: string;
  secret: Uint8Array;
  salt: Uint8Array;
}): SealedItem<MessageHeader> {
  const { header, bytes: headerBytes } = buildMessageHeader(input.header, input.salt);
  const { bytes: contentBytes } = buildMessageContent(input.body);
  return { header, headerBytes, contentBytes, ciphertext: sealItem(headerBytes, contentBytes, input.secret) };
}

/**
 * Open a post: strict header, authenticated ciphertext, strict content. The caller compares the
 * header with what the relay shows (`checkPostHeader`) and got the secret for
 * `header.generation` from its lock or the back links.
 */
export function openPost(headerBytes: Uint8Array, ciphertext: Uint8Array, secret: Uint8Array): { header: PostHeader; content: PostContent } {
  const header = readSealedHeader(headerBytes, 'header', 'post') as PostHeader;
  const content = readPostContent(openItem(headerBytes, ciphertext, secret));
  return { header, content };
}

export function openMessage(headerBytes: Uint8Array, ciphertext: Uint8Array, secret: Uint8Array): { header: MessageHeader; content: MessageContent } {
  const header = readSealedHeader(headerBytes, 'header', 'message') as MessageHeader;
  const content = readMessageContent(openItem(headerBytes, ciphertext, secret));
  return { header, content };
}

// ---- transport ----------------------------------------------------------------------------

export interface SealedTransport {
  header: string;
  ciphertext: string;
}

export function sealedTransport(header: Uint8Array, ciphertext: Uint8Array): SealedTransport {
  return { header: toBase64url(header), ciphertext: toBase64url(ciphertext) };
}

/**
 * `{"header": b64u, "ciphertext": b64u}` with the limits of `type`. Members besides these two
 * must be named in `others` (a sealed pair's start also sends `commitment` and `locks`).
 * Only sizes and encodings are checked here; `readSealedHeader` reads the header.
 */
export function readSealedTransport(
  value: unknown,
  type: ItemType,
  field = 'sealed',
  others: readonly string[] = [],
): { header: Uint8Array; ciphertext: Uint8Array } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad(field, 'expected {header, ciphertext}');
  const s = value as Record<string, unknown>;
  for (const k of Object.keys(s)) {
    if (k !== 'header' && k !== 'ciphertext' && !others.includes(k)) throw bad(`${field}.${k}`, 'unknown member');
  }
  const header = fromBase64url(s.header, `${field}.header`);
  const ciphertext = fromBase64url(s.ciphertext, `${field}.ciphertext`);
  if (header.length < 1 || header.length > HEADER_MAX_BYTES) throw bad(`${field}.header`, `must be 1 to ${HEADER_MAX_BYTES} bytes`);
  const max = ciphertextMaxBytes(type);
  if (ciphertext.length < CIPHERTEXT_MIN_BYTES || ciphertext.length > max) {
    throw bad(`${field}.ciphertext`, `must be ${CIPHERTEXT_MIN_BYTES} to ${max} bytes`);
  }
  return { header, ciphertext };
}

// ---- the object a sealed post carries (objects.md §7) -------------------------------------

/** The object fields a sealed post's header gives (author, SPACE, kind and routing). */
export function sealedPostFields(header: PostHeader, idempotencyKey?: string): Omit<SealedPostFields, 'sealed'> {
  const fields: Omit<SealedPostFields, 'sealed'> = { space_id: header.space_id, author_id: header.author, kind: header.kind };
  if (idempotencyKey !== undefined) fields.idempotency_key = idempotencyKey;
  if (header.to !== undefined) fields.to = header.to;
  if (header.reply_to !== undefined) fields.reply_to = header.reply_to;
  if (header.supersedes !== undefined) fields.supersedes = header.supersedes;
  if (header.retracts !== undefined) fields.retracts = header.retracts;
  return fields;
}

/**
 * The post object of a sealed post, signed form (with `idempotencyKey`) or unsigned: it carries
 * `"sealed": {"ciphertext": hex(H(L("sealed-ciphertext") || ct)), "header": hex(hd), "suite": 1}`
 * instead of the words, so a signature covers the exact stored header and ciphertext.
 */
export function sealedPostObject(headerBytes: Uint8Array, ciphertext: Uint8Array, form: PostForm, idempotencyKey?: string): SealedPostObject {
  const header = readSealedHeader(headerBytes, 'header', 'post') as PostHeader;
  return buildSealedPostObject(
    { ...sealedPostFields(header, form === 'signed' ? idempotencyKey : undefined), sealed: sealedDigests(headerBytes, ciphertext) },
    form,
  );
}

/** Sign a sealed post as a bridge does: the object from its header, digests, signature, submission. */
export function signSealedItem(input: { headerBytes: Uint8Array; ciphertext: Uint8Array; idempotencyKey: string; signer: Signer }): SignedPost {
  const header = readSealedHeader(input.headerBytes, 'header', 'post') as PostHeader;
  return signSealedPost({
    fields: sealedPostFields(header, input.idempotencyKey),
    header: input.headerBytes,
    ciphertext: input.ciphertext,
    signer: input.signer,
  });
}

