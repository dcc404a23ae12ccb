/**
 * posts.append into a sealed SPACE, the part before the write lock (protocol/sealed.md §7
 * "Transport and limits", objects.md §7; spec/3-errors.md SPACE_SEALED, SEALED_NEEDS_BRIDGE,
 * SEALED_HEADER_MISMATCH). The body is attacker-controlled.
 *
 * The words never reach the relay: a post carries `sealed` {header, ciphertext} (b64u) instead
 * of title, body, data, budget, run_id and fingerprints.
 * - `sealed: true` asks the relay to seal, which it cannot (it holds no secret):
 *   SEALED_NEEDS_BRIDGE, nothing stored.
 * - Words, with or without `sealed`: SPACE_SEALED naming the field.
 * - Unsigned: `{sealed, kind?, to?, reply_to?, supersedes?, retracts?, idempotency_key?}`. The
 *   routing fields come from the header; any also sent must equal the header's.
 * - Signed: `{alg, canonical, signature, sealed}` whose object is a sealed post's
 *   (shared/objects.ts `checkSignedSubmission` checks the digests of header and ciphertext and
 *   the signature, as for any signed post); its kind and routing fields must equal the header's.
 * - The header (shared/sealed/headers.ts): canonical, exactly the post shape, `author` the
 *   token's KEY, `space_id` this SPACE (SEALED_HEADER_MISMATCH naming the field). Its
 *   `generation` is compared with the generation in use inside the write transaction
 *   (relay/posts/append.ts: KEY_CHANGED, detail the generation in use).
 * The relay writes the unsigned sealed object itself (objects.md §7, no idempotency key); the
 * posts row keeps no words, and the header and ciphertext go to `sealed_posts`.
 */
import { canonicalBytes, type JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import { isSealedPostObject, objectIdOf, postObjectBytes, sealedDigests } from '../../shared/objects.js';
import { checkPostHeader, readSealedHeader, type PostHeader } from '../../shared/sealed/headers.js';
import { readSealedTransport, sealedPostObject } from '../../shared/sealed/items.js';
import { validatePostInput } from '../../shared/validate.js';
import type { PrepareAuthor, PrepareSpace, PreparedPost } from './prepared.js';
import { NO_PASSKEYS, checkSignedBody, type PasskeyCheck } from './signed-body.js';
import type { SignatureCheck } from './verify-off-thread.js';

/** The fields a sealed post carries inside its ciphertext, never beside it. */
const WORD_FIELDS = ['title', 'body', 'data', 'budget', 'run_id', 'fingerprints', 'summary'] as const;
/** What an unsigned sealed post may send beside `sealed`. */
const UNSIGNED_FIELDS = new Set(['sealed', 'kind', 'to', 'reply_to', 'supersedes', 'retracts', 'idempotency_key']);

/** A routing field sent beside the header: undefined when not sent, null meaning absent. */
function sentId(body: Record<string, unknown>, field: string): string | null | undefined {
  const v = body[field];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'string') throw new SvcError('INVALID_REQUEST', `${field}: a post id, or leave it out (the header names it)`);
  return v;
}

function sentRecipients(body: Record<string, unknown>): string[] | undefined {
  const v = body.to;
  if (v === undefined) return undefined;
  if (v === null) return [];
  if (!Array.isArray(v) || v.some((p) => typeof p !== 'string')) {
    throw new SvcError('INVALID_REQUEST', 'to: an array of peer ids, or leave it out (the header names it)');
  }
  return v as string[];
}

/** Read a post body for a sealed SPACE; see the file comment. */
export function prepareSealedPost(
  space: PrepareSpace,
  author: PrepareAuthor,
  body: Record<string, unknown>,
  passkeys: PasskeyCheck = NO_PASSKEYS,
  verify?: SignatureCheck,
): PreparedPost {
  if (body.sealed === true) {
    throw new SvcError('SEALED_NEEDS_BRIDGE', 'sealed: true asks the relay to seal, and it holds no secret: run the bridge, which seals on your machine');
  }
  for (const field of WORD_FIELDS) {
    if (body[field] !== undefined) {
      throw new SvcError('SPACE_SEALED', `${field}: a sealed SPACE takes no words; seal them under the key in use and send sealed {header, ciphertext}`);
    }
  }
  if (body.sealed === undefined && body.alg === undefined) {
    throw new SvcError('SPACE_SEALED', 'sealed: a sealed SPACE takes sealed {header, ciphertext} in place of the words');
  }
  return body.alg !== undefined ? prepareSealedSigned(space, author, body, passkeys, verify) : prepareSealedUnsigned(space, author, body);
}

function prepareSealedUnsigned(space: PrepareSpace, author: PrepareAuthor, body: Record<string, unknown>): PreparedPost {
  for (const k of Object.keys(body)) {
    if (!UNSIGNED_FIELDS.has(k)) throw new SvcError('INVALID_REQUEST', `${k}: not a field of a sealed post`);
  }
  const { header: headerBytes, ciphertext } = readSealedTransport(body.sealed, 'post');
  const header = readSealedHeader(headerBytes, 'sealed.header', 'post') as PostHeader;
  if (body.kind !== undefined && typeof body.kind !== 'string') {
    throw new SvcError('INVALID_REQUEST', 'kind: a kind, or leave it out (the header names it)');
  }
  checkPostHeader(header, {
    space_id: space.spaceId,
    author: author.peerId,
    kind: body.kind as string | undefined,
    to: sentRecipients(body),
    reply_to: sentId(body, 'reply_to'),
    supersedes: sentId(body, 'supersedes'),
    retracts: sentId(body, 'retracts'),
  });
  const input = validatePostInput(routingOf(header, body.idempotency_key), author.peerId, true);
  const object = sealedPostObject(headerBytes, ciphertext, 'unsigned');
  const canonical = postObjectBytes(object);
  const { idempotency_key: _key, ...routing } = input;
  // A replay compares the routing and the exact header and ciphertext (by their digests).
  const content: JsonObject = { ...(routing as unknown as JsonObject), sealed: sealedDigests(headerBytes, ciphertext) };
  return {
    signed: false,
    input,
    object,
    canonical,
    objectId: objectIdOf(canonical),
    private: undefined,
    signature: undefined,
    inputDigest: sha256(canonicalBytes(content)),
    sealed: { generation: header.generation, header: headerBytes, ciphertext },
  };
}

function prepareSealedSigned(
  space: PrepareSpace,
  author: PrepareAuthor,
  body: Record<string, unknown>,
  passkeys: PasskeyCheck,
  verify: SignatureCheck | undefined,
): PreparedPost {
  const checked = checkSignedBody(space, author, body, passkeys, verify);
  const object = checked.object;
  if (!isSealedPostObject(object) || checked.sealed === undefined) {
    throw new SvcError('SPACE_SEALED', 'canonical: a sealed SPACE takes a sealed post object (objects.md §7) with sealed {header, ciphertext}');
  }
  const header = readSealedHeader(checked.sealed.header, 'sealed.header', 'post') as PostHeader;
  // The signed object's routing is the header's (sealed.md §7): the same kind, `to` and threads.
  checkPostHeader(header, {
    space_id: space.spaceId,
    author: author.peerId,
    kind: object.kind,
    to: object.to ?? [],
    reply_to: object.reply_to ?? null,
    supersedes: object.supersedes ?? null,
    retracts: object.retracts ?? null,
  });
  const input = validatePostInput(routingOf(header, object.idempotency_key), author.peerId, true);
  return {
    signed: true,
    input,
    object,
    canonical: checked.canonical,
    objectId: checked.objectId,
    private: undefined,
    signature: checked.signature,
    inputDigest: undefined,
    passkeyCounter: checked.passkeyCounter,
    sealed: { generation: header.generation, header: checked.sealed.header, ciphertext: checked.sealed.ciphertext },
  };
}

/** The post fields a header gives (plus the idempotency key), for the Post table's rules. */
function routingOf(header: PostHeader, idempotencyKey: unknown): Record<string, unknown> {
  const fields: Record<string, unknown> = { kind: header.kind };
  if (header.to !== undefined) fields.to = header.to;
  if (header.reply_to !== undefined) fields.reply_to = header.reply_to;
  if (header.supersedes !== undefined) fields.supersedes = header.supersedes;
  if (header.retracts !== undefined) fields.retracts = header.retracts;
  if (idempotencyKey !== undefined) fields.idempotency_key = idempotencyKey;
  return fields;
}
