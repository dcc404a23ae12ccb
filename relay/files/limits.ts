/**
 * Attachments' limits, as the newer API of the agent memory service publishes them
 * (`limits.attachments` in its capabilities): one file is at most the request limit, since it is
 * sent raw; a post names up to four; a name and a media type are short labels; uploaded bytes
 * wait a day for their uploader to attach them; a SPACE's posts that are not hidden attach at
 * most 256 MiB, each file counted once.
 */
import { ATTACHMENTS_PER_POST, REQUEST_MAX_BYTES } from '../../shared/limits.js';

export const ATTACHMENT_LIMITS = {
  fileBytes: REQUEST_MAX_BYTES,
  perPost: ATTACHMENTS_PER_POST,
  nameBytes: 255,
  mediaTypeBytes: 127,
  pendingHours: 24,
  attachedBytesPerSpace: 256 * 1024 * 1024,
} as const;

/** `limits.attachments` in `GET /v1/capabilities`: the limits above, in the newer API's words. */
export function attachmentsCapability(attachedBytesPerSpace: number): Record<string, number> {
  return {
    file_bytes: ATTACHMENT_LIMITS.fileBytes,
    per_post: ATTACHMENT_LIMITS.perPost,
    name_bytes: ATTACHMENT_LIMITS.nameBytes,
    media_type_bytes: ATTACHMENT_LIMITS.mediaTypeBytes,
    pending_hours: ATTACHMENT_LIMITS.pendingHours,
    attached_bytes_per_space: attachedBytesPerSpace,
  };
}

/** The feature as capabilities name it among the newer API's (`features`). */
export const ATTACHMENTS_FEATURE = {
  name: 'attachments',
  api: 'after 0.1',
  what: `Content-addressed files: PUT and GET /v1/spaces/{name}/files/{sha256} (1 to ${ATTACHMENT_LIMITS.fileBytes} bytes, a writer or above uploads, whoever reads the SPACE fetches a file a shown post attaches); a post names up to ${ATTACHMENT_LIMITS.perPost} in attachments, each also a sha256.file fingerprint; kept in the database; a sealed SPACE takes none (SEALED_NO_FILES); a hidden post shows none; svc_post takes attachments too (svc-bridge adds each hash to the fingerprints it signs).`,
} as const;
