/**
 * Every layout of protocol/sealed.md recomputed with shared/sealed from the fixed inputs of our
 * pin test/vectors/sealed.json, which an independent Python implementation wrote
 * (test/vectors/make_sealed_vectors.py; `--check` re-derives it). Any change to a byte format
 * breaks these tests: anything sealed must open forever.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readCanonicalObject } from '../../../shared/canonical.js';
import { concatBytes, fromHex, toBase64url, toHex, u64, utf8 } from '../../../shared/encoding.js';
import { peerIdHexOf, signerFromSeed, type Signer } from '../../../shared/identity.js';
import { label } from '../../../shared/labels.js';
import { objectIdOf, postObjectBytes, sealedDigests, verifyObjectSignature } from '../../../shared/objects.js';
import {
  buildEncryptionKeyStatement,
  deriveEncryptionKey,
  displayFingerprint,
  encryptionKeyFingerprint,
  encryptionKeySignedBytes,
  signEncryptionKeyStatement,
  verifyEncryptionKeyStatement,
} from '../../../shared/sealed/encryption-key.js';
import {
  commitmentHex,
  openBackLink,
  pairContainer,
  sealBackLink,
  secretForGeneration,
  spaceContainer,
} from '../../../shared/sealed/generations.js';
import { buildMessageHeader, buildPostHeader, readSealedHeader, type MessageHeader, type PostHeader } from '../../../shared/sealed/headers.js';
import { hkdf } from '../../../shared/sealed/hkdf.js';
import { deriveKeyPair } from '../../../shared/sealed/hpke.js';
import {
  buildMessageContent,
  buildPostContent,
  headerDigest,
  itemKey,
  openMessage,
  openPost,
  readSealedTransport,
  sealedPostObject,
  sealedTransport,
  sealItem,
  signSealedItem,
} from '../../../shared/sealed/items.js';
import { buildKeeperList, keeperListSignedBytes, signKeeperList, verifyKeeperList, type KeeperListFields } from '../../../shared/sealed/keepers.js';
import { lockAad, lockInfo, openLock, sealLock } from '../../../shared/sealed/locks.js';
import { buildStamp, signStamp, stampSignedBytes, verifyStamp } from '../../../shared/sealed/stamps.js';
import { loadOwnVector } from '../../helpers/vectors.js';

const pin = loadOwnVector('sealed.json');
const NAMES = ['owner', 'keeper', 'member', 'stamper'] as const;
type Name = (typeof NAMES)[number];
type ContainerName = 'space' | 'pair';

const tagged = (text: string): Uint8Array =>
  new Uint8Array(createHash('sha256').update(`svc-vector sealed ${text}`, 'ascii').digest());
const h = (s: string): Uint8Array => fromHex(s);

const keys = Object.fromEntries(
  NAMES.map((n) => {
    const seed = tagged(`seed ${n}`);
    const signer = signerFromSeed(seed);
    const peerId = peerIdHexOf(signer.publicKey);
    return [n, { seed, signer, peerId, enc: deriveEncryptionKey(seed, peerId) }];
  }),
) as Record<Name, { seed: Uint8Array; signer: Signer; peerId: string; enc: { privateKey: Uint8Array; publicKey: Uint8Array } }>;

const spaceId: string = pin.inputs.space_id;
const containers: Record<ContainerName, Uint8Array> = {
  space: spaceContainer(spaceId),
  pair: pairContainer(keys.owner.peerId, keys.member.peerId),
};
const secret = (c: string, g: number): Uint8Array => tagged(`secret ${c} ${g}`);
const ed = (n: Name) => ({ peerId: keys[n].peerId, keyType: 'ed25519' as const, publicKey: keys[n].signer.publicKey });

describe('sealed.json: encryption keys (sealed.md §2)', () => {
  it.each(NAMES)('%s: seed, Ed25519 key and peer id are the pinned inputs', (n) => {
    const k = pin.keys[n];
    expect(toHex(keys[n].seed)).toBe(k.seed);
    expect(toHex(keys[n].signer.publicKey)).toBe(k.public_key);
    expect(keys[n].peerId).toBe(k.peer_id);
  });

  it.each(NAMES)('%s: HKDF ikm and DeriveKeyPair give the pinned X25519 key pair', (n) => {
    const e = pin.keys[n].encryption;
    const ikm = hkdf(new Uint8Array(0), keys[n].seed, concatBytes(label('encryption-key-seed'), h(keys[n].peerId)), 32);
    expect(toHex(ikm)).toBe(e.ikm);
    expect(toHex(deriveKeyPair(ikm).privateKey)).toBe(e.private_key);
    expect(toHex(keys[n].enc.privateKey)).toBe(e.private_key);
    expect(toHex(keys[n].enc.publicKey)).toBe(e.public_key);
  });

  it.each(NAMES)('%s: statement, signed bytes, Ed25519 signature and fingerprint match, and the statement verifies', (n) => {
    const e = pin.keys[n].encryption;
    const statement = buildEncryptionKeyStatement(keys[n].peerId, keys[n].enc.publicKey);
    expect(new TextDecoder().decode(statement)).toBe(e.statement_utf8);
    expect(toBase64url(statement)).toBe(e.statement_b64u);
    expect(toHex(encryptionKeySignedBytes(statement))).toBe(e.signed_hex);
    const envelope = signEncryptionKeyStatement(keys[n].signer, statement);
    expect(envelope).toEqual({ alg: 'ed25519', signature: e.signature });
    expect(encryptionKeyFingerprint(keys[n].enc.publicKey)).toBe(e.fingerprint);
    expect(displayFingerprint(e.fingerprint)).toBe(e.fingerprint_display);
    expect(e.fingerprint_display).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){7}$/);
    const checked = verifyEncryptionKeyStatement(utf8(e.statement_utf8), { alg: 'ed25519', signature: e.signature }, ed(n));
    expect(toHex(checked.publicKey)).toBe(e.public_key);
    expect(checked.fingerprint).toBe(e.fingerprint);
  });
});

describe('sealed.json: containers, commitments, back links (sealed.md §3, §6)', () => {
  it('builds both containers, the pair in ascending order whichever peer comes first', () => {
    expect(toHex(containers.space)).toBe(pin.containers.space);
    expect(toHex(containers.pair)).toBe(pin.containers.pair);
    expect(toHex(pairContainer(keys.member.peerId, keys.owner.peerId))).toBe(pin.containers.pair);
  });

  it('gives every pinned commitment from its container, generation and secret', () => {
    expect(pin.commitments).toHaveLength(4);
    for (const c of pin.commitments) {
      expect(toHex(secret(c.container, c.generation))).toBe(c.secret);
      expect(commitmentHex(containers[c.container as ContainerName], c.generation, h(c.secret))).toBe(c.commitment);
    }
  });

  it('seals each pinned back link and opens it to the previous secret', () => {
    expect(pin.back_links).toHaveLength(2);
    for (const b of pin.back_links) {
      const C = containers.space;
      const key = hkdf(new Uint8Array(0), secret('space', b.generation), concatBytes(label('sealed-chain'), C, u64(b.generation)), 16);
      expect(toHex(key)).toBe(b.key);
      expect(toHex(sealBackLink(C, b.generation, secret('space', b.generation), secret('space', b.generation - 1)))).toBe(b.back);
      const previousCommitment = commitmentHex(C, b.generation - 1, secret('space', b.generation - 1));
      expect(toHex(openBackLink(C, b.generation, secret('space', b.generation), h(b.back), previousCommitment))).toBe(
        toHex(secret('space', b.generation - 1)),
      );
    }
  });

  it('walks from the newest secret back to generation 1 through the pinned links', () => {
    const links = (g: number) => {
      const c = pin.commitments.find((x: { container: string; generation: number }) => x.container === 'space' && x.generation === g);
      if (c === undefined) return undefined;
      const back = pin.back_links.find((x: { generation: number }) => x.generation === g);
      return { generation: g, commitment: c.commitment as string, back: back ? h(back.back) : undefined };
    };
    const got = secretForGeneration(containers.space, { generation: 3, secret: secret('space', 3) }, 1, links);
    expect(toHex(got)).toBe(toHex(secret('space', 1)));
  });
});

describe('sealed.json: locks (sealed.md §4)', () => {
  it.each(pin.locks as { container: ContainerName; generation: number; sender: Name; recipient: Name; ephemeral: string; info: string; aad: string; lock: string }[])(
    'lock $container g$generation from $sender to $recipient: info, aad and the 80 bytes match, and it opens',
    (l) => {
      const C = containers[l.container];
      const s = secret(l.container, l.generation);
      const commitment = h(commitmentHex(C, l.generation, s));
      expect(toHex(tagged(`ephemeral ${l.container} ${l.generation} ${l.sender} ${l.recipient}`))).toBe(l.ephemeral);
      expect(toHex(lockInfo(C, l.generation))).toBe(l.info);
      expect(toHex(lockAad(keys[l.recipient].peerId, keys[l.sender].peerId, commitment))).toBe(l.aad);
      const lock = sealLock({
        container: C,
        generation: l.generation,
        secret: s,
        recipient: { peerId: keys[l.recipient].peerId, publicKey: keys[l.recipient].enc.publicKey },
        sender: { peerId: keys[l.sender].peerId, privateKey: keys[l.sender].enc.privateKey },
        ephemeral: h(l.ephemeral),
      });
      expect(toHex(lock)).toBe(l.lock);
      const opened = openLock({
        container: C,
        generation: l.generation,
        lock: h(l.lock),
        commitment,
        recipient: { peerId: keys[l.recipient].peerId, privateKey: keys[l.recipient].enc.privateKey },
        sender: { peerId: keys[l.sender].peerId, publicKey: keys[l.sender].enc.publicKey },
      });
      expect(toHex(opened)).toBe(toHex(s));
    },
  );
});

describe('sealed.json: headers and items (sealed.md §7)', () => {
  const headerByName = new Map<string, { name: string; salt: string; utf8: string; digest: string }>(
    pin.headers.map((x: { name: string }) => [x.name, x]),
  );

  it.each(pin.headers as { name: string; salt: string; utf8: string; digest: string }[])(
    'header $name: built from its fields and salt gives the pinned bytes, reads back, and its digest matches',
    (p) => {
      const fields = readCanonicalObject(utf8(p.utf8)) as Record<string, unknown>;
      expect(toHex(tagged(`salt ${p.name}`).subarray(0, 16))).toBe(p.salt);
      const salt = h(p.salt);
      const built =
        fields.type === 'post'
          ? buildPostHeader(
              {
                author: fields.author as string,
                generation: fields.generation as number,
                kind: fields.kind as string,
                space_id: fields.space_id as string,
                to: fields.to as string[] | undefined,
                reply_to: fields.reply_to as string | undefined,
                supersedes: fields.supersedes as string | undefined,
                retracts: fields.retracts as string | undefined,
              },
              salt,
            ).bytes
          : buildMessageHeader(
              {
                author: fields.author as string,
                peer: (fields.pair as string[]).find((x) => x !== fields.author)!,
                about: fields.about as string | undefined,
                reply_to: fields.reply_to as string | undefined,
              },
              salt,
            ).bytes;
      expect(new TextDecoder().decode(built)).toBe(p.utf8);
      expect(readSealedHeader(built)).toEqual(fields);
      expect(toHex(headerDigest(built))).toBe(p.digest);
    },
  );

  it.each(pin.items as { header: string; container: ContainerName; generation: number; content_utf8: string; item_key: string; ciphertext: string; ciphertext_digest: string; transport: { header: string; ciphertext: string } }[])(
    'item $header: content, item key, ciphertext, digest and transport match, and it opens to the content',
    (item) => {
      const headerBytes = utf8(headerByName.get(item.header)!.utf8);
      const header = readSealedHeader(headerBytes);
      const s = secret(item.container, item.generation);
      const content = readCanonicalObject(utf8(item.content_utf8)) as Record<string, any>;
      const contentBytes = header.type === 'post' ? buildPostContent(content).bytes : buildMessageContent(content.body as string).bytes;
      expect(new TextDecoder().decode(contentBytes)).toBe(item.content_utf8);
      expect(toHex(itemKey(s, h(header.salt), headerDigest(headerBytes)))).toBe(item.item_key);
      const ct = sealItem(headerBytes, contentBytes, s);
      expect(toHex(ct)).toBe(item.ciphertext);
      expect(sealedDigests(headerBytes, ct).ciphertext).toBe(item.ciphertext_digest);
      expect(sealedTransport(headerBytes, ct)).toEqual(item.transport);
      const back = readSealedTransport(item.transport, header.type);
      expect(toHex(back.ciphertext)).toBe(item.ciphertext);
      if (header.type === 'post') {
        const opened = openPost(headerBytes, ct, s);
        expect(opened.content).toEqual(content);
        expect((opened.header as PostHeader).generation).toBe(item.generation);
      } else {
        const opened = openMessage(headerBytes, ct, s);
        expect(opened.content).toEqual(content);
        expect((opened.header as MessageHeader).pair).toEqual(header.pair);
      }
    },
  );

  it.each(pin.sealed_post_objects as { item: string; form: 'signed' | 'unsigned'; idempotency_key?: string; canonical_utf8: string; object_id: string; signer?: Name; signature?: string }[])(
    'sealed post object of $item ($form): canonical bytes, object id and signature match',
    (o) => {
      const headerBytes = utf8(headerByName.get(o.item)!.utf8);
      const ct = h(pin.items.find((x: { header: string }) => x.header === o.item).ciphertext);
      const object = sealedPostObject(headerBytes, ct, o.form, o.idempotency_key);
      const bytes = postObjectBytes(object);
      expect(new TextDecoder().decode(bytes)).toBe(o.canonical_utf8);
      expect(toHex(objectIdOf(bytes))).toBe(o.object_id);
      if (o.form === 'signed') {
        const signed = signSealedItem({ headerBytes, ciphertext: ct, idempotencyKey: o.idempotency_key!, signer: keys[o.signer!].signer });
        expect(signed.submission.signature).toBe(o.signature);
        expect(signed.submission.canonical).toBe(toBase64url(bytes));
        expect(signed.submission.sealed).toEqual(sealedTransport(headerBytes, ct));
        expect(verifyObjectSignature(keys[o.signer!].signer.publicKey, h(o.object_id), h(o.signature!))).toBe(true);
      }
    },
  );
});

describe('sealed.json: keeper lists and stamps (sealed.md §8)', () => {
  it.each(pin.keeper_lists as { name: string; utf8: string; b64u: string; signed_hex: string; signature: string }[])(
    'keeper list $name: bytes, signed bytes and the owner signature match, and it verifies',
    (l) => {
      const fields = readCanonicalObject(utf8(l.utf8)) as unknown as KeeperListFields;
      const bytes = buildKeeperList(fields, keys.owner.peerId);
      expect(new TextDecoder().decode(bytes)).toBe(l.utf8);
      expect(toBase64url(bytes)).toBe(l.b64u);
      expect(toHex(keeperListSignedBytes(bytes))).toBe(l.signed_hex);
      expect(signKeeperList(keys.owner.signer, bytes)).toEqual({ alg: 'ed25519', signature: l.signature });
      expect(verifyKeeperList(bytes, { alg: 'ed25519', signature: l.signature }, ed('owner'), spaceId)).toEqual(fields);
    },
  );

  it.each(pin.stamps as { name: string; issuer: Name; subject: Name; not_after: number | null; utf8: string; b64u: string; signed_hex: string; signature: string }[])(
    'stamp $name: bytes, signed bytes and the issuer signature match, and it verifies',
    (s) => {
      const bytes = buildStamp({ issuer: keys[s.issuer].peerId, peer_id: keys[s.subject].peerId, not_after: s.not_after ?? undefined });
      expect(new TextDecoder().decode(bytes)).toBe(s.utf8);
      expect(toBase64url(bytes)).toBe(s.b64u);
      expect(toHex(stampSignedBytes(bytes))).toBe(s.signed_hex);
      expect(signStamp(keys[s.issuer].signer, bytes)).toEqual({ alg: 'ed25519', signature: s.signature });
      const stamp = verifyStamp(bytes, { alg: 'ed25519', signature: s.signature }, ed(s.issuer));
      expect(stamp.peer_id).toBe(keys[s.subject].peerId);
      expect(stamp.not_after).toBe(s.not_after ?? undefined);
    },
  );
});
