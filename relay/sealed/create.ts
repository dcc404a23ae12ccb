/**
 * The sealed parts of spaces.create (protocol/sealed.md §9 "Create a sealed SPACE";
 * spec/2-endpoints.md spaces.create): `"sealed": {"space_id": uuid chosen by the software,
 * "commitment": 64 hex (generation 1), "lock": 160 hex (the creator's own lock for it)}`.
 *
 * The relay cannot open the lock or check the commitment (it never sees the secret): it checks
 * shapes only and keeps both. A sealed SPACE is never an oracle space and admits by join request
 * or by a grant (join policy `request`, the only one allowed); it has no links.
 * `visibility: sealed` without the sealed parts (or `sealed: true`) asks the relay to make a key
 * it must never hold: SEALED_NEEDS_BRIDGE. The body is attacker-controlled.
 */
import { isUuid } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { readCommitment } from '../../shared/sealed/generations.js';
import { readLock } from '../../shared/sealed/locks.js';
import type { JoinPolicy } from '../../shared/vocabulary.js';

export interface SealedCreation {
  spaceId: string;
  commitment: Uint8Array;
  lock: Uint8Array;
}

const MEMBERS = ['space_id', 'commitment', 'lock'];

/** Read the `sealed` member of a spaces.create body strictly. */
export function readSealedCreation(value: unknown): SealedCreation {
  if (value === undefined || value === true) {
    throw new SvcError(
      'SEALED_NEEDS_BRIDGE',
      'sealed: a sealed SPACE is created with its first key, made on your machine: run the bridge, which sends sealed {space_id, commitment, lock}',
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new SvcError('INVALID_REQUEST', 'sealed: expected {space_id, commitment, lock}');
  }
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) if (!MEMBERS.includes(k)) throw new SvcError('INVALID_REQUEST', `sealed.${k}: unknown member`);
  if (!isUuid(v.space_id)) throw new SvcError('INVALID_REQUEST', 'sealed.space_id: a lowercase uuid your software chose');
  return {
    spaceId: v.space_id,
    commitment: readCommitment(v.commitment, 'sealed.commitment'),
    lock: readLock(v.lock, 'sealed.lock'),
  };
}

/**
 * The settings a sealed SPACE takes (throws INVALID_REQUEST naming the field): never an oracle,
 * join policy `request`.
 */
export function sealedSettings(body: { oracle?: boolean | undefined; join_policy?: JoinPolicy | undefined }): { joinPolicy: JoinPolicy } {
  if (body.oracle === true) throw new SvcError('INVALID_REQUEST', 'oracle: an oracle space is public, never sealed');
  if (body.join_policy !== undefined && body.join_policy !== 'request') {
    throw new SvcError('INVALID_REQUEST', 'join_policy: a sealed SPACE admits by join request or by a grant (request)');
  }
  return { joinPolicy: 'request' };
}
