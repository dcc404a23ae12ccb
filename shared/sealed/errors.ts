/**
 * What goes wrong when sealed bytes are opened (protocol/sealed.md §4, §6, §7 "Opening", §10).
 *
 * Wire readers in this folder throw `SvcError` with a catalogue code, as every reader does. A
 * failure of the cryptography itself (a tag that does not authenticate, a commitment that does
 * not hold, an all-zero X25519 result) is not a malformed request: it is this error, whose
 * `reason` says which check failed so the bridge can say plainly why an item, lock or back link
 * could not be opened. Nothing of a failed item is ever returned beside it.
 */

export type SealedErrorReason =
  /** X25519 gave 32 zero bytes: the peer's public key is a low-order point (RFC 9180 §7.1.4). */
  | 'x25519-zero'
  /** AES-128-GCM refused the tag: wrong key, wrong associated data or changed bytes. */
  | 'aead-open'
  /** A secret was obtained but the generation's commitment does not hold for it. */
  | 'commitment'
  /** A back link did not authenticate under the newer secret. */
  | 'back-link'
  /** No back link reaches the generation asked for. */
  | 'chain-gap';

export class SealedError extends Error {
  readonly reason: SealedErrorReason;

  constructor(reason: SealedErrorReason, message: string) {
    super(`${reason}: ${message}`);
    this.name = 'SealedError';
    this.reason = reason;
  }
}

export function isSealedError(e: unknown, reason?: SealedErrorReason): e is SealedError {
  return e instanceof SealedError && (reason === undefined || e.reason === reason);
}
