/**
 * A signed post's Ed25519 check on libuv's thread pool instead of the event loop (the setting
 * SVC_RELAY_VERIFY_OFF_THREAD=1; off by default). The check is the costliest step of an append
 * the event loop runs (objects.md §5 step 3; about 80 µs of a bare verify), and node:crypto
 * runs `verify` with a callback on the pool, so another core can take it while the loop
 * parses, commits and answers.
 *
 * It only ever answers "this exact key, message and signature verified": the post is then
 * read as always (relay/posts/prepare.ts), every check in its order, and the Ed25519 step
 * answers from here when its key, message and signature are these bytes. A body this does not
 * understand, a signature that fails, or a key the store does not hold as Ed25519 gets no
 * answer, and the usual check runs on the event loop and refuses as it always has, so no
 * refusal changes code, detail or order.
 */
import { verify } from 'node:crypto';
import { equalBytes, fromBase64url, fromHex } from '../../shared/encoding.js';
import { publicKeyObject, verifyEd25519 } from '../../shared/identity.js';
import { objectIdOf, objectSignaturePreimage } from '../../shared/objects.js';
import type { PrepareAuthor } from './prepared.js';

/** The Ed25519 check of shared/objects.ts `SubmissionContext.verify`. */
export type SignatureCheck = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

/**
 * Check the signature of `body` by `author` on the thread pool; answers the check to read the
 * post with (undefined: read it as always).
 */
export async function verifyOffThread(author: PrepareAuthor, body: unknown): Promise<SignatureCheck | undefined> {
  if (author.keyType !== 'ed25519' || typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (b.alg !== 'ed25519' || typeof b.canonical !== 'string' || typeof b.signature !== 'string') return undefined;
  let publicKey: Uint8Array;
  let message: Uint8Array;
  let signature: Uint8Array;
  try {
    publicKey = fromHex(author.publicKey, 32, 'public_key');
    message = objectSignaturePreimage(objectIdOf(fromBase64url(b.canonical, 'canonical')));
    signature = fromHex(b.signature, 64, 'signature');
  } catch {
    return undefined;
  }
  const ok = await new Promise<boolean>((resolve) => {
    try {
      verify(null, message, publicKeyObject(publicKey), signature, (error, valid) => resolve(error === null && valid));
    } catch {
      resolve(false);
    }
  });
  if (!ok) return undefined;
  return (k, m, s) => (equalBytes(k, publicKey) && equalBytes(m, message) && equalBytes(s, signature)) || verifyEd25519(k, m, s);
}
