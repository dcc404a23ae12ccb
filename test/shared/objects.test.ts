import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  buildPostObject,
  buildPrivatePart,
  buildSealedPostObject,
  checkObjectMatches,
  checkSignedSubmission,
  compareCodePoints,
  isSealedPostObject,
  jsonDifference,
  objectIdOf,
  objectPasskeyChallenge,
  objectSignaturePreimage,
  postObjectBytes,
  privateDigestOf,
  readPostObject,
  readPrivatePart,
  sealedDigests,
  signObjectId,
  signPost,
  signSealedPost,
  verifyObjectSignature,
  type Fingerprint,
  type PostFields,
  type SignedSubmission,
} from '../../shared/objects.js';
import { canonicalize } from '../../shared/canonical.js';
import { fromBase64url, fromHex, toBase64url, toHex, utf8 } from '../../shared/encoding.js';
import { isSvcError } from '../../shared/errors.js';
import { peerIdHexOf, signerFromSeed } from '../../shared/identity.js';
import { loadVector } from '../helpers/vectors.js';
import { svcCode } from '../helpers/refusals.js';

const ov = loadVector('object-vectors.json');
const v1 = loadVector('protocol-v1-vectors.json');
const testKey = signerFromSeed(fromHex(v1.test_private_seed_hex));

/** The catalogue code a call throws with, or undefined when it does not throw. */
function svcDetail(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (isSvcError(e)) return e.detail;
    throw e;
  }
  return undefined;
}

/** The reference's camelCase vector fields in our snake_case input form (null/empty = absent). */
function fieldsFromVector(f: Record<string, unknown>): PostFields {
  const pick = <T>(v: unknown): T | undefined => (v === null ? undefined : (v as T));
  return {
    space_id: f.spaceId as string,
    author_id: f.author as string,
    idempotency_key: pick(f.idempotencyKey),
    kind: f.kind as string,
    title: pick(f.title),
    summary: pick(f.summary),
    body: pick(f.body),
    to: pick(f.to),
    reply_to: pick(f.replyTo),
    supersedes: pick(f.supersedes),
    retracts: pick(f.retracts),
    fingerprints: pick(f.fingerprints),
  };
}

describe('object-vectors.json: object', () => {
  const canonical = utf8(ov.object.canonical_utf8);
  const privateBytes = utf8(ov.object.private_utf8);

  it('object: the strict reader accepts canonical_utf8 and the builder reproduces it byte for byte', () => {
    const object = readPostObject(canonical, 'signed');
    expect(isSealedPostObject(object)).toBe(false);
    expect(postObjectBytes(buildPostObject(object as PostFields, 'signed'))).toEqual(canonical);
  });

  it('object: private_digest is H(L("object-private") || private part) and is the one in the object', () => {
    expect(toHex(privateDigestOf(privateBytes))).toBe(ov.object.private_digest);
    expect(JSON.parse(ov.object.canonical_utf8).private_digest).toBe(ov.object.private_digest);
  });

  it('object: the private part is read strictly and rebuilt byte for byte from data and salt', () => {
    const part = readPrivatePart(privateBytes);
    const rebuilt = buildPrivatePart({ data: part.data }, fromHex(part.salt));
    expect(rebuilt?.bytes).toEqual(privateBytes);
    expect(rebuilt?.digest).toBe(ov.object.private_digest);
  });

  it('object: object_id is H(L("object") || canonical)', () => {
    expect(toHex(objectIdOf(canonical))).toBe(ov.object.object_id);
  });

  it('object: the signature preimage is L("object-signature") || object_id', () => {
    expect(toHex(objectSignaturePreimage(fromHex(ov.object.object_id)))).toBe(ov.object.signature_preimage_hex);
  });

  it('object: the Ed25519 signature re-made from the published seed equals the vector and verifies', () => {
    const objectId = fromHex(ov.object.object_id);
    expect(toHex(signObjectId(testKey, objectId))).toBe(ov.object.ed25519_signature_hex);
    expect(verifyObjectSignature(fromHex(ov.public_key_hex), objectId, fromHex(ov.object.ed25519_signature_hex))).toBe(true);
  });

  it('object: the passkey challenge is H(preimage)', () => {
    expect(toHex(objectPasskeyChallenge(fromHex(ov.object.object_id)))).toBe(ov.object.passkey_challenge_hex);
  });

  it('object: signPost builds the same object, private part and signature from the fields', () => {
    const read = readPostObject(canonical, 'signed') as PostFields;
    const part = readPrivatePart(privateBytes);
    const { private_digest: _d, ...fields } = read;
    const signed = signPost({ fields, private: { data: part.data }, salt: fromHex(part.salt), signer: testKey });
    expect(signed.canonical).toEqual(canonical);
    expect(toHex(signed.objectId)).toBe(ov.object.object_id);
    expect(signed.submission).toEqual({
      alg: 'ed25519',
      canonical: toBase64url(canonical),
      private: toBase64url(privateBytes),
      signature: ov.object.ed25519_signature_hex,
    });
  });

  it('object: the signed submission made of the vector bytes passes the checker', () => {
    const checked = checkSignedSubmission(
      {
        alg: 'ed25519',
        canonical: toBase64url(canonical),
        private: toBase64url(privateBytes),
        signature: ov.object.ed25519_signature_hex,
      },
      { spaceId: ov.space_id, authorId: ov.author_id, publicKey: fromHex(ov.public_key_hex) },
    );
    expect(toHex(checked.objectId)).toBe(ov.object.object_id);
    expect(checked.private?.part.data).toEqual({ x_attempts: 2, x_platform: 'linux' });
    expect(toHex(checked.signature)).toBe(ov.object.ed25519_signature_hex);
  });
});

describe('object-vectors.json: object_with_summary', () => {
  const canonical = utf8(ov.object_with_summary.canonical_utf8);
  const fields = fieldsFromVector(ov.object_with_summary.fields);

  it('object_with_summary: the builder gives canonical_utf8 byte for byte from the input fields, summary included', () => {
    expect(postObjectBytes(buildPostObject(fields, 'signed'))).toEqual(canonical);
  });

  it('object_with_summary: signPost from the fields and the published seed gives its object_id and signature', () => {
    const signed = signPost({ fields, signer: testKey });
    expect(signed.canonical).toEqual(canonical);
    expect(toHex(signed.objectId)).toBe(ov.object_with_summary.object_id);
    expect(signed.submission.signature).toBe(ov.object_with_summary.ed25519_signature_hex);
  });

  it('object_with_summary: object_id and the signature re-made from the seed', () => {
    const objectId = objectIdOf(canonical);
    expect(toHex(objectId)).toBe(ov.object_with_summary.object_id);
    expect(toHex(signObjectId(testKey, objectId))).toBe(ov.object_with_summary.ed25519_signature_hex);
  });

  it('object_with_summary: the strict reader accepts it, summary as a member, and rebuilding gives the same bytes', () => {
    const object = readPostObject(canonical, 'signed');
    expect(isSealedPostObject(object)).toBe(false);
    expect((object as { summary?: string }).summary).toBe(ov.object_with_summary.fields.summary);
    expect(postObjectBytes(buildPostObject(object as PostFields, 'signed'))).toEqual(canonical);
  });

  it('object_with_summary: checkSignedSubmission accepts it as sent, signature and all', () => {
    const checked = checkSignedSubmission(
      { alg: 'ed25519', canonical: toBase64url(canonical), signature: ov.object_with_summary.ed25519_signature_hex },
      { spaceId: ov.space_id, authorId: ov.author_id, publicKey: fromHex(ov.public_key_hex) },
    );
    expect(toHex(checked.objectId)).toBe(ov.object_with_summary.object_id);
  });

  it('object_with_summary: the empty to list and null fields of the input are omitted', () => {
    const built = buildPostObject(fields, 'signed');
    expect(Object.keys(built).sort()).toEqual(
      ['author_id', 'body', 'fingerprints', 'idempotency_key', 'kind', 'space_id', 'summary', 'title', 'v'].sort(),
    );
  });

  it('a sealed post object refuses a summary member: its words are sealed', () => {
    const sealedObject = buildSealedPostObject(
      { space_id: ov.space_id, author_id: ov.author_id, kind: 'obs', idempotency_key: 'k', sealed: { header: '11'.repeat(32), ciphertext: '22'.repeat(32) } },
      'signed',
    );
    const bytes = utf8(canonicalize({ ...sealedObject, summary: 's' }));
    expect(svcDetail(() => readPostObject(bytes, 'signed'))).toBe('canonical.summary: not allowed in a sealed post');
  });
});

describe('protocol-v1-vectors.json (what still holds)', () => {
  it('object and control: base64url of the canonical bytes', () => {
    expect(toBase64url(utf8(v1.object.canonical_utf8))).toBe(v1.object.canonical_base64url);
    expect(toBase64url(utf8(v1.control.canonical_utf8))).toBe(v1.control.canonical_base64url);
    expect(fromBase64url(v1.object.canonical_base64url)).toEqual(utf8(v1.object.canonical_utf8));
  });

  it('object: object_id of the old object bytes', () => {
    expect(toHex(objectIdOf(utf8(v1.object.canonical_utf8)))).toBe(v1.object.object_id);
  });

  it('object: the signature over L("object-signature") || object_id is re-made from the seed', () => {
    const objectId = fromHex(v1.object.object_id);
    expect(toHex(signObjectId(testKey, objectId))).toBe(v1.object.signature_hex);
    expect(verifyObjectSignature(fromHex(v1.public_key_hex), objectId, fromHex(v1.object.signature_hex))).toBe(true);
  });

  it('object: the historical object shape is refused by the strict reader', () => {
    expect(svcCode(() => readPostObject(utf8(v1.object.canonical_utf8), 'signed'))).toBe('INVALID_REQUEST');
  });
});

// ---------------------------------------------------------------------------------------------

const SPACE = '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee';
const AUTHOR = peerIdHexOf(testKey.publicKey);
const PEER_A = 'aa'.repeat(32);
const PEER_B = 'bb'.repeat(32);
const PEER_C = '0c'.repeat(32);
const base: PostFields = { space_id: SPACE, author_id: AUTHOR, kind: 'obs', idempotency_key: 'k-1' };

describe('building a post object', () => {
  it('sorts to ascending and fingerprints by scheme then value', () => {
    const o = buildPostObject(
      {
        ...base,
        to: [PEER_B, PEER_C, PEER_A],
        fingerprints: [
          { scheme: 'task.reference', value: 'b' },
          { scheme: 'git.commit', value: 'z' },
          { scheme: 'task.reference', value: 'a' },
        ],
      },
      'signed',
    );
    expect(o.to).toEqual([PEER_C, PEER_A, PEER_B]);
    expect(o.fingerprints).toEqual([
      { scheme: 'git.commit', value: 'z' },
      { scheme: 'task.reference', value: 'a' },
      { scheme: 'task.reference', value: 'b' },
    ]);
  });

  it('orders fingerprint values by code point, not UTF-16 unit (U+FFFD before U+1F600)', () => {
    const o = buildPostObject(
      { ...base, fingerprints: [{ scheme: 's', value: '\u{1F600}' }, { scheme: 's', value: '\uFFFD' }] },
      'signed',
    );
    expect(o.fingerprints!.map((f) => f.value)).toEqual(['\uFFFD', '\u{1F600}']);
    // The reader holds the same order: the UTF-16 order is refused.
    const wrong = utf8(canonicalize({ ...o, fingerprints: [...o.fingerprints!].reverse() }));
    expect(svcDetail(() => readPostObject(wrong, 'signed'))).toBe('canonical.fingerprints[1]: not in ascending order');
  });

  it('omits empty lists, an empty body and absent fields', () => {
    const o = buildPostObject({ ...base, to: [], fingerprints: [], body: '', title: undefined }, 'signed');
    expect(o).toEqual({ v: 1, space_id: SPACE, author_id: AUTHOR, kind: 'obs', idempotency_key: 'k-1' });
  });

  it('keeps the idempotency key only in the signed form, and requires it there', () => {
    expect(buildPostObject(base, 'unsigned').idempotency_key).toBeUndefined();
    const { idempotency_key: _k, ...noKey } = base;
    expect(svcDetail(() => buildPostObject(noKey, 'signed'))).toBe('idempotency_key: required in a signed object');
    expect(svcCode(() => buildPostObject({ ...base, idempotency_key: 'x'.repeat(129) }, 'signed'))).toBe('INVALID_REQUEST');
  });

  it('refuses repeats in the signed form and drops them in the unsigned form', () => {
    const fields = {
      ...base,
      to: [PEER_A, PEER_B, PEER_A],
      fingerprints: [{ scheme: 'a', value: '1' }, { scheme: 'a', value: '1' }],
    };
    expect(svcDetail(() => buildPostObject(fields, 'signed'))).toMatch(/^to\[\d\]: repeated$/);
    const u = buildPostObject(fields, 'unsigned');
    expect(u.to).toEqual([PEER_A, PEER_B]);
    expect(u.fingerprints).toEqual([{ scheme: 'a', value: '1' }]);
  });

  it('refuses null values, wrong member types and malformed ids, naming the field', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ title: null }, 'title: null is not allowed'],
      [{ body: 5 }, 'body: expected a string'],
      [{ to: 'aa' }, 'to: expected an array'],
      [{ to: ['AA'.repeat(32)] }, 'to[0]: expected 64 lowercase hex'],
      [{ fingerprints: [{ scheme: 'a' }] }, 'fingerprints[0]: must have exactly the members scheme and value'],
      [{ fingerprints: [{ scheme: 'a', value: '1', extra: 1 }] }, 'fingerprints[0]: must have exactly the members scheme and value'],
      [{ fingerprints: [{ scheme: 'a', value: 1 }] }, 'fingerprints[0].value: expected a string'],
      [{ reply_to: 'not-a-uuid' }, 'reply_to: expected a lowercase uuid'],
      [{ space_id: SPACE.toUpperCase() }, 'space_id: expected a lowercase uuid'],
      [{ author_id: 'ab' }, 'author_id: expected 64 lowercase hex'],
      [{ kind: '' }, 'kind: must not be empty'],
      [{ private_digest: 'zz' }, 'private_digest: expected 64 lowercase hex'],
      [{ to: [AUTHOR] }, 'to: never the author'],
      [{ supersedes: SPACE, retracts: SPACE }, 'retracts: supersedes and retracts are never both set'],
    ];
    for (const [extra, detail] of cases) {
      expect(svcDetail(() => buildPostObject({ ...base, ...extra } as PostFields, 'signed'))).toBe(detail);
    }
  });

  it('does not change the fields it was given', () => {
    const to = [PEER_B, PEER_A];
    const fields = { ...base, to };
    buildPostObject(fields, 'signed');
    expect(fields.to).toEqual([PEER_B, PEER_A]);
  });
});

describe('the strict object reader', () => {
  const good = buildPostObject({ ...base, title: 't', to: [PEER_A, PEER_B] }, 'signed');
  const encode = (o: unknown) => utf8(canonicalize(o));

  it('accepts a canonical object and returns its members', () => {
    expect(readPostObject(encode(good), 'signed')).toEqual(good);
  });

  const refusals: [string, unknown, string][] = [
    ['a member outside the list', { ...good, budget: {} }, 'canonical.budget: unknown member'],
    ['null as a value', { ...good, title: null }, 'canonical.title: null is not allowed'],
    ['v other than 1', { ...good, v: 2 }, 'canonical.v: must be 1'],
    ['to out of order', { ...good, to: [PEER_B, PEER_A] }, 'canonical.to[1]: not in ascending order'],
    ['to with a repeat', { ...good, to: [PEER_A, PEER_A] }, 'canonical.to[1]: repeated'],
    ['an empty to list', { ...good, to: [] }, 'canonical.to: an empty list is omitted, never sent'],
    ['an empty fingerprints list', { ...good, fingerprints: [] }, 'canonical.fingerprints: an empty list is omitted, never sent'],
    ['an empty body', { ...good, body: '' }, 'canonical.body: an empty body is omitted, never ""'],
    ['a signed object without idempotency key', (({ idempotency_key: _k, ...rest }) => rest)(good), 'canonical.idempotency_key: required in a signed object'],
  ];
  for (const [name, value, detail] of refusals) {
    it(`refuses ${name}`, () => {
      expect(svcDetail(() => readPostObject(encode(value), 'signed'))).toBe(detail);
    });
  }

  it('refuses an idempotency key in an unsigned object', () => {
    expect(svcDetail(() => readPostObject(encode(good), 'unsigned'))).toBe(
      'canonical.idempotency_key: never in an unsigned object',
    );
    const unsigned = buildPostObject(good, 'unsigned');
    expect(readPostObject(encode(unsigned), 'unsigned')).toEqual(unsigned);
  });

  it('refuses bytes that are not canonical: whitespace, member order, an array', () => {
    expect(svcCode(() => readPostObject(utf8(JSON.stringify(good, null, 1)), 'signed'))).toBe('INVALID_REQUEST');
    const reordered = `{"v":1,${canonicalize(good).slice(1, -1).replace(',"v":1', '')}}`;
    expect(svcCode(() => readPostObject(utf8(reordered), 'signed'))).toBe('INVALID_REQUEST');
    expect(svcCode(() => readPostObject(utf8('[1]'), 'signed'))).toBe('INVALID_REQUEST');
  });
});

describe('sealed post objects', () => {
  const header = utf8('{"v":1}');
  const ciphertext = new Uint8Array(40).fill(7);
  const digests = sealedDigests(header, ciphertext);
  const fields = { space_id: SPACE, author_id: AUTHOR, kind: 'obs', idempotency_key: 'k', to: [PEER_B, PEER_A], sealed: digests };

  it('have exactly the members of objects.md §7, with suite 1', () => {
    const o = buildSealedPostObject(fields, 'signed');
    expect(Object.keys(o).sort()).toEqual(['author_id', 'idempotency_key', 'kind', 'sealed', 'space_id', 'to', 'v']);
    expect(o.sealed).toEqual({ ciphertext: digests.ciphertext, header: digests.header, suite: 1 });
    expect(o.to).toEqual([PEER_A, PEER_B]);
    const read = readPostObject(postObjectBytes(o), 'signed');
    expect(isSealedPostObject(read)).toBe(true);
    expect(read).toEqual(o);
    expect(buildSealedPostObject(fields, 'unsigned').idempotency_key).toBeUndefined();
  });

  it('digest the header and ciphertext under their own labels', () => {
    expect(digests.header).not.toBe(sealedDigests(ciphertext, header).ciphertext);
    expect(digests.header).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuse words, a private digest, another suite or an extra sealed member', () => {
    const o = buildSealedPostObject(fields, 'signed');
    const encode = (x: unknown) => utf8(canonicalize(x));
    expect(svcDetail(() => readPostObject(encode({ ...o, title: 't' }), 'signed'))).toBe(
      'canonical.title: not allowed in a sealed post',
    );
    expect(svcDetail(() => readPostObject(encode({ ...o, private_digest: 'ab'.repeat(32) }), 'signed'))).toBe(
      'canonical.private_digest: not allowed in a sealed post',
    );
    expect(svcDetail(() => readPostObject(encode({ ...o, sealed: { ...o.sealed, suite: 2 } }), 'signed'))).toBe(
      'canonical.sealed.suite: must be 1',
    );
    expect(svcDetail(() => readPostObject(encode({ ...o, sealed: { ...o.sealed, x: 1 } }), 'signed'))).toBe(
      'canonical.sealed.x: unknown member',
    );
  });

  it('pass the submission checker with the header and ciphertext they name, and not with others', () => {
    const signed = signSealedPost({ fields: { space_id: SPACE, author_id: AUTHOR, kind: 'obs', idempotency_key: 'k' }, header, ciphertext, signer: testKey });
    const ctx = { spaceId: SPACE, authorId: AUTHOR, publicKey: testKey.publicKey };
    const checked = checkSignedSubmission(signed.submission, ctx);
    expect(checked.sealed).toEqual({ header, ciphertext });
    const other = { ...signed.submission, sealed: { header: signed.submission.sealed!.header, ciphertext: toBase64url(new Uint8Array(40)) } };
    expect(svcDetail(() => checkSignedSubmission(other, ctx))).toBe(
      "sealed.ciphertext: does not match the object's sealed.ciphertext digest",
    );
    const { sealed: _s, ...withoutSealed } = signed.submission;
    expect(svcDetail(() => checkSignedSubmission(withoutSealed, ctx))).toBe('sealed: missing: the object is a sealed post');
    const short = { ...signed.submission, sealed: { header: signed.submission.sealed!.header, ciphertext: toBase64url(new Uint8Array(16)) } };
    expect(svcDetail(() => checkSignedSubmission(short, ctx))).toBe('sealed.ciphertext: must be 17 to 184,320 bytes');
  });
});

describe('the private part', () => {
  const salt = new Uint8Array(32).fill(0xab);

  it('exists only with data, budget or run_id', () => {
    expect(buildPrivatePart({}, salt)).toBeUndefined();
    const p = buildPrivatePart({ run_id: SPACE, budget: { observed_at: '2026-01-01T00:00:00Z' } }, salt)!;
    expect(new TextDecoder().decode(p.bytes)).toBe(
      `{"budget":{"observed_at":"2026-01-01T00:00:00Z"},"run_id":"${SPACE}","salt":"${toHex(salt)}"}`,
    );
    expect(readPrivatePart(p.bytes)).toEqual(p.part);
  });

  it('refuses a salt that is not 32 bytes, and a part over 32,768 bytes', () => {
    expect(() => buildPrivatePart({ data: {} }, new Uint8Array(16))).toThrow(/salt/);
    expect(svcDetail(() => buildPrivatePart({ data: { x_big: 'a'.repeat(32_768) } }, salt))).toBe('private: over 32,768 bytes');
  });

  it('refuses on reading: only a salt, an unknown member, null, a bad salt or run id', () => {
    const s = toHex(salt);
    const cases: [unknown, string][] = [
      [{ salt: s }, 'private: needs data, budget or run_id besides the salt'],
      [{ data: {}, extra: 1, salt: s }, 'private.extra: unknown member'],
      [{ data: null, salt: s }, 'private.data: null is not allowed'],
      [{ data: [], salt: s }, 'private.data: expected an object'],
      [{ data: {}, salt: s.toUpperCase() }, 'private.salt: expected 64 lowercase hex'],
      [{ run_id: 'x', salt: s }, 'private.run_id: expected a lowercase uuid'],
    ];
    for (const [value, detail] of cases) {
      expect(svcDetail(() => readPrivatePart(utf8(canonicalize(value))))).toBe(detail);
    }
  });
});

describe('checking a signed submission', () => {
  const salt = new Uint8Array(32).fill(9);
  const signed = signPost({
    fields: { ...base, title: 'Build passes', body: 'twice', to: [PEER_A], fingerprints: [{ scheme: 'git.commit', value: 'abc' }] },
    private: { data: { x_n: 1 } },
    salt,
    signer: testKey,
  });
  const good = signed.submission;
  const ctx = { spaceId: SPACE, authorId: AUTHOR, publicKey: testKey.publicKey };
  const check = (body: unknown, context = ctx) => () => checkSignedSubmission(body, context);

  it('accepts the good submission and returns the object, its id and the private part', () => {
    const c = checkSignedSubmission(good, ctx);
    expect(c.object).toEqual(signed.object);
    expect(c.objectId).toEqual(signed.objectId);
    expect(c.private?.part.data).toEqual({ x_n: 1 });
  });

  it('refuses every single flipped byte of the canonical bytes', () => {
    const bytes = fromBase64url(good.canonical);
    for (let i = 0; i < bytes.length; i++) {
      const flipped = bytes.slice();
      flipped[i]! ^= 0x01;
      const code = svcCode(check({ ...good, canonical: toBase64url(flipped) }));
      expect(['INVALID_REQUEST', 'POST_SIGNATURE_INVALID']).toContain(code);
    }
  });

  it('refuses a changed title under the old signature as POST_SIGNATURE_INVALID', () => {
    const text = new TextDecoder().decode(fromBase64url(good.canonical)).replace('Build passes', 'Build fails!');
    expect(svcCode(check({ ...good, canonical: toBase64url(utf8(text)) }))).toBe('POST_SIGNATURE_INVALID');
  });

  it('refuses non-canonical whitespace as INVALID_REQUEST', () => {
    const spaced = JSON.stringify(JSON.parse(new TextDecoder().decode(fromBase64url(good.canonical))), null, 2);
    expect(svcCode(check({ ...good, canonical: toBase64url(utf8(spaced)) }))).toBe('INVALID_REQUEST');
  });

  it('refuses an object for another SPACE as INVALID_REQUEST', () => {
    expect(svcDetail(check(good, { ...ctx, spaceId: '0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeef' }))).toBe(
      'canonical.space_id: not this SPACE',
    );
  });

  it("refuses an object whose author is not the token's KEY as INVALID_REQUEST", () => {
    const other = signerFromSeed(new Uint8Array(32).fill(3));
    const otherCtx = { spaceId: SPACE, authorId: peerIdHexOf(other.publicKey), publicKey: other.publicKey };
    expect(svcDetail(check(good, otherCtx))).toBe("canonical.author_id: not the token's KEY");
  });

  it('refuses a bad signature as POST_SIGNATURE_INVALID', () => {
    const sig = fromHex(good.signature);
    sig[10]! ^= 0x80;
    expect(svcCode(check({ ...good, signature: toHex(sig) }))).toBe('POST_SIGNATURE_INVALID');
    const other = signerFromSeed(new Uint8Array(32).fill(3));
    expect(svcCode(check({ ...good, signature: toHex(signObjectId(other, signed.objectId)) }))).toBe('POST_SIGNATURE_INVALID');
  });

  it("refuses the author's signature checked under another public key as POST_SIGNATURE_INVALID", () => {
    const other = signerFromSeed(new Uint8Array(32).fill(3));
    expect(svcCode(check(good, { ...ctx, publicKey: other.publicKey }))).toBe('POST_SIGNATURE_INVALID');
  });

  it('refuses an altered, missing or unexpected private part as INVALID_REQUEST', () => {
    const altered = buildPrivatePart({ data: { x_n: 2 } }, salt)!;
    expect(svcDetail(check({ ...good, private: toBase64url(altered.bytes) }))).toBe('private: does not match private_digest');
    const { private: _p, ...noPrivate } = good;
    expect(svcDetail(check(noPrivate))).toBe('private: missing: the object has a private_digest');
    const plain = signPost({ fields: base, signer: testKey }).submission;
    expect(svcDetail(check({ ...plain, private: good.private }))).toBe('private: sent but the object has no private_digest');
    const bytes = fromBase64url(good.private!);
    bytes[bytes.length - 3]! ^= 0x01;
    expect(svcCode(check({ ...good, private: toBase64url(bytes) }))).toBe('INVALID_REQUEST');
  });

  it('refuses content fields beside canonical, and an unknown alg', () => {
    expect(svcDetail(check({ ...good, title: 'x' }))).toMatch(/^title: not allowed beside canonical/);
    expect(svcDetail(check({ ...good, alg: 'rsa' }))).toBe('alg: must be ed25519 or webauthn');
    expect(svcCode(check({ ...good, alg: undefined }))).toBe('INVALID_REQUEST');
  });

  it('answers webauthn with PASSKEYS_UNAVAILABLE when no passkey policy is given (passkeys off)', () => {
    expect(svcCode(check({ ...good, alg: 'webauthn' }))).toBe('PASSKEYS_UNAVAILABLE');
  });

  it('refuses malformed signature hex, padded base64url and an empty canonical', () => {
    expect(svcDetail(check({ ...good, signature: good.signature.toUpperCase() }))).toBe('signature: expected 128 lowercase hex');
    expect(svcCode(check({ ...good, canonical: `${good.canonical}=` }))).toBe('INVALID_REQUEST');
    expect(svcDetail(check({ ...good, canonical: '' }))).toBe('canonical: must not be empty');
    expect(svcCode(check('not an object'))).toBe('INVALID_REQUEST');
  });

  it('answers a canonical over 180 KiB with TOO_LARGE before decoding it', () => {
    expect(svcCode(check({ ...good, canonical: 'A'.repeat(245_761) }))).toBe('TOO_LARGE');
  });

  it('accepts a summary member inside a signed object, and refuses it null', () => {
    const withSummary = utf8(canonicalize({ ...signed.object, summary: 's' }));
    const body: SignedSubmission = {
      alg: 'ed25519',
      canonical: toBase64url(withSummary),
      private: good.private!,
      signature: toHex(signObjectId(testKey, objectIdOf(withSummary))),
    };
    expect((check(body)() as { object: { summary?: string } }).object.summary).toBe('s');
    const nullSummary = utf8(canonicalize({ ...signed.object, summary: null }));
    const refused: SignedSubmission = { ...body, canonical: toBase64url(nullSummary), signature: toHex(signObjectId(testKey, objectIdOf(nullSummary))) };
    expect(svcDetail(check(refused))).toBe('canonical.summary: null is not allowed');
  });
});

describe('comparing the signed object with the rebuilt one (OBJECT_MISMATCH)', () => {
  const signed = buildPostObject({ ...base, title: 't', to: [PEER_A, PEER_B] }, 'signed');

  it('accepts the same object as a JSON value whatever the member order', () => {
    const reordered = Object.fromEntries(Object.entries(signed).reverse()) as typeof signed;
    expect(() => checkObjectMatches(signed, reordered)).not.toThrow();
  });

  it('names the first difference', () => {
    const rebuilt = buildPostObject({ ...base, title: 't', to: [PEER_A] }, 'signed');
    let err: unknown;
    try {
      checkObjectMatches(signed, rebuilt);
    } catch (e) {
      err = e;
    }
    expect(isSvcError(err, 'OBJECT_MISMATCH')).toBe(true);
    expect((err as { detail: string }).detail).toBe('object differs at $.to');
    expect(jsonDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toBe('$.a[1].b');
    expect(jsonDifference({ a: 1 }, { a: 1, b: 1 })).toBe('$.b');
    expect(jsonDifference([1], { 0: 1 })).toBe('$');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(toHex);
const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => !s.includes('\u0000'));
const fingerprint: fc.Arbitrary<Fingerprint> = fc.record({
  scheme: fc.constantFrom('git.commit', 'sha256.file', 'task.reference', 'a', 'b\u00e9', 'c\u{1F600}'),
  value: text,
});
const fingerprintKey = (f: Fingerprint) => `${f.scheme}\u0000${f.value}`;
const fieldsArb: fc.Arbitrary<PostFields> = fc
  .record(
    {
      space_id: fc.uuid(),
      author_id: hex32,
      kind: fc.constantFrom('obs', 'result', 'question', 'summary'),
      idempotency_key: fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !s.includes('\u0000')),
      title: text,
      body: fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.includes('\u0000')),
      to: fc.uniqueArray(hex32, { maxLength: 8 }),
      reply_to: fc.uuid(),
      supersedes: fc.uuid(),
      fingerprints: fc.uniqueArray(fingerprint, { maxLength: 6, selector: fingerprintKey }),
      private_digest: hex32,
    },
    { requiredKeys: ['space_id', 'author_id', 'kind', 'idempotency_key'] },
  )
  .map((f) => ({ ...f, space_id: f.space_id.toLowerCase(), reply_to: f.reply_to?.toLowerCase(), supersedes: f.supersedes?.toLowerCase() }))
  .filter((f) => !(f.to ?? []).includes(f.author_id));

describe('properties', () => {
  it('an object built from random valid fields is read back strictly as the same object', () => {
    fc.assert(
      fc.property(fieldsArb, (fields) => {
        const built = buildPostObject(fields, 'signed');
        const bytes = postObjectBytes(built);
        expect(readPostObject(bytes, 'signed')).toEqual(built);
        expect(postObjectBytes(buildPostObject(readPostObject(bytes, 'signed') as PostFields, 'signed'))).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('to and fingerprints order does not depend on the input order', () => {
    fc.assert(
      fc.property(
        fieldsArb,
        fc.infiniteStream(fc.nat()),
        (fields, seeds) => {
          const shuffle = <T>(xs: readonly T[] | undefined): T[] | undefined => {
            if (xs === undefined) return undefined;
            const out = [...xs];
            for (let i = out.length - 1; i > 0; i--) {
              const j = seeds.next().value % (i + 1);
              [out[i], out[j]] = [out[j]!, out[i]!];
            }
            return out;
          };
          const a = postObjectBytes(buildPostObject(fields, 'signed'));
          const b = postObjectBytes(buildPostObject({ ...fields, to: shuffle(fields.to), fingerprints: shuffle(fields.fingerprints) }, 'signed'));
          expect(b).toEqual(a);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the unsigned form of fields with repeats equals the signed form of the fields without, minus the key', () => {
    fc.assert(
      fc.property(fieldsArb, (fields) => {
        const doubled = { ...fields, to: [...(fields.to ?? []), ...(fields.to ?? [])], fingerprints: [...(fields.fingerprints ?? []), ...(fields.fingerprints ?? [])] };
        const { idempotency_key: _k, ...signedWithoutKey } = buildPostObject(fields, 'signed');
        expect(buildPostObject(doubled, 'unsigned')).toEqual(signedWithoutKey);
      }),
      { numRuns: 200 },
    );
  });

  it('code point order agrees with UTF-8 byte order', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const bytes = Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
        expect(Math.sign(compareCodePoints(a, b))).toBe(bytes);
      }),
      { numRuns: 500 },
    );
  });
});
