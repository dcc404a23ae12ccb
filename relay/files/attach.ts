/**
 * A post's attachments, inside its append's write transaction (relay/posts/append.ts): checked
 * before the post is written, stored after, so a refusal leaves nothing behind (the append's
 * savepoint rolls back alone).
 *
 * - Only a writer or above attaches (the owner, an admin, a coordinator, a writer): a reader or a
 *   KEY with no role who may post text in an open or oracle SPACE is WRITE_DENIED here, as the
 *   upload refuses them.
 * - Each file must be bytes the author uploaded to this SPACE within the pending window (a day):
 *   ATTACHMENT_NOT_FOUND, the detail its sha256. Bytes another KEY uploaded do not count.
 * - The files no shown post of the SPACE attaches yet count toward its total (each file once; a
 *   hidden post's files count again only when it is shown): past it, FILE_LIMIT.
 * - A replay names the same list as the first post (the same hashes, names and media types, in
 *   order), else IDEMPOTENCY_CONFLICT.
 */
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { rankOf, type SpaceRole } from '../policy.js';
import type { AttachmentRow } from '../store/files.js';
import type { SpaceRow } from '../store/spaces.js';
import type { Attachment } from './attachments.js';
import { ATTACHMENT_LIMITS } from './limits.js';

const HOUR_MS = 60 * 60 * 1000;

/** The most bytes of attached files a SPACE holds here (the relay's setting, else the newer API's). */
export function attachedBytesPerSpace(ctx: Pick<RelayContext, 'config'>): number {
  return ctx.config.attachedBytesPerSpace ?? ATTACHMENT_LIMITS.attachedBytesPerSpace;
}

/** Whether `role` may upload and attach files: a writer or above. */
export function mayAttach(role: SpaceRole): boolean {
  return rankOf(role) >= rankOf('writer');
}

/** Check `list` for a new post by `author`; answers the rows to store once the post is written. */
export async function checkAttachments(
  ctx: RelayContext,
  space: SpaceRow,
  author: string,
  role: SpaceRole,
  list: readonly Attachment[],
  now: number,
): Promise<AttachmentRow[]> {
  if (list.length === 0) return [];
  if (space.visibility === 'sealed') throw new SvcError('SEALED_NO_FILES', 'attachments: a sealed SPACE takes no files');
  if (!mayAttach(role)) throw new SvcError('WRITE_DENIED', 'attachments: a writer or above attaches files');
  const files = ctx.store.files;
  const since = now - ATTACHMENT_LIMITS.pendingHours * HOUR_MS;
  const rows: AttachmentRow[] = [];
  let added = 0;
  for (const a of list) {
    const bytes = await files.uploadedSize(space.id, a.sha256, author, since);
    if (bytes === undefined) throw new SvcError('ATTACHMENT_NOT_FOUND', a.sha256);
    if (!await files.shown(space.id, a.sha256)) added += bytes;
    rows.push({ ...a, bytes });
  }
  if (added > 0 && (await files.attachedBytes(space.id)) + added > attachedBytesPerSpace(ctx)) {
    throw new SvcError('FILE_LIMIT', `attachments: the SPACE holds at most ${attachedBytesPerSpace(ctx)} bytes of attached files`);
  }
  return rows;
}

/** A replay's list against the first post's: the same attachments in the same order. */
export async function checkReplayedAttachments(ctx: RelayContext, postRow: number, list: readonly Attachment[]): Promise<void> {
  const stored = await ctx.store.files.ofPost(postRow);
  const same = stored.length === list.length &&
    stored.every((s, i) => s.sha256 === list[i]!.sha256 && s.name === list[i]!.name && s.media_type === list[i]!.media_type);
  if (!same) throw new SvcError('IDEMPOTENCY_CONFLICT', 'idempotency_key: already used with other attachments');
}
