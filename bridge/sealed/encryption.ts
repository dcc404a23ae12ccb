/**
 * The KEY's encryption key in the bridge (protocol/sealed.md §2, §4, §9).
 *
 * - `createSealer` wraps the key pair bridge/keys/keys.ts derives from the KEY's seed
 *   (shared/sealed/encryption-key.ts `deriveEncryptionKey`) in an object that makes and opens
 *   locks and the sealed parts of spaces.create: callers never hold the private key bytes
 *   (STYLE.md 10, "a signer and a sealer"). It draws the fresh HPKE ephemeral input itself.
 * - `ensurePublished` publishes the statement (`PUT /v1/me/encryption-key`) on first need, once
 *   per process: the same statement again is answered `changed: false`; a different key already
 *   published for this KEY is ENCRYPTION_KEY_EXISTS, which the bridge reports as
 *   ENCRYPTION_KEY_CONFLICT (its own key derives from the seed and cannot differ).
 * - `readKeyView` checks a KEY as sealed answers show it (`{peer_id, public_key, key_type,
 *   encryption_key}`): the signing key hashes to the peer id and the encryption key's statement
 *   is signed by it (a member never takes the relay's word for a key). Attacker-controlled.
 */
import { randomBytes } from 'node:crypto';
import { fromHex, isHex } from '../../shared/encoding.js';
import type { Signer } from '../../shared/identity.js';
import {
  buildEncryptionKeyStatement,
  checkEncryptionKeyView,
  encryptionKeyFingerprint,
  encryptionKeyPutBody,
  signEncryptionKeyStatement,
  type CheckedEncryptionKey,
} from '../../shared/sealed/encryption-key.js';
import { signerMatchesPeerId, type SignerKey } from '../../shared/sealed/envelope.js';
import { openLock, sealLock, sealedSpaceCreation } from '../../shared/sealed/locks.js';
import type { RelayApi } from '../../tools/api.js';
import { BridgeError, isRelayRefusal } from '../../tools/errors.js';
import type { X25519KeyPair } from '../../shared/sealed/hpke.js';
import type { SealedKeyMaterial } from '../keys/keys.js';
import type { LocalBox } from '../keys/local-box.js';
import type { SearchKeys } from '../keys/search-keys.js';

const EPHEMERAL_BYTES = 32;

export interface LockFor {
  container: Uint8Array;
  generation: number;
  secret: Uint8Array;
  recipient: { peerId: string; publicKey: Uint8Array };
}

export interface LockToOpen {
  container: Uint8Array;
  generation: number;
  lock: Uint8Array;
  commitment: Uint8Array | string;
  /** The sender's peer id and the public key of its checked statement. */
  sender: { peerId: string; publicKey: Uint8Array };
}

/** What the bridge seals and opens with; the private key stays inside. */
export interface Sealer {
  readonly peerId: string;
  readonly publicKey: Uint8Array;
  /** 32 hex (encryption-key.ts `encryptionKeyFingerprint`). */
  readonly fingerprint: string;
  /** The local box for secrets at rest (bridge/keys/local-box.ts `LocalBox`). */
  readonly box: LocalBox;
  /** The keys of the local search index of sealed SPACES (bridge/keys/search-keys.ts). */
  readonly search: SearchKeys;
  /** The `PUT /v1/me/encryption-key` body, signed by `signer`. */
  statementBody(signer: Signer): Record<string, string>;
  /** An 80-byte lock of `secret` for `recipient`, from this KEY. */
  lock(input: LockFor): Uint8Array;
  /** secret_g from a lock to this KEY (SealedError when it does not open or hold). */
  openLock(input: LockToOpen): Uint8Array;
  /** The `sealed` member of spaces.create: the chosen SPACE id, commitment_1 and the own lock. */
  creation(spaceId: string, secret: Uint8Array): { space_id: string; commitment: string; lock: string };
  /** Whether `ensurePublished` already saw the key published by this process. */
  readonly published: boolean;
  markPublished(): void;
}

function fresh(n: number): Uint8Array {
  return new Uint8Array(randomBytes(n));
}

/** What a sealer is made of: a KEY's peer id and sealed-SPACE material (bridge/keys/keys.ts `LoadedKey`). */
export interface SealerKey {
  readonly peerId: string;
  readonly sealedKeys: SealedKeyMaterial;
}

/**
 * The sealer of `key`. The KEY's members are read when the sealer is first used, not now: a
 * bridge's KEY derives its public half when first asked (bridge/keys/keys.ts `deferredInfo`).
 */
export function createSealer(key: SealerKey): Sealer {
  let id: string | undefined;
  const peerIdOf = () => {
    if (id === undefined) {
      const given = key.peerId;
      if (!isHex(given, 32)) throw new TypeError('peerId must be 64 lowercase hex');
      id = given;
    }
    return id;
  };
  // The KEY's pair is asked for when first needed (the material derives it then, bridge/keys/keys.ts).
  let held: { pair: X25519KeyPair; publicKey: Uint8Array; fingerprint: string } | undefined;
  const own = () => {
    if (held === undefined) {
      const pair = key.sealedKeys.encryptionKey();
      held = { pair, publicKey: new Uint8Array(pair.publicKey), fingerprint: encryptionKeyFingerprint(pair.publicKey) };
    }
    return held;
  };
  let published = false;
  return {
    get peerId() {
      return peerIdOf();
    },
    get publicKey() {
      return own().publicKey;
    },
    get fingerprint() {
      return own().fingerprint;
    },
    get box() {
      return key.sealedKeys.box;
    },
    get search() {
      return key.sealedKeys.search;
    },
    statementBody(signer) {
      const publicKey = own().pair.publicKey;
      const statement = buildEncryptionKeyStatement(peerIdOf(), publicKey);
      return encryptionKeyPutBody(statement, signEncryptionKeyStatement(signer, statement));
    },
    lock(input) {
      return sealLock({
        container: input.container,
        generation: input.generation,
        secret: input.secret,
        recipient: input.recipient,
        sender: { peerId: peerIdOf(), privateKey: own().pair.privateKey },
        ephemeral: fresh(EPHEMERAL_BYTES),
      });
    },
    openLock(input) {
      return openLock({
        container: input.container,
        generation: input.generation,
        lock: input.lock,
        commitment: input.commitment,
        recipient: { peerId: peerIdOf(), privateKey: own().pair.privateKey },
        sender: input.sender,
      });
    },
    creation(spaceId, secret) {
      return sealedSpaceCreation({
        spaceId,
        secret,
        owner: { peerId: peerIdOf(), publicKey: own().pair.publicKey, privateKey: own().pair.privateKey },
        ephemeral: fresh(EPHEMERAL_BYTES),
      });
    },
    get published() {
      return published;
    },
    markPublished() {
      published = true;
    },
  };
}

/**
 * Publish this KEY's encryption key unless this process already did (sealed.md §2: once per
 * KEY, for life; the same statement again changes nothing). Returns whether this call sent it.
 */
export async function ensurePublished(api: RelayApi, sealer: Sealer, signer: Signer): Promise<boolean> {
  if (sealer.published) return false;
  try {
    await api.request({ method: 'PUT', path: '/v1/me/encryption-key', body: sealer.statementBody(signer) });
  } catch (e) {
    if (isRelayRefusal(e, 'ENCRYPTION_KEY_EXISTS', 'ENCRYPTION_KEY_TAKEN')) {
      throw new BridgeError(
        'ENCRYPTION_KEY_CONFLICT',
        `the relay holds another encryption key for this KEY than the one its seed gives (fingerprint ${sealer.fingerprint}); sealed SPACES cannot be used with it`,
        'Compare the fingerprint with `svc-bridge me`; the relay or the key directory is not what you think. Do not seal anything until this is explained.',
        e.detail,
        { cause: e },
      );
    }
    throw e;
  }
  sealer.markPublished();
  return true;
}

/** Run `act`; when the relay says this KEY has no encryption key yet, publish it and run it again once. */
export async function withPublishedKey<T>(api: RelayApi, sealer: Sealer | undefined, signer: Signer, act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (e) {
    if (sealer === undefined || !isRelayRefusal(e, 'ENCRYPTION_KEY_MISSING') || (e.detail !== undefined && !e.detail.includes(sealer.peerId))) throw e;
    await ensurePublished(api, sealer, signer);
    return act();
  }
}

// ---- KEYS as sealed answers show them --------------------------------------------------------

/** A KEY whose signing key hashes to its peer id, with its checked encryption key (or none). */
export interface PeerKey {
  readonly peerId: string;
  readonly signer: SignerKey;
  readonly encryption: CheckedEncryptionKey | null;
}

function badView(field: string, rule: string): BridgeError {
  return new BridgeError('BAD_RESPONSE', `the relay answered something the protocol does not allow: ${field}: ${rule}`, 'Check that SVC_API points at an svc relay.');
}

/**
 * Read `{peer_id, public_key, key_type, encryption_key}` (relay/routes/encryption-key.ts
 * `keyView`, peers.get) and check it: the KEY's key hashes to its peer id, and the encryption
 * key's statement names that KEY and is signed by it (ENCRYPTION_KEY_INVALID otherwise).
 */
export function readKeyView(value: unknown, field: string): PeerKey {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badView(field, 'expected a KEY object');
  const v = value as Record<string, unknown>;
  if (!isHex(v.peer_id, 32)) throw badView(`${field}.peer_id`, 'expected 64 lowercase hex');
  let signer: SignerKey;
  if (v.key_type === 'ed25519' && isHex(v.public_key, 32)) {
    signer = { peerId: v.peer_id, keyType: 'ed25519', publicKey: fromHex(v.public_key, 32) };
  } else if (v.key_type === 'passkey' && typeof v.public_key === 'string' && /^(?:[0-9a-f]{2})+$/.test(v.public_key)) {
    signer = { peerId: v.peer_id, keyType: 'passkey', spki: fromHex(v.public_key) };
  } else {
    throw badView(`${field}.public_key`, 'expected the KEY\'s signing key and key_type');
  }
  if (!signerMatchesPeerId(signer)) throw badView(`${field}.public_key`, `does not hash to peer id ${v.peer_id}`);
  const encryption = checkEncryptionKeyView(v.encryption_key ?? null, signer);
  return { peerId: v.peer_id, signer, encryption };
}

/** GET /v1/peers/{peer}, checked as `readKeyView`. */
export async function fetchPeerKey(api: RelayApi, peerId: string): Promise<PeerKey> {
  if (!isHex(peerId, 32)) throw new TypeError('peerId must be 64 lowercase hex');
  const res = await api.request({ path: `/v1/peers/${peerId}` });
  return readKeyView(res.body, `peers.get ${peerId.slice(0, 12)}`);
}

/** The X25519 public key of a checked KEY, or a refusal naming it. */
export function encryptionPublicKey(key: PeerKey): Uint8Array {
  if (key.encryption === null) {
    throw new BridgeError('SEALED_NO_KEY', `KEY ${key.peerId} has published no encryption key`, 'It must use a bridge (or other sealing software) once, which publishes it.');
  }
  return key.encryption.publicKey;
}
