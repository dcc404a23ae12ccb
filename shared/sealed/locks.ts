/**
 * Locks (protocol/sealed.md §4): secret_g handed to one member, sealed with HPKE SealAuth so
 * that it opens only with the recipient's encryption private key and only as coming from the
 * sender's encryption key. 80 bytes = enc (32) || ct (48 = 32 + tag), 160 hex on the wire.
 *
 *   info = L("sealed-lock") || C || u64(g)
 *   aad  = recipient_peer_id32 || sender_peer_id32 || commitment_g
 *   pt   = secret_g
 *
 * Opening takes the sender's public key only from the sender's own checked statement
 * (encryption-key.ts), then checks that commitment_g holds for the secret obtained. Which
 * senders a member accepts is keepers.ts's `mayLock`. Locks are attacker-controlled.
 */
import { SvcError } from '../errors.js';
import { concatBytes, fromHex, toHex, u64 } from '../encoding.js';
import { label } from '../labels.js';
import { LOCKS_PER_CALL } from '../limits.js';
import { SealedError } from './errors.js';
import { assertGeneration, checkCommitment, commitmentHex, commitmentOf, readCommitment, SECRET_BYTES, spaceContainer } from './generations.js';
import { HPKE_ENC_BYTES, openAuth, sealAuth } from './hpke.js';

export const LOCK_BYTES = 80;
const PEER_ID_RE = /^[0-9a-f]{64}$/;

/** HPKE info of a lock. */
export function lockInfo(container: Uint8Array, generation: number): Uint8Array {
  assertGeneration(generation);
  return concatBytes(label('sealed-lock'), container, u64(generation));
}

/** HPKE aad of a lock. */
export function lockAad(recipientPeerId: string, senderPeerId: string, commitment: Uint8Array): Uint8Array {
  return concatBytes(fromHex(recipientPeerId, 32, 'recipient'), fromHex(senderPeerId, 32, 'sender'), commitment);
}

export interface SealLockInput {
  container: Uint8Array;
  generation: number;
  secret: Uint8Array;
  /** The recipient's peer id and its registered encryption public key. */
  recipient: { peerId: string; publicKey: Uint8Array };
  /** The sender's peer id and its encryption private key. */
  sender: { peerId: string; privateKey: Uint8Array };
  /** 32 fresh random bytes for the HPKE ephemeral key (DeriveKeyPair input). */
  ephemeral: Uint8Array;
}

/** The 80-byte lock of `secret` for `recipient`, from `sender`. */
export function sealLock(input: SealLockInput): Uint8Array {
  const commitment = commitmentOf(input.container, input.generation, input.secret);
  const { enc, ct } = sealAuth({
    pkR: input.recipient.publicKey,
    info: lockInfo(input.container, input.generation),
    aad: lockAad(input.recipient.peerId, input.sender.peerId, commitment),
    pt: input.secret,
    skS: input.sender.privateKey,
    ikmE: input.ephemeral,
  });
  return concatBytes(enc, ct);
}

export interface OpenLockInput {
  container: Uint8Array;
  generation: number;
  lock: Uint8Array;
  /** commitment_g as the relay shows it beside the lock. */
  commitment: Uint8Array | string;
  recipient: { peerId: string; privateKey: Uint8Array };
  /** The sender's peer id and the public key from its checked statement. */
  sender: { peerId: string; publicKey: Uint8Array };
}

/**
 * secret_g from a lock. Throws SealedError: 'aead-open' when it does not open (wrong sender,
 * recipient, container, generation, commitment or a changed byte), 'commitment' when the secret
 * does not hold commitment_g, 'x25519-zero' for a low-order key.
 */
export function openLock(input: OpenLockInput): Uint8Array {
  const commitment = typeof input.commitment === 'string' ? readCommitment(input.commitment) : input.commitment;
  if (!(input.lock instanceof Uint8Array) || input.lock.length !== LOCK_BYTES) {
    throw new SealedError('aead-open', `a lock is ${LOCK_BYTES} bytes`);
  }
  const secret = openAuth({
    enc: input.lock.subarray(0, HPKE_ENC_BYTES),
    ct: input.lock.subarray(HPKE_ENC_BYTES),
    skR: input.recipient.privateKey,
    pkS: input.sender.publicKey,
    info: lockInfo(input.container, input.generation),
    aad: lockAad(input.recipient.peerId, input.sender.peerId, commitment),
  });
  if (secret.length !== SECRET_BYTES) throw new SealedError('commitment', 'a lock holds a 32-byte secret');
  checkCommitment(input.container, input.generation, secret, commitment);
  return secret;
}

/** A lock on the wire: 160 lowercase hex. */
export function readLock(value: unknown, field = 'lock'): Uint8Array {
  return fromHex(value, LOCK_BYTES, field);
}

/**
 * `{"<peer id>": 160 hex, …}` of a locks request (§9): 1 to `max` entries (1,000 per request),
 * each key a peer id. Returned in the order sent.
 */
export function readLockMap(value: unknown, field = 'locks', min = 1, max = LOCKS_PER_CALL): Map<string, Uint8Array> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('INVALID_REQUEST', `${field}: expected an object of peer id to lock`);
  }
  const entries = Object.entries(value);
  if (entries.length < min || entries.length > max) {
    throw new SvcError('INVALID_REQUEST', `${field}: ${min} to ${max} locks`);
  }
  const out = new Map<string, Uint8Array>();
  for (const [peer, lock] of entries) {
    if (!PEER_ID_RE.test(peer)) throw new SvcError('INVALID_REQUEST', `${field}: key ${peer.slice(0, 70)} is not a peer id (64 lowercase hex)`);
    out.set(peer, readLock(lock, `${field}.${peer}`));
  }
  return out;
}

/**
 * The `"sealed"` member of `POST /v1/spaces` (sealed.md §9): the SPACE id the software chose,
 * commitment_1 and the owner's own lock for generation 1.
 */
export function sealedSpaceCreation(input: {
  spaceId: string;
  secret: Uint8Array;
  owner: { peerId: string; publicKey: Uint8Array; privateKey: Uint8Array };
  ephemeral: Uint8Array;
}): { space_id: string; commitment: string; lock: string } {
  const container = spaceContainer(input.spaceId);
  const lock = sealLock({
    container,
    generation: 1,
    secret: input.secret,
    recipient: { peerId: input.owner.peerId, publicKey: input.owner.publicKey },
    sender: { peerId: input.owner.peerId, privateKey: input.owner.privateKey },
    ephemeral: input.ephemeral,
  });
  return { space_id: input.spaceId, commitment: commitmentHex(container, 1, input.secret), lock: toHex(lock) };
}
