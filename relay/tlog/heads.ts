/**
 * A SPACE's tree heads as signed notes (shared/tlog-checkpoint.ts, shared/signed-note.ts).
 *
 * The relay publishes a head at each size a posts checkpoint ends at (its `last`), and at size
 * 0 before the first: so a note's size is always one the relay has signed a checkpoint to, and a
 * witness sees the tree grow in the same steps as the checkpoints. The note is
 *
 *   <host>/spaces/<name>\n<size>\n<base64 MTH of posts 1..size>\n\n— <host> <base64(key id ‖ sig)>\n
 *   [— <witness> <base64(key id ‖ time ‖ sig)>\n ...]
 *
 * signed with the relay's online service key (the one that signs checkpoints and receipts) under
 * the key name <host>, the host of the public URL. Ed25519 is deterministic, so the note of one
 * size reads the same at every request and nothing of it is stored but the cosignatures.
 */
import { SvcError } from '../../shared/errors.js';
import { formatNote, noteKeyId, NOTE_KEY_COSIGNATURE_V1, signNote, type Cosigner } from '../../shared/signed-note.js';
import { checkpointBody, spaceOrigin, treeRoot } from '../../shared/tlog-checkpoint.js';
import type { RelayContext } from '../context.js';
import type { SpaceRow } from '../store/spaces.js';
import type { WitnessStore } from '../store/witness.js';
import type { SpaceTrees } from './tree.js';

export interface Heads {
  /** The newest published size of a SPACE's tree: the newest posts checkpoint's `last`, or 0. */
  newestSize(space: SpaceRow): Promise<number>;
  /** Whether a head is published at `size` (0, or a posts checkpoint's `last`). */
  published(space: SpaceRow, size: number): Promise<boolean>;
  /** The checkpoint body (the note's text) at a published size. */
  body(space: SpaceRow, size: number): Promise<string>;
  /** The signed note at a published size, with the accepted witnesses' cosignatures after the relay's own. */
  note(space: SpaceRow, size: number): Promise<string>;
  /** The witnesses this relay takes cosignatures from. */
  readonly accepted: readonly Cosigner[];
  readonly witness: WitnessStore;
  readonly trees: SpaceTrees;
}

export function createHeads(ctx: RelayContext, trees: SpaceTrees, witness: WitnessStore): Heads {
  const accepted = ctx.config.acceptedWitnesses ?? [];
  const acceptedIds = new Set(accepted.map((c) => `${c.name} ${Buffer.from(noteKeyId(c.name, NOTE_KEY_COSIGNATURE_V1, c.publicKey)).toString('hex')}`));

  async function published(space: SpaceRow, size: number): Promise<boolean> {
    if (size === 0) return true;
    const c = await ctx.store.checkpoints.covering(space.id, 'posts', size);
    return c !== undefined && Number(c.fields.last) === size;
  }

  async function body(space: SpaceRow, size: number): Promise<string> {
    if (!await published(space, size)) throw new SvcError('INVALID_REQUEST', `size: no posts checkpoint of ${space.name} ends at ${size}`);
    const root = treeRoot(size, await trees.rangeRoot(space.id, space.spaceId, size));
    return checkpointBody({ origin: spaceOrigin(ctx.audience(), space.name), size, root });
  }

  return {
    accepted,
    witness,
    trees,
    async newestSize(space) {
      const latest = await ctx.store.checkpoints.latest(space.id, 'posts');
      return latest === undefined ? 0 : Number(latest.fields.last);
    },
    published,
    body,
    async note(space, size) {
      const text = await body(space, size);
      const own = signNote(text, ctx.audience(), ctx.serviceKeys.signer);
      // Only witnesses still accepted are served: dropping one from the setting drops its lines.
      const cosigned = (await witness
        .cosignatures(space.id, size))
        .filter((c) => acceptedIds.has(`${c.keyName} ${Buffer.from(c.keyId).toString('hex')}`))
        .map((c) => c.line);
      return formatNote(text, [own, ...cosigned]);
    },
  };
}
