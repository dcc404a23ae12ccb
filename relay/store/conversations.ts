/**
 * The conversation aggregate (migration 007; spec/1-concepts.md "Conversation and message",
 * "States: Conversation"): conversations, their members with each member's own state, read
 * position, clear position and (sealed pairs) lock, and the acquaintance and message-request
 * facts the send pipeline asks about (relay/messages/).
 *
 * Writes MUST run inside the caller's write transaction (relay/messages/ runs every command as
 * one immediate transaction through the commit queue); reads run anywhere. Statements are
 * prepared once.
 *
 * What a member sees, the rule relay/messages/view.ts builds the conversation view on, written
 * here once for code and once for SQL side by side: messages with seq above its `cleared_seq`
 * and, once it left a group, at most its `left_seq` (`visibleRange`, `SHOWN`); its list orders
 * the conversation by the newest message, or for a member who left by the newest as of its
 * leaving (`listedAt`, `LISTED_AT`); a member who left sees the members as they were when it
 * left (`leftMembers`, kept by `leave` in the same transaction; migration 008).
 */
import type { Db } from './database.js';
import { dialectOf, type Dialect } from './dialect.js';

export type ConversationKind = 'pair' | 'group';
export type MemberState = 'accepted' | 'requested' | 'declined' | 'left';

export interface ConversationRow {
  conversationId: string;
  kind: ConversationKind;
  startedBy: string;
  /** Pairs: the two peer ids ascending, joined by `:`; null for a group. */
  pairKey: string | null;
  sealed: boolean;
  /** A sealed pair's generation-1 commitment (64 hex). */
  commitment: string | null;
  about: string | null;
  createdAt: number;
  /** The seq of the newest message ever assigned (never moves back). */
  lastSeq: number;
  lastMessageAt: number;
}

export interface MemberRow {
  conversationId: string;
  peerId: string;
  state: MemberState;
  readSeq: number;
  clearedSeq: number;
  leftSeq: number | null;
  /** For a member who left: the conversation's `lastMessageAt` when it left. */
  leftMessageAt: number | null;
  changedAt: number;
  lock: string | null;
  lockSender: string | null;
}

/** A member's state and its time as another member saw it at one moment. */
export interface MemberStateRow {
  peerId: string;
  state: MemberState;
  changedAt: number;
}

/** A conversation with the caller's own member row, as lists read it. */
export interface MembershipRow {
  conversation: ConversationRow;
  me: MemberRow;
}

/** A list position: `listedAt` and the conversation id (next_before). */
export interface ListCursor {
  listedAt: number;
  conversationId: string;
}

export interface NewConversation {
  conversationId: string;
  kind: ConversationKind;
  startedBy: string;
  pairKey: string | null;
  sealed: boolean;
  commitment: string | null;
  about: string | null;
  now: number;
}

export interface NewMember {
  peerId: string;
  state: MemberState;
  lock?: string | undefined;
  lockSender?: string | undefined;
}

export interface ConversationStore {
  byId(conversationId: string): Promise<ConversationRow | undefined>;
  /** The pair of two KEYS (ordinary or sealed), if any. */
  pair(a: string, b: string, sealed: boolean): Promise<ConversationRow | undefined>;
  members(conversationId: string): Promise<MemberRow[]>;
  /** Every member's state and time when `viewer` left (empty if it did not leave). */
  leftMembers(conversationId: string, viewer: string): Promise<MemberStateRow[]>;
  member(conversationId: string, peerId: string): Promise<MemberRow | undefined>;
  /** Conversations `peer` is in with one of `states` and something not cleared, newest first by `listedAt`. */
  listFor(peer: string, states: readonly MemberState[], before: ListCursor | undefined, limit: number): Promise<MembershipRow[]>;
  /** Conversations `peer` is in whose state is `requested` (waiting requests), and with unread messages. */
  waitingCounts(peer: string): Promise<{ requests: number; unread: number }>;

  // ---- acquaintance (relay/messages/acquaintance.ts) ----
  /** Both are the owner or a member of one SPACE (other than `except`, the welcome SPACE if any). */
  shareSpace(a: string, b: string, except?: number | undefined): Promise<boolean>;
  /** `r` is `accepted` in the pair of `r` and `s` (ordinary or sealed). */
  acceptedPair(r: string, s: string): Promise<boolean>;
  /** `r` started a conversation that has `s` as a member. */
  startedWith(r: string, s: string): Promise<boolean>;
  /** A conversation `s` started where `r` is `requested` or `declined`: the request still waiting, as `s` sees it. */
  waitingRequest(s: string, r: string): Promise<string | undefined>;

  // ---- message requests ----
  /** Requests `sender` sent since `since` (ms), and the oldest of them. */
  requestsSentSince(sender: string, since: number): Promise<{ count: number; oldest: number | null }>;
  recordRequest(sender: string, recipient: string, conversationId: string, now: number): Promise<void>;
  /** How many requests wait for `recipient` (its state `requested`). */
  waitingFor(recipient: string): Promise<number>;
  /** The conversation of `recipient`'s oldest waiting request. */
  oldestWaitingFor(recipient: string): Promise<string | undefined>;

  // ---- writes (inside the caller's transaction) ----
  insert(c: NewConversation, members: readonly NewMember[]): Promise<void>;
  /** Record a new message's seq and time. */
  advance(conversationId: string, seq: number, at: number): Promise<void>;
  setState(conversationId: string, peerId: string, state: MemberState, now: number): Promise<void>;
  /** `peerId` leaves at the conversation's newest message: keeps what it may still see (`leftMembers`). */
  leave(c: Pick<ConversationRow, 'conversationId' | 'lastSeq' | 'lastMessageAt'>, peerId: string, now: number): Promise<void>;
  setRead(conversationId: string, peerId: string, seq: number): Promise<void>;
  setCleared(conversationId: string, peerId: string, seq: number): Promise<void>;
}

interface ConversationDbRow {
  conversation_id: string;
  kind: ConversationKind;
  started_by: string;
  pair_key: string | null;
  sealed: number;
  commitment: string | null;
  about: string | null;
  created_at: number;
  last_seq: number;
  last_message_at: number;
}

interface MemberDbRow {
  conversation_id: string;
  peer_id: string;
  state: MemberState;
  read_seq: number;
  cleared_seq: number;
  left_seq: number | null;
  left_message_at: number | null;
  changed_at: number;
  lock: string | null;
  lock_sender: string | null;
}

function toConversation(r: ConversationDbRow): ConversationRow {
  return {
    conversationId: r.conversation_id,
    kind: r.kind,
    startedBy: r.started_by,
    pairKey: r.pair_key,
    sealed: r.sealed === 1,
    commitment: r.commitment,
    about: r.about,
    createdAt: r.created_at,
    lastSeq: r.last_seq,
    lastMessageAt: r.last_message_at,
  };
}

function toMember(r: MemberDbRow): MemberRow {
  return {
    conversationId: r.conversation_id,
    peerId: r.peer_id,
    state: r.state,
    readSeq: r.read_seq,
    clearedSeq: r.cleared_seq,
    leftSeq: r.left_seq,
    leftMessageAt: r.left_message_at,
    changedAt: r.changed_at,
    lock: r.lock,
    lockSender: r.lock_sender,
  };
}

/** The pair key of two KEYS: both peer ids ascending. */
export function pairKeyOf(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** The seqs `m` may read: above its clear position and, after leaving, up to its leaving. */
export function visibleRange(m: Pick<MemberRow, 'clearedSeq' | 'leftSeq'>, lastSeq: number): { from: number; to: number } {
  return { from: m.clearedSeq, to: m.leftSeq === null ? lastSeq : Math.min(m.leftSeq, lastSeq) };
}

/** Something left to show `m` (c: conversations, m: its member row): `visibleRange` in SQL, not empty. */
const shown = (sql: Dialect): string => `${sql.least}(c.last_seq, COALESCE(m.left_seq, c.last_seq)) > m.cleared_seq`;

/** When `m`'s list places the conversation: its newest message, or the newest as of its leaving. */
export function listedAt(c: Pick<ConversationRow, 'lastMessageAt'>, m: Pick<MemberRow, 'leftSeq' | 'leftMessageAt' | 'changedAt'>): number {
  return m.leftSeq === null ? c.lastMessageAt : (m.leftMessageAt ?? m.changedAt);
}

/** `listedAt` in SQL. */
const LISTED_AT = 'CASE WHEN m.left_seq IS NULL THEN c.last_message_at ELSE COALESCE(m.left_message_at, m.changed_at) END';

const MEMBER_CONV_COLUMNS = `c.conversation_id, c.kind, c.started_by, c.pair_key, c.sealed, c.commitment, c.about,
  c.created_at, c.last_seq, c.last_message_at,
  m.peer_id AS m_peer_id, m.state AS m_state, m.read_seq AS m_read_seq, m.cleared_seq AS m_cleared_seq,
  m.left_seq AS m_left_seq, m.left_message_at AS m_left_message_at, m.changed_at AS m_changed_at, m.lock AS m_lock, m.lock_sender AS m_lock_sender`;

type JoinedRow = ConversationDbRow & {
  m_peer_id: string;
  m_state: MemberState;
  m_read_seq: number;
  m_cleared_seq: number;
  m_left_seq: number | null;
  m_left_message_at: number | null;
  m_changed_at: number;
  m_lock: string | null;
  m_lock_sender: string | null;
};

function toMembership(r: JoinedRow): MembershipRow {
  return {
    conversation: toConversation(r),
    me: toMember({
      conversation_id: r.conversation_id,
      peer_id: r.m_peer_id,
      state: r.m_state,
      read_seq: r.m_read_seq,
      cleared_seq: r.m_cleared_seq,
      left_seq: r.m_left_seq,
      left_message_at: r.m_left_message_at,
      changed_at: r.m_changed_at,
      lock: r.m_lock,
      lock_sender: r.m_lock_sender,
    }),
  };
}

export function createConversationStore(db: Db): ConversationStore {
  const sql = dialectOf(db);
  const SHOWN = shown(sql);
  const selectById = db.prepare<[string], ConversationDbRow>('SELECT * FROM conversations WHERE conversation_id = ?');
  const selectPair = db.prepare<[string, number], ConversationDbRow>('SELECT * FROM conversations WHERE pair_key = ? AND sealed = ?');
  const selectMembers = db.prepare<[string], MemberDbRow>('SELECT * FROM conversation_members WHERE conversation_id = ? ORDER BY peer_id');
  const selectMember = db.prepare<[string, string], MemberDbRow>(
    'SELECT * FROM conversation_members WHERE conversation_id = ? AND peer_id = ?',
  );
  const selectLeftMembers = db.prepare<[string, string], { peer_id: string; state: MemberState; changed_at: number }>(
    'SELECT peer_id, state, changed_at FROM conversation_left_members WHERE conversation_id = ? AND viewer = ? ORDER BY peer_id',
  );
  const selectList = db.prepare<{ peer: string; states: string; at: number; id: string; limit: number }, JoinedRow>(
    `SELECT ${MEMBER_CONV_COLUMNS}
       FROM conversation_members m JOIN conversations c ON c.conversation_id = m.conversation_id
      WHERE m.peer_id = @peer AND m.state IN (${sql.jsonEach('@states')}) AND ${SHOWN}
        AND (${LISTED_AT} < @at OR (${LISTED_AT} = @at AND c.conversation_id < @id))
      ORDER BY ${LISTED_AT} DESC, c.conversation_id DESC LIMIT @limit`,
  );
  const countWaiting = db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM conversation_members m JOIN conversations c ON c.conversation_id = m.conversation_id
      WHERE m.peer_id = ? AND m.state = 'requested' AND ${SHOWN}`,
  );
  const countUnread = db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM conversation_members m JOIN conversations c ON c.conversation_id = m.conversation_id
      WHERE m.peer_id = ? AND m.state IN ('accepted', 'left')
        AND EXISTS (SELECT 1 FROM messages g WHERE g.conversation_id = m.conversation_id AND g.author <> m.peer_id
                     AND g.seq > ${sql.greatest}(m.read_seq, m.cleared_seq) AND g.seq <= COALESCE(m.left_seq, c.last_seq))`,
  );
  // SPACES each KEY is in: as owner or as a member.
  const selectShare = db.prepare<{ a: string; b: string; except: number }, { one: number }>(
    `WITH sa AS (SELECT space_row_id AS s FROM members WHERE peer_id = @a UNION SELECT id FROM spaces WHERE owner = @a),
          sb AS (SELECT space_row_id AS s FROM members WHERE peer_id = @b UNION SELECT id FROM spaces WHERE owner = @b)
     SELECT 1 AS one FROM sa JOIN sb ON sa.s = sb.s WHERE sa.s <> @except LIMIT 1`,
  );
  const selectAcceptedPair = db.prepare<[string, string], { one: number }>(
    `SELECT 1 AS one FROM conversations c JOIN conversation_members m ON m.conversation_id = c.conversation_id
      WHERE c.pair_key = ? AND m.peer_id = ? AND m.state = 'accepted' LIMIT 1`,
  );
  const selectStartedWith = db.prepare<[string, string], { one: number }>(
    `SELECT 1 AS one FROM conversations c JOIN conversation_members m ON m.conversation_id = c.conversation_id
      WHERE c.started_by = ? AND m.peer_id = ? LIMIT 1`,
  );
  const selectWaitingRequest = db.prepare<[string, string], { conversation_id: string }>(
    `SELECT c.conversation_id FROM conversations c JOIN conversation_members m ON m.conversation_id = c.conversation_id
      WHERE c.started_by = ? AND m.peer_id = ? AND m.state IN ('requested', 'declined') LIMIT 1`,
  );
  const selectSent = db.prepare<[string, number], { n: number; oldest: number | null }>(
    'SELECT count(*) AS n, min(sent_at) AS oldest FROM message_requests_sent WHERE sender = ? AND sent_at > ?',
  );
  const insertRequest = db.prepare('INSERT INTO message_requests_sent (sender, recipient, conversation_id, sent_at) VALUES (?, ?, ?, ?)');
  const countWaitingFor = db.prepare<[string], { n: number }>(
    "SELECT count(*) AS n FROM conversation_members WHERE peer_id = ? AND state = 'requested'",
  );
  const selectOldestWaiting = db.prepare<[string], { conversation_id: string }>(
    `SELECT conversation_id FROM conversation_members WHERE peer_id = ? AND state = 'requested'
      ORDER BY changed_at, conversation_id LIMIT 1`,
  );
  const insertConversation = db.prepare(
    `INSERT INTO conversations (conversation_id, kind, started_by, pair_key, sealed, commitment, about, created_at, last_seq, last_message_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
  );
  const insertMember = db.prepare(
    `INSERT INTO conversation_members (conversation_id, peer_id, state, changed_at, lock, lock_sender) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const updateAdvance = db.prepare('UPDATE conversations SET last_seq = ?, last_message_at = ? WHERE conversation_id = ? AND last_seq < ?');
  const updateState = db.prepare('UPDATE conversation_members SET state = ?, changed_at = ? WHERE conversation_id = ? AND peer_id = ?');
  const updateLeave = db.prepare(
    "UPDATE conversation_members SET state = 'left', left_seq = ?, left_message_at = ?, changed_at = ? WHERE conversation_id = ? AND peer_id = ?",
  );
  const insertLeftMembers = db.prepare<{ id: string; viewer: string }>(
    `INSERT INTO conversation_left_members (conversation_id, viewer, peer_id, state, changed_at)
     SELECT conversation_id, @viewer, peer_id, state, changed_at FROM conversation_members WHERE conversation_id = @id`,
  );
  const updateRead = db.prepare(`UPDATE conversation_members SET read_seq = ${sql.greatest}(read_seq, ?) WHERE conversation_id = ? AND peer_id = ?`);
  const updateCleared = db.prepare(
    `UPDATE conversation_members SET cleared_seq = ${sql.greatest}(cleared_seq, ?) WHERE conversation_id = ? AND peer_id = ?`,
  );

  return {
    async byId(id) {
      const r = await selectById.get(id);
      return r === undefined ? undefined : toConversation(r);
    },
    async pair(a, b, sealed) {
      const r = await selectPair.get(pairKeyOf(a, b), sealed ? 1 : 0);
      return r === undefined ? undefined : toConversation(r);
    },
    members: async (id) => (await selectMembers.all(id)).map(toMember),
    leftMembers: async (id, viewer) => (await selectLeftMembers.all(id, viewer)).map((r) => ({ peerId: r.peer_id, state: r.state, changedAt: r.changed_at })),
    async member(id, peer) {
      const r = await selectMember.get(id, peer);
      return r === undefined ? undefined : toMember(r);
    },
    async listFor(peer, states, before, limit) {
      const at = before?.listedAt ?? Number.MAX_SAFE_INTEGER;
      const id = before?.conversationId ?? '\uffff';
      return (await selectList.all({ peer, states: JSON.stringify(states), at, id, limit })).map(toMembership);
    },
    waitingCounts: async (peer) => ({ requests: (await countWaiting.get(peer))?.n ?? 0, unread: (await countUnread.get(peer))?.n ?? 0 }),
    shareSpace: async (a, b, except) => await selectShare.get({ a, b, except: except ?? -1 }) !== undefined,
    acceptedPair: async (r, s) => await selectAcceptedPair.get(pairKeyOf(r, s), r) !== undefined,
    startedWith: async (r, s) => await selectStartedWith.get(r, s) !== undefined,
    waitingRequest: async (s, r) => (await selectWaitingRequest.get(s, r))?.conversation_id,
    async requestsSentSince(sender, since) {
      const r = await selectSent.get(sender, since);
      return { count: r?.n ?? 0, oldest: r?.oldest ?? null };
    },
    recordRequest: async (sender, recipient, id, now) => void (await insertRequest.run(sender, recipient, id, now)),
    waitingFor: async (recipient) => (await countWaitingFor.get(recipient))?.n ?? 0,
    oldestWaitingFor: async (recipient) => (await selectOldestWaiting.get(recipient))?.conversation_id,
    async insert(c, members) {
      await insertConversation.run(c.conversationId, c.kind, c.startedBy, c.pairKey, c.sealed ? 1 : 0, c.commitment, c.about, c.now, c.now);
      for (const m of members) await insertMember.run(c.conversationId, m.peerId, m.state, c.now, m.lock ?? null, m.lockSender ?? null);
    },
    advance: async (id, seq, at) => void (await updateAdvance.run(seq, at, id, seq)),
    setState: async (id, peer, state, now) => void (await updateState.run(state, now, id, peer)),
    async leave(c, peer, now) {
      await updateLeave.run(c.lastSeq, c.lastMessageAt, now, c.conversationId, peer);
      await insertLeftMembers.run({ id: c.conversationId, viewer: peer });
    },
    setRead: async (id, peer, seq) => void (await updateRead.run(seq, id, peer)),
    setCleared: async (id, peer, seq) => void (await updateCleared.run(seq, id, peer)),
  };
}
