/**
 * A SPACE's posts as a transparency log any C2SP tool can follow (relay/tlog/heads.ts,
 * shared/tlog-checkpoint.ts, shared/signed-note.ts). Read rights are the posts' (a private
 * SPACE's log is for its members: READ_DENIED otherwise).
 *
 * - tlog.checkpoint `GET /v1/spaces/{name}/checkpoint.note`: the newest head as a signed note
 *   (text/plain; charset=utf-8), the relay's signature first, then each accepted witness's
 *   cosignature of that head.
 * - tlog.checkpoint_at `GET /v1/spaces/{name}/checkpoint.note/{size}`: the head at one size the
 *   relay published (0, or a posts checkpoint's `last`); another size is INVALID_REQUEST.
 * - tlog.consistency `GET /v1/spaces/{name}/consistency?from=&to=`: the RFC 9162 §2.1.4.1
 *   proof that the tree of size `to` extends the one of size `from` (0 ≤ from ≤ to ≤ the newest
 *   published size), `{from, to, proof: [hex]}`; an empty proof when from is 0 or equal to to.
 * - tlog.inclusion `GET /v1/spaces/{name}/inclusion?seq=&size=`: the RFC 9162 §2.1.3.1 path of
 *   post `seq` (leaf index seq − 1) in the tree of a published `size` ≥ seq, `{seq, size, proof:
 *   [hex]}`: with it a reader ties a post to a head the witnesses cosigned.
 * - tlog.cosign `POST /v1/spaces/{name}/cosignatures`: a witness named in `--accept-witnesses`
 *   posts `{size, cosignature}`, a tlog-cosignature line over the head at `size`; it is checked
 *   and kept (a newer one by the same witness replaces it), then served on that head's note.
 *   Nothing is kept from a line that does not verify.
 *
 * Refusals beyond the common ones: SPACE_NOT_FOUND, READ_DENIED, INVALID_REQUEST (a size not
 * published, a range past the newest head, a cosignature not from an accepted witness or that
 * does not verify), CHECKPOINT_INVALID (the relay cannot rebuild its own tree).
 */
import type { FastifyPluginAsync } from 'fastify';
import * as z from 'zod';
import { toHex } from '../../shared/encoding.js';
import { SvcError } from '../../shared/errors.js';
import { NOTE_KEY_COSIGNATURE_V1, noteKeyId, readNote, readSignatureLine, verifyCosignature } from '../../shared/signed-note.js';
import { treeConsistencyProof, treeInclusionProof } from '../../shared/tlog-checkpoint.js';
import type { RelayContext } from '../context.js';
import { spaceForPosts } from '../posts/access.js';
import { oneValue } from '../posts/read-params.js';
import { createWitnessStore } from '../store/witness.js';
import { createHeads } from '../tlog/heads.js';
import { createSpaceTrees } from '../tlog/tree.js';

const NameParams = z.object({ name: z.string() });
const SizeParams = z.object({ name: z.string(), size: z.string() });
const ConsistencyQuery = z.strictObject({ from: oneValue, to: oneValue });
const InclusionQuery = z.strictObject({ seq: oneValue, size: oneValue });
const CosignBody = z.strictObject({ size: z.string().max(20), cosignature: z.string().max(1024) });

/** A cosignature may be dated at most this far ahead of the relay's clock. */
const COSIGNATURE_FUTURE_SECONDS = 600;

const NOTE_TYPE = 'text/plain; charset=utf-8';

/** A tree size as a decimal string (no sign, no leading zero). */
function sizeOf(text: string | undefined, field: string): number {
  if (text === undefined) throw new SvcError('INVALID_REQUEST', `${field}: required`);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text) || !Number.isSafeInteger(Number(text))) throw new SvcError('INVALID_REQUEST', `${field}: a tree size in decimal`);
  return Number(text);
}

const TLOG_REFUSALS = ['SPACE_NOT_FOUND', 'READ_DENIED', 'CHECKPOINT_INVALID'] as const;

export const tlogRoutes: FastifyPluginAsync<RelayContext> = async (app, ctx) => {
  const heads = createHeads(ctx, createSpaceTrees(ctx.store.checkpoints), createWitnessStore(ctx.store.db));

  app.get(
    '/v1/spaces/:name/checkpoint.note',
    {
      schema: { params: NameParams },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'tlog.checkpoint',
        describe: "The SPACE's newest checkpoint as a C2SP tlog-checkpoint signed note, with the witnesses' cosignatures.",
        refusals: [...TLOG_REFUSALS],
      },
    },
    async (req, reply) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const { space } = await spaceForPosts(ctx, name, req.identity?.peerId ?? null);
      const size = await heads.newestSize(space);
      const note = await heads.note(space, size);
      return reply.type(NOTE_TYPE).header('cache-control', 'no-cache').send(note);
    },
  );

  app.get(
    '/v1/spaces/:name/checkpoint.note/:size',
    {
      schema: { params: SizeParams },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'tlog.checkpoint_at',
        describe: 'The signed note of the SPACE at one tree size the relay published (0 or a posts checkpoint\'s last).',
        refusals: [...TLOG_REFUSALS],
      },
    },
    async (req, reply) => {
      const { name, size } = req.params as z.infer<typeof SizeParams>;
      const n = sizeOf(size, 'size');
      const { space } = await spaceForPosts(ctx, name, req.identity?.peerId ?? null);
      return reply.type(NOTE_TYPE).send(await heads.note(space, n));
    },
  );

  app.get(
    '/v1/spaces/:name/consistency',
    {
      schema: { params: NameParams, querystring: ConsistencyQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'tlog.consistency',
        describe: "RFC 9162 consistency proof between two sizes of the SPACE's tree (hex hashes).",
        refusals: [...TLOG_REFUSALS],
      },
    },
    async (req) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const q = req.query as z.infer<typeof ConsistencyQuery>;
      const from = sizeOf(q.from, 'from');
      const to = sizeOf(q.to, 'to');
      if (from > to) throw new SvcError('INVALID_REQUEST', 'from: above to');
      const { space } = await spaceForPosts(ctx, name, req.identity?.peerId ?? null);
      const newest = await heads.newestSize(space);
      if (to > newest) throw new SvcError('INVALID_REQUEST', `to: past the newest checkpoint of ${name} (size ${newest})`);
      const proof = from === 0 || from === to ? [] : treeConsistencyProof(from, to, await heads.trees.rangeRoot(space.id, space.spaceId, to, [from - 1, from]));
      return { from: String(from), to: String(to), proof: proof.map(toHex) };
    },
  );

  app.get(
    '/v1/spaces/:name/inclusion',
    {
      schema: { params: NameParams, querystring: InclusionQuery },
      config: {
        auth: 'opt',
        limit: 'read',
        operation: 'tlog.inclusion',
        describe: "RFC 9162 inclusion proof of one post in the SPACE's tree at a published size (hex hashes).",
        refusals: [...TLOG_REFUSALS],
      },
    },
    async (req) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const q = req.query as z.infer<typeof InclusionQuery>;
      const seq = sizeOf(q.seq, 'seq');
      const size = sizeOf(q.size, 'size');
      if (seq < 1) throw new SvcError('INVALID_REQUEST', 'seq: at least 1');
      if (seq > size) throw new SvcError('INVALID_REQUEST', 'seq: above size');
      const { space } = await spaceForPosts(ctx, name, req.identity?.peerId ?? null);
      if (!await heads.published(space, size)) throw new SvcError('INVALID_REQUEST', `size: no posts checkpoint of ${name} ends at ${size}`);
      const proof = treeInclusionProof(seq - 1, size, await heads.trees.rangeRoot(space.id, space.spaceId, size, [seq - 1]));
      return { seq: String(seq), size: String(size), proof: proof.map(toHex) };
    },
  );

  app.post(
    '/v1/spaces/:name/cosignatures',
    {
      schema: { params: NameParams, body: CosignBody },
      config: {
        auth: 'opt',
        limit: 'write',
        operation: 'tlog.cosign',
        describe: "A witness's tlog-cosignature of one of the SPACE's checkpoints (witnesses this relay accepts only).",
        refusals: [...TLOG_REFUSALS],
      },
    },
    async (req) => {
      const { name } = req.params as z.infer<typeof NameParams>;
      const body = req.body as z.infer<typeof CosignBody>;
      const size = sizeOf(body.size, 'size');
      // The line is attacker-controlled: read strictly, matched to an accepted witness, verified.
      let line;
      try {
        line = readSignatureLine(body.cosignature, 'cosignature');
      } catch (e) {
        throw new SvcError('INVALID_REQUEST', (e as SvcError).detail ?? 'cosignature: not a note signature line');
      }
      const witness = heads.accepted.find((w) => w.name === line.name);
      if (witness === undefined) throw new SvcError('INVALID_REQUEST', `cosignature: ${line.name.slice(0, 80)} is not a witness this relay accepts`);
      const keyId = noteKeyId(witness.name, NOTE_KEY_COSIGNATURE_V1, witness.publicKey);
      if (toHex(line.keyId) !== toHex(keyId)) throw new SvcError('INVALID_REQUEST', `cosignature: not the cosignature key of ${witness.name}`);
      const { space } = await spaceForPosts(ctx, name, req.identity?.peerId ?? null);
      if (!await heads.published(space, size)) throw new SvcError('INVALID_REQUEST', `size: no posts checkpoint of ${name} ends at ${size}`);
      const text = await heads.body(space, size);
      let time: number | undefined;
      try {
        time = verifyCosignature(readNote(`${text}\n${body.cosignature}\n`), witness);
      } catch (e) {
        throw new SvcError('INVALID_REQUEST', (e as SvcError).detail ?? 'cosignature: does not verify');
      }
      if (time === undefined) throw new SvcError('INVALID_REQUEST', 'cosignature: does not verify');
      if (time > Math.floor(ctx.clock() / 1000) + COSIGNATURE_FUTURE_SECONDS) throw new SvcError('INVALID_REQUEST', 'cosignature: dated in the future');
      await heads.witness.putCosignature(space.id, size, { keyName: witness.name, keyId, line: body.cosignature, cosignedAt: time }, ctx.clock());
      return { size: String(size), witness: witness.name, cosigned_at: new Date(time * 1000).toISOString() };
    },
  );
};
