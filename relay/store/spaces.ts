/**
 * The SPACE aggregate (spec/1-concepts.md "Space"): profile and settings, category filings,
 * creation and update with their governance events (space.created at revision 1,
 * space.updated), listing, and the per-KEY SPACE count (owned + joined).
 *
 * A SPACE is never deleted: its name stays taken for good (SPACE_NAME_TAKEN).
 * Rules about who may change what live in relay/policy.ts; validation of input in the route.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { SPACES_PER_KEY } from '../../shared/limits.js';
import type { JoinPolicy, TaskConfirmers, Visibility } from '../../shared/vocabulary.js';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import type { EventStore } from './events.js';

export interface SpaceRow {
  /** Row id (internal; other tables reference it). */
  id: number;
  /** uuid used in signed objects and chains. */
  spaceId: string;
  name: string;
  /** Owner's peer id. */
  owner: string;
  title: string;
  description: string;
  visibility: Visibility;
  oracle: boolean;
  joinPolicy: JoinPolicy;
  signedOnly: boolean;
  status: 'active' | 'closed';
  replacedBy: string | null;
  /** 0 to 3 category ids, main first. */
  categories: string[];
  serviceReviewer: boolean;
  taskConfirmations: number;
  taskConfirmers: TaskConfirmers;
  taskClaimHours: number;
  memberCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface CreateSpaceInput {
  spaceId: string;
  name: string;
  owner: string;
  title: string;
  description: string;
  visibility: Visibility;
  oracle: boolean;
  joinPolicy: JoinPolicy;
  signedOnly: boolean;
  categories: string[];
  serviceReviewer: boolean;
  taskConfirmations: number;
  taskConfirmers: TaskConfirmers;
  taskClaimHours: number;
  now: number;
}

/** Fields spaces.update may change. */
export interface SpaceChanges {
  title?: string;
  description?: string;
  categories?: string[];
  joinPolicy?: JoinPolicy;
  signedOnly?: boolean;
  serviceReviewer?: boolean;
  taskConfirmations?: number;
  taskConfirmers?: TaskConfirmers;
  taskClaimHours?: number;
}

export interface SpaceListFilter {
  /** The caller (its own SPACES are listed too), or null when anonymous. */
  caller: string | null;
  /** Lowercased text to find in title or description. */
  q?: string | undefined;
  /** Category ids (a category and its descendants). */
  categories?: string[] | undefined;
  oracle?: boolean | undefined;
  order: 'name' | 'recent';
  /** Name of the last SPACE of the previous page. */
  after?: string | undefined;
  limit: number;
}

export interface SpaceStore {
  byName(name: string): Promise<SpaceRow | undefined>;
  byRowId(id: number): Promise<SpaceRow | undefined>;
  bySpaceId(uuid: string): Promise<SpaceRow | undefined>;
  /**
   * Create with its space.created event (revision 1). SPACE_NAME_TAKEN, SPACE_LIMIT.
   * `after(space)` runs inside the same transaction (throw to refuse).
   */
  create(input: CreateSpaceInput, after?: (space: SpaceRow) => void | Promise<void>): Promise<{ space: SpaceRow; revision: number }>;
  /**
   * Apply `changes` (only those that differ) with one space.updated event carrying the full
   * resulting parameters; no event when nothing differs. Re-reads the row inside the
   * transaction; `check(current)` runs there too (throw to refuse).
   */
  update(
    spaceRowId: number,
    changes: SpaceChanges,
    actor: string,
    now: number,
    check?: (current: SpaceRow) => void | Promise<void>,
  ): Promise<{ space: SpaceRow; changed: string[]; revision: number | null }>;
  /** Listed SPACES (public or filed in a category) plus the caller's own, one page. */
  list(filter: SpaceListFilter): Promise<{ items: SpaceRow[]; hasMore: boolean }>;
  /** Names of the SPACES a KEY owns, by name. */
  namesOwnedBy(peer: string): Promise<string[]>;
  /** SPACES a KEY owns or is a member of, and how many of the memberships a governor made. */
  countFor(peer: string): Promise<{ total: number; direct: number }>;
  /** Number of SPACES filed under each id (direct filings; add descendants yourself). */
  countByCategory(ids: string[]): Promise<Map<string, number>>;
  /** Low-level: change the owner (hand-over of the SPACE; caller appends the event). */
  setOwner(spaceRowId: number, owner: string, now: number): Promise<void>;
  /** Low-level: close a SPACE, naming its continuation (recovery after a restore). */
  close(spaceRowId: number, replacedBy: string | null, now: number): void;
}

interface Row {
  id: number;
  space_id: string;
  name: string;
  owner: string;
  title: string;
  description: string;
  visibility: Visibility;
  oracle: number;
  join_policy: JoinPolicy;
  signed_only: number;
  status: 'active' | 'closed';
  replaced_by: string | null;
  categories_json: string;
  service_reviewer: number;
  task_confirmations: number;
  task_confirmers: TaskConfirmers;
  task_claim_hours: number;
  member_count: number;
  created_at: number;
  updated_at: number;
}

/** A row of `spaces` as the database answers it. */
export type SpaceTableRow = Row;

/** The SPACE a row describes, as the stores hand it out (also relay/store/admission.ts). */
export function toSpace(r: Row): SpaceRow {
  return {
    id: r.id,
    spaceId: r.space_id,
    name: r.name,
    owner: r.owner,
    title: r.title,
    description: r.description,
    visibility: r.visibility,
    oracle: r.oracle === 1,
    joinPolicy: r.join_policy,
    signedOnly: r.signed_only === 1,
    status: r.status,
    replacedBy: r.replaced_by,
    categories: JSON.parse(r.categories_json) as string[],
    serviceReviewer: r.service_reviewer === 1,
    taskConfirmations: r.task_confirmations,
    taskConfirmers: r.task_confirmers,
    taskClaimHours: r.task_claim_hours,
    memberCount: r.member_count,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * The full parameters of a SPACE as its events carry them (space.created, space.updated):
 * settings only, never a code, hash or request message. Oracle spaces carry service_reviewer
 * and no task settings; work spaces the reverse.
 */
export function spaceParameters(s: SpaceRow): JsonObject {
  const p: JsonObject = {
    name: s.name,
    owner: s.owner,
    title: s.title,
    description: s.description,
    categories: [...s.categories],
    visibility: s.visibility,
    oracle: s.oracle,
    join_policy: s.joinPolicy,
    signed_only: s.signedOnly,
  };
  if (s.oracle) {
    p.service_reviewer = s.serviceReviewer;
  } else {
    p.task_confirmations = s.taskConfirmations;
    p.task_confirmers = s.taskConfirmers;
    p.task_claim_hours = s.taskClaimHours;
  }
  return p;
}

const CHANGE_COLUMNS: Record<keyof SpaceChanges, { wire: string; column: string }> = {
  title: { wire: 'title', column: 'title' },
  description: { wire: 'description', column: 'description' },
  categories: { wire: 'categories', column: 'categories_json' },
  joinPolicy: { wire: 'join_policy', column: 'join_policy' },
  signedOnly: { wire: 'signed_only', column: 'signed_only' },
  serviceReviewer: { wire: 'service_reviewer', column: 'service_reviewer' },
  taskConfirmations: { wire: 'task_confirmations', column: 'task_confirmations' },
  taskConfirmers: { wire: 'task_confirmers', column: 'task_confirmers' },
  taskClaimHours: { wire: 'task_claim_hours', column: 'task_claim_hours' },
};

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function createSpaceStore(db: Db, events: EventStore): SpaceStore {
  const sql = dialectOf(db);
  const selectByName = db.prepare<[string], Row>('SELECT * FROM spaces WHERE name = ?');
  const selectById = db.prepare<[number], Row>('SELECT * FROM spaces WHERE id = ?');
  const selectBySpaceId = db.prepare<[string], Row>('SELECT * FROM spaces WHERE space_id = ?');
  const insert = db.prepare(
    `INSERT INTO spaces (space_id, name, owner, title, description, visibility, oracle, join_policy, signed_only,
       status, replaced_by, categories_json, service_reviewer, task_confirmations, task_confirmers, task_claim_hours,
       member_count, created_at, updated_at)
     VALUES (@spaceId, @name, @owner, @title, @description, @visibility, @oracle, @joinPolicy, @signedOnly,
       'active', NULL, @categoriesJson, @serviceReviewer, @taskConfirmations, @taskConfirmers, @taskClaimHours,
       0, @now, @now)
     RETURNING id`,
  );
  const insertCategory = db.prepare('INSERT INTO space_categories (space_row_id, category, position) VALUES (?, ?, ?)');
  const deleteCategories = db.prepare('DELETE FROM space_categories WHERE space_row_id = ?');
  const updateRow = db.prepare(
    `UPDATE spaces SET title = @title, description = @description, categories_json = @categoriesJson,
       join_policy = @joinPolicy, signed_only = @signedOnly, service_reviewer = @serviceReviewer,
       task_confirmations = @taskConfirmations, task_confirmers = @taskConfirmers, task_claim_hours = @taskClaimHours,
       updated_at = @now
     WHERE id = @id`,
  );
  const countOwned = db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM spaces WHERE owner = ?');
  const countMemberships = db.prepare<[string], { n: number; direct: number | null }>(
    'SELECT count(*) AS n, sum(direct) AS direct FROM members WHERE peer_id = ?',
  );
  const selectOwnedNames = db.prepare<[string], { name: string }>('SELECT name FROM spaces WHERE owner = ? ORDER BY name');
  const selectCategoryCount = db.prepare<[string], { n: number }>(
    'SELECT count(*) AS n FROM space_categories WHERE category = ?',
  );
  const setOwnerStmt = db.prepare('UPDATE spaces SET owner = ?, updated_at = ? WHERE id = ?');
  const closeStmt = db.prepare("UPDATE spaces SET status = 'closed', replaced_by = ?, updated_at = ? WHERE id = ?");

  // Listing: a SPACE is listed when public or filed in a category (spec "Categories": a private
  // SPACE with no category is in no list); the caller also sees its own. `@cats` is a JSON array.
  const listWhere = `
    (s.visibility = 'public' OR s.categories_json <> '[]'
      OR (${sql.param('@caller', 'text')} IS NOT NULL AND (s.owner = @caller
        OR EXISTS (SELECT 1 FROM members m WHERE m.space_row_id = s.id AND m.peer_id = @caller))))
    AND (${sql.param('@oracle', 'bigint')} IS NULL OR s.oracle = @oracle)
    AND (${sql.param('@q', 'text')} IS NULL OR ${sql.instr}(lower(s.title), @q) > 0 OR ${sql.instr}(lower(s.description), @q) > 0)
    AND (${sql.param('@cats', 'text')} IS NULL OR EXISTS (SELECT 1 FROM space_categories c
          WHERE c.space_row_id = s.id AND c.category IN (${sql.jsonEach('@cats')})))`;
  const listByName = db.prepare<Record<string, unknown>, Row>(
    `SELECT s.* FROM spaces s WHERE ${listWhere} AND (${sql.param('@after', 'text')} IS NULL OR s.name > @after) ORDER BY s.name LIMIT @limit`,
  );
  const listRecent = db.prepare<Record<string, unknown>, Row>(
    `SELECT s.* FROM spaces s WHERE ${listWhere} AND (${sql.param('@afterId', 'bigint')} IS NULL OR s.id < @afterId) ORDER BY s.id DESC LIMIT @limit`,
  );

  async function countFor(peer: string): Promise<{ total: number; direct: number }> {
    const owned = (await countOwned.get(peer))!.n;
    const m = (await countMemberships.get(peer))!;
    return { total: owned + m.n, direct: m.direct ?? 0 };
  }

  async function writeCategories(spaceRowId: number, categories: string[]): Promise<void> {
    await deleteCategories.run(spaceRowId);
    for (const [i, c] of categories.entries()) await insertCategory.run(spaceRowId, c, i);
  }

  const createTx = db.transaction(async (i: CreateSpaceInput, after?: (space: SpaceRow) => void | Promise<void>): Promise<{ space: SpaceRow; revision: number }> => {
    if (await selectByName.get(i.name)) throw new SvcError('SPACE_NAME_TAKEN', `name: ${i.name} is taken`);
    if ((await countFor(i.owner)).total >= SPACES_PER_KEY) {
      throw new SvcError('SPACE_LIMIT', `this KEY owns or belongs to ${SPACES_PER_KEY} SPACES`);
    }
    const info = await insert.get({
      spaceId: i.spaceId,
      name: i.name,
      owner: i.owner,
      title: i.title,
      description: i.description,
      visibility: i.visibility,
      oracle: i.oracle ? 1 : 0,
      joinPolicy: i.joinPolicy,
      signedOnly: i.signedOnly ? 1 : 0,
      categoriesJson: JSON.stringify(i.categories),
      serviceReviewer: i.serviceReviewer ? 1 : 0,
      taskConfirmations: i.taskConfirmations,
      taskConfirmers: i.taskConfirmers,
      taskClaimHours: i.taskClaimHours,
      now: i.now,
    });
    const id = (info as { id: number }).id;
    await writeCategories(id, i.categories);
    const space = toSpace((await selectById.get(id))!);
    const { revision } = await events.append(space, i.owner, 'space.created', spaceParameters(space), i.now);
    await after?.(space);
    return { space, revision };
  });

  const updateTx = db.transaction(
    async (spaceRowId: number, changes: SpaceChanges, actor: string, now: number, check?: (s: SpaceRow) => void | Promise<void>) => {
      const row = await selectById.get(spaceRowId);
      if (!row) throw new SvcError('SPACE_NOT_FOUND');
      const current = toSpace(row);
      await check?.(current);
      const next: SpaceRow = { ...current };
      const changed: string[] = [];
      for (const key of Object.keys(CHANGE_COLUMNS) as (keyof SpaceChanges)[]) {
        const value = changes[key];
        if (value === undefined || sameValue(value, current[key])) continue;
        (next as unknown as Record<string, unknown>)[key] = value;
        changed.push(CHANGE_COLUMNS[key].wire);
      }
      if (changed.length === 0) return { space: current, changed, revision: null };
      await updateRow.run({
        id: spaceRowId,
        title: next.title,
        description: next.description,
        categoriesJson: JSON.stringify(next.categories),
        joinPolicy: next.joinPolicy,
        signedOnly: next.signedOnly ? 1 : 0,
        serviceReviewer: next.serviceReviewer ? 1 : 0,
        taskConfirmations: next.taskConfirmations,
        taskConfirmers: next.taskConfirmers,
        taskClaimHours: next.taskClaimHours,
        now,
      });
      if (changed.includes('categories')) await writeCategories(spaceRowId, next.categories);
      const space = toSpace((await selectById.get(spaceRowId))!);
      const payload = { ...spaceParameters(space), changed: [...changed] };
      const { revision } = await events.append(space, actor, 'space.updated', payload, now);
      return { space, changed, revision };
    },
  );

  return {
    byName: async (name) => {
      const r = await selectByName.get(name);
      return r ? toSpace(r) : undefined;
    },
    byRowId: async (id) => {
      const r = await selectById.get(id);
      return r ? toSpace(r) : undefined;
    },
    bySpaceId: async (uuid) => {
      const r = await selectBySpaceId.get(uuid);
      return r ? toSpace(r) : undefined;
    },
    create: async (i, after) => await createTx.immediate(i, after),
    update: async (id, changes, actor, now, check) => await updateTx.under({ spaces: [id] }, id, changes, actor, now, check),
    async list(f) {
      const params: Record<string, unknown> = {
        caller: f.caller,
        oracle: f.oracle === undefined ? null : f.oracle ? 1 : 0,
        q: f.q === undefined || f.q === '' ? null : f.q,
        cats: f.categories === undefined ? null : JSON.stringify(f.categories),
        limit: f.limit + 1,
      };
      let rows: Row[];
      if (f.order === 'recent') {
        params.afterId = f.after === undefined ? null : ((await selectByName.get(f.after))?.id ?? null);
        if (f.after !== undefined && params.afterId === null) return { items: [], hasMore: false };
        rows = await listRecent.all(params);
      } else {
        params.after = f.after ?? null;
        rows = await listByName.all(params);
      }
      const hasMore = rows.length > f.limit;
      return { items: rows.slice(0, f.limit).map(toSpace), hasMore };
    },
    namesOwnedBy: async (peer) => (await selectOwnedNames.all(peer)).map((r) => r.name),
    countFor,
    async countByCategory(ids) {
      const out = new Map<string, number>();
      for (const id of ids) out.set(id, (await selectCategoryCount.get(id))!.n);
      return out;
    },
    async setOwner(spaceRowId, owner, now) {
      await setOwnerStmt.run(owner, now, spaceRowId);
    },
    async close(spaceRowId, replacedBy, now) {
      await closeStmt.run(replacedBy, now, spaceRowId);
    },
  };
}
