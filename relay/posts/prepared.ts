/**
 * What preparing a post reads and what it answers (relay/posts/prepare.ts, with
 * ./signed-body.ts and ./sealed.ts for signed posts and sealed SPACES): the SPACE and author
 * fields the checks need, and the post ready to be admitted under the write lock
 * (relay/posts/append.ts).
 */
import type { PostObject } from '../../shared/objects.js';
import type { PostInput } from '../../shared/validate.js';
import type { SealedItemRow } from '../store/sealed.js';
import type { Attachment } from '../files/attachments.js';

/** The SPACE fields preparing a post reads (a SpaceRow satisfies it). */
export interface PrepareSpace {
  spaceId: string;
  visibility: 'private' | 'public' | 'sealed';
  oracle: boolean;
}

/** The author's KEY as the store holds it. */
export interface PrepareAuthor {
  peerId: string;
  keyType: 'ed25519' | 'passkey';
  /** Hex: raw Ed25519 key, or SPKI for a passkey. */
  publicKey: string;
}

/** A post ready to be admitted: its content, object, private part and signature. */
export interface PreparedPost {
  signed: boolean;
  /** Normalised fields (idempotency key included when sent). */
  input: PostInput;
  object: PostObject;
  canonical: Uint8Array;
  objectId: Uint8Array;
  private: Uint8Array | undefined;
  signature: Uint8Array | undefined;
  /** Unsigned only: SHA-256 of the canonical input without the idempotency key. */
  inputDigest: Uint8Array | undefined;
  /** Signed by a passkey: the assertion's signature counter, advanced when the post is admitted. */
  passkeyCounter?: number | undefined;
  /** A sealed post's header and ciphertext, and the generation its header names. */
  sealed?: SealedItemRow | undefined;
  /** The files the post names (relay/files/), in its author's order; none when absent. */
  attachments?: readonly Attachment[] | undefined;
}
