/**
 * Post objects (protocol/objects.md §2-§7, spec/1-concepts.md "Post" and "Authentication >
 * Signed posts"): the canonical object every post has, signed or not, its private part, its id
 * and what a KEY signs.
 *
 *   object_id      = H(L("object") || canonical object bytes)
 *   private_digest = hex(H(L("object-private") || private part bytes))
 *   Ed25519 signs    L("object-signature") || object_id
 *   passkey signs    H(L("object-signature") || object_id)      (WebAuthn challenge)
 *
 * This module owns form and ordering: member sets, value types, id formats, `to` and
 * `fingerprints` order, omitted empties. Content rules (kind list, title/body/fingerprint
 * lengths, schemes, counts) are shared/validate.ts's, applied to the fields this module reads.
 *
 * Everything a reader here is given comes from a request or a store and is attacker-controlled.
 */
import { SvcError } from './errors.js';
import { canonicalBytes, readCanonicalObject, type JsonObject, type JsonValue } from './canonical.js';
import { concatBytes, fromBase64url, fromHex, isHex, isUuid, toBase64url, toHex, utf8Length } from './encoding.js';
import { label, labelledHash } from './labels.js';
import { verifyEd25519, type Signer } from './identity.js';
import { assertionRecord, checkAssertion, readAssertion, type PasskeyKey, type PasskeyPolicy } from './passkey.js';
import type { PostInput } from './validate.js';

// ---------------------------------------------------------------------------------------------
// Types

/** A signed post carries `idempotency_key` in its object; the relay's unsigned object never does. */
export type PostForm = 'signed' | 'unsigned';

export interface Fingerprint {
  scheme: string;
  value: string;
}

/** The fields a post object is built from (snake_case, as on the wire). */
export interface PostFields {
  space_id: string;
  author_id: string;
  kind: string;
  /** Signed form only; ignored when building the unsigned form. */
  idempotency_key?: string | undefined;
  title?: string | undefined;
  /** The author's short reading of the post (a newer API's member, objects.md §2). */
  summary?: string | undefined;
  /** `""` is treated as absent. */
  body?: string | undefined;
  to?: readonly string[] | undefined;
  reply_to?: string | undefined;
  supersedes?: string | undefined;
  retracts?: string | undefined;
  fingerprints?: readonly Fingerprint[] | undefined;
  /** Hex digest of the private part, when there is one (see `buildPrivatePart`). */
  private_digest?: string | undefined;
}

/** A post object as built or strictly read (objects.md §2, the reference's `summary` included). */
export interface PostObject {
  v: 1;
  space_id: string;
  author_id: string;
  kind: string;
  idempotency_key?: string;
  title?: string;
  summary?: string;
  body?: string;
  to?: string[];
  reply_to?: string;
  supersedes?: string;
  retracts?: string;
  fingerprints?: Fingerprint[];
  private_digest?: string;
}

/** The `sealed` member of a sealed post's object: digests of the header and the ciphertext. */
export interface SealedDigests {
  ciphertext: string;
  header: string;
  suite: 1;
}

/** The fields a sealed post's object is built from (objects.md §7). */
export interface SealedPostFields {
  space_id: string;
  author_id: string;
  kind: string;
  idempotency_key?: string | undefined;
  to?: readonly string[] | undefined;
  reply_to?: string | undefined;
  supersedes?: string | undefined;
  retracts?: string | undefined;
  /** Hex digests, as `sealedDigests()` gives them. */
  sealed: { ciphertext: string; header: string };
}

/** A sealed post's object (objects.md §7): no words, no fingerprints, no private part. */
export interface SealedPostObject {
  v: 1;
  space_id: string;
  author_id: string;
  kind: string;
  idempotency_key?: string;
  to?: string[];
  reply_to?: string;
  supersedes?: string;
  retracts?: string;
  sealed: SealedDigests;
}

export type AnyPostObject = PostObject | SealedPostObject;

export function isSealedPostObject(o: AnyPostObject): o is SealedPostObject {
  return 'sealed' in o;
}

// ---------------------------------------------------------------------------------------------
// Member checks shared by the builders and the strict reader

const PLAIN_MEMBERS: ReadonlySet<string> = new Set([
  'v', 'space_id', 'author_id', 'idempotency_key', 'kind', 'title', 'summary', 'body', 'to',
  'reply_to', 'supersedes', 'retracts', 'fingerprints', 'private_digest',
]);
const SEALED_MEMBERS: ReadonlySet<string> = new Set([
  'v', 'space_id', 'author_id', 'idempotency_key', 'kind', 'to', 'reply_to', 'supersedes', 'retracts', 'sealed',
]);
const IDEMPOTENCY_KEY_MAX_BYTES = 128;

function bad(path: string, rule: string): SvcError {
  return new SvcError('INVALID_REQUEST', `${path}: ${rule}`);
}

function at(prefix: string, member: string): string {
  return prefix === '' ? member : `${prefix}.${member}`;
}

/**
 * Order of two strings by Unicode code point (= UTF-8 byte order), which differs from
 * JavaScript's UTF-16 order when a supplementary character meets U+E000..U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+10000 and up) sort after every other BMP unit.
    if (x >= 0xd800) x += x <= 0xdfff ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y <= 0xdfff ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}

function compareFingerprints(a: Fingerprint, b: Fingerprint): number {
  return compareCodePoints(a.scheme, b.scheme) || compareCodePoints(a.value, b.value);
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string') throw bad(path, value === null ? 'null is not allowed' : 'expected a string');
  return value;
}

function requireUuid(value: unknown, path: string): string {
  if (!isUuid(value)) throw bad(path, value === null ? 'null is not allowed' : 'expected a lowercase uuid');
  return value;
}

function requireHex32(value: unknown, path: string): string {
  if (!isHex(value, 32)) throw bad(path, value === null ? 'null is not allowed' : 'expected 64 lowercase hex');
  return value;
}

function requireList(value: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(value)) throw bad(path, value === null ? 'null is not allowed' : 'expected an array');
  return value;
}

function requireIdempotencyKey(value: unknown, path: string): string {
  const key = requireString(value, path);
  const bytes = utf8Length(key);
  if (bytes < 1 || bytes > IDEMPOTENCY_KEY_MAX_BYTES) throw bad(path, 'must be 1 to 128 bytes');
  return key;
}

/** A fingerprint object with exactly `scheme` and `value`, both strings. */
function requireFingerprint(value: unknown, path: string): Fingerprint {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad(path, 'expected {scheme, value}');
  const keys = Object.keys(value);
  if (keys.length !== 2 || !('scheme' in value) || !('value' in value)) {
    throw bad(path, 'must have exactly the members scheme and value');
  }
  const o = value as { scheme: unknown; value: unknown };
  return { scheme: requireString(o.scheme, `${path}.scheme`), value: requireString(o.value, `${path}.value`) };
}

function orderList<T>(items: T[], compare: (a: T, b: T) => number, path: string, mode: ListMode): T[] {
  const sorted = mode.reading ? items : [...items].sort(compare);
  const out: T[] = [];
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0) {
      const c = compare(sorted[i - 1]!, sorted[i]!);
      if (c === 0) {
        if (mode.repeats === 'drop') continue;
        throw bad(`${path}[${i}]`, 'repeated');
      }
      if (c > 0) throw bad(`${path}[${i}]`, 'not in ascending order');
    }
    out.push(sorted[i]!);
  }
  return out;
}

/**
 * How lists and empties are treated. `repeats`: 'refuse' (signed form and the reader) or 'drop'
 * (the relay's unsigned form). `reading`: the strict reader, where lists must already be
 * strictly ascending and empty lists or body are refused rather than omitted.
 */
type ListMode = { repeats: 'refuse' | 'drop'; reading: boolean };

function toList(value: unknown, author: string, path: string, mode: ListMode): string[] | undefined {
  const list = requireList(value, path);
  if (list.length === 0) {
    if (mode.reading) throw bad(path, 'an empty list is omitted, never sent');
    return undefined;
  }
  const ids = list.map((x, i) => requireHex32(x, `${path}[${i}]`));
  // Lowercase hex compares the same as the bytes it encodes.
  const out = orderList(ids, (a, b) => (a < b ? -1 : a > b ? 1 : 0), path, mode);
  if (out.includes(author)) throw bad(path, 'never the author');
  return out;
}

function fingerprintList(value: unknown, path: string, mode: ListMode): Fingerprint[] | undefined {
  const list = requireList(value, path);
  if (list.length === 0) {
    if (mode.reading) throw bad(path, 'an empty list is omitted, never sent');
    return undefined;
  }
  const items = list.map((x, i) => requireFingerprint(x, `${path}[${i}]`));
  return orderList(items, compareFingerprints, path, mode);
}

/** Members both object shapes share, checked in the same way by builders and reader. */
function commonMembers(
  src: Record<string, unknown>,
  form: PostForm,
  prefix: string,
  mode: ListMode,
): Omit<SealedPostObject, 'sealed'> {
  const space_id = requireUuid(src.space_id, at(prefix, 'space_id'));
  const author_id = requireHex32(src.author_id, at(prefix, 'author_id'));
  const kind = requireString(src.kind, at(prefix, 'kind'));
  if (kind === '') throw bad(at(prefix, 'kind'), 'must not be empty');
  const o: Omit<SealedPostObject, 'sealed'> = { v: 1, space_id, author_id, kind };
  if (form === 'signed') {
    if (src.idempotency_key === undefined) throw bad(at(prefix, 'idempotency_key'), 'required in a signed object');
    o.idempotency_key = requireIdempotencyKey(src.idempotency_key, at(prefix, 'idempotency_key'));
  } else if (mode.reading && src.idempotency_key !== undefined) {
    throw bad(at(prefix, 'idempotency_key'), 'never in an unsigned object');
  }
  if (src.to !== undefined) {
    const to = toList(src.to, author_id, at(prefix, 'to'), mode);
    if (to !== undefined) o.to = to;
  }
  for (const m of ['reply_to', 'supersedes', 'retracts'] as const) {
    if (src[m] !== undefined) o[m] = requireUuid(src[m], at(prefix, m));
  }
  if (o.supersedes !== undefined && o.retracts !== undefined) {
    throw bad(at(prefix, 'retracts'), 'supersedes and retracts are never both set');
  }
  return o;
}

/** The plain shape's own members: title, summary, body, fingerprints, private_digest. */
function plainMembers(src: Record<string, unknown>, o: PostObject, prefix: string, mode: ListMode): PostObject {
  if (src.title !== undefined) o.title = requireString(src.title, at(prefix, 'title'));
  if (src.summary !== undefined) o.summary = requireString(src.summary, at(prefix, 'summary'));
  if (src.body !== undefined) {
    const body = requireString(src.body, at(prefix, 'body'));
    if (body !== '') o.body = body;
    else if (mode.reading) throw bad(at(prefix, 'body'), 'an empty body is omitted, never ""');
  }
  if (src.fingerprints !== undefined) {
    const fingerprints = fingerprintList(src.fingerprints, at(prefix, 'fingerprints'), mode);
    if (fingerprints !== undefined) o.fingerprints = fingerprints;
  }
  if (src.private_digest !== undefined) o.private_digest = requireHex32(src.private_digest, at(prefix, 'private_digest'));
  return o;
}

function sealedMember(value: unknown, path: string, reading: boolean): SealedDigests {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad(path, 'expected an object');
  const s = value as Record<string, unknown>;
  const allowed = reading ? ['ciphertext', 'header', 'suite'] : ['ciphertext', 'header'];
  for (const k of Object.keys(s)) if (!allowed.includes(k)) throw bad(`${path}.${k}`, 'unknown member');
  if (reading && s.suite !== 1) throw bad(`${path}.suite`, 'must be 1');
  const header = s.header;
  const ciphertext = s.ciphertext;
  if (!isHex(header, 32)) throw bad(`${path}.header`, 'expected 64 lowercase hex');
  if (!isHex(ciphertext, 32)) throw bad(`${path}.ciphertext`, 'expected 64 lowercase hex');
  return { ciphertext, header, suite: 1 };
}

function refuseNullMembers(o: Record<string, unknown>, prefix: string): void {
  for (const [k, v] of Object.entries(o)) if (v === null) throw bad(at(prefix, k), 'null is not allowed');
}

// ---------------------------------------------------------------------------------------------
// Builders

/**
 * Build the post object from fields (objects.md §2, §6). `to` and `fingerprints` are sorted
 * (fingerprints by scheme then value, in code point order); absent and empty fields are
 * omitted, and so is an empty body. The signed form requires `idempotency_key` and refuses
 * repeats in the lists; the unsigned form leaves the key out and drops repeats.
 * Throws INVALID_REQUEST naming the field for null values and wrong member types.
 */
export function buildPostObject(fields: PostFields, form: PostForm): PostObject {
  const src = fields as unknown as Record<string, unknown>;
  if (src === null || typeof src !== 'object') throw new TypeError('fields must be an object');
  const mode: ListMode = { repeats: form === 'signed' ? 'refuse' : 'drop', reading: false };
  return plainMembers(src, commonMembers(src, form, '', mode), '', mode);
}

/**
 * The object fields of a post input that passed validatePostInput (shared/validate.ts): every
 * member of the input the object carries (objects.md §2); budget, data and run_id go in the
 * private part, whose digest is given. The bridge signs these fields and the relay builds or
 * rebuilds the same ones. `idempotency_key` is carried; the unsigned form ignores it.
 */
export function postFieldsOf(spaceId: string, authorId: string, input: PostInput, privateDigest?: string): PostFields {
  return {
    space_id: spaceId,
    author_id: authorId,
    kind: input.kind,
    idempotency_key: input.idempotency_key,
    title: input.title,
    summary: input.summary,
    body: input.body,
    to: input.to,
    reply_to: input.reply_to,
    supersedes: input.supersedes,
    retracts: input.retracts,
    fingerprints: input.fingerprints,
    private_digest: privateDigest,
  };
}

/** Build a sealed post's object (objects.md §7); same rules as `buildPostObject`. */
export function buildSealedPostObject(fields: SealedPostFields, form: PostForm): SealedPostObject {
  const src = fields as unknown as Record<string, unknown>;
  if (src === null || typeof src !== 'object') throw new TypeError('fields must be an object');
  const mode: ListMode = { repeats: form === 'signed' ? 'refuse' : 'drop', reading: false };
  const o = commonMembers(src, form, '', mode);
  return { ...o, sealed: sealedMember(src.sealed, 'sealed', false) };
}

/** hex(H(L("sealed-header") || header)) and hex(H(L("sealed-ciphertext") || ct)) (objects.md §7). */
export function sealedDigests(header: Uint8Array, ciphertext: Uint8Array): { header: string; ciphertext: string } {
  return {
    header: toHex(labelledHash('sealed-header', header)),
    ciphertext: toHex(labelledHash('sealed-ciphertext', ciphertext)),
  };
}

/** RFC 8785 bytes of a post object. */
export function postObjectBytes(object: AnyPostObject): Uint8Array {
  return canonicalBytes(object);
}

// ---------------------------------------------------------------------------------------------
// Strict reader

/**
 * Read a post object's bytes strictly: RFC 8785 exactly, only the members of objects.md §2
 * (the seed spec's list and the reference's `summary`, which a newer API added) or §7, no nulls, no empty lists or body, `to` and
 * `fingerprints` strictly ascending. `form` decides whether `idempotency_key` is required
 * (signed) or refused (unsigned). Throws INVALID_REQUEST with a detail naming the member.
 */
export function readPostObject(canonical: Uint8Array, form: PostForm, field = 'canonical'): AnyPostObject {
  const o = readCanonicalObject(canonical, field);
  return postObjectFromJson(o, form, field);
}

function postObjectFromJson(o: JsonObject, form: PostForm, field: string): AnyPostObject {
  const sealed = 'sealed' in o;
  const allowed = sealed ? SEALED_MEMBERS : PLAIN_MEMBERS;
  for (const k of Object.keys(o)) {
    if (!allowed.has(k)) {
      throw bad(at(field, k), sealed && PLAIN_MEMBERS.has(k) ? 'not allowed in a sealed post' : 'unknown member');
    }
  }
  refuseNullMembers(o, field);
  if (o.v !== 1) throw bad(at(field, 'v'), 'must be 1');
  const mode: ListMode = { repeats: 'refuse', reading: true };
  const common = commonMembers(o, form, field, mode);
  if (sealed) return { ...common, sealed: sealedMember(o.sealed, at(field, 'sealed'), true) };
  return plainMembers(o, common, field, mode);
}

// ---------------------------------------------------------------------------------------------
// Private part (objects.md §3)

export const PRIVATE_PART_MAX_BYTES = 32_768;
export const SALT_BYTES = 32;

export interface PrivateFields {
  budget?: JsonObject | undefined;
  data?: JsonObject | undefined;
  run_id?: string | undefined;
}

export interface PrivatePart {
  budget?: JsonObject;
  data?: JsonObject;
  run_id?: string;
  /** 32 bytes as 64 lowercase hex. */
  salt: string;
}

export interface EncodedPrivatePart {
  part: PrivatePart;
  bytes: Uint8Array;
  /** hex(H(L("object-private") || bytes)), the object's `private_digest`. */
  digest: string;
}

function requireJsonObject(value: unknown, path: string): JsonObject {
  if (value === null) throw bad(path, 'null is not allowed');
  if (typeof value !== 'object' || Array.isArray(value)) throw bad(path, 'expected an object');
  return value as JsonObject;
}

/** H(L("object-private") || private part bytes). */
export function privateDigestOf(bytes: Uint8Array): Uint8Array {
  return labelledHash('object-private', bytes);
}

/**
 * The private part of a post that has `data`, `budget` or `run_id` (undefined when it has none).
 * The salt is the writer's choice (objects.md §3): random for the relay, deterministic per
 * idempotency key for the bridge; it is passed in so this stays a pure function.
 */
export function buildPrivatePart(fields: PrivateFields, salt: Uint8Array): EncodedPrivatePart | undefined {
  const src = fields as unknown as Record<string, unknown>;
  if (src.data === undefined && src.budget === undefined && src.run_id === undefined) return undefined;
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES) throw new TypeError('salt must be 32 bytes');
  const part: PrivatePart = { salt: toHex(salt) };
  if (src.budget !== undefined) part.budget = requireJsonObject(src.budget, 'budget');
  if (src.data !== undefined) part.data = requireJsonObject(src.data, 'data');
  if (src.run_id !== undefined) part.run_id = requireUuid(src.run_id, 'run_id');
  const bytes = canonicalBytes(part);
  if (bytes.length > PRIVATE_PART_MAX_BYTES) throw bad('private', 'over 32,768 bytes');
  return { part, bytes, digest: toHex(privateDigestOf(bytes)) };
}

const PRIVATE_MEMBERS = ['budget', 'data', 'run_id', 'salt'];

/** Read a private part's bytes strictly (objects.md §3). Throws INVALID_REQUEST naming `field`. */
export function readPrivatePart(bytes: Uint8Array, field = 'private'): PrivatePart {
  if (bytes.length === 0 || bytes.length > PRIVATE_PART_MAX_BYTES) throw bad(field, 'must be 1 to 32,768 bytes');
  const o = readCanonicalObject(bytes, field);
  for (const k of Object.keys(o)) if (!PRIVATE_MEMBERS.includes(k)) throw bad(at(field, k), 'unknown member');
  refuseNullMembers(o, field);
  if (!isHex(o.salt, SALT_BYTES)) throw bad(at(field, 'salt'), 'expected 64 lowercase hex');
  const part: PrivatePart = { salt: o.salt };
  if (o.budget !== undefined) part.budget = requireJsonObject(o.budget, at(field, 'budget'));
  if (o.data !== undefined) part.data = requireJsonObject(o.data, at(field, 'data'));
  if (o.run_id !== undefined) part.run_id = requireUuid(o.run_id, at(field, 'run_id'));
  if (part.budget === undefined && part.data === undefined && part.run_id === undefined) {
    throw bad(field, 'needs data, budget or run_id besides the salt');
  }
  return part;
}

// ---------------------------------------------------------------------------------------------
// Ids and signatures (objects.md §4)

function assertId(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== 32) throw new TypeError(`${name} must be 32 bytes`);
}

/** object_id = H(L("object") || canonical bytes). */
export function objectIdOf(canonical: Uint8Array): Uint8Array {
  return labelledHash('object', canonical);
}

/** What an Ed25519 KEY signs: L("object-signature") || object_id. */
export function objectSignaturePreimage(objectId: Uint8Array): Uint8Array {
  assertId(objectId, 'objectId');
  return concatBytes(label('object-signature'), objectId);
}

/** The WebAuthn challenge for a post: H(L("object-signature") || object_id). */
export function objectPasskeyChallenge(objectId: Uint8Array): Uint8Array {
  assertId(objectId, 'objectId');
  return labelledHash('object-signature', objectId);
}

export function signObjectId(signer: Signer, objectId: Uint8Array): Uint8Array {
  return signer.sign(objectSignaturePreimage(objectId));
}

export function verifyObjectSignature(publicKey: Uint8Array, objectId: Uint8Array, signature: Uint8Array): boolean {
  if (!(objectId instanceof Uint8Array) || objectId.length !== 32) return false;
  return verifyEd25519(publicKey, objectSignaturePreimage(objectId), signature);
}

// ---------------------------------------------------------------------------------------------
// Signed submissions (objects.md §5)

/** The body of a signed post with an Ed25519 KEY. */
export interface SignedSubmission {
  alg: 'ed25519';
  canonical: string;
  private?: string;
  signature: string;
  sealed?: { header: string; ciphertext: string };
}

export interface SignedPost {
  submission: SignedSubmission;
  object: AnyPostObject;
  canonical: Uint8Array;
  objectId: Uint8Array;
  private?: EncodedPrivatePart;
}

/**
 * Build, encode and sign a post as a bridge does: private part (when data, budget or run_id
 * is given, with the caller's salt), object with its digest, canonical bytes, signature.
 */
export function signPost(input: {
  fields: Omit<PostFields, 'private_digest'>;
  private?: PrivateFields;
  salt?: Uint8Array;
  signer: Signer;
}): SignedPost {
  const priv = input.private === undefined ? undefined : buildPrivatePart(input.private, input.salt ?? new Uint8Array(0));
  const object = buildPostObject({ ...input.fields, private_digest: priv?.digest }, 'signed');
  return finishSigned(object, input.signer, priv, undefined);
}

/** Build, encode and sign a sealed post (objects.md §7, sealed.md) from its header and ciphertext. */
export function signSealedPost(input: {
  fields: Omit<SealedPostFields, 'sealed'>;
  header: Uint8Array;
  ciphertext: Uint8Array;
  signer: Signer;
}): SignedPost {
  const object = buildSealedPostObject({ ...input.fields, sealed: sealedDigests(input.header, input.ciphertext) }, 'signed');
  return finishSigned(object, input.signer, undefined, { header: input.header, ciphertext: input.ciphertext });
}

function finishSigned(
  object: AnyPostObject,
  signer: Signer,
  priv: EncodedPrivatePart | undefined,
  sealed: { header: Uint8Array; ciphertext: Uint8Array } | undefined,
): SignedPost {
  const canonical = postObjectBytes(object);
  const objectId = objectIdOf(canonical);
  const submission: SignedSubmission = {
    alg: 'ed25519',
    canonical: toBase64url(canonical),
    signature: toHex(signObjectId(signer, objectId)),
  };
  if (priv !== undefined) submission.private = toBase64url(priv.bytes);
  if (sealed !== undefined) {
    submission.sealed = { header: toBase64url(sealed.header), ciphertext: toBase64url(sealed.ciphertext) };
  }
  const out: SignedPost = { submission, object, canonical, objectId };
  if (priv !== undefined) out.private = priv;
  return out;
}

/** Who may send the submission: the SPACE posted to and the token's KEY. */
export interface SubmissionContext {
  spaceId: string;
  /** Hex peer id of the token's KEY. */
  authorId: string;
  /**
   * That KEY's raw Ed25519 public key (empty for a passkey KEY); the caller guarantees
   * peerIdOf(publicKey) = authorId.
   */
  publicKey: Uint8Array;
  /** A passkey KEY: its key (SPKI hashing to authorId) and its registered credential id (b64u). */
  passkey?: { key: PasskeyKey; credentialId: string } | undefined;
  /** Where assertions must come from; null or absent: passkeys are off (PASSKEYS_UNAVAILABLE). */
  passkeys?: PasskeyPolicy | null | undefined;
  /**
   * The Ed25519 check, shared/identity.ts `verifyEd25519` when absent. A caller that checked the
   * very same key, message and signature already (the relay, off its event loop) answers from
   * that; anything else it must check as verifyEd25519 does.
   */
  verify?: ((publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean) | undefined;
}

export interface CheckedSubmission {
  object: AnyPostObject;
  canonical: Uint8Array;
  objectId: Uint8Array;
  /** Ed25519: the 64-byte signature; webauthn: the assertion record (shared/passkey.ts). */
  signature: Uint8Array;
  /** webauthn: the assertion's signature counter, which the relay must see advance. */
  passkeyCounter?: number;
  private?: { part: PrivatePart; bytes: Uint8Array };
  sealed?: { header: Uint8Array; ciphertext: Uint8Array };
}

export const SIGNED_OBJECT_MAX_BYTES = 184_320;
/** Longest unpadded base64url of SIGNED_OBJECT_MAX_BYTES bytes. */
const SIGNED_OBJECT_MAX_B64 = Math.ceil((SIGNED_OBJECT_MAX_BYTES * 4) / 3);
const SEALED_HEADER_MAX_BYTES = 2_048;
const SEALED_CIPHERTEXT_MIN_BYTES = 17;
const SEALED_POST_CIPHERTEXT_MAX_BYTES = 184_320;
const SUBMISSION_MEMBERS = ['alg', 'canonical', 'private', 'signature', 'sealed'];
const WEBAUTHN_SUBMISSION_MEMBERS = [...SUBMISSION_MEMBERS, 'credential_id', 'client_data_json', 'authenticator_data'];

/**
 * Check a signed post's body (objects.md §5 steps 1-3), in order:
 * 1. shape and bytes → INVALID_REQUEST (TOO_LARGE for a canonical over 180 KiB): the body's
 *    members, base64url, the strict object reader, `space_id` and `author_id`, the private part
 *    (strict, digest equal to `private_digest`), the sealed header and ciphertext digests;
 * 2. `alg`: `ed25519` from an Ed25519 KEY, `webauthn` from a passkey KEY, else
 *    POST_SIGNATURE_INVALID (`webauthn` is PASSKEYS_UNAVAILABLE, first, when passkeys are off);
 * 3. the signature → POST_SIGNATURE_INVALID: Ed25519 over L("object-signature") || object_id,
 *    or a WebAuthn assertion (shared/passkey.ts) whose challenge is H(that preimage), from the
 *    KEY's registered credential; its counter is the caller's to check against the store.
 * Field rules (kind, lengths, counts) and the OBJECT_MISMATCH comparison (step 4) follow,
 * by shared/validate.ts and `checkObjectMatches`. `body` is attacker-controlled.
 */
export function checkSignedSubmission(body: unknown, context: SubmissionContext): CheckedSubmission {
  if (!isUuid(context.spaceId)) throw new TypeError('context.spaceId must be a lowercase uuid');
  if (!isHex(context.authorId, 32)) throw new TypeError('context.authorId must be 64 lowercase hex');
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw bad('body', 'expected a JSON object');
  const b = body as Record<string, unknown>;

  const webauthn = b.alg === 'webauthn';
  if (webauthn && (context.passkeys === undefined || context.passkeys === null)) {
    throw new SvcError('PASSKEYS_UNAVAILABLE', 'alg: webauthn (passkeys are turned off on this relay)');
  }
  if (!webauthn && b.alg !== 'ed25519') throw bad('alg', 'must be ed25519 or webauthn');
  const members = webauthn ? WEBAUTHN_SUBMISSION_MEMBERS : SUBMISSION_MEMBERS;
  for (const k of Object.keys(b)) {
    if (!members.includes(k)) throw bad(k, 'not allowed beside canonical; content fields go inside it');
  }

  // Bytes.
  if (typeof b.canonical === 'string' && b.canonical.length > SIGNED_OBJECT_MAX_B64) {
    throw new SvcError('TOO_LARGE', 'canonical: over 184,320 bytes');
  }
  const canonical = fromBase64url(b.canonical, 'canonical');
  if (canonical.length === 0) throw bad('canonical', 'must not be empty');
  const signatureHex = b.signature;
  const assertion = webauthn ? readAssertion(b) : undefined;
  if (!webauthn && !isHex(signatureHex, 64)) throw bad('signature', 'expected 128 lowercase hex');

  // The object.
  const object = readPostObject(canonical, 'signed');
  if (object.space_id !== context.spaceId) throw bad('canonical.space_id', 'not this SPACE');
  if (object.author_id !== context.authorId) throw bad('canonical.author_id', "not the token's KEY");

  const out: CheckedSubmission = { object, canonical, objectId: objectIdOf(canonical), signature: new Uint8Array(0) };

  // The private part.
  const digest = isSealedPostObject(object) ? undefined : object.private_digest;
  if (b.private !== undefined) {
    if (digest === undefined) throw bad('private', 'sent but the object has no private_digest');
    const bytes = fromBase64url(b.private, 'private');
    const part = readPrivatePart(bytes, 'private');
    if (toHex(privateDigestOf(bytes)) !== digest) throw bad('private', 'does not match private_digest');
    out.private = { part, bytes };
  } else if (digest !== undefined) {
    throw bad('private', 'missing: the object has a private_digest');
  }

  // Sealed header and ciphertext.
  if (b.sealed !== undefined) {
    if (!isSealedPostObject(object)) throw bad('sealed', 'sent but the object has no sealed member');
    out.sealed = readSealedTransport(b.sealed, object.sealed);
  } else if (isSealedPostObject(object)) {
    throw bad('sealed', 'missing: the object is a sealed post');
  }

  // The signature, under the token's KEY. Its peer id is not re-derived here: the relay's key
  // record binds authorId to publicKey at registration, and this is the hot path (a signed
  // post should cost little more than a bare verify).
  if (assertion !== undefined) {
    const passkey = context.passkey;
    if (passkey === undefined) throw new SvcError('POST_SIGNATURE_INVALID', 'alg: an Ed25519 KEY signs with ed25519');
    if (toBase64url(assertion.credentialId) !== passkey.credentialId) {
      throw new SvcError('POST_SIGNATURE_INVALID', "credential_id: not the passkey this KEY registered");
    }
    const challenge = objectPasskeyChallenge(out.objectId);
    const checked = checkAssertion(assertion, passkey.key, challenge, context.passkeys!);
    if (!checked.ok) throw new SvcError('POST_SIGNATURE_INVALID', checked.check);
    out.signature = assertionRecord(assertion);
    out.passkeyCounter = checked.value.counter;
    return out;
  }
  if (context.passkey !== undefined) throw new SvcError('POST_SIGNATURE_INVALID', 'alg: a passkey KEY signs with webauthn');
  const publicKey = context.publicKey;
  const signature = fromHex(signatureHex, 64, 'signature');
  if (!(context.verify ?? verifyEd25519)(publicKey, objectSignaturePreimage(out.objectId), signature)) {
    throw new SvcError('POST_SIGNATURE_INVALID', 'signature does not verify over L("object-signature") || object_id');
  }
  out.signature = signature;
  return out;
}

/** `{"header": b64u, "ciphertext": b64u}` of a sealed post (sealed.md "Transport and limits"). */
function readSealedTransport(value: unknown, digests: SealedDigests): { header: Uint8Array; ciphertext: Uint8Array } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('sealed', 'expected {header, ciphertext}');
  const s = value as Record<string, unknown>;
  for (const k of Object.keys(s)) if (k !== 'header' && k !== 'ciphertext') throw bad(`sealed.${k}`, 'unknown member');
  const header = fromBase64url(s.header, 'sealed.header');
  const ciphertext = fromBase64url(s.ciphertext, 'sealed.ciphertext');
  if (header.length < 1 || header.length > SEALED_HEADER_MAX_BYTES) throw bad('sealed.header', 'must be 1 to 2,048 bytes');
  if (ciphertext.length < SEALED_CIPHERTEXT_MIN_BYTES || ciphertext.length > SEALED_POST_CIPHERTEXT_MAX_BYTES) {
    throw bad('sealed.ciphertext', 'must be 17 to 184,320 bytes');
  }
  const got = sealedDigests(header, ciphertext);
  if (got.header !== digests.header) throw bad('sealed.header', "does not match the object's sealed.header digest");
  if (got.ciphertext !== digests.ciphertext) {
    throw bad('sealed.ciphertext', "does not match the object's sealed.ciphertext digest");
  }
  return { header, ciphertext };
}

// ---------------------------------------------------------------------------------------------
// Step 4: the signed object against the object rebuilt from the parsed fields

/** Path of the first difference between two JSON values (member order ignored), or undefined. */
export function jsonDifference(a: JsonValue | undefined, b: JsonValue | undefined, path = '$'): string | undefined {
  if (a === b) return undefined;
  if (a === null || b === null || a === undefined || b === undefined || typeof a !== 'object' || typeof b !== 'object') {
    return path;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return path;
    for (let i = 0; i < a.length; i++) {
      const d = jsonDifference(a[i], b[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of [...keys].sort()) {
    if (!Object.hasOwn(ao, k) || !Object.hasOwn(bo, k)) return `${path}.${k}`;
    const d = jsonDifference(ao[k], bo[k], `${path}.${k}`);
    if (d !== undefined) return d;
  }
  return undefined;
}

/**
 * objects.md §5 step 4: the object the relay rebuilds from the fields it parsed must equal the
 * signed object as a JSON value (not bytes); a difference is OBJECT_MISMATCH naming where.
 */
export function checkObjectMatches(signed: AnyPostObject, rebuilt: AnyPostObject): void {
  const d = jsonDifference(signed as unknown as JsonValue, rebuilt as unknown as JsonValue);
  if (d !== undefined) throw new SvcError('OBJECT_MISMATCH', `object differs at ${d}`);
}
