/**
 * Test helpers that play the bridge's part in a sealed SPACE over the real relay: KEYS with
 * their encryption keys (derived from the KEY's own seed, shared/sealed/encryption-key.ts),
 * published statements, the sealed parts of spaces.create, locks, back links, keeper lists,
 * stamps and sealed posts, all built with shared/sealed/* exactly as a bridge builds them. The
 * secrets stay here, in the test; the relay only ever sees what a bridge would send.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { toBase64url, toHex } from '../../shared/encoding.js';
import {
  buildEncryptionKeyStatement,
  deriveEncryptionKey,
  encryptionKeyPutBody,
  signEncryptionKeyStatement,
} from '../../shared/sealed/encryption-key.js';
import { commitmentHex, spaceContainer, stageGeneration } from '../../shared/sealed/generations.js';
import type { X25519KeyPair } from '../../shared/sealed/hpke.js';
import { sealPost, sealedTransport, signSealedItem, type PostContentFields } from '../../shared/sealed/items.js';
import type { PostHeaderFields } from '../../shared/sealed/headers.js';
import { buildKeeperList, signKeeperList, type KeeperListFields } from '../../shared/sealed/keepers.js';
import { openLock, sealLock, sealedSpaceCreation } from '../../shared/sealed/locks.js';
import { buildStamp, signStamp } from '../../shared/sealed/stamps.js';
import { mintToken, type MintedToken, type RunningRelay } from './relay.js';
import { call, freshName, type Answer } from './spaces.js';

export interface SealedKey extends MintedToken {
  enc: X25519KeyPair;
}

function fresh(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

/** A new KEY signed in over HTTP, with its encryption key derived (not yet published). */
export async function sealedKey(relay: RunningRelay): Promise<SealedKey> {
  const t = await mintToken(relay.url);
  return { ...t, enc: deriveEncryptionKey(t.seed, t.peerId) };
}

/** The PUT /v1/me/encryption-key body for `k`'s own key. */
export function encryptionKeyBody(k: SealedKey): Record<string, string> {
  const statement = buildEncryptionKeyStatement(k.peerId, k.enc.publicKey);
  return encryptionKeyPutBody(statement, signEncryptionKeyStatement(k.signer, statement));
}

export async function publishKey(relay: RunningRelay, k: SealedKey): Promise<Answer> {
  return call(relay, 'PUT', '/v1/me/encryption-key', { token: k.token, body: encryptionKeyBody(k) });
}

/** A sealed SPACE as its creator's software knows it: the secrets of every generation. */
export interface SealedSpace {
  name: string;
  spaceId: string;
  container: Uint8Array;
  owner: SealedKey;
  /** secret of generation g at index g. */
  secrets: Uint8Array[];
}

/** Create a sealed SPACE over HTTP with a fresh secret; throws unless 201. */
export async function createSealedSpace(relay: RunningRelay, owner: SealedKey, extra: Record<string, unknown> = {}): Promise<SealedSpace> {
  const name = freshName('sealed');
  const spaceId = randomUUID();
  const secret = fresh(32);
  const sealed = sealedSpaceCreation({
    spaceId,
    secret,
    owner: { peerId: owner.peerId, publicKey: owner.enc.publicKey, privateKey: owner.enc.privateKey },
    ephemeral: fresh(32),
  });
  const r = await call(relay, 'POST', '/v1/spaces', {
    token: owner.token,
    body: { name, title: 'Sealed test', visibility: 'sealed', sealed, ...extra },
  });
  if (r.status !== 201) throw new Error(`sealed spaces.create refused: ${r.status} ${r.text}`);
  return { name, spaceId, container: spaceContainer(spaceId), owner, secrets: [new Uint8Array(0), secret] };
}

/** A lock of generation `g`'s secret for `to`, from `from` (160 hex). */
export function lockFor(s: SealedSpace, g: number, from: SealedKey, to: SealedKey): string {
  return toHex(
    sealLock({
      container: s.container,
      generation: g,
      secret: s.secrets[g]!,
      recipient: { peerId: to.peerId, publicKey: to.enc.publicKey },
      sender: { peerId: from.peerId, privateKey: from.enc.privateKey },
      ephemeral: fresh(32),
    }),
  );
}

/** Open a lock as served (160 hex) for `me`, sent by `from`. */
export function openServedLock(s: SealedSpace, g: number, lockHex: string, commitment: string, me: SealedKey, from: SealedKey): Uint8Array {
  return openLock({
    container: s.container,
    generation: g,
    lock: Buffer.from(lockHex, 'hex'),
    commitment,
    recipient: { peerId: me.peerId, privateKey: me.enc.privateKey },
    sender: { peerId: from.peerId, publicKey: from.enc.publicKey },
  });
}

export function commitmentOfGeneration(s: SealedSpace, g: number): string {
  return commitmentHex(s.container, g, s.secrets[g]!);
}

/** Draw the next generation's secret and the stage body for it. */
export function nextGeneration(s: SealedSpace): { generation: number; commitment: string; back: string } {
  const g = s.secrets.length;
  s.secrets.push(fresh(32));
  return stageGeneration({ container: s.container, generation: g, secret: s.secrets[g]!, previousSecret: s.secrets[g - 1]! });
}

/** The PUT …/sealed/keepers body: the list signed by `signer`. */
export function keeperListBody(s: SealedSpace, signer: SealedKey, fields: Partial<KeeperListFields> & { revision: number }): Record<string, string> {
  const list = buildKeeperList(
    { space_id: s.spaceId, keepers: [], stampers: [], admission: 'stamped', change_every: 3600, ...fields },
    signer.peerId,
  );
  return { list: toBase64url(list), ...signKeeperList(signer.signer, list) };
}

/** The PUT …/sealed/stamp body: `issuer` vouches for `peer`. */
export function stampBody(issuer: SealedKey, peer: string, notAfter?: number): Record<string, string> {
  const stamp = buildStamp({ issuer: issuer.peerId, peer_id: peer, not_after: notAfter });
  return { stamp: toBase64url(stamp), ...signStamp(issuer.signer, stamp) };
}

/** An unsigned sealed post body; `header` overrides header fields (for mismatches). */
export function sealedPostBody(
  s: SealedSpace,
  author: SealedKey,
  g: number,
  content: PostContentFields,
  routing: Partial<PostHeaderFields> = {},
): { body: Record<string, unknown>; contentBytes: Uint8Array } {
  const item = sealPost({
    header: { author: author.peerId, generation: g, kind: 'obs', space_id: s.spaceId, ...routing },
    content,
    secret: s.secrets[g] ?? fresh(32),
    salt: fresh(16),
  });
  return { body: { sealed: sealedTransport(item.headerBytes, item.ciphertext) }, contentBytes: item.contentBytes };
}

/** A signed sealed post body. */
export function signedSealedPostBody(
  s: SealedSpace,
  author: SealedKey,
  g: number,
  content: PostContentFields,
  routing: Partial<PostHeaderFields> = {},
): Record<string, unknown> {
  const item = sealPost({
    header: { author: author.peerId, generation: g, kind: 'obs', space_id: s.spaceId, ...routing },
    content,
    secret: s.secrets[g]!,
    salt: fresh(16),
  });
  const signed = signSealedItem({ headerBytes: item.headerBytes, ciphertext: item.ciphertext, idempotencyKey: randomUUID(), signer: author.signer });
  return signed.submission as unknown as Record<string, unknown>;
}
