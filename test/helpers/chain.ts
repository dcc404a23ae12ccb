/**
 * The stored post chain of a SPACE, checked with the shared verifier (shared/chain.ts): the
 * positions are exactly 1..count and every link, admission and object id recomputes from the
 * rows the relay wrote.
 */
import { expect } from 'vitest';
import { verifyPostChain } from '../../shared/chain.js';
import type { SpaceRow } from '../../relay/store/spaces.js';
import type { RunningRelay } from './relay.js';

/** Positions 1..count, each link over the one before, from the SPACE's genesis. */
export async function expectChainVerifies(relay: Pick<RunningRelay, 'store'>, space: SpaceRow, count: number): Promise<void> {
  const rows = await relay.store.posts.list(space.id, 0, count + 10);
  expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  const verdict = verifyPostChain(
    space.spaceId,
    rows.map((r) => ({
      seq: r.seq,
      objectId: r.objectId,
      admission: r.admission,
      chainHash: r.chainHash,
      admittedRevision: r.admittedRevision,
      admittedControlHash: r.admittedControlHash,
      canonical: r.canonical,
    })),
  );
  expect(verdict).toMatchObject({ ok: true, count });
}
