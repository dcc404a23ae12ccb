/**
 * Members of SPACES (spec/1-concepts.md "Member", "Roles matrix", "Limits"): admission, role and
 * tag changes, removal, each with its governance event in the same transaction
 * (member.granted, member.updated, member.revoked, member.left, member.handed_over).
 *
 * The owner is never a member row: `roleOf` answers `owner` from the SPACE itself.
 * Limits checked on admission: MEMBER_LIMIT (10,000,000 per SPACE, kept as a counter on the
 * SPACE row), ADMIN_LIMIT (10,000 admins), SPACE_LIMIT (10,000 SPACES owned and joined per KEY,
 * at most 5,000 of them made for it by a governor: `direct` admissions).
 *
 * Every write here is `db.transaction(...).immediate()`; called from inside a caller's
 * transaction it becomes a savepoint (better-sqlite3), so other aggregates (joining by link,
 * deciding a request, hand-over) can admit inside their own transaction.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { ADMINS_PER_SPACE, GRANTED_SPACES_PER_KEY, MEMBERS_PER_SPACE, SPACES_PER_KEY } from '../../shared/limits.js';
import type { Role } from '../../shared/vocabulary.js';
import { checkGovern, rankOf, type SpaceRole } from '../policy.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';
import type { SpaceRow, SpaceStore } from './spaces.js';

export interface MemberRow {
  peer: string;
  role: Role;
  /** Sorted. */
  tags: string[];
  /** The governor (peer id) that admitted it; a coordinator manages only those it brought in. */
  broughtInBy: string;
  /** The invite link it came in by, if any. */
  linkId: string | null;
  /** True when a governor put it there without its asking (peer-id grant). */
  direct: boolean;
  admittedAt: number;
  changedAt: number;
  /** Last time an owner or admin changed it (invites.remove spares those). */
  changedByGovernorAt: number | null;
}

export interface AdmitInput {
  peer: string;
  role: Role;
  tags: string[];
  broughtInBy: string;
  linkId?: string | null;
  /** A governor's grant by peer id (counts toward the 5,000 such SPACES per KEY). Default false. */
  direct?: boolean;
}

export interface Admitted {
  member: MemberRow;
  /** False when the KEY was already a member (nothing written, no event). */
  changed: boolean;
  revision: number | null;
}

export type RemovalEvent = 'member.revoked' | 'member.left' | 'member.handed_over';

export interface MemberPage {
  items: MemberRow[];
  hasMore: boolean;
}

export interface MembershipRow {
  name: string;
  spaceRowId: number;
  role: 'owner' | Role;
  tags: string[];
}

/** Listener run inside the admitting / removing transaction (e.g. withdraw a pending request). */
export type MemberListener = (space: SpaceRow, peer: string, now: number) => Promise<void>;

export interface MemberStore {
  roleOf(space: Pick<SpaceRow, 'id' | 'owner'>, peer: string): Promise<SpaceRole>;
  get(spaceRowId: number, peer: string): Promise<MemberRow | undefined>;
  /**
   * Admit a KEY with a member.granted event. No policy check here (the caller decided);
   * OWNER_IS_NOT_A_MEMBER, MEMBER_LIMIT, SPACE_LIMIT, ADMIN_LIMIT. Already a member: unchanged.
   */
  admit(space: SpaceRow, input: AdmitInput, actor: string, now: number): Promise<Admitted>;
  /**
   * members.set: admit or change `peer` as `actor`, under the whole rank rule (policy.ts).
   * `tags` undefined keeps a member's tags (none for a new one).
   */
  set(
    spaceRowId: number,
    actor: string,
    peer: string,
    wanted: { role: Role; tags?: string[] | undefined },
    now: number,
  ): Promise<{ member: MemberRow; state: 'granted' | 'updated' | 'unchanged'; revision: number | null; space: SpaceRow }>;
  /**
   * members.revoke: `actor` removes `peer` (member.revoked) or leaves (member.left when they are
   * the same KEY). NOT_A_MEMBER, OWNER_CANNOT_LEAVE, OWNER_IS_NOT_A_MEMBER, CONTROL_DENIED.
   */
  revoke(spaceRowId: number, actor: string, peer: string, now: number): Promise<{ event: RemovalEvent; role: Role; revision: number }>;
  /** Low-level removal with its event (hand-over, invites.remove). NOT_A_MEMBER. */
  remove(space: SpaceRow, peer: string, actor: string, event: RemovalEvent, now: number, extra?: JsonObject): Promise<{ role: Role; revision: number }>;
  /** Low-level change of role and tags with a member.updated event (hand-over). */
  change(space: SpaceRow, peer: string, wanted: { role: Role; tags: string[] }, actor: string, now: number, byGovernor: boolean): Promise<{ member: MemberRow; revision: number | null }>;
  /** Who `from` brought in is now brought in by `to` (hand-over of a role). */
  moveBroughtIn(spaceRowId: number, from: string, to: string): Promise<number>;
  list(spaceRowId: number, filter: { role?: Role | undefined; peer?: string | undefined; after?: string | undefined; limit: number }): Promise<MemberPage>;
  countAdmins(spaceRowId: number): Promise<number>;
  /** SPACES a KEY owns or belongs to, by name, for /v1/me (after: a SPACE name, exclusive). */
  membershipsOf(peer: string, page: { after?: string | undefined; limit: number }): Promise<{ items: MembershipRow[]; hasMore: boolean }>;
  onAdmitted(listener: MemberListener): void;
  onRemoved(listener: MemberListener): void;
  /** Guard run inside every admission before anything is written; throw to refuse (e.g. ENCRYPTION_KEY_MISSING). */
  onAdmitting(guard: MemberListener): void;
}

interface Row {
  peer_id: string;
  role: Role;
  tags_json: string;
  brought_in_by: string;
  link_id: string | null;
  direct: number;
  admitted_at: number;
  changed_at: number;
  changed_by_governor_at: number | null;
}

function toMember(r: Row): MemberRow {
  return {
    peer: r.peer_id,
    role: r.role,
    tags: JSON.parse(r.tags_json) as string[],
    broughtInBy: r.brought_in_by,
    linkId: r.link_id,
    direct: r.direct === 1,
    admittedAt: r.admitted_at,
    changedAt: r.changed_at,
    changedByGovernorAt: r.changed_by_governor_at,
  };
}

/** member.* payload: the member's full resulting state (no code, hash or message). */
function memberPayload(m: MemberRow): JsonObject {
  return { peer: m.peer, role: m.role, tags: [...m.tags], brought_in_by: m.broughtInBy, link_id: m.linkId };
}

export function createMemberStore(db: Db, spaces: SpaceStore, events: EventStore): MemberStore {
  const sql = dialectOf(db);
  const selectOne = db.prepare<[number, string], Row>('SELECT * FROM members WHERE space_row_id = ? AND peer_id = ?');
  const insert = db.prepare(
    `INSERT INTO members (space_row_id, peer_id, role, tags_json, brought_in_by, link_id, direct, admitted_at, changed_at, changed_by_governor_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
  );
  const updateRole = db.prepare(
    `UPDATE members SET role = ?, tags_json = ?, changed_at = ?, changed_by_governor_at = coalesce(?, changed_by_governor_at)
     WHERE space_row_id = ? AND peer_id = ?`,
  );
  const deleteOne = db.prepare('DELETE FROM members WHERE space_row_id = ? AND peer_id = ?');
  const bumpCount = db.prepare('UPDATE spaces SET member_count = member_count + ? WHERE id = ?');
  const countAdminsStmt = db.prepare<[number], { n: number }>(
    "SELECT count(*) AS n FROM members WHERE space_row_id = ? AND role = 'admin'",
  );
  const moveStmt = db.prepare('UPDATE members SET brought_in_by = ? WHERE space_row_id = ? AND brought_in_by = ?');
  const listStmt = db.prepare<Record<string, unknown>, Row>(
    `SELECT * FROM members WHERE space_row_id = @space
       AND (${sql.param('@role', 'text')} IS NULL OR role = @role) AND (${sql.param('@peer', 'text')} IS NULL OR peer_id = @peer)
       AND (${sql.param('@after', 'text')} IS NULL OR peer_id > @after)
     ORDER BY peer_id LIMIT @limit`,
  );
  const membershipsStmt = db.prepare<Record<string, unknown>, { name: string; id: number; role: string; tags_json: string }>(
    `SELECT name, id, role, tags_json FROM (
       SELECT s.name, s.id, 'owner' AS role, '[]' AS tags_json FROM spaces s WHERE s.owner = @peer
       UNION ALL
       SELECT s.name, s.id, m.role, m.tags_json FROM members m JOIN spaces s ON s.id = m.space_row_id WHERE m.peer_id = @peer
     ) AS held WHERE (${sql.param('@after', 'text')} IS NULL OR name > @after) ORDER BY name LIMIT @limit`,
  );

  const admittingGuards: MemberListener[] = [];
  const admittedListeners: MemberListener[] = [];
  const removedListeners: MemberListener[] = [];

  async function roleOf(space: Pick<SpaceRow, 'id' | 'owner'>, peer: string): Promise<SpaceRole> {
    if (space.owner === peer) return 'owner';
    return (await selectOne.get(space.id, peer))?.role ?? null;
  }

  async function freshSpace(spaceRowId: number): Promise<SpaceRow> {
    const s = await spaces.byRowId(spaceRowId);
    if (!s) throw new SvcError('SPACE_NOT_FOUND');
    return s;
  }

  function assertOpen(space: SpaceRow): void {
    if (space.status === 'closed') throw new SvcError('SPACE_CLOSED', `${space.name} is closed${space.replacedBy ? `; continued in ${space.replacedBy}` : ''}`);
  }

  async function checkAdminRoom(space: SpaceRow, from: Role | null, to: Role): Promise<void> {
    if (to === 'admin' && from !== 'admin' && (await countAdminsStmt.get(space.id))!.n >= ADMINS_PER_SPACE) {
      throw new SvcError('ADMIN_LIMIT', `${space.name} has ${ADMINS_PER_SPACE} admins`);
    }
  }

  const admitTx = db.transaction(async (space: SpaceRow, input: AdmitInput, actor: string, now: number): Promise<Admitted> => {
    if (input.peer === space.owner) throw new SvcError('OWNER_IS_NOT_A_MEMBER', 'peer: the owner holds the SPACE itself');
    const existing = await selectOne.get(space.id, input.peer);
    if (existing) return { member: toMember(existing), changed: false, revision: null };
    const s = await freshSpace(space.id);
    for (const g of admittingGuards) await g(s, input.peer, now);
    if (s.memberCount >= MEMBERS_PER_SPACE) throw new SvcError('MEMBER_LIMIT', `${s.name} has ${MEMBERS_PER_SPACE} members`);
    await checkAdminRoom(s, null, input.role);
    const count = await spaces.countFor(input.peer);
    if (count.total >= SPACES_PER_KEY) throw new SvcError('SPACE_LIMIT', `peer: the KEY owns or belongs to ${SPACES_PER_KEY} SPACES`);
    const direct = input.direct === true;
    if (direct && count.direct >= GRANTED_SPACES_PER_KEY) {
      throw new SvcError('SPACE_LIMIT', `peer: ${GRANTED_SPACES_PER_KEY} SPACES were already made for this KEY by governors`);
    }
    const tags = [...input.tags].sort();
    await insert.run(s.id, input.peer, input.role, JSON.stringify(tags), input.broughtInBy, input.linkId ?? null, direct ? 1 : 0, now, now);
    await bumpCount.run(1, s.id);
    const member = toMember((await selectOne.get(s.id, input.peer))!);
    const { revision } = await events.append(s, actor, 'member.granted', memberPayload(member), now);
    for (const l of admittedListeners) await l(s, input.peer, now);
    return { member, changed: true, revision };
  });

  const changeTx = db.transaction(
    async (space: SpaceRow, peer: string, wanted: { role: Role; tags: string[] }, actor: string, now: number, byGovernor: boolean) => {
      const existing = await selectOne.get(space.id, peer);
      if (!existing) throw new SvcError('NOT_A_MEMBER', 'peer: not a member of this SPACE');
      const before = toMember(existing);
      const tags = [...wanted.tags].sort();
      if (before.role === wanted.role && JSON.stringify(before.tags) === JSON.stringify(tags)) {
        return { member: before, revision: null };
      }
      await checkAdminRoom(space, before.role, wanted.role);
      await updateRole.run(wanted.role, JSON.stringify(tags), now, byGovernor ? now : null, space.id, peer);
      const member = toMember((await selectOne.get(space.id, peer))!);
      const payload = { ...memberPayload(member), previous_role: before.role };
      const { revision } = await events.append(space, actor, 'member.updated', payload, now);
      return { member, revision: revision as number | null };
    },
  );

  const removeTx = db.transaction(
    async (space: SpaceRow, peer: string, actor: string, event: RemovalEvent, now: number, extra?: JsonObject) => {
      const existing = await selectOne.get(space.id, peer);
      if (!existing) throw new SvcError('NOT_A_MEMBER', 'peer: not a member of this SPACE');
      await deleteOne.run(space.id, peer);
      await bumpCount.run(-1, space.id);
      const { revision } = await events.append(space, actor, event, { ...extra, peer, role: existing.role }, now);
      for (const l of removedListeners) await l(space, peer, now);
      return { role: existing.role, revision };
    },
  );

  const setTx = db.transaction(
    async (spaceRowId: number, actor: string, peer: string, wanted: { role: Role; tags?: string[] | undefined }, now: number) => {
      const space = await freshSpace(spaceRowId);
      if (peer === space.owner) throw new SvcError('OWNER_IS_NOT_A_MEMBER', 'peer: the owner holds the SPACE itself');
      const actorRole = await roleOf(space, actor);
      const current = await selectOne.get(space.id, peer);
      checkGovern(actorRole, {
        current: current?.role ?? null,
        next: wanted.role,
        broughtInByActor: current?.brought_in_by === actor,
        self: actor === peer,
      });
      assertOpen(space);
      const byGovernor = rankOf(actorRole) >= rankOf('admin');
      if (!current) {
        const a = await admitTx(space, { peer, role: wanted.role, tags: wanted.tags ?? [], broughtInBy: actor, direct: true }, actor, now);
        return { member: a.member, state: 'granted' as const, revision: a.revision, space };
      }
      const tags = wanted.tags ?? (JSON.parse(current.tags_json) as string[]);
      const c = await changeTx(space, peer, { role: wanted.role, tags }, actor, now, byGovernor);
      return { member: c.member, state: c.revision === null ? ('unchanged' as const) : ('updated' as const), revision: c.revision, space };
    },
  );

  const revokeTx = db.transaction(async (spaceRowId: number, actor: string, peer: string, now: number) => {
    const space = await freshSpace(spaceRowId);
    if (peer === space.owner) {
      if (actor === peer) throw new SvcError('OWNER_CANNOT_LEAVE', 'the owner leaves only by handing the SPACE over');
      throw new SvcError('OWNER_IS_NOT_A_MEMBER', 'peer: the owner holds the SPACE itself');
    }
    const current = await selectOne.get(space.id, peer);
    if (actor === peer) {
      if (!current) throw new SvcError('NOT_A_MEMBER', 'you are not a member of this SPACE');
      assertOpen(space);
      const r = await removeTx(space, peer, actor, 'member.left', now);
      return { event: 'member.left' as const, ...r };
    }
    const actorRole = await roleOf(space, actor);
    if (rankOf(actorRole) < rankOf('coordinator')) {
      throw new SvcError('CONTROL_DENIED', 'removing members needs coordinator or above');
    }
    if (!current) throw new SvcError('NOT_A_MEMBER', 'peer: not a member of this SPACE');
    checkGovern(actorRole, { current: current.role, next: null, broughtInByActor: current.brought_in_by === actor, self: false });
    assertOpen(space);
    const r = await removeTx(space, peer, actor, 'member.revoked', now);
    return { event: 'member.revoked' as const, ...r };
  });

  return {
    roleOf,
    async get(spaceRowId, peer) {
      const r = await selectOne.get(spaceRowId, peer);
      return r ? toMember(r) : undefined;
    },
    admit: async (space, input, actor, now) => await admitTx.under({ spaces: [space.id], keys: [input.peer] }, space, input, actor, now),
    set: async (spaceRowId, actor, peer, wanted, now) => await setTx.under({ spaces: [spaceRowId], keys: [peer] }, spaceRowId, actor, peer, wanted, now),
    revoke: async (spaceRowId, actor, peer, now) => await revokeTx.under({ spaces: [spaceRowId], keys: [peer] }, spaceRowId, actor, peer, now),
    remove: async (space, peer, actor, event, now, extra) => await removeTx.under({ spaces: [space.id], keys: [peer] }, space, peer, actor, event, now, extra),
    change: async (space, peer, wanted, actor, now, byGovernor) => await changeTx.under({ spaces: [space.id], keys: [peer] }, space, peer, wanted, actor, now, byGovernor),
    moveBroughtIn: async (spaceRowId, from, to) => (await moveStmt.run(to, spaceRowId, from)).changes,
    async list(spaceRowId, f) {
      const rows = await listStmt.all({
        space: spaceRowId,
        role: f.role ?? null,
        peer: f.peer ?? null,
        after: f.after ?? null,
        limit: f.limit + 1,
      });
      return { items: rows.slice(0, f.limit).map(toMember), hasMore: rows.length > f.limit };
    },
    countAdmins: async (spaceRowId) => (await countAdminsStmt.get(spaceRowId))!.n,
    async membershipsOf(peer, page) {
      const rows = await membershipsStmt.all({ peer, after: page.after ?? null, limit: page.limit + 1 });
      return {
        items: rows.slice(0, page.limit).map((r) => ({
          name: r.name,
          spaceRowId: r.id,
          role: r.role as 'owner' | Role,
          tags: JSON.parse(r.tags_json) as string[],
        })),
        hasMore: rows.length > page.limit,
      };
    },
    onAdmitted: (l) => void admittedListeners.push(l),
    onRemoved: (l) => void removedListeners.push(l),
    onAdmitting: (g) => void admittingGuards.push(g),
  };
}
