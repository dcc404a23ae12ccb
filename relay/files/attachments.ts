/**
 * A post's `attachments` (the newer API's post field): up to four `{sha256, name, media_type}`,
 * in the author's order, read from the body beside the post's fields and never part of its
 * object, so the object, its chain and every signature stay as API 0.1 defines them. Each file
 * is bound to the post by a `sha256.file` fingerprint instead: an unsigned post gets one added
 * for each attachment it lacks (before the object is built, so the object carries it); a signed
 * post must carry it already, since its object is the author's.
 *
 * The name and media type are the author's words, kept and shown in reads, never served as a
 * header or a file name. The body is attacker-controlled.
 */
import { SvcError } from '../../shared/errors.js';
import { utf8Length } from '../../shared/encoding.js';
import type { Fingerprint } from '../../shared/validate.js';
import { ATTACHMENT_LIMITS } from './limits.js';

/** One attachment as its author names it. */
export interface Attachment {
  sha256: string;
  name: string;
  media_type: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** A media type as a label: lowercase type/subtype, no parameters. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
/** Control and format characters (direction overrides, zero-width spaces) and line separators, which make a name read as another; the zero-width joiner and non-joiner are kept for the scripts that need them. */
const HIDDEN_OR_CONTROL = /(?![\u200c\u200d])[\p{Cc}\p{Cf}\u2028\u2029]/u;

function refuse(field: string, why: string): never {
  throw new SvcError('INVALID_REQUEST', `${field}: ${why}`);
}

/** Whether `value` is a post's address of a file: 64 lowercase hex characters. */
export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}

/** The `attachments` member of a post body: absent, null and empty are none. */
export function readAttachments(value: unknown): Attachment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) refuse('attachments', `a list of up to ${ATTACHMENT_LIMITS.perPost} {sha256, name, media_type}`);
  if (value.length > ATTACHMENT_LIMITS.perPost) refuse('attachments', `at most ${ATTACHMENT_LIMITS.perPost}, got ${value.length}`);
  const hashes = new Set<string>();
  const names = new Set<string>();
  return value.map((item: unknown, i) => {
    const at = `attachments[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) refuse(at, 'an object {sha256, name, media_type}');
    const o = item as Record<string, unknown>;
    for (const key of Object.keys(o)) {
      if (key !== 'sha256' && key !== 'name' && key !== 'media_type') refuse(`${at}.${key}`, 'not a member of an attachment');
    }
    if (!isSha256Hex(o.sha256)) refuse(`${at}.sha256`, '64 lowercase hex characters');
    const name = o.name;
    if (typeof name !== 'string' || utf8Length(name) < 1 || utf8Length(name) > ATTACHMENT_LIMITS.nameBytes) {
      refuse(`${at}.name`, `1 to ${ATTACHMENT_LIMITS.nameBytes} bytes of text`);
    }
    if (HIDDEN_OR_CONTROL.test(name) || name.includes('/') || name.includes('\\') || name.startsWith('.')) {
      refuse(`${at}.name`, 'no control or format character, no slash or backslash, no leading dot');
    }
    const mediaType = o.media_type;
    if (typeof mediaType !== 'string' || mediaType.length < 3 || mediaType.length > ATTACHMENT_LIMITS.mediaTypeBytes || !MEDIA_TYPE.test(mediaType)) {
      refuse(`${at}.media_type`, `a lowercase type/subtype of 3 to ${ATTACHMENT_LIMITS.mediaTypeBytes} bytes, no parameters`);
    }
    if (hashes.has(o.sha256)) refuse(`${at}.sha256`, 'named twice');
    if (names.has(name)) refuse(`${at}.name`, 'named twice');
    hashes.add(o.sha256);
    names.add(name);
    return { sha256: o.sha256, name, media_type: mediaType };
  });
}

/**
 * An unsigned post's body with one `sha256.file` fingerprint for each attachment it lacks, and
 * without `attachments`; the post's own rules then check, sort and count the fingerprints (at
 * most 32 in all). A `fingerprints` that is not a list is left for those rules to refuse.
 */
export function withAttachmentPrints(body: Record<string, unknown>, attachments: readonly Attachment[]): Record<string, unknown> {
  const { attachments: _list, ...rest } = body;
  if (attachments.length === 0) return rest;
  const given = rest.fingerprints === undefined || rest.fingerprints === null ? [] : rest.fingerprints;
  if (!Array.isArray(given)) return rest;
  const has = (sha: string) => given.some((f: unknown) => {
    const fp = f as { scheme?: unknown; value?: unknown } | null;
    return fp !== null && typeof fp === 'object' && fp.scheme === 'sha256.file' && fp.value === sha;
  });
  const added = attachments.filter((a) => !has(a.sha256)).map((a) => ({ scheme: 'sha256.file', value: a.sha256 }));
  return { ...rest, fingerprints: [...given, ...added] };
}

/** A signed post's attachments must each be a `sha256.file` fingerprint its object carries. */
export function checkSignedPrints(fingerprints: readonly Fingerprint[] | undefined, attachments: readonly Attachment[]): void {
  for (const [i, a] of attachments.entries()) {
    if (!(fingerprints ?? []).some((f) => f.scheme === 'sha256.file' && f.value === a.sha256)) {
      refuse(`attachments[${i}].sha256`, 'each attachment of a signed post is a sha256.file fingerprint of its object');
    }
  }
}
