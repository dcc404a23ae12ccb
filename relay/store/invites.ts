/**
 * Invite links (spec/1-concepts.md "Invite link" and its states; spec/2-endpoints.md invites.*,
 * join, join.link).
 *
 * States live, expired, exhausted, revoked. Only SHA-256 of the code is stored
 * (protocol/labels.md "invite code"); the code and link are shown once, by the route that made
 * them. Expired and exhausted are computed from `expires_at` and `uses`.
 *
 * Decisions the spec leaves open, taken here:
 * - Re-using a link while still a member through it burns no use and answers the membership
 *   unchanged (spec "Re-using a link already used is harmless and burns no use"); a KEY that
 *   used it, then left or was removed, spends a use like anyone else.
 * - A KEY that is already a member (or the owner) and uses a link keeps its role: nothing is
 *   written and no use is burned. Changing a role is members.set.
 * - A link is only as strong as its maker: once the maker no longer ranks above the link's role
 *   (demoted, removed, left) the link reads as revoked. Hand-over moves links to the successor.
 *
 * Limits: 100,000 live links per maker per SPACE; 100,000 made a day per maker (invite links and
 * hand-over links together), both INVITE_LIMIT, counted from the tables.
 */
import { SvcError } from '../../shared/errors.js';
import { LIVE_LINKS_PER_MAKER, RATE_LIMITS } from '../../shared/limits.js';
import { ROLE_RANK, type Role } from '../../shared/vocabulary.js';
import { rankOf, type SpaceRole } from '../policy.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';
import type { MemberRow, MemberStore } from './members.js';
import type { SpaceRow } from './spaces.js';

export type LinkRole = 'coordinator' | 'writer' | 'reader';
export type InviteState = 'live' | 'expired' | 'exhausted' | 'revoked';

export interface InviteRow {
  id: string;
  spaceRowId: number;
  maker: string;
  role: LinkRole;
  tags: string[];
  label: string | null;
  maxUses: number | null;
  uses: number;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/** Why a link is dead, or live. Revoked wins over expired, expired over exhausted. */
export function inviteState(i: Pick<InviteRow, 'revokedAt' | 'expiresAt' | 'maxUses' | 'uses'>, now: number): InviteState {
  if (i.revokedAt !== null) return 'revoked';
  if (i.expiresAt !== null && i.expiresAt <= now) return 'expired';
  if (i.maxUses !== null && i.uses >= i.maxUses) return 'exhausted';
  return 'live';
}

export interface CreateInviteInput {
  space: SpaceRow;
  id: string;
  codeHash: Uint8Array;
  maker: string;
  role: LinkRole;
  tags: string[];
  label: string | null;
  maxUses: number | null;
  expiresAt: number | null;
  now: number;
}

export interface LinkJoin {
  /** The membership after the join (the owner's standing when the owner used it). */
  role: 'owner' | Role;
  tags: string[];
  member: MemberRow | null;
  /** True when this call admitted the KEY. */
  changed: boolean;
  /** `joined` when admitted now; `member` when the KEY already held a role. */
  state: 'joined' | 'member';
  revision: number;
}

export interface RemoveBatch {
  removed: number;
  /** Admitted through the link but changed by an owner or admin since, or not below the caller. */
  spared: number;
  remaining: number;
  revision: number;
}

export interface InviteStore {
  byId(id: string): Promise<InviteRow | undefined>;
  byCodeHash(hash: Uint8Array): Promise<InviteRow | undefined>;
  /** The link's state, counting a maker that no longer ranks above its role as revoked. */
  liveState(space: SpaceRow, invite: InviteRow, now: number): Promise<InviteState>;
  /** Make a link (INVITE_LIMIT) with its invite.created event. */
  create(i: CreateInviteInput): Promise<{ invite: InviteRow; revision: number }>;
  /** One page of a SPACE's links, oldest first; `maker` null lists every maker's. */
  list(spaceRowId: number, maker: string | null, after: number, limit: number): Promise<{ items: (InviteRow & { cursor: number })[]; hasMore: boolean }>;
  /** Kill a link (invite.revoked); a second revoke changes nothing and appends nothing. */
  revoke(space: SpaceRow, id: string, actor: string, now: number): Promise<{ invite: InviteRow; revision: number }>;
  /** Join `space` through link `id` as `peer` (INVITE_REVOKED / _EXPIRED / _EXHAUSTED, and the admission limits). */
  join(space: SpaceRow, id: string, peer: string, now: number): Promise<LinkJoin>;
  /**
   * invites.remove: revoke the link, then remove up to `batch` of the KEYS admitted through it
   * and those they admitted (deepest first), except any an owner or admin changed since and any
   * not ranked below `actorRole`.
   */
  removeBatch(space: SpaceRow, id: string, actor: string, actorRole: SpaceRole, now: number, batch: number): Promise<RemoveBatch>;
  /** Links `from` made in a SPACE now belong to `to` (hand-over). */
  moveMaker(spaceRowId: number, from: string, to: string): Promise<number>;
  /** Links a maker made since `since` (ms), every SPACE. */
  madeSince(maker: string, since: number): Promise<number>;
}

interface Row {
  id: string;
  space_row_id: number;
  maker: string;
  role: LinkRole;
  tags_json: string;
  label: string | null;
  max_uses: number | null;
  uses: number;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

function toInvite(r: Row): InviteRow {
  return {
    id: r.id,
    spaceRowId: r.space_row_id,
    maker: r.maker,
    role: r.role,
    tags: JSON.parse(r.tags_json) as string[],
    label: r.label,
    maxUses: r.max_uses,
    uses: r.uses,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

const DAY_MS = RATE_LIMITS.linksMade.windowSeconds * 1000;

export function createInviteStore(db: Db, deps: { members: MemberStore; events: EventStore }): InviteStore {
  const sql = dialectOf(db);
  const selectById = db.prepare<[string], Row>('SELECT * FROM invites WHERE id = ?');
  const selectByHash = db.prepare<[Uint8Array], Row>('SELECT * FROM invites WHERE code_hash = ?');
  const countLive = db.prepare<[number, string, number], { n: number }>(
    `SELECT COUNT(*) AS n FROM invites WHERE space_row_id = ? AND maker = ? AND revoked_at IS NULL
       AND (expires_at IS NULL OR expires_at > ?) AND (max_uses IS NULL OR uses < max_uses)`,
  );
  const countMadeInvites = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM invites WHERE maker = ? AND created_at > ?',
  );
  const countMadeHandOvers = db.prepare<[string, number], { n: number }>(
    'SELECT COUNT(*) AS n FROM hand_overs WHERE giver = ? AND code_hash IS NOT NULL AND created_at > ?',
  );
  const insert = db.prepare(
    `INSERT INTO invites (id, space_row_id, code_hash, maker, role, tags_json, label, max_uses, uses, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
  );
  const selectPage = db.prepare<Record<string, unknown>, Row & { cursor: number }>(
    `SELECT *, rowid AS cursor FROM invites WHERE space_row_id = @space
       AND (${sql.param('@maker', 'text')} IS NULL OR maker = @maker) AND rowid > @after ORDER BY rowid LIMIT @limit`,
  );
  const revokeStmt = db.prepare('UPDATE invites SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL');
  const upsertUse = db.prepare(
    `INSERT INTO invite_uses (invite_id, peer, used_at) VALUES (?, ?, ?)
     ON CONFLICT (invite_id, peer) DO UPDATE SET used_at = excluded.used_at`,
  );
  const spendUse = db.prepare('UPDATE invites SET uses = uses + 1 WHERE id = ?');
  const moveMakerStmt = db.prepare('UPDATE invites SET maker = ? WHERE space_row_id = ? AND maker = ?');
  // invites.remove reads the members table (R2's) to follow who came in by the link and whom
  // they brought in; removal itself goes through the members store (events, counts).
  const membersByLink = db.prepare<[number, string], { peer_id: string }>(
    'SELECT peer_id FROM members WHERE space_row_id = ? AND link_id = ? ORDER BY admitted_at, peer_id',
  );
  const membersBroughtInBy = db.prepare<[number, string], { peer_id: string }>(
    'SELECT peer_id FROM members WHERE space_row_id = ? AND brought_in_by = ? ORDER BY admitted_at, peer_id',
  );

  const get = async (id: string) => {
    const r = await selectById.get(id);
    return r ? toInvite(r) : undefined;
  };

  function invitePayload(i: InviteRow): Record<string, string | number | null | string[]> {
    // The full resulting parameters; never the code or its hash (spec "Audit event").
    return {
      invite_id: i.id,
      maker: i.maker,
      role: i.role,
      tags: [...i.tags],
      label: i.label,
      max_uses: i.maxUses,
      expires_at: i.expiresAt === null ? null : new Date(i.expiresAt).toISOString(),
    };
  }

  /** The link is only as strong as its maker still is (see the file comment). */
  async function makerStillAbove(space: SpaceRow, invite: InviteRow): Promise<boolean> {
    return rankOf(await deps.members.roleOf(space, invite.maker)) > ROLE_RANK[invite.role];
  }

  const createTx = db.transaction(async (i: CreateInviteInput) => {
    if ((await countLive.get(i.space.id, i.maker, i.now))!.n >= LIVE_LINKS_PER_MAKER) {
      throw new SvcError('INVITE_LIMIT', `${LIVE_LINKS_PER_MAKER} live links per maker in one SPACE`);
    }
    const since = i.now - DAY_MS;
    const made = (await countMadeInvites.get(i.maker, since))!.n + (await countMadeHandOvers.get(i.maker, since))!.n;
    if (made >= RATE_LIMITS.linksMade.limit) {
      throw new SvcError('INVITE_LIMIT', `${RATE_LIMITS.linksMade.limit} links made a day`);
    }
    await insert.run(i.id, i.space.id, i.codeHash, i.maker, i.role, JSON.stringify(i.tags), i.label, i.maxUses, i.now, i.expiresAt);
    const invite = (await get(i.id))!;
    const { revision } = await deps.events.append(i.space, i.maker, 'invite.created', invitePayload(invite), i.now);
    return { invite, revision };
  });

  async function revokeInside(space: SpaceRow, id: string, actor: string, now: number): Promise<{ invite: InviteRow; revision: number }> {
    const before = await get(id);
    if (!before || before.spaceRowId !== space.id) throw new SvcError('INVITE_NOT_FOUND', 'id: no link of yours has this id');
    if ((await revokeStmt.run(now, actor, id)).changes === 0) {
      return { invite: before, revision: (await deps.events.head(space.id)).revision };
    }
    const invite = (await get(id))!;
    const { revision } = await deps.events.append(space, actor, 'invite.revoked', invitePayload(invite), now);
    return { invite, revision };
  }
  const revokeTx = db.transaction(revokeInside);

  const joinTx = db.transaction(async (space: SpaceRow, id: string, peer: string, now: number): Promise<LinkJoin> => {
    const invite = await get(id);
    if (!invite || invite.spaceRowId !== space.id) throw new SvcError('INVITE_INVALID', 'link: not a link of this SPACE');
    const head = async () => (await deps.events.head(space.id)).revision;
    if (peer === space.owner) {
      return { role: 'owner', tags: [], member: null, changed: false, state: 'member', revision: await head() };
    }
    const current = await deps.members.get(space.id, peer);
    if (current) {
      // Already inside (through this link or otherwise): harmless, burns no use.
      return { role: current.role, tags: current.tags, member: current, changed: false, state: 'member', revision: await head() };
    }
    const state = await makerStillAbove(space, invite) ? inviteState(invite, now) : 'revoked';
    if (state === 'revoked') throw new SvcError('INVITE_REVOKED', 'link: revoked');
    if (state === 'expired') throw new SvcError('INVITE_EXPIRED', `link: expired at ${new Date(invite.expiresAt!).toISOString()}`);
    if (state === 'exhausted') throw new SvcError('INVITE_EXHAUSTED', `link: all ${invite.maxUses} uses spent`);
    const admitted = await deps.members.admit(
      space,
      { peer, role: invite.role, tags: invite.tags, broughtInBy: invite.maker, linkId: invite.id },
      peer,
      now,
    );
    await upsertUse.run(invite.id, peer, now);
    await spendUse.run(invite.id);
    const m = admitted.member;
    return { role: m.role, tags: m.tags, member: m, changed: true, state: 'joined', revision: admitted.revision ?? await head() };
  });

  const removeTx = db.transaction(
    async (space: SpaceRow, id: string, actor: string, actorRole: SpaceRole, now: number, batch: number): Promise<RemoveBatch> => {
      await revokeInside(space, id, actor, now);
      // Breadth-first from the KEYS that came in by the link through whom they brought in;
      // removing in reverse order takes every KEY out before the one that admitted it, so the
      // walk finds the same tree on the next batch.
      const order: string[] = [];
      const seen = new Set<string>([actor, space.owner]);
      let level = (await membersByLink.all(space.id, id)).map((r) => r.peer_id);
      while (level.length > 0) {
        const next: string[] = [];
        for (const p of level) {
          if (seen.has(p)) continue;
          seen.add(p);
          order.push(p);
          for (const c of await membersBroughtInBy.all(space.id, p)) next.push(c.peer_id);
        }
        level = next;
      }
      const removable: string[] = [];
      let spared = 0;
      for (const p of order.reverse()) {
        const m = (await deps.members.get(space.id, p))!;
        if (m.changedByGovernorAt !== null || rankOf(m.role) >= rankOf(actorRole)) spared++;
        else removable.push(p);
      }
      const thisBatch = removable.slice(0, batch);
      for (const p of thisBatch) await deps.members.remove(space, p, actor, 'member.revoked', now, { invite_id: id });
      return { removed: thisBatch.length, spared, remaining: removable.length - thisBatch.length, revision: (await deps.events.head(space.id)).revision };
    },
  );

  return {
    byId: get,
    liveState: async (space, invite, now) => (await makerStillAbove(space, invite) ? inviteState(invite, now) : 'revoked'),
    async byCodeHash(hash) {
      const r = await selectByHash.get(hash);
      return r ? toInvite(r) : undefined;
    },
    create: async (i) => await createTx.under({ spaces: [i.space.id], keys: [i.maker] }, i),
    async list(spaceRowId, maker, after, limit) {
      const rows = await selectPage.all({ space: spaceRowId, maker, after, limit: limit + 1 });
      return { items: rows.slice(0, limit).map((r) => ({ ...toInvite(r), cursor: r.cursor })), hasMore: rows.length > limit };
    },
    revoke: async (space, id, actor, now) => await revokeTx.under({ spaces: [space.id] }, space, id, actor, now),
    join: async (space, id, peer, now) => await joinTx.under({ spaces: [space.id], keys: [peer] }, space, id, peer, now),
    removeBatch: async (space, id, actor, actorRole, now, batch) => await removeTx.immediate(space, id, actor, actorRole, now, batch),
    moveMaker: async (spaceRowId, from, to) => (await moveMakerStmt.run(to, spaceRowId, from)).changes,
    madeSince: async (maker, since) => (await countMadeInvites.get(maker, since))!.n + (await countMadeHandOvers.get(maker, since))!.n,
  };
}
