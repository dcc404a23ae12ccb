/**
 * Join requests (spec/1-concepts.md "Join request" and its state table; spec/2-endpoints.md
 * join, requests.*).
 *
 *   pending --approve--> approved (the requester becomes a member)
 *   pending --decline--> declined (the requester is told: mailbox `decision`)
 *   pending --withdraw--> withdrawn (nobody told)
 *   pending --direct grant--> withdrawn
 *   pending --lapse--> expired (after JOIN_REQUEST_TTL_MS; computed on read, stored when touched)
 *
 * A new request reaches the owner and the first 32 admins (by admission) as mailbox `request`
 * rows, written in the same transaction. The message is written by a PEER: stored and shown,
 * never interpreted.
 *
 * Limits ("join requests" row of the Limits table), counted from the table itself so they hold
 * across restarts: 2 a day per KEY and SPACE, 10,000 an hour per KEY, 100,000 an hour into one
 * SPACE. Each refusal is RATE_LIMITED with the exact wait until the oldest counted ask leaves
 * its window.
 */
import { SvcError } from '../../shared/errors.js';
import { REQUEST_NOTICE_ADMINS, RATE_LIMITS } from '../../shared/limits.js';
import type { Role } from '../../shared/vocabulary.js';
import type { Db } from './database.js';
import type { EventStore } from './events.js';
import type { MailboxStore } from './mailbox.js';
import type { MemberRow, MemberStore } from './members.js';
import type { SpaceRow } from './spaces.js';

/**
 * How long a join request waits before it lapses. The spec leaves it unshown; ours is thirty
 * days, long enough for an owner who reads the mailbox monthly.
 */
export const JOIN_REQUEST_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** A join request's message: written by a PEER, at most this many UTF-8 bytes. */
export const JOIN_REQUEST_MESSAGE_MAX_BYTES = 1024;

export type RequestState = 'pending' | 'approved' | 'declined' | 'withdrawn' | 'expired';

export interface JoinRequestRow {
  id: string;
  spaceRowId: number;
  requester: string;
  message: string;
  /** As of the `now` it was read at: a lapsed pending request reads as expired. */
  state: RequestState;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
  /** The role it was approved with. */
  role: Role | null;
  tags: string[];
}

export interface CreateRequestInput {
  space: SpaceRow;
  id: string;
  requester: string;
  message: string;
  now: number;
  /** Whether a governor still takes notices (the delivery limits); default all do. */
  notify?: (peer: string) => boolean | Promise<boolean>;
}

export interface DecideInput {
  space: SpaceRow;
  requestId: string;
  decider: string;
  now: number;
}

export interface RequestStore {
  byId(id: string, now: number): Promise<JoinRequestRow | undefined>;
  /** The requester's waiting request in a SPACE (spec "access.pending_request"). */
  pendingOf(spaceRowId: number, peer: string, now: number): Promise<JoinRequestRow | undefined>;
  /** Waiting requests oldest first after the row cursor, and how many wait in all. */
  listPending(spaceRowId: number, now: number, after: number, limit: number): Promise<{ items: (JoinRequestRow & { cursor: number })[]; waiting: number }>;
  /** File a request (REQUEST_PENDING, RATE_LIMITED) and tell the owner and first 32 admins. */
  create(i: CreateRequestInput): Promise<JoinRequestRow>;
  /** Approve: admits the requester (member.granted) and tells it (mailbox `decision`). */
  approve(i: DecideInput & { role: Role; tags: string[] }): Promise<{ request: JoinRequestRow; member: MemberRow; revision: number }>;
  /** Decline: the requester is told (mailbox `decision`); nothing public. */
  decline(i: DecideInput): Promise<JoinRequestRow>;
  /** Withdraw by the requester; nobody told. */
  withdraw(i: { requestId: string; requester: string; now: number }): Promise<JoinRequestRow>;
  /**
   * A direct grant overtakes a waiting request: it becomes withdrawn. Call inside the write
   * transaction that admits `peer`. Answers how many changed (0 or 1).
   */
  withdrawOnGrant(spaceRowId: number, peer: string, now: number): Promise<number>;
}

interface Row {
  id: string;
  space_row_id: number;
  requester: string;
  message: string;
  state: string;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
  role: string | null;
  tags_json: string | null;
}

function toRequest(r: Row, now: number): JoinRequestRow {
  const lapsed = r.state === 'pending' && r.expires_at <= now;
  return {
    id: r.id,
    spaceRowId: r.space_row_id,
    requester: r.requester,
    message: r.message,
    state: lapsed ? 'expired' : (r.state as RequestState),
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    decidedAt: r.decided_at,
    decidedBy: r.decided_by,
    role: r.role as Role | null,
    tags: r.tags_json === null ? [] : (JSON.parse(r.tags_json) as string[]),
  };
}

/**
 * The one statement a direct grant runs (members.set admits a KEY with a waiting request).
 * Exported apart so the members store can prepare it without depending on this store.
 */
export function prepareWithdrawOnGrant(db: Db): (spaceRowId: number, peer: string, now: number) => Promise<number> {
  const stmt = db.prepare(
    `UPDATE join_requests SET state = 'withdrawn', decided_at = ?
      WHERE space_row_id = ? AND requester = ? AND state = 'pending'`,
  );
  return async (spaceRowId, peer, now) => (await stmt.run(now, spaceRowId, peer)).changes;
}

export function createRequestStore(db: Db, deps: { members: MemberStore; mailbox: MailboxStore; events: EventStore }): RequestStore {
  const selectById = db.prepare<[string], Row>('SELECT * FROM join_requests WHERE id = ?');
  const selectPending = db.prepare<[number, string], Row>(
    "SELECT * FROM join_requests WHERE space_row_id = ? AND requester = ? AND state = 'pending'",
  );
  const selectPendingPage = db.prepare<[number, number, number, number], Row & { cursor: number }>(
    `SELECT *, rowid AS cursor FROM join_requests
      WHERE space_row_id = ? AND state = 'pending' AND expires_at > ? AND rowid > ?
      ORDER BY rowid LIMIT ?`,
  );
  const countPending = db.prepare<[number, number], { n: number }>(
    "SELECT COUNT(*) AS n FROM join_requests WHERE space_row_id = ? AND state = 'pending' AND expires_at > ?",
  );
  const lapse = db.prepare(
    `UPDATE join_requests SET state = 'expired', decided_at = expires_at
      WHERE space_row_id = ? AND requester = ? AND state = 'pending' AND expires_at <= ?`,
  );
  const insert = db.prepare(
    `INSERT INTO join_requests (id, space_row_id, requester, message, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, 'pending', ?, ?)`,
  );
  const decide = db.prepare(
    `UPDATE join_requests SET state = ?, decided_at = ?, decided_by = ?, role = ?, tags_json = ?
      WHERE id = ? AND state = 'pending'`,
  );
  // The newest asks inside each window: the `limit`-th newest tells when one leaves it.
  const nthNewestByKeyAndSpace = db.prepare<[string, number, number, number], { created_at: number }>(
    `SELECT created_at FROM join_requests WHERE requester = ? AND space_row_id = ? AND created_at > ?
      ORDER BY created_at DESC LIMIT 1 OFFSET ?`,
  );
  const nthNewestByKey = db.prepare<[string, number, number], { created_at: number }>(
    `SELECT created_at FROM join_requests WHERE requester = ? AND created_at > ?
      ORDER BY created_at DESC LIMIT 1 OFFSET ?`,
  );
  const nthNewestIntoSpace = db.prepare<[number, number, number], { created_at: number }>(
    `SELECT created_at FROM join_requests WHERE space_row_id = ? AND created_at > ?
      ORDER BY created_at DESC LIMIT 1 OFFSET ?`,
  );
  const firstAdmins = db.prepare<[number, number], { peer_id: string }>(
    `SELECT peer_id FROM members WHERE space_row_id = ? AND role = 'admin'
      ORDER BY admitted_at, peer_id LIMIT ?`,
  );
  const withdrawOnGrant = prepareWithdrawOnGrant(db);

  const get = async (id: string, now: number) => {
    const r = await selectById.get(id);
    return r ? toRequest(r, now) : undefined;
  };

  /** RATE_LIMITED when the `limit`-th newest ask is still inside the window. */
  function checkWindow(nth: { created_at: number } | undefined, windowMs: number, now: number, what: string): void {
    if (!nth) return;
    const wait = Math.max(1, Math.ceil((nth.created_at + windowMs - now) / 1000));
    throw new SvcError('RATE_LIMITED', `join requests: ${what}`, wait);
  }

  /** A pending request, fetched for a decision: REQUEST_NOT_FOUND / _NOT_PENDING / _EXPIRED. */
  async function decidable(id: string, now: number, spaceRowId: number | undefined): Promise<Row> {
    const r = await selectById.get(id);
    if (!r || (spaceRowId !== undefined && r.space_row_id !== spaceRowId)) {
      throw new SvcError('REQUEST_NOT_FOUND', 'id: no join request has this id');
    }
    if (r.state !== 'pending') throw new SvcError('REQUEST_NOT_PENDING', `id: the request is ${r.state}`);
    if (r.expires_at <= now) throw new SvcError('REQUEST_EXPIRED', `id: the request lapsed at ${new Date(r.expires_at).toISOString()}`);
    return r;
  }

  const createTx = db.transaction(async (i: CreateRequestInput): Promise<JoinRequestRow> => {
    const space = i.space.id;
    await lapse.run(space, i.requester, i.now);
    const waiting = await selectPending.get(space, i.requester);
    if (waiting) throw new SvcError('REQUEST_PENDING', `request_id: ${waiting.id}`);
    const day = 24 * 60 * 60 * 1000;
    const hour = 60 * 60 * 1000;
    const perSpace = RATE_LIMITS.joinRequestsPerSpace.limit;
    const perKey = RATE_LIMITS.joinRequests.limit;
    const intoSpace = RATE_LIMITS.joinRequestsIntoSpace.limit;
    checkWindow(await nthNewestByKeyAndSpace.get(i.requester, space, i.now - day, perSpace - 1), day, i.now, `${perSpace} a day per KEY and SPACE`);
    checkWindow(await nthNewestByKey.get(i.requester, i.now - hour, perKey - 1), hour, i.now, `${perKey} an hour per KEY`);
    checkWindow(await nthNewestIntoSpace.get(space, i.now - hour, intoSpace - 1), hour, i.now, `${intoSpace} an hour into one SPACE`);
    await insert.run(i.id, space, i.requester, i.message, i.now, i.now + JOIN_REQUEST_TTL_MS);
    const told = [i.space.owner, ...(await firstAdmins.all(space, REQUEST_NOTICE_ADMINS)).map((a) => a.peer_id)];
    for (const peer of told) {
      if (i.notify === undefined || await i.notify(peer)) await deps.mailbox.deliver(peer, 'request', { requestId: i.id }, i.now);
    }
    return (await get(i.id, i.now))!;
  });

  const approveTx = db.transaction(async (i: DecideInput & { role: Role; tags: string[] }) => {
    const r = await decidable(i.requestId, i.now, i.space.id);
    await decide.run('approved', i.now, i.decider, i.role, JSON.stringify(i.tags), r.id);
    const admitted = await deps.members.admit(
      i.space,
      { peer: r.requester, role: i.role, tags: i.tags, broughtInBy: i.decider },
      i.decider,
      i.now,
    );
    await deps.mailbox.deliver(r.requester, 'decision', { requestId: r.id }, i.now);
    const revision = admitted.revision ?? (await deps.events.head(i.space.id)).revision;
    return { request: (await get(r.id, i.now))!, member: admitted.member, revision };
  });

  const declineTx = db.transaction(async (i: DecideInput): Promise<JoinRequestRow> => {
    const r = await decidable(i.requestId, i.now, i.space.id);
    await decide.run('declined', i.now, i.decider, null, null, r.id);
    await deps.mailbox.deliver(r.requester, 'decision', { requestId: r.id }, i.now);
    return (await get(r.id, i.now))!;
  });

  const withdrawTx = db.transaction(async (i: { requestId: string; requester: string; now: number }): Promise<JoinRequestRow> => {
    const r = await selectById.get(i.requestId);
    // Someone else's request reads as nonexistent (spec/3-errors.md status overview).
    if (!r || r.requester !== i.requester) throw new SvcError('REQUEST_NOT_FOUND', 'id: no join request of yours has this id');
    const current = toRequest(r, i.now);
    if (current.state !== 'pending') throw new SvcError('REQUEST_NOT_PENDING', `id: the request is ${current.state}`);
    await decide.run('withdrawn', i.now, null, null, null, r.id);
    return (await get(r.id, i.now))!;
  });

  return {
    byId: get,
    async pendingOf(spaceRowId, peer, now) {
      const r = await selectPending.get(spaceRowId, peer);
      if (!r || r.expires_at <= now) return undefined;
      return toRequest(r, now);
    },
    async listPending(spaceRowId, now, after, limit) {
      const items = (await selectPendingPage.all(spaceRowId, now, after, limit)).map((r) => ({ ...toRequest(r, now), cursor: r.cursor }));
      return { items, waiting: (await countPending.get(spaceRowId, now))!.n };
    },
    create: async (i) => await createTx.under({ spaces: [i.space.id], keys: [i.requester] }, i),
    approve: async (i) => await approveTx.under({ spaces: [i.space.id] }, i),
    decline: async (i) => await declineTx.under({ spaces: [i.space.id] }, i),
    withdraw: async (i) => await withdrawTx.immediate(i),
    withdrawOnGrant,
  };
}
