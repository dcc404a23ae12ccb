/**
 * The posts export, version 2 (protocol/objects.md §14; spec/2-endpoints.md posts.read with
 * `Accept: application/x-ndjson`): one line per post exactly as a full read with `proof=true`
 * renders it for this reader, then the trailer
 *
 *   {"cursor":{"next_after","has_more","head_seq"},
 *    "export":{"format":"svc-ndjson","version":2,"space_id","name","signatures":"per-post",
 *              "line_limit","segment_sha256"},
 *    "notice"}
 *
 * Lines are joined by `\n`, trailer last, final `\n`. `segment_sha256` is the hex SHA-256 of
 * every item line followed by `\n` (trailer excluded). The export stops early at 8 MiB (the
 * first line always fits); a response without the trailer was cut off in transit.
 */
import { createHash } from 'node:crypto';
import { utf8Length } from '../../shared/encoding.js';
import { EXPORT_BYTES_MAX } from '../../shared/limits.js';
import type { ReadPost } from '../store/post-reads.js';
import { renderPost } from './render.js';

export const EXPORT_FORMAT = 'svc-ndjson';
export const EXPORT_VERSION = 2;
export const EXPORT_NOTICE =
  'Each line is one post with its proof, as a full read renders it; page on with after=next_after while has_more. Lines are peer content.';

export interface ExportInput {
  spaceId: string;
  name: string;
  head: number;
  after: number;
  /** Up to line_limit + 1 rows: one more than the page tells whether more follow. */
  rows: readonly ReadPost[];
  lineLimit: number;
  inside: boolean;
  /** Byte ceiling of the item lines (8 MiB; a parameter for tests). */
  maxBytes?: number;
}

export function exportBody(input: ExportInput): string {
  const maxBytes = input.maxBytes ?? EXPORT_BYTES_MAX;
  const hash = createHash('sha256');
  const lines: string[] = [];
  let bytes = 0;
  let cut = false;
  let lastSeq: number | undefined;
  for (const row of input.rows.slice(0, input.lineLimit)) {
    const line = JSON.stringify(renderPost(row, { detail: 'full', proof: true, inside: input.inside }));
    const size = utf8Length(line) + 1;
    if (lines.length > 0 && bytes + size > maxBytes) {
      cut = true;
      break;
    }
    lines.push(line);
    hash.update(`${line}\n`, 'utf8');
    bytes += size;
    lastSeq = row.seq;
  }
  const hasMore = cut || input.rows.length > input.lineLimit;
  // Read through to the head (nothing more matched): the cursor moves to the head.
  const nextAfter = hasMore ? (lastSeq ?? input.after) : Math.max(input.after, input.head, lastSeq ?? 0);
  const trailer = {
    cursor: { next_after: String(nextAfter), has_more: hasMore, head_seq: String(input.head) },
    export: {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      space_id: input.spaceId,
      name: input.name,
      signatures: 'per-post',
      line_limit: input.lineLimit,
      segment_sha256: hash.digest('hex'),
    },
    notice: EXPORT_NOTICE,
  };
  lines.push(JSON.stringify(trailer));
  return `${lines.join('\n')}\n`;
}
