/**
 * Which form of a recovery notice a caller is served (spec/2-endpoints.md recovery.list;
 * shared/recovery.ts "The withheld form"), and the signing of withheld forms.
 *
 * A caller reads a chain a notice names as it reads that SPACE's checkpoints of the stream
 * (relay/policy.ts, spec/1-concepts.md "Roles matrix"): the posts stream as the posts (members
 * and the owner; anyone in a public SPACE), the events stream as the governance log (members
 * and the owner only). The profile of a SPACE is anyone's, its chains are not: a notice that
 * names a chain the caller may not read is served as its withheld form, which keeps the
 * SPACE, its continuation and the epochs and withholds that chain's positions and links, and
 * is signed like the whole notice, so every notice served verifies.
 *
 * A closed SPACE takes no settings or member changes (SPACE_CLOSED), so who is an outsider and
 * what an outsider may read stays as it was at the restore: the restore signs the whole notice
 * and the outsiders' withheld form together (relay/backup/restore.ts). A notice stored without
 * it (by a restore of an earlier version) gets it signed when a relay starts on the database
 * (`signMissingWithheld`); until then an outsider is not served that notice at all.
 */
import type { Stream } from '../shared/checkpoint.js';
import { isWithheld, signWithheldRecovery, type NoticeChain, type SignedRecovery } from '../shared/recovery.js';
import type { ServedSigner } from '../shared/service-keys.js';
import { canReadEvents, canReadPosts, type PolicySpace, type SpaceRole } from './policy.js';
import type { ServiceKeys } from './service-keys.js';
import type { StoredRecovery } from './store/recovery.js';
import type { Store } from './store/index.js';

/** The SPACE a notice is about, as far as reading goes; undefined when its row is gone (read as private). */
type NoticeSpace = Pick<PolicySpace, 'visibility'> | undefined;

/** Whether `role` (null: no role, or anonymous) may read the `stream` chain of `space`. */
export function mayReadChain(space: NoticeSpace, role: SpaceRole, stream: Stream): boolean {
  const visibility = space?.visibility ?? 'private';
  return stream === 'posts' ? canReadPosts({ visibility }, role) : canReadEvents(role);
}

/** The withheld form of a whole notice for outsiders of `space`, or undefined when they may read every chain it names. */
export function signOutsidersForm(keys: Pick<ServiceKeys, 'signer'>, notice: SignedRecovery, space: NoticeSpace, now: number): SignedRecovery | undefined {
  return signWithheldRecovery(keys.signer, notice, (stream) => !mayReadChain(space, null, stream), new Date(now).toISOString());
}

/**
 * The form of a stored notice to serve to a caller with `role` in its SPACE: the whole notice
 * when the caller may read every chain it names, else the withheld form when that withholds
 * every chain the caller may not read, else none (left out of the caller's list).
 */
export function servedForm(stored: StoredRecovery, space: NoticeSpace, role: SpaceRole): (SignedRecovery & { signer: ServedSigner }) | undefined {
  const readable = (c: NoticeChain) => mayReadChain(space, role, c.stream);
  if ((stored.fields.chains as readonly NoticeChain[]).every(readable)) return stored;
  const w = stored.withheld;
  if (w !== undefined && (w.fields.chains as readonly NoticeChain[]).every((c) => isWithheld(c) || readable(c))) return w;
  return undefined;
}

/** Notices read per page while looking for ones stored without their withheld form. */
const PAGE = 200;

/** Sign and store the outsiders' withheld form of every notice that needs one and has none; answers how many were stored. */
export async function signMissingWithheld(store: Pick<Store, 'recovery' | 'spaces'>, keys: Pick<ServiceKeys, 'signer' | 'rendering'>, now: number): Promise<number> {
  let stored = 0;
  for (let after = 0; ; ) {
    const page = await store.recovery.list({ after, limit: PAGE });
    for (const n of page) {
      if (n.withheld !== undefined) continue;
      const form = signOutsidersForm(keys, n, await store.spaces.byRowId(n.spaceRowId), now);
      if (form !== undefined && (await store.recovery.insertWithheld(n.rowId, form, keys.rendering, now))) stored++;
    }
    if (page.length < PAGE) return stored;
    after = page[page.length - 1]!.rowId;
  }
}
