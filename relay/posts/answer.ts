/**
 * The answer of posts.append (protocol/api-notes.md §4; receipts objects.md §10):
 *
 *   {post_id, seq, posted_at, replayed, space_id, object_id, chain_hash, signed, sealed,
 *    no_role?, oracle?, receipt, space}
 *
 * `seq` is a decimal string, hashes lowercase hex, `posted_at` ISO with milliseconds and `Z`,
 * the very string the receipt signed. The receipt is the one stored at append time (a replay
 * answers it unchanged); short form by default, `{canonical, signature, signer_key_id}` with
 * `?receipt=full`. Who else received the post is never returned. `oracle`, in an oracle space:
 * a version's state and the current version after the append, or the proposal a go/veto
 * decided and its new state (relay/oracle/versions.ts).
 */
import { receiptBytes, receiptId, fullReceipt, shortReceipt, type FullReceipt, type ReceiptFields, type ShortReceipt, type SignedReceipt } from '../../shared/receipt.js';
import { toHex } from '../../shared/encoding.js';
import type { OracleAnswer } from '../oracle/versions.js';
import type { PostRow } from '../store/posts.js';

export type ReceiptForm = 'short' | 'full';

export interface PostAnswer {
  post_id: string;
  seq: string;
  posted_at: string;
  replayed: boolean;
  space_id: string;
  object_id: string;
  chain_hash: string;
  signed: boolean;
  sealed: boolean;
  no_role?: true;
  oracle?: OracleAnswer;
  receipt: ShortReceipt | FullReceipt;
  /** The SPACE's name. */
  space: string;
}

/** The fields of a post's stored receipt. */
function storedReceiptFields(space: { spaceId: string }, post: PostRow): ReceiptFields {
  return {
    space_id: space.spaceId,
    seq: String(post.seq),
    post_id: post.postId,
    object_id: toHex(post.objectId),
    chain_hash: toHex(post.chainHash),
    posted_at: new Date(post.postedAt).toISOString(),
    service_epoch: post.receiptServiceEpoch,
    signer_key_id: post.receiptSignerKeyId,
  };
}

/** The stored receipt of a post, as shared/receipt.ts renders it. */
export function storedReceipt(space: { spaceId: string }, post: PostRow): SignedReceipt {
  const fields = storedReceiptFields(space, post);
  const canonical = receiptBytes(fields);
  return { fields, canonical, id: receiptId(canonical), signature: post.receiptSignature };
}

export function appendAnswer(
  space: { spaceId: string; name: string },
  post: PostRow,
  replayed: boolean,
  form: ReceiptForm,
  oracle?: OracleAnswer,
): PostAnswer {
  // The short form is the fields and the signature: the receipt's bytes (canonicalised and
  // hashed once already, to sign it) are rebuilt only for the full form, which carries them.
  const f = storedReceiptFields(space, post);
  const answer: PostAnswer = {
    post_id: f.post_id,
    seq: f.seq,
    posted_at: f.posted_at,
    replayed,
    space_id: f.space_id,
    object_id: f.object_id,
    chain_hash: f.chain_hash,
    signed: post.signed,
    sealed: post.sealed,
    ...(post.noRole ? { no_role: true as const } : {}),
    ...(oracle === undefined ? {} : { oracle }),
    receipt: form === 'full' ? fullReceipt(storedReceipt(space, post)) : shortReceipt({ fields: f, signature: post.receiptSignature }),
    space: space.name,
  };
  return answer;
}
