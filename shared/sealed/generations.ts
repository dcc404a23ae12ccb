/**
 * Containers, generations, commitments and back links (protocol/sealed.md §3, §6).
 *
 *   C (sealed pair)   = 0x01 || lo32 || hi32     the two peer ids in ascending byte order (65 bytes)
 *   C (sealed SPACE)  = 0x02 || uuid16(space_id)                                      (17 bytes)
 *   commitment_g      = H(L("sealed-commitment") || C || u64(g) || secret_g)
 *   back_g            = AES(HKDF(empty, secret_g, L("sealed-chain") || C || u64(g), 16),
 *                           pt = secret_(g-1), aad = C || u64(g-1))                   (48 bytes, g >= 2)
 *
 * Opening back_g with secret_g gives secret_(g-1), and commitment_(g-1) must then hold, so the
 * newest secret opens every earlier generation one link at a time. Back links and commitments
 * come from the relay and are attacker-controlled.
 */
import { SvcError } from '../errors.js';
import { concatBytes, equalBytes, fromHex, isHex, toHex, u64, uuid16, uuidFromBytes } from '../encoding.js';
import { label, labelledHash } from '../labels.js';
import { aesOpenOnce, aesSealOnce } from './aes-gcm.js';
import { SealedError } from './errors.js';
import { hkdf } from './hkdf.js';

export const SECRET_BYTES = 32;
export const COMMITMENT_BYTES = 32;
export const BACK_LINK_BYTES = 48;
export const PAIR_CONTAINER_BYTES = 65;
export const SPACE_CONTAINER_BYTES = 17;

const PAIR_TAG = 0x01;
const SPACE_TAG = 0x02;

function assertSecret(value: unknown, name = 'secret'): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array) || value.length !== SECRET_BYTES) throw new TypeError(`${name} must be 32 bytes`);
}

function assertContainer(c: unknown): asserts c is Uint8Array {
  const ok =
    c instanceof Uint8Array &&
    ((c.length === PAIR_CONTAINER_BYTES && c[0] === PAIR_TAG) || (c.length === SPACE_CONTAINER_BYTES && c[0] === SPACE_TAG));
  if (!ok) throw new TypeError('container must be a pair (65 bytes) or SPACE (17 bytes) container');
}

/** A generation number: a safe integer >= 1. */
export function assertGeneration(g: unknown, name = 'generation'): asserts g is number {
  if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 1) throw new TypeError(`${name} must be an integer >= 1`);
}

/** The sealed pair's container; the order the peer ids are given in does not matter. */
export function pairContainer(peerA: string, peerB: string): Uint8Array {
  const a = fromHex(peerA, 32, 'peerA');
  const b = fromHex(peerB, 32, 'peerB');
  if (peerA === peerB) throw new SvcError('INVALID_REQUEST', 'pair: the two peer ids must differ');
  // Lowercase hex orders the same as the bytes it encodes.
  return peerA < peerB ? concatBytes(Uint8Array.of(PAIR_TAG), a, b) : concatBytes(Uint8Array.of(PAIR_TAG), b, a);
}

/** The sealed SPACE's container. */
export function spaceContainer(spaceId: string): Uint8Array {
  return concatBytes(Uint8Array.of(SPACE_TAG), uuid16(spaceId, 'space_id'));
}

/** H(L("sealed-commitment") || C || u64(g) || secret_g). */
export function commitmentOf(container: Uint8Array, generation: number, secret: Uint8Array): Uint8Array {
  assertContainer(container);
  assertGeneration(generation);
  assertSecret(secret);
  return labelledHash('sealed-commitment', container, u64(generation), secret);
}

export function commitmentHex(container: Uint8Array, generation: number, secret: Uint8Array): string {
  return toHex(commitmentOf(container, generation, secret));
}

/** Whether `secret` is the one `commitment` (32 bytes or 64 hex) was made for. */
export function commitmentHolds(container: Uint8Array, generation: number, secret: Uint8Array, commitment: Uint8Array | string): boolean {
  const expected = typeof commitment === 'string' ? (isHex(commitment, 32) ? fromHex(commitment, 32) : undefined) : commitment;
  if (expected === undefined || expected.length !== COMMITMENT_BYTES) return false;
  return equalBytes(commitmentOf(container, generation, secret), expected);
}

/** Throws SealedError('commitment') unless the commitment holds. */
export function checkCommitment(container: Uint8Array, generation: number, secret: Uint8Array, commitment: Uint8Array | string): void {
  if (!commitmentHolds(container, generation, secret, commitment)) {
    throw new SealedError('commitment', `the secret does not hold commitment ${generation}`);
  }
}

function backLinkKey(container: Uint8Array, generation: number, secret: Uint8Array): Uint8Array {
  return hkdf(new Uint8Array(0), secret, concatBytes(label('sealed-chain'), container, u64(generation)), 16);
}

/** back_g: secret_(g-1) sealed under a key only secret_g gives (g >= 2). */
export function sealBackLink(container: Uint8Array, generation: number, secret: Uint8Array, previousSecret: Uint8Array): Uint8Array {
  assertContainer(container);
  assertGeneration(generation);
  if (generation < 2) throw new RangeError('back links start at generation 2');
  assertSecret(secret);
  assertSecret(previousSecret, 'previousSecret');
  return aesSealOnce(backLinkKey(container, generation, secret), previousSecret, concatBytes(container, u64(generation - 1)));
}

/**
 * secret_(g-1) from back_g and secret_g, checked against commitment_(g-1). Throws
 * SealedError('back-link') when the link does not authenticate, ('commitment') when the result
 * does not hold the earlier commitment.
 */
export function openBackLink(
  container: Uint8Array,
  generation: number,
  secret: Uint8Array,
  back: Uint8Array,
  previousCommitment: Uint8Array | string,
): Uint8Array {
  assertContainer(container);
  assertGeneration(generation);
  if (generation < 2) throw new RangeError('back links start at generation 2');
  assertSecret(secret);
  const previous =
    back instanceof Uint8Array && back.length === BACK_LINK_BYTES
      ? aesOpenOnce(backLinkKey(container, generation, secret), back, concatBytes(container, u64(generation - 1)))
      : undefined;
  if (previous === undefined) throw new SealedError('back-link', `back link ${generation} does not authenticate`);
  checkCommitment(container, generation - 1, previous, previousCommitment);
  return previous;
}

/** One generation of a chain as the relay serves it (`GET …/sealed/chain`). */
export interface ChainLink {
  generation: number;
  commitment: Uint8Array | string;
  /** Absent for generation 1. */
  back?: Uint8Array | undefined;
}

/**
 * The secret of generation `target`, starting from a secret the reader holds for `from` and
 * walking back one link at a time (§6). `links` gives each generation's commitment and back link;
 * the starting secret must hold its own commitment too. Throws SealedError('chain-gap') when a
 * needed generation is missing, or the error of the link that fails.
 */
export function secretForGeneration(
  container: Uint8Array,
  from: { generation: number; secret: Uint8Array },
  target: number,
  links: (generation: number) => ChainLink | undefined,
): Uint8Array {
  assertGeneration(target, 'target');
  assertGeneration(from.generation, 'from.generation');
  if (target > from.generation) throw new SealedError('chain-gap', `generation ${target} is newer than the secret held`);
  const start = links(from.generation);
  if (start === undefined) throw new SealedError('chain-gap', `no commitment for generation ${from.generation}`);
  checkCommitment(container, from.generation, from.secret, start.commitment);
  let secret = from.secret;
  let current = start;
  for (let g = from.generation; g > target; g--) {
    const previous = links(g - 1);
    if (current.back === undefined || previous === undefined) throw new SealedError('chain-gap', `no back link from ${g} to ${g - 1}`);
    secret = openBackLink(container, g, secret, current.back, previous.commitment);
    current = previous;
  }
  return secret;
}

// ---- wire readers ---------------------------------------------------------------------------

/** A commitment on the wire: 64 lowercase hex. */
export function readCommitment(value: unknown, field = 'commitment'): Uint8Array {
  return fromHex(value, COMMITMENT_BYTES, field);
}

/** A back link on the wire: 96 lowercase hex. */
export function readBackLink(value: unknown, field = 'back'): Uint8Array {
  return fromHex(value, BACK_LINK_BYTES, field);
}

/** A generation on the wire: a decimal string or a JSON integer, at least 1 (sealed.md §9). */
export function readGeneration(value: unknown, field = 'generation'): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  if (typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) && Number.isSafeInteger(Number(value))) return Number(value);
  throw new SvcError('INVALID_REQUEST', `${field}: a generation, a decimal string or integer of at least 1`);
}

/** Whether a container is a SPACE's (else a pair's), and what it names. */
export function describeContainer(container: Uint8Array): { type: 'space'; spaceId: string } | { type: 'pair'; peers: [string, string] } {
  assertContainer(container);
  if (container[0] === SPACE_TAG) {
    return { type: 'space', spaceId: uuidFromBytes(container.subarray(1)) };
  }
  return { type: 'pair', peers: [toHex(container.subarray(1, 33)), toHex(container.subarray(33))] };
}

/**
 * What a keeper sends to stage generation g (sealed.md §9 step 1): the new secret's commitment
 * and back_g, which opens to the previous secret. Both secrets are the caller's (the new one
 * 32 fresh random bytes).
 */
export function stageGeneration(input: {
  container: Uint8Array;
  generation: number;
  secret: Uint8Array;
  previousSecret: Uint8Array;
}): { generation: number; commitment: string; back: string } {
  return {
    generation: input.generation,
    commitment: commitmentHex(input.container, input.generation, input.secret),
    back: toHex(sealBackLink(input.container, input.generation, input.secret, input.previousSecret)),
  };
}
