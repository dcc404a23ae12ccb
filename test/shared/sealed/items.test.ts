/**
 * Sealed items (protocol/sealed.md §7): headers read strictly and compared with their context,
 * content checked on both sides, seal then open for random content up to the limits, and every
 * changed byte refused.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalBytes } from '../../../shared/canonical.js';
import { SvcError } from '../../../shared/errors.js';
import { toBase64url, toHex, utf8 } from '../../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed } from '../../../shared/identity.js';
import { checkSignedSubmission } from '../../../shared/objects.js';
import { SealedError } from '../../../shared/sealed/errors.js';
import {
  buildMessageHeader,
  buildPostHeader,
  checkMessageHeader,
  checkPostHeader,
  readSealedHeader,
  type PostHeader,
} from '../../../shared/sealed/headers.js';
import {
  buildMessageContent,
  buildPostContent,
  openItem,
  openMessage,
  openPost,
  POST_CIPHERTEXT_MAX_BYTES,
  readMessageContent,
  readPostContent,
  readSealedTransport,
  sealedPostObject,
  sealItem,
  sealMessage,
  sealPost,
  signSealedItem,
} from '../../../shared/sealed/items.js';

const bytes = (text: string, n = 32): Uint8Array => new Uint8Array(createHash('sha256').update(text).digest()).subarray(0, n);
const author = signerFromSeed(bytes('items author'));
const authorId = peerIdHexOf(author.publicKey);
const other = peerIdHexOf(signerFromSeed(bytes('items other')).publicKey);
const third = peerIdHexOf(signerFromSeed(bytes('items third')).publicKey);
const spaceId = '0199aaaa-bbbb-7ccc-8ddd-000000000001';
const postId = '0199aaaa-bbbb-7ccc-8ddd-000000000002';
const secret = bytes('items secret');
const salt = bytes('items salt', 16);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SealedError) return e.reason;
    if (e instanceof SvcError) return e.code;
    throw e;
  }
  return 'accepted';
}

const postHeader = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  author: authorId,
  generation: 3,
  kind: 'obs',
  salt: toHex(salt),
  space_id: spaceId,
  suite: 1,
  type: 'post',
  v: 1,
  ...extra,
});

function without(o: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

describe('headers', () => {
  it('a built post header sorts `to`, omits what is absent and reads back unchanged', () => {
    const { header, bytes: b } = buildPostHeader(
      { author: authorId, generation: 3, kind: 'result', space_id: spaceId, to: [third, other].sort().reverse(), reply_to: postId },
      salt,
    );
    expect(header.to).toEqual([other, third].sort());
    expect(Object.keys(header)).not.toContain('supersedes');
    expect(readSealedHeader(b)).toEqual(header);
  });

  it('a message header has the pair ascending, generation 1, and the author in the pair', () => {
    const { header, bytes: b } = buildMessageHeader({ author: authorId, peer: other, about: 'team-room' }, salt);
    expect(header.pair).toEqual([authorId, other].sort());
    expect(header.generation).toBe(1);
    expect(readSealedHeader(b, 'h', 'message')).toEqual(header);
  });

  it.each([
    ['not canonical', utf8(JSON.stringify(postHeader(), null, 1)), 'INVALID_REQUEST', 'not canonical'],
    ['an unknown member', canonicalBytes(postHeader({ title: 'x' })), 'INVALID_REQUEST', 'title'],
    ['a null member', canonicalBytes(postHeader({ reply_to: null })), 'INVALID_REQUEST', 'reply_to'],
    ['a missing salt', canonicalBytes(without(postHeader(), 'salt')), 'INVALID_REQUEST', 'salt'],
    ['a short salt', canonicalBytes(postHeader({ salt: toHex(salt).slice(2) })), 'INVALID_REQUEST', 'salt'],
    ['suite 2', canonicalBytes(postHeader({ suite: 2 })), 'INVALID_REQUEST', 'suite'],
    ['v 2', canonicalBytes(postHeader({ v: 2 })), 'INVALID_REQUEST', '.v'],
    ['a generation as a string', canonicalBytes(postHeader({ generation: '3' })), 'INVALID_REQUEST', 'generation'],
    ['generation 0', canonicalBytes(postHeader({ generation: 0 })), 'INVALID_REQUEST', 'generation'],
    ['an unknown kind', canonicalBytes(postHeader({ kind: 'rumour' })), 'INVALID_KIND', 'kind'],
    ['`to` naming the author', canonicalBytes(postHeader({ to: [authorId] })), 'INVALID_REQUEST', 'never the author'],
    ['`to` out of order', canonicalBytes(postHeader({ to: [other, third].sort().reverse() })), 'INVALID_REQUEST', 'ascending'],
    ['`to` empty', canonicalBytes(postHeader({ to: [] })), 'INVALID_REQUEST', '.to'],
    ['`to` of nine', canonicalBytes(postHeader({ to: Array.from({ length: 9 }, (_, i) => toHex(bytes(`to${i}`))).sort() })), 'INVALID_REQUEST', '.to'],
    ['supersedes and retracts', canonicalBytes(postHeader({ supersedes: postId, retracts: postId })), 'INVALID_REQUEST', 'retracts'],
    ['a message under generation 2', canonicalBytes(without(postHeader({ type: 'message', generation: 2, pair: [authorId, other].sort() }), 'kind', 'space_id')), 'INVALID_REQUEST', 'generation 1'],
    ['a message whose author is not in the pair', canonicalBytes(without(postHeader({ type: 'message', generation: 1, pair: [other, third].sort() }), 'kind', 'space_id')), 'INVALID_REQUEST', 'one of the pair'],
    ['over 2,048 bytes', utf8(`{"pad":"${'a'.repeat(2048)}"}`), 'INVALID_REQUEST', '2048'],
    ['empty', new Uint8Array(0), 'INVALID_REQUEST', '2048'],
  ])('refuses a header with %s', (_name, b, code, words) => {
    let err: unknown;
    try {
      readSealedHeader(b);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe(code);
    expect((err as SvcError).detail).toContain(words);
  });

  it('a post header is compared with its request: SPACE, author, kind, the `to` set, thread ids', () => {
    const h = readSealedHeader(canonicalBytes(postHeader({ kind: 'result', to: [other, third].sort(), reply_to: postId }))) as PostHeader;
    const base = { space_id: spaceId, author: authorId };
    expect(codeOf(() => checkPostHeader(h, { ...base, kind: 'result', to: [third, other], reply_to: postId }))).toBe('accepted');
    expect(codeOf(() => checkPostHeader(h, { ...base, space_id: '0199aaaa-bbbb-7ccc-8ddd-000000000009' }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, author: other }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, kind: 'obs' }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, to: [other] }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, to: [] }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, reply_to: null }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, supersedes: postId }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkPostHeader(h, { ...base, generation: 2 }))).toBe('SEALED_HEADER_MISMATCH');
  });

  it('a post sealed under a generation no longer in use is KEY_CHANGED with the generation in use as detail', () => {
    const h = readSealedHeader(canonicalBytes(postHeader())) as PostHeader;
    let err: unknown;
    try {
      checkPostHeader(h, { space_id: spaceId, author: authorId, generationInUse: 4 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'KEY_CHANGED', detail: '4' });
  });

  it('a message header is compared with its conversation', () => {
    const { header } = buildMessageHeader({ author: authorId, peer: other, reply_to: postId }, salt);
    expect(codeOf(() => checkMessageHeader(header, { pair: [other, authorId], author: authorId, reply_to: postId }))).toBe('accepted');
    expect(codeOf(() => checkMessageHeader(header, { pair: [third, authorId], author: authorId }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkMessageHeader(header, { pair: [other, authorId], author: other }))).toBe('SEALED_HEADER_MISMATCH');
    expect(codeOf(() => checkMessageHeader(header, { pair: [other, authorId], author: authorId, about: 'x-room' }))).toBe('SEALED_HEADER_MISMATCH');
  });
});

describe('content', () => {
  it('post content keeps the limits of an unsealed post, checked again when read', () => {
    expect(codeOf(() => buildPostContent({ title: '' }))).toBe('INVALID_REQUEST');
    expect(codeOf(() => buildPostContent({ title: 'a'.repeat(513) }))).toBe('INVALID_REQUEST');
    expect(codeOf(() => buildPostContent({ body: 'a'.repeat(65_537) }))).toBe('TOO_LARGE');
    expect(codeOf(() => buildPostContent({ run_id: 'not-a-uuid' }))).toBe('INVALID_REQUEST');
    expect(codeOf(() => buildPostContent({ data: { fencing_token: 1 } }))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readPostContent(utf8('{"body":""}')))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readPostContent(utf8('{"words":"x"}')))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readPostContent(utf8('{"title": "x"}')))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readPostContent(utf8('{"fingerprints":[]}')))).toBe('INVALID_REQUEST');
    const fp = (v: string) => ({ scheme: 'git.commit', value: v });
    expect(codeOf(() => readPostContent(canonicalBytes({ fingerprints: [fp('b'), fp('a')] })))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readPostContent(canonicalBytes({ fingerprints: [fp('a'), fp('a')] })))).toBe('INVALID_REQUEST');
    expect(readPostContent(canonicalBytes({ fingerprints: [fp('a'), fp('b')] })).fingerprints).toHaveLength(2);
  });

  it('fingerprints are sorted and deduplicated when built, and an empty body is left out', () => {
    const fp = (v: string) => ({ scheme: 'git.commit', value: v });
    const { content } = buildPostContent({ body: '', fingerprints: [fp('b'), fp('a'), fp('b')] });
    expect(content).toEqual({ fingerprints: [fp('a'), fp('b')] });
  });

  it('message content is {"body"} of 1 to 16,384 bytes', () => {
    expect(readMessageContent(buildMessageContent('hi').bytes)).toEqual({ body: 'hi' });
    expect(codeOf(() => buildMessageContent(''))).toBe('INVALID_REQUEST');
    expect(codeOf(() => buildMessageContent('a'.repeat(16_385)))).not.toBe('accepted');
    expect(codeOf(() => readMessageContent(utf8('{"body":"x","title":"y"}')))).toBe('INVALID_REQUEST');
  });

  it('content that JSON escaping makes larger than a ciphertext may be cannot be sealed', () => {
    // 65,536 bytes of U+0001 are a valid body, but each escapes to six bytes of JSON.
    expect(codeOf(() => buildPostContent({ body: '\u0001'.repeat(65_536) }))).toBe('TOO_LARGE');
  });
});

describe('sealing and opening', () => {
  const content = fc.record(
    {
      title: fc.string({ minLength: 1, maxLength: 128 }).filter((s) => !s.includes('\u0000')),
      body: fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.integer({ min: 1, max: 65_536 }).map((n) => 'x'.repeat(n)),
        fc.integer({ min: 1, max: 16_384 }).map((n) => '\u00e9\u{1F600}'.repeat(n).slice(0, n)),
      ).filter((s) => !s.includes('\u0000') && s.isWellFormed() && Buffer.byteLength(s) <= 65_536),
      data: fc.dictionary(fc.constantFrom('x_a', 'x_b', 'x_c'), fc.string({ maxLength: 40 }).filter((s) => !s.includes('\u0000'))),
    },
    { requiredKeys: [] },
  );

  it('seal then open round-trips for random content of every size up to the limits, each with a fresh salt', () => {
    fc.assert(
      fc.property(content, fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 16, maxLength: 16 }), (c, s, saltBytes) => {
        const sealed = sealPost({
          header: { author: authorId, generation: 2, kind: 'obs', space_id: spaceId, to: [other] },
          content: c,
          secret: s,
          salt: saltBytes,
        });
        expect(sealed.ciphertext.length).toBe(sealed.contentBytes.length + 16);
        expect(sealed.ciphertext.length).toBeLessThanOrEqual(POST_CIPHERTEXT_MAX_BYTES);
        const opened = openPost(sealed.headerBytes, sealed.ciphertext, s);
        expect(opened.header).toEqual(sealed.header);
        expect(canonicalBytes(opened.content)).toEqual(sealed.contentBytes);
        const t = readSealedTransport({ header: toBase64url(sealed.headerBytes), ciphertext: toBase64url(sealed.ciphertext) }, 'post');
        expect(t.ciphertext).toEqual(sealed.ciphertext);
      }),
      { numRuns: 60 },
    );
  });

  it('messages round-trip for bodies up to 16,384 bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16_384 }), fc.uint8Array({ minLength: 16, maxLength: 16 }), (n, saltBytes) => {
        const body = 'm'.repeat(n);
        const sealed = sealMessage({ header: { author: authorId, peer: other }, body, secret, salt: saltBytes });
        expect(openMessage(sealed.headerBytes, sealed.ciphertext, secret).content.body).toBe(body);
      }),
      { numRuns: 30 },
    );
  });

  it('the largest body that fits seals to a ciphertext within the post limit', () => {
    const sealed = sealPost({
      header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId },
      content: { body: 'b'.repeat(65_536), title: 't'.repeat(512), data: { x_big: 'd'.repeat(16_000) } },
      secret,
      salt,
    });
    expect(openPost(sealed.headerBytes, sealed.ciphertext, secret).content.body).toHaveLength(65_536);
  });

  it('the same header and content seal to the same ciphertext; a fresh salt gives another', () => {
    const a = sealPost({ header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'x' }, secret, salt });
    const b = sealPost({ header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'x' }, secret, salt });
    const c = sealPost({ header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'x' }, secret, salt: bytes('another salt', 16) });
    expect(toHex(a.ciphertext)).toBe(toHex(b.ciphertext));
    expect(toHex(c.ciphertext)).not.toBe(toHex(a.ciphertext));
  });

  const item = sealPost({
    header: { author: authorId, generation: 2, kind: 'result', space_id: spaceId, to: [other] },
    content: { title: 'T', body: 'secret words' },
    secret,
    salt,
  });

  it('every flipped byte of the ciphertext is refused', () => {
    for (let i = 0; i < item.ciphertext.length; i++) {
      const bad = item.ciphertext.map((b, j) => (j === i ? b ^ 0x04 : b));
      expect(codeOf(() => openItem(item.headerBytes, bad, secret)), `byte ${i}`).toBe('aead-open');
    }
  });

  it('every flipped byte of the header is refused: either it no longer reads, or the item no longer opens', () => {
    for (let i = 0; i < item.headerBytes.length; i++) {
      const bad = item.headerBytes.map((b, j) => (j === i ? b ^ 0x01 : b));
      expect(codeOf(() => openPost(bad, item.ciphertext, secret)), `byte ${i}`).toMatch(/^(aead-open|INVALID_REQUEST|INVALID_KIND)$/);
    }
  });

  it('a header that still reads but names another salt, author or generation does not open the ciphertext', () => {
    const h = item.header;
    for (const change of [{ salt: toHex(bytes('x', 16)) }, { author: third }, { generation: 3 }]) {
      const moved = canonicalBytes({ ...h, ...change });
      expect(codeOf(() => openItem(moved, item.ciphertext, secret))).toBe('aead-open');
    }
  });

  it('the wrong secret does not open an item', () => {
    expect(codeOf(() => openItem(item.headerBytes, item.ciphertext, bytes('wrong')))).toBe('aead-open');
  });

  it('content that opens but is not valid content is refused after opening', () => {
    const ct = sealItem(item.headerBytes, utf8('{"body":"","title":"x"}'), secret);
    expect(codeOf(() => openPost(item.headerBytes, ct, secret))).toBe('INVALID_REQUEST');
  });
});

describe('transport and the sealed post object', () => {
  const item = sealPost({ header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'b' }, secret, salt });

  it('enforces header and ciphertext sizes for posts and messages', () => {
    const ok = { header: toBase64url(item.headerBytes), ciphertext: toBase64url(item.ciphertext) };
    expect(codeOf(() => readSealedTransport(ok, 'post'))).toBe('accepted');
    const b64 = (n: number) => toBase64url(new Uint8Array(n));
    expect(codeOf(() => readSealedTransport({ ...ok, header: '' }, 'post'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, header: b64(2049) }, 'post'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, ciphertext: b64(16) }, 'post'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, ciphertext: b64(17) }, 'post'))).toBe('accepted');
    expect(codeOf(() => readSealedTransport({ ...ok, ciphertext: b64(184_320) }, 'post'))).toBe('accepted');
    expect(codeOf(() => readSealedTransport({ ...ok, ciphertext: b64(184_321) }, 'post'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, ciphertext: b64(65_537) }, 'message'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, commitment: 'x' }, 'message'))).toBe('INVALID_REQUEST');
    expect(codeOf(() => readSealedTransport({ ...ok, commitment: 'x' }, 'message', 'sealed', ['commitment']))).toBe('accepted');
  });

  it('a signed sealed post passes the relay submission check and covers the exact header and ciphertext', () => {
    const signed = signSealedItem({ headerBytes: item.headerBytes, ciphertext: item.ciphertext, idempotencyKey: 'k-1', signer: author });
    const checked = checkSignedSubmission(signed.submission, { spaceId, authorId, publicKey: author.publicKey });
    expect(checked.sealed?.ciphertext).toEqual(item.ciphertext);
    const swapped = sealPost({ header: { author: authorId, generation: 1, kind: 'obs', space_id: spaceId }, content: { body: 'c' }, secret, salt });
    const tampered = { ...signed.submission, sealed: { ...signed.submission.sealed!, ciphertext: toBase64url(swapped.ciphertext) } };
    expect(codeOf(() => checkSignedSubmission(tampered, { spaceId, authorId, publicKey: author.publicKey }))).toBe('INVALID_REQUEST');
  });

  it('the unsigned object has no idempotency key and no words', () => {
    const o = sealedPostObject(item.headerBytes, item.ciphertext, 'unsigned', 'ignored');
    expect(Object.keys(o).sort()).toEqual(['author_id', 'kind', 'sealed', 'space_id', 'v']);
    expect(o.sealed.suite).toBe(1);
  });
});
