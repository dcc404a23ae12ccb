/**
 * Hand-over of a role or of a whole SPACE (spec/1-concepts.md "Hand-over"; spec/2-endpoints.md
 * hand_over.*, join.link with a `svc_hand_` link).
 *
 * One offer at a time per role holder in a SPACE: a new one revokes the last. An offer goes to a
 * KEY (`to`, told by a mailbox `hand_over` row) or is a one-use link whose code is stored only
 * as SHA-256 (protocol/labels.md "hand-over code").
 *
 * Every event of an accept names the successor as actor: it ran the command, under the giver's
 * offer. Accepting: the successor takes over the role, the tags, the links the giver made and the KEYS
 * it brought in, and is managed by whoever managed the giver; the giver leaves
 * (member.handed_over). The owner hands over the SPACE itself: the successor becomes owner (its
 * member row, if any, goes: the owner is never a member row), the old owner leaves entirely
 * (space.handed_over).
 *
 * Decisions the spec leaves open, taken here:
 * - An offer lasts seven days unless `expires_in_seconds` says otherwise (null: until used).
 * - An offer is only good while the giver still holds the role it offered; otherwise it reads as
 *   revoked (INVITE_REVOKED).
 * - A successor already ranked above the offered role cannot take it (CONTROL_DENIED): that
 *   would demote it; an equal rank merges (it takes the giver's tags, links and KEYS).
 * - The giver may end its own offer with decline (state revoked); the offered KEY's decline
 *   leaves state declined. A second decline changes nothing.
 * - Accepting is `accepted`, and a used offer answers INVITE_EXHAUSTED like any spent link.
 * - Hand-over links count toward the maker's 100,000 links a day (INVITE_LIMIT).
 * - Sealed SPACE (protocol/sealed.md §5): the SPACE goes only to a KEY with an encryption key
 *   (ENCRYPTION_KEY_MISSING) that the keeper list in force names as a keeper
 *   (SEALED_SUCCESSOR_NOT_KEEPER) and that holds a lock for the generation in use
 *   (SEALED_NEEDS_LOCK); the `space.handed_over` payload then names `owner_was`. A role hand-over
 *   there admits like any admission (ENCRYPTION_KEY_MISSING for a KEY without one).
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { RATE_LIMITS, SPACES_PER_KEY } from '../../shared/limits.js';
import { ROLE_RANK, type RankedRole, type Role } from '../../shared/vocabulary.js';
import { rankOf } from '../policy.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';
import type { InviteStore } from './invites.js';
import type { MailboxStore } from './mailbox.js';
import type { MemberStore } from './members.js';
import { prepareWithdrawOnGrant } from './requests.js';
import type { SealedStore } from './sealed.js';
import type { SpaceRow, SpaceStore } from './spaces.js';

/** How long an offer lasts when the giver does not say. */
export const HAND_OVER_DEFAULT_SECONDS = 7 * 24 * 60 * 60;

const DAY_MS = RATE_LIMITS.linksMade.windowSeconds * 1000;

export type OfferState = 'waiting' | 'accepted' | 'declined' | 'revoked' | 'expired';

export interface HandOverRow {
  id: string;
  spaceRowId: number;
  giver: string;
  role: RankedRole;
  /** The KEY it was offered to, or null for a link. */
  to: string | null;
  isLink: boolean;
  label: string | null;
  /** As of the `now` it was read at. */
  state: OfferState;
  createdAt: number;
  expiresAt: number | null;
  endedAt: number | null;
  taker: string | null;
}

export interface CreateOfferInput {
  space: SpaceRow;
  id: string;
  giver: string;
  role: RankedRole;
  to: string | null;
  codeHash: Uint8Array | null;
  label: string | null;
  expiresAt: number | null;
  now: number;
  /** False when the delivery limits leave `to` out of notices: the offer stands, unannounced. */
  notify?: boolean;
}

export interface Accepted {
  role: RankedRole;
  tags: string[];
  giver: string;
  revision: number;
}

export interface HandOverStore {
  byId(id: string, now: number): Promise<HandOverRow | undefined>;
  byCodeHash(hash: Uint8Array, now: number): Promise<HandOverRow | undefined>;
  /** Make an offer, revoking the giver's last one in the SPACE; tells `to` (mailbox `hand_over`). */
  create(i: CreateOfferInput): Promise<{ offer: HandOverRow; replaced: string | null }>;
  /**
   * Take the offer as `taker` (see the file comment for the refusals). A link offer is taken
   * only with its code (`viaCode`): its id alone admits nobody.
   */
  accept(space: SpaceRow, id: string, taker: string, now: number, viaCode: boolean): Promise<Accepted>;
  /** End an offer: by the offered KEY (declined) or by the giver (revoked). INVITE_NOT_FOUND otherwise. */
  decline(id: string, peer: string, now: number): Promise<HandOverRow>;
  /** Whether two KEYS are both inside (owner or member) some SPACE (HAND_OVER_UNREACHABLE). */
  shareSpace(a: string, b: string): Promise<boolean>;
}

interface Row {
  id: string;
  space_row_id: number;
  giver: string;
  role: RankedRole;
  to_peer: string | null;
  code_hash: Uint8Array | null;
  label: string | null;
  state: string;
  created_at: number;
  expires_at: number | null;
  ended_at: number | null;
  taker: string | null;
}

function toOffer(r: Row, now: number): HandOverRow {
  const lapsed = r.state === 'waiting' && r.expires_at !== null && r.expires_at <= now;
  return {
    id: r.id,
    spaceRowId: r.space_row_id,
    giver: r.giver,
    role: r.role,
    to: r.to_peer,
    isLink: r.code_hash !== null,
    label: r.label,
    state: lapsed ? 'expired' : (r.state as OfferState),
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    endedAt: r.ended_at,
    taker: r.taker,
  };
}

export interface HandOverDeps {
  spaces: SpaceStore;
  members: MemberStore;
  events: EventStore;
  invites: InviteStore;
  mailbox: MailboxStore;
  /** Sealed SPACES: the successor of the SPACE must be a keeper holding a lock (sealed.md §5). */
  sealed: SealedStore;
}

export function createHandOverStore(db: Db, deps: HandOverDeps): HandOverStore {
  const sql = dialectOf(db);
  const selectById = db.prepare<[string], Row>('SELECT * FROM hand_overs WHERE id = ?');
  const selectByHash = db.prepare<[Uint8Array], Row>('SELECT * FROM hand_overs WHERE code_hash = ?');
  const revokeWaiting = db.prepare<[number, number, string], { id: string }>(
    `UPDATE hand_overs SET state = 'revoked', ended_at = ?
      WHERE space_row_id = ? AND giver = ? AND state = 'waiting' RETURNING id`,
  );
  const insert = db.prepare(
    `INSERT INTO hand_overs (id, space_row_id, giver, role, to_peer, code_hash, label, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?)`,
  );
  const end = db.prepare("UPDATE hand_overs SET state = ?, ended_at = ?, taker = ? WHERE id = ? AND state = 'waiting'");
  const shareStmt = db.prepare<{ a: string; b: string }, { shared: number }>(
    `WITH a(s) AS (SELECT id FROM spaces WHERE owner = @a UNION SELECT space_row_id FROM members WHERE peer_id = @a),
          b(s) AS (SELECT id FROM spaces WHERE owner = @b UNION SELECT space_row_id FROM members WHERE peer_id = @b)
     SELECT ${sql.bool('EXISTS (SELECT 1 FROM a JOIN b USING (s))')} AS shared`,
  );
  // The successor is managed by whoever managed the giver (a write to R2's members table that
  // the members store has no verb for; it touches only this column).
  const setManager = db.prepare('UPDATE members SET brought_in_by = ? WHERE space_row_id = ? AND peer_id = ?');
  const withdrawOnGrant = prepareWithdrawOnGrant(db);

  const createTx = db.transaction(async (i: CreateOfferInput) => {
    if (i.codeHash !== null && await deps.invites.madeSince(i.giver, i.now - DAY_MS) >= RATE_LIMITS.linksMade.limit) {
      throw new SvcError('INVITE_LIMIT', `${RATE_LIMITS.linksMade.limit} links made a day`);
    }
    const replaced = (await revokeWaiting.all(i.now, i.space.id, i.giver)).map((r) => r.id);
    await insert.run(i.id, i.space.id, i.giver, i.role, i.to, i.codeHash, i.label, i.now, i.expiresAt);
    if (i.to !== null && i.notify !== false) await deps.mailbox.deliver(i.to, 'hand_over', { offerId: i.id }, i.now);
    return { offer: toOffer((await selectById.get(i.id))!, i.now), replaced: replaced[0] ?? null };
  });

  const acceptTx = db.transaction(async (space: SpaceRow, id: string, taker: string, now: number, viaCode: boolean): Promise<Accepted> => {
    const r = await selectById.get(id);
    if (!r || r.space_row_id !== space.id) throw new SvcError('INVITE_NOT_FOUND', 'id: no offer has this id');
    const offer = toOffer(r, now);
    if (taker === offer.giver) throw new SvcError('CONTROL_DENIED', 'nobody accepts their own hand-over');
    if (offer.to !== null && offer.to !== taker) throw new SvcError('INVITE_NOT_FOUND', 'id: no offer to you has this id');
    if (offer.isLink && !viaCode) throw new SvcError('INVITE_NOT_FOUND', 'id: a hand-over link is taken with its link, not its id');
    if (offer.state === 'revoked' || offer.state === 'declined') throw new SvcError('INVITE_REVOKED', `offer: ${offer.state}`);
    if (offer.state === 'accepted') throw new SvcError('INVITE_EXHAUSTED', 'offer: already used');
    if (offer.state === 'expired') throw new SvcError('INVITE_EXPIRED', `offer: expired at ${new Date(offer.expiresAt!).toISOString()}`);
    const giverRole = await deps.members.roleOf(space, offer.giver);
    if (giverRole !== offer.role) throw new SvcError('INVITE_REVOKED', 'offer: the giver no longer holds the role it offered');
    const takerBefore = await deps.members.get(space.id, taker);
    if (takerBefore && rankOf(takerBefore.role) > ROLE_RANK[offer.role]) {
      throw new SvcError('CONTROL_DENIED', `you already hold ${takerBefore.role}, above the ${offer.role} offered`);
    }
    if (offer.role === 'owner') await deps.sealed.checkOwnerHandOver(space, taker);
    await end.run('accepted', now, taker, id);
    const result = offer.role === 'owner'
      ? await takeSpace(space, offer.giver, taker, takerBefore !== undefined, now)
      : await takeRole(space, offer.giver, offer.role, taker, now);
    await withdrawOnGrant(space.id, taker, now);
    return result;
  });

  async function takeRole(space: SpaceRow, giver: string, role: Role, taker: string, now: number): Promise<Accepted> {
    const g = (await deps.members.get(space.id, giver))!;
    const before = await deps.members.get(space.id, taker);
    if (before) {
      await deps.members.change(space, taker, { role, tags: g.tags }, taker, now, false);
    } else {
      await deps.members.admit(space, { peer: taker, role, tags: g.tags, broughtInBy: g.broughtInBy, linkId: g.linkId }, taker, now);
    }
    await deps.invites.moveMaker(space.id, giver, taker);
    await deps.members.moveBroughtIn(space.id, giver, taker);
    await setManager.run(g.broughtInBy === giver ? space.owner : g.broughtInBy, space.id, taker);
    const extra: JsonObject = { successor: taker };
    const { revision } = await deps.members.remove(space, giver, taker, 'member.handed_over', now, extra);
    return { role, tags: [...g.tags], giver, revision };
  }

  async function takeSpace(space: SpaceRow, giver: string, taker: string, wasMember: boolean, now: number): Promise<Accepted> {
    if (wasMember) {
      // The owner is never a member row: the successor's membership becomes the SPACE itself.
      await deps.members.remove(space, taker, taker, 'member.handed_over', now, { successor: taker, new_role: 'owner' });
    } else if ((await deps.spaces.countFor(taker)).total >= SPACES_PER_KEY) {
      throw new SvcError('SPACE_LIMIT', `you own or belong to ${SPACES_PER_KEY} SPACES`);
    }
    await deps.spaces.setOwner(space.id, taker, now);
    await deps.invites.moveMaker(space.id, giver, taker);
    await deps.members.moveBroughtIn(space.id, giver, taker);
    const payload: JsonObject = { from: giver, to: taker, name: space.name };
    if (space.visibility === 'sealed') {
      payload.owner_was = giver;
      await deps.sealed.ownerHandedOver(space, giver, taker, now);
    }
    const { revision } = await deps.events.append(space, taker, 'space.handed_over', payload, now);
    return { role: 'owner', tags: [], giver, revision };
  }

  const declineTx = db.transaction(async (id: string, peer: string, now: number): Promise<HandOverRow> => {
    const r = await selectById.get(id);
    if (!r || (r.to_peer !== peer && r.giver !== peer)) throw new SvcError('INVITE_NOT_FOUND', 'id: no offer to or from you has this id');
    await end.run(peer === r.giver ? 'revoked' : 'declined', now, null, id);
    return toOffer((await selectById.get(id))!, now);
  });

  return {
    async byId(id, now) {
      const r = await selectById.get(id);
      return r ? toOffer(r, now) : undefined;
    },
    async byCodeHash(hash, now) {
      const r = await selectByHash.get(hash);
      return r ? toOffer(r, now) : undefined;
    },
    create: async (i) => await createTx.under({ spaces: [i.space.id], keys: [i.giver, ...(i.to === null ? [] : [i.to])] }, i),
    async accept(space, id, taker, now, viaCode) {
      // The giver, read before the locks (an offer's giver never changes), is locked with the
      // taker: the hand-over changes both KEYS' roles. The offer is read again under them.
      const giver = (await selectById.get(id))?.giver;
      const keys = [taker, space.owner, ...(giver === undefined ? [] : [giver])];
      return await acceptTx.under({ spaces: [space.id], keys }, space, id, taker, now, viaCode);
    },
    decline: async (id, peer, now) => await declineTx.immediate(id, peer, now),
    shareSpace: async (a, b) => (await shareStmt.get({ a, b }))!.shared === 1,
  };
}
