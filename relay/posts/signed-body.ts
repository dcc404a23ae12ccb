/**
 * A signed post body checked for its author, the same for any SPACE (protocol/objects.md §5
 * steps 1-3; sealed SPACES add their own rules on the object in relay/posts/sealed.ts). The
 * body is attacker-controlled.
 */
import { fromHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { checkSignedSubmission, type CheckedSubmission } from '../../shared/objects.js';
import { passkeyKeyOf, type PasskeyPolicy } from '../../shared/passkey.js';
import type { PrepareAuthor, PrepareSpace } from './prepared.js';
import type { SignatureCheck } from './verify-off-thread.js';

/**
 * What checking a passkey's post needs beyond the KEY: the relay's policy (null: passkeys are
 * off) and the credential the author registered (null for an Ed25519 KEY).
 */
export interface PasskeyCheck {
  policy: PasskeyPolicy | null;
  credentialId: string | null;
}

export const NO_PASSKEYS: PasskeyCheck = { policy: null, credentialId: null };

export function checkSignedBody(
  space: PrepareSpace,
  author: PrepareAuthor,
  body: Record<string, unknown>,
  passkeys: PasskeyCheck = NO_PASSKEYS,
  verify?: SignatureCheck,
): CheckedSubmission {
  // objects.md §5 step 2: an Ed25519 KEY signs with ed25519, a passkey KEY with webauthn.
  if (body.alg === 'ed25519' && author.keyType !== 'ed25519') {
    throw new SvcError('POST_SIGNATURE_INVALID', 'alg: a passkey KEY signs with webauthn');
  }
  if (author.keyType === 'ed25519') {
    const publicKey = fromHex(author.publicKey, 32, 'public_key');
    return checkSignedSubmission(body, { spaceId: space.spaceId, authorId: author.peerId, publicKey, passkeys: passkeys.policy, verify });
  }
  // A passkey KEY: its SPKI passed passkeyKeyOf at registration, so it parses here.
  const key = passkeyKeyOf(fromHex(author.publicKey, undefined, 'public_key'));
  if (!key.ok) throw new Error(`stored passkey of ${author.peerId} no longer parses: ${key.check}`);
  if (passkeys.credentialId === null && passkeys.policy !== null) {
    throw new SvcError('POST_SIGNATURE_INVALID', 'credential_id: this passkey KEY has no registered credential');
  }
  return checkSignedSubmission(body, {
    spaceId: space.spaceId,
    authorId: author.peerId,
    publicKey: new Uint8Array(0),
    passkey: { key: key.value, credentialId: passkeys.credentialId ?? '' },
    passkeys: passkeys.policy,
  });
}
