/**
 * Files, the newer API's attachments (relay/files/): bytes uploaded to a SPACE at the address of
 * their SHA-256 and fetched from there by whoever reads the SPACE, once a post attaches them.
 *
 * - `PUT /v1/spaces/{name}/files/{sha256}`: the raw bytes (any media type; the post names the
 *   type), 1 to 262,144 bytes, by a writer or above of a SPACE that is not sealed
 *   (SEALED_NO_FILES), not closed, and does not block the caller. The SHA-256 of the body must be
 *   the address (INVALID_REQUEST, nothing stored). 201 `{space, sha256, bytes, pending_until}`:
 *   the bytes wait a day for their uploader to attach them; sending them again restarts the wait.
 * - `GET /v1/spaces/{name}/files/{sha256}`: the bytes of a file some post of the SPACE that is
 *   not hidden attaches, to whoever may read the SPACE's posts. Every other case (a SPACE the
 *   caller cannot read, a hash not held, bytes not yet attached, bytes whose every post is
 *   hidden) is FILE_NOT_FOUND alike, so none is told apart from another. Served as a download
 *   nothing runs: text/plain when the bytes are UTF-8 without NUL, else
 *   application/octet-stream, named by the hash, under a sandboxing CSP.
 */
import { createHash } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { SvcError } from '../../shared/errors.js';
import type { RelayContext } from '../context.js';
import { identityOf } from '../http/auth.js';
import { isSha256Hex } from '../files/attachments.js';
import { mayAttach } from '../files/attach.js';
import { ATTACHMENT_LIMITS } from '../files/limits.js';
import { canReadPosts } from '../policy.js';
import { spaceNamed } from '../posts/access.js';

const FileParams = z.object({ name: z.string(), sha256: z.string() });
const NoQuery = z.strictObject({});
const HOUR_MS = 60 * 60 * 1000;

/** The address in the path: the SHA-256 of the file, 64 lowercase hex characters. */
function addressOf(value: string): string {
  if (!isSha256Hex(value)) throw new SvcError('INVALID_REQUEST', 'sha256: the SHA-256 of the file, 64 lowercase hex characters');
  return value;
}

/** Text a reader's tools can show: valid UTF-8 with no NUL byte, decided once at upload. */
function isText(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export const filesRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  // In this plugin only: a file is sent as it is, whatever media type the client names.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ATTACHMENT_LIMITS.fileBytes }, (_req, body, done) => {
    done(null, body);
  });

  app.put(
    '/v1/spaces/:name/files/:sha256',
    {
      schema: { params: FileParams, querystring: NoQuery },
      config: {
        auth: 'req',
        limit: 'write',
        operation: 'files.put',
        // Bytes, through this plugin's own body parser: never called in process.
        inProcess: false,
        describe: 'Upload a file to a SPACE at the address of its SHA-256 (raw bytes, up to 256 KiB; a writer or above); a post attaches it within a day.',
        refusals: ['SPACE_NOT_FOUND', 'SPACE_CLOSED', 'WRITE_BLOCKED', 'WRITE_DENIED', 'SEALED_NO_FILES', 'TOO_LARGE'],
      },
    },
    async (req, reply) => {
      const me = identityOf(req);
      const { name, sha256 } = req.params as z.infer<typeof FileParams>;
      const address = addressOf(sha256);
      const { space, role } = await spaceNamed(ctx, name, me.peerId);
      // Who may upload, before the bytes are looked at.
      if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed`);
      if (await ctx.store.blocks.isBlocked(space.id, me.peerId)) throw new SvcError('WRITE_BLOCKED', 'you are blocked from writing here');
      if (!mayAttach(role)) throw new SvcError('WRITE_DENIED', 'a writer or above uploads files');
      if (space.visibility === 'sealed') throw new SvcError('SEALED_NO_FILES', 'a sealed SPACE takes no files');
      const body = req.body;
      if (!(body instanceof Uint8Array) || body.byteLength === 0) {
        throw new SvcError('INVALID_REQUEST', `body: the file's bytes, 1 to ${ATTACHMENT_LIMITS.fileBytes}`);
      }
      const actual = createHash('sha256').update(body).digest('hex');
      if (actual !== address) throw new SvcError('INVALID_REQUEST', `sha256: the body's SHA-256 is ${actual}, not the address`);
      const now = ctx.clock();
      const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
      // An upload touches its SPACE's files alone: on PostgreSQL it waits only for writers to
      // that SPACE (the SPACE's total is counted when a post attaches files, under the append's lock).
      await ctx.store.db.transaction(async () => {
        await ctx.store.files.put(space.id, address, bytes, isText(bytes), me.peerId, now);
      }).under({ spaces: [space.id] });
      return reply.code(201).send({
        space: space.name,
        sha256: address,
        bytes: bytes.byteLength,
        pending_until: new Date(now + ATTACHMENT_LIMITS.pendingHours * HOUR_MS).toISOString(),
      });
    },
  );

  app.get(
    '/v1/spaces/:name/files/:sha256',
    {
      schema: { params: FileParams, querystring: NoQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'files.get',
        // Bytes: never called in process (its answer is no JSON value or text).
        inProcess: false,
        describe: 'Fetch a file a post of the SPACE attaches, by its SHA-256: the bytes as uploaded, served as a download.',
        refusals: ['FILE_NOT_FOUND'],
      },
    },
    async (req, reply) => {
      const { name, sha256 } = req.params as z.infer<typeof FileParams>;
      const address = addressOf(sha256);
      const caller = req.identity?.peerId ?? null;
      const space = await ctx.store.spaces.byName(name);
      const role = space === undefined || caller === null ? null : await ctx.store.members.roleOf(space, caller);
      const file = space !== undefined && canReadPosts(space, role) ? await ctx.store.files.attachedFile(space.id, address) : undefined;
      if (file === undefined) throw new SvcError('FILE_NOT_FOUND', 'no file you can read has this hash in this SPACE');
      return reply
        .type(file.isText ? 'text/plain; charset=utf-8' : 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${address}"`)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('x-content-type-options', 'nosniff')
        .header('cross-origin-resource-policy', 'same-origin')
        .send(Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength));
    },
  );
};
