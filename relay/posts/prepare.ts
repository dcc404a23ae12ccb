/**
 * posts.append, the part before the write lock: read the request body (attacker-controlled)
 * into one normalised post (protocol/objects.md §5, §6; spec/1-concepts.md "Post", "Signed
 * posts"). Everything here needs no database row beyond the SPACE and the author's KEY, and the
 * costly step, the Ed25519 check, happens here so the write transaction stays short.
 *
 * Two forms:
 * - unsigned: shared/validate.ts `validatePostInput`, then the relay writes the object without
 *   `idempotency_key`, with a private part salted by 32 fresh random bytes when `data`,
 *   `budget` or `run_id` is sent (objects.md §6). Origin-attested, never signed later.
 * - signed (`alg` present): relay/posts/signed-body.ts (the KEY's algorithm, then shared/objects.ts
 *   `checkSignedSubmission`: shape, bytes, SPACE, author, private part, signature), then every
 *   field rule of the Post table on the fields the object and the private part carry, then the
 *   rebuilt object must equal the signed one (OBJECT_MISMATCH, objects.md §5 step 4).
 *
 * Sealed SPACES (protocol/sealed.md §7 "Transport and limits", objects.md §7): relay/posts/
 * sealed.ts reads the `sealed` {header, ciphertext} a post carries there instead of the words.
 */
import { canonicalBytes, type JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { sha256 } from '../../shared/hash.js';
import {
  SALT_BYTES,
  buildPostObject,
  buildPrivatePart,
  checkObjectMatches,
  isSealedPostObject,
  objectIdOf,
  postFieldsOf,
  postObjectBytes,
} from '../../shared/objects.js';
import { validatePostInput } from '../../shared/validate.js';
import type { Random } from '../ids.js';
import type { PrepareAuthor, PrepareSpace, PreparedPost } from './prepared.js';
import { prepareSealedPost } from './sealed.js';
import { NO_PASSKEYS, checkSignedBody, type PasskeyCheck } from './signed-body.js';
import type { SignatureCheck } from './verify-off-thread.js';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Read `body` for `space` by `author`; throws SvcError with the catalogue code. `passkeys`:
 * the relay's passkey policy and the author's credential, for a post signed with webauthn.
 * `verify`: the Ed25519 check when it ran off the event loop (./verify-off-thread.ts).
 */
export function preparePost(
  space: PrepareSpace,
  author: PrepareAuthor,
  body: unknown,
  random: Random,
  passkeys: PasskeyCheck = NO_PASSKEYS,
  verify?: SignatureCheck,
): PreparedPost {
  if (!isPlainObject(body)) throw new SvcError('INVALID_REQUEST', 'body: a JSON object with the post fields');
  if (space.visibility !== 'sealed' && body.sealed !== undefined) {
    throw new SvcError('SPACE_NOT_SEALED', 'sealed: sealed content goes only to a sealed SPACE');
  }
  const prepared =
    space.visibility === 'sealed'
      ? prepareSealedPost(space, author, body, passkeys, verify)
      : body.alg !== undefined
        ? prepareSigned(space, author, body, passkeys, verify)
        : prepareUnsigned(space, author, body, random);
  if (prepared.input.kind === 'version' && !space.oracle) {
    throw new SvcError('NOT_AN_ORACLE', 'kind: version posts exist only in oracle SPACES');
  }
  return prepared;
}

function prepareUnsigned(space: PrepareSpace, author: PrepareAuthor, body: Record<string, unknown>, random: Random): PreparedPost {
  const input = validatePostInput(body, author.peerId);
  // objects.md §6: 32 fresh random salt bytes for the private part; the key is never published.
  const priv = buildPrivatePart({ budget: input.budget, data: input.data, run_id: input.run_id }, random(SALT_BYTES));
  const object = buildPostObject(postFieldsOf(space.spaceId, author.peerId, input, priv?.digest), 'unsigned');
  const canonical = postObjectBytes(object);
  const { idempotency_key: _key, ...content } = input;
  return {
    signed: false,
    input,
    object,
    canonical,
    objectId: objectIdOf(canonical),
    private: priv?.bytes,
    signature: undefined,
    inputDigest: sha256(canonicalBytes(content as unknown as JsonObject)),
  };
}

function prepareSigned(
  space: PrepareSpace,
  author: PrepareAuthor,
  body: Record<string, unknown>,
  passkeys: PasskeyCheck,
  verify: SignatureCheck | undefined,
): PreparedPost {
  const checked = checkSignedBody(space, author, body, passkeys, verify);
  const object = checked.object;
  if (isSealedPostObject(object)) throw new SvcError('SPACE_NOT_SEALED', 'canonical.sealed: sealed content goes only to a sealed SPACE');
  // The strict reader takes any string as a title; the Post table wants 1 to 512 bytes, and an
  // empty one would otherwise surface as OBJECT_MISMATCH (a server-side code) below.
  if (object.title === '') throw new SvcError('INVALID_REQUEST', 'canonical.title: at least 1 byte; omit it when empty');
  if (object.summary === '') throw new SvcError('INVALID_REQUEST', 'canonical.summary: at least 1 byte; omit it when empty');

  // Every field rule of the Post table, on the fields the object and the private part carry.
  const part = checked.private?.part;
  const fields: Record<string, unknown> = {
    kind: object.kind,
    title: object.title,
    summary: object.summary,
    body: object.body,
    to: object.to,
    reply_to: object.reply_to,
    supersedes: object.supersedes,
    retracts: object.retracts,
    fingerprints: object.fingerprints,
    idempotency_key: object.idempotency_key,
    budget: part?.budget,
    data: part?.data,
    run_id: part?.run_id,
  };
  for (const k of Object.keys(fields)) if (fields[k] === undefined) delete fields[k];
  const input = validatePostInput(fields, author.peerId);

  // objects.md §5 step 4: the object rebuilt from the parsed fields equals the signed one.
  const rebuilt = buildPostObject(postFieldsOf(space.spaceId, author.peerId, input, object.private_digest), 'signed');
  checkObjectMatches(object, rebuilt);
  return {
    signed: true,
    input,
    object,
    canonical: checked.canonical,
    objectId: checked.objectId,
    private: checked.private?.bytes,
    signature: checked.signature,
    inputDigest: undefined,
    passkeyCounter: checked.passkeyCounter,
  };
}
