/**
 * A signed post body checked for its author, the same for any SPACE (protocol/objects.md §5
 * steps 1-3; sealed SPACES add their own rules on the object in relay/posts/sealed.ts). The
 * body is attacker-controlled.
 */
import { fromHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { checkSignedSubmission, type CheckedSubmission } from '../../shared/objects.js';
import type { PrepareAuthor, PrepareSpace } from './prepare.js';

export function checkSignedBody(space: PrepareSpace, author: PrepareAuthor, body: Record<string, unknown>): CheckedSubmission {
  // objects.md §5 step 2: an Ed25519 KEY signs with ed25519, a passkey KEY with webauthn
  // (passkeys are not served, so checkSignedSubmission answers PASSKEYS_UNAVAILABLE first).
  if (body.alg === 'ed25519' && author.keyType !== 'ed25519') {
    throw new SvcError('POST_SIGNATURE_INVALID', 'alg: a passkey KEY signs with webauthn');
  }
  const publicKey = author.keyType === 'ed25519' ? fromHex(author.publicKey, 32, 'public_key') : new Uint8Array(0);
  return checkSignedSubmission(body, { spaceId: space.spaceId, authorId: author.peerId, publicKey });
}
