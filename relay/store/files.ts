/**
 * The files aggregate (migration 018 on SQLite, 005 on PostgreSQL): bytes kept per SPACE at the
 * address of their SHA-256, who uploaded them, and the attachments posts name. The rules (who
 * may upload, the pending window, the SPACE's total) live in relay/files/; the writes here run
 * inside the caller's transaction.
 */
import type { Db } from './database.js';

/** One attachment as a post names it, with its file's size. */
export interface AttachmentRow {
  sha256: string;
  name: string;
  media_type: string;
  bytes: number;
}

export interface StoredFile {
  content: Uint8Array;
  bytes: number;
  isText: boolean;
}

export interface FileStore {
  /** Keep `content` at its address in the SPACE (once), and record `uploader`'s upload at `now`. */
  put(spaceRowId: number, sha256: string, content: Uint8Array, isText: boolean, uploader: string, now: number): Promise<void>;
  /** The bytes of a file some post not hidden attaches, or undefined. */
  attachedFile(spaceRowId: number, sha256: string): Promise<StoredFile | undefined>;
  /** The size of a file `uploader` uploaded to the SPACE at `since` or later, or undefined. */
  uploadedSize(spaceRowId: number, sha256: string, uploader: string, since: number): Promise<number | undefined>;
  /** Whether a post of the SPACE that is not hidden attaches the file. */
  shown(spaceRowId: number, sha256: string): Promise<boolean>;
  /** The bytes of the files the SPACE's posts that are not hidden attach, each file counted once. */
  attachedBytes(spaceRowId: number): Promise<number>;
  /** Write a post's attachments, in order. */
  attach(postRow: number, spaceRowId: number, list: readonly AttachmentRow[]): Promise<void>;
  /** A post's attachments as it named them, in order (empty for none). */
  ofPost(postRow: number): Promise<AttachmentRow[]>;
  /** Remove uploads older than `before`, then every file no upload and no post holds. */
  prune(before: number): Promise<number>;
}

export function createFileStore(db: Db): FileStore {
  const insertFile = db.prepare(
    `INSERT INTO space_files (space_row_id, sha256, content, bytes, is_text, stored_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (space_row_id, sha256) DO NOTHING`,
  );
  const upsertUpload = db.prepare(
    `INSERT INTO file_uploads (space_row_id, sha256, uploader, uploaded_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (space_row_id, sha256, uploader) DO UPDATE SET uploaded_at = excluded.uploaded_at`,
  );
  const selectAttached = db.prepare<[number, string], { content: Uint8Array; bytes: number; is_text: number }>(
    `SELECT f.content, f.bytes, f.is_text FROM space_files f
      WHERE f.space_row_id = ? AND f.sha256 = ?
        AND EXISTS (SELECT 1 FROM post_files a JOIN posts p ON p.id = a.post_row
                     WHERE a.space_row_id = f.space_row_id AND a.sha256 = f.sha256 AND p.hidden_at IS NULL)`,
  );
  const selectUploaded = db.prepare<[number, string, string, number], { bytes: number }>(
    `SELECT f.bytes FROM file_uploads u JOIN space_files f ON f.space_row_id = u.space_row_id AND f.sha256 = u.sha256
      WHERE u.space_row_id = ? AND u.sha256 = ? AND u.uploader = ? AND u.uploaded_at >= ?`,
  );
  const selectShown = db.prepare<[number, string], { n: number }>(
    `SELECT count(*) AS n FROM post_files a JOIN posts p ON p.id = a.post_row
      WHERE a.space_row_id = ? AND a.sha256 = ? AND p.hidden_at IS NULL`,
  );
  const selectTotal = db.prepare<[number], { total: number | null }>(
    `SELECT sum(f.bytes) AS total FROM space_files f
      WHERE f.space_row_id = ?
        AND EXISTS (SELECT 1 FROM post_files a JOIN posts p ON p.id = a.post_row
                     WHERE a.space_row_id = f.space_row_id AND a.sha256 = f.sha256 AND p.hidden_at IS NULL)`,
  );
  const insertAttachment = db.prepare(
    'INSERT INTO post_files (post_row, ord, space_row_id, sha256, name, media_type, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertList = db.prepare('INSERT INTO post_attachment_lists (post_row, list_json) VALUES (?, ?)');
  const selectOfPost = db.prepare<[number], AttachmentRow>(
    'SELECT sha256, name, media_type, bytes FROM post_files WHERE post_row = ? ORDER BY ord',
  );
  const deleteOldUploads = db.prepare('DELETE FROM file_uploads WHERE uploaded_at < ?');
  const deleteLoose = db.prepare(
    `DELETE FROM space_files
      WHERE NOT EXISTS (SELECT 1 FROM file_uploads u WHERE u.space_row_id = space_files.space_row_id AND u.sha256 = space_files.sha256)
        AND NOT EXISTS (SELECT 1 FROM post_files a WHERE a.space_row_id = space_files.space_row_id AND a.sha256 = space_files.sha256)`,
  );

  return {
    async put(spaceRowId, sha256, content, isText, uploader, now) {
      await insertFile.run(spaceRowId, sha256, content, content.byteLength, isText ? 1 : 0, now);
      await upsertUpload.run(spaceRowId, sha256, uploader, now);
    },
    async attachedFile(spaceRowId, sha256) {
      const r = await selectAttached.get(spaceRowId, sha256);
      return r === undefined ? undefined : { content: r.content, bytes: Number(r.bytes), isText: Number(r.is_text) === 1 };
    },
    async uploadedSize(spaceRowId, sha256, uploader, since) {
      const r = await selectUploaded.get(spaceRowId, sha256, uploader, since);
      return r === undefined ? undefined : Number(r.bytes);
    },
    async shown(spaceRowId, sha256) {
      return Number((await selectShown.get(spaceRowId, sha256))?.n ?? 0) > 0;
    },
    async attachedBytes(spaceRowId) {
      return Number((await selectTotal.get(spaceRowId))?.total ?? 0);
    },
    async attach(postRow, spaceRowId, list) {
      for (const [i, a] of list.entries()) {
        await insertAttachment.run(postRow, i + 1, spaceRowId, a.sha256, a.name, a.media_type, a.bytes);
      }
      await insertList.run(postRow, JSON.stringify(list));
    },
    async ofPost(postRow) {
      return (await selectOfPost.all(postRow)).map((r) => ({ ...r, bytes: Number(r.bytes) }));
    },
    async prune(before) {
      await deleteOldUploads.run(before);
      return (await deleteLoose.run()).changes;
    },
  };
}
