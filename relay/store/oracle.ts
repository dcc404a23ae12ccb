/**
 * Oracle versions, documents and watches (migration 010; spec/1-concepts.md "Oracle document
 * and version", "States: Oracle proposal"). A version's words live in its `version` post; this
 * aggregate keeps its state and decision, the current version of each oracle SPACE, and who
 * watches which document.
 *
 * Writes (`insert`, `makeCurrent`, `decline`) are called by the append pipeline INSIDE its write
 * transaction (relay/oracle/decide.ts), so a version, its state and the mailbox rows it causes
 * commit together or not at all. Reads may run anywhere.
 */
import type { Db } from './database.js';

export type VersionState = 'current' | 'superseded' | 'waiting' | 'declined' | 'out_of_date';

export interface VersionDecision {
  kind: 'go' | 'veto';
  /** Peer id of the decider (the service's own peer id for the service reviewer). */
  by: string;
  /** A veto's reason; null for a go. */
  reason: string | null;
  /** The deciding post; null when no post records the decision. */
  postId: string | null;
  /** Unix ms. */
  at: number;
}

export interface VersionRow {
  postRowId: number;
  spaceRowId: number;
  postId: string;
  seq: number;
  author: string;
  /** The version it was based on; null for the first. */
  supersedes: string | null;
  state: VersionState;
  /** Stored as a proposal (its author was not a decider). */
  proposed: boolean;
  /** Unix ms. */
  createdAt: number;
  changedAt: number;
  decision: VersionDecision | null;
}

export interface NewVersion {
  postRowId: number;
  spaceRowId: number;
  postId: string;
  seq: number;
  author: string;
  supersedes: string | null;
  state: 'current' | 'waiting';
  proposed: boolean;
  createdAt: number;
}

/** The current version of one oracle SPACE. */
export interface OracleDocument {
  spaceRowId: number;
  currentPostId: string;
  /** When it became current (Unix ms). */
  changedAt: number;
}

export interface MadeCurrent {
  /** The version that was current before, now superseded (null for the first). */
  superseded: string | null;
  /** Proposals that were waiting and are now out of date. */
  outOfDate: VersionRow[];
}

export interface OracleStore {
  /** The current version of an oracle SPACE, or undefined before its first. */
  current(spaceRowId: number): Promise<VersionRow | undefined>;
  /** The document row (current version and when it became current). */
  document(spaceRowId: number): Promise<OracleDocument | undefined>;
  /** One version by its post id (any SPACE). */
  version(postId: string): Promise<VersionRow | undefined>;
  /** Versions newest first (highest seq), with seq < `before` when given, at most `limit`. */
  versions(spaceRowId: number, before: number | undefined, limit: number): Promise<VersionRow[]>;
  /** Waiting proposals in a SPACE, or only `author`'s there. */
  waitingCount(spaceRowId: number, author?: string): Promise<number>;
  /** Proposals `author` made since `since` (ms), across SPACES, and the oldest one's time. */
  proposedSince(author: string, since: number): Promise<{ count: number; oldest: number | null }>;
  /**
   * The admins told of a proposal besides the owner: the first `limit` by admission, as join
   * requests are told (spec Limits "a request or proposal reaches the owner and the first 32
   * admins").
   */
  firstAdmins(spaceRowId: number, limit: number): Promise<string[]>;
  /** Peers watching the document of a SPACE. */
  watchers(spaceRowId: number): Promise<string[]>;
  /** Store a new version row. Inside the append's transaction. */
  insert(v: NewVersion): Promise<void>;
  /**
   * Make `postId` the current version of its SPACE at `now`: the old current becomes
   * superseded, every other waiting proposal out of date, the document row follows. `decision`
   * records the go that did it (none when the owner or an admin posted it). Inside the
   * append's transaction.
   */
  makeCurrent(spaceRowId: number, postId: string, decision: VersionDecision | null, now: number): Promise<MadeCurrent>;
  /** A waiting proposal is vetoed. Inside the append's transaction; false if it was not waiting. */
  decline(postId: string, decision: VersionDecision, now: number): Promise<boolean>;
}

interface Row {
  post_row_id: number;
  space_row_id: number;
  post_id: string;
  seq: number;
  author: string;
  supersedes: string | null;
  state: string;
  proposed: number;
  created_at: number;
  changed_at: number;
  decision_kind: string | null;
  decision_by: string | null;
  decision_reason: string | null;
  decision_post_id: string | null;
  decided_at: number | null;
}

function toVersion(r: Row): VersionRow {
  return {
    postRowId: r.post_row_id,
    spaceRowId: r.space_row_id,
    postId: r.post_id,
    seq: r.seq,
    author: r.author,
    supersedes: r.supersedes,
    state: r.state as VersionState,
    proposed: r.proposed === 1,
    createdAt: r.created_at,
    changedAt: r.changed_at,
    decision:
      r.decision_kind === null || r.decided_at === null
        ? null
        : {
            kind: r.decision_kind as 'go' | 'veto',
            by: r.decision_by ?? '',
            reason: r.decision_reason,
            postId: r.decision_post_id,
            at: r.decided_at,
          },
  };
}

export function createOracleStore(db: Db): OracleStore {
  const selectCurrent = db.prepare<[number], Row>("SELECT * FROM oracle_versions WHERE space_row_id = ? AND state = 'current'");
  const selectDocument = db.prepare<[number], { space_row_id: number; current_post_id: string; changed_at: number }>(
    'SELECT * FROM oracle_documents WHERE space_row_id = ?',
  );
  const selectVersion = db.prepare<[string], Row>('SELECT * FROM oracle_versions WHERE post_id = ?');
  const selectPage = db.prepare<[number, number, number], Row>(
    'SELECT * FROM oracle_versions WHERE space_row_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?',
  );
  const selectWaiting = db.prepare<[number], Row>("SELECT * FROM oracle_versions WHERE space_row_id = ? AND state = 'waiting' ORDER BY seq");
  const countWaiting = db.prepare<[number], { n: number }>(
    "SELECT count(*) AS n FROM oracle_versions WHERE space_row_id = ? AND state = 'waiting'",
  );
  const countWaitingBy = db.prepare<[number, string], { n: number }>(
    "SELECT count(*) AS n FROM oracle_versions WHERE space_row_id = ? AND author = ? AND state = 'waiting'",
  );
  const countProposed = db.prepare<[string, number], { n: number; oldest: number | null }>(
    'SELECT count(*) AS n, min(created_at) AS oldest FROM oracle_versions WHERE proposed = 1 AND author = ? AND created_at > ?',
  );
  const selectAdmins = db.prepare<[number, number], { peer_id: string }>(
    "SELECT peer_id FROM members WHERE space_row_id = ? AND role = 'admin' ORDER BY admitted_at, peer_id LIMIT ?",
  );
  const selectWatchers = db.prepare<[number], { peer: string }>('SELECT peer FROM oracle_watches WHERE space_row_id = ? ORDER BY created_at, peer');
  const insertRow = db.prepare(
    `INSERT INTO oracle_versions (post_row_id, space_row_id, post_id, seq, author, supersedes, state, proposed, created_at, changed_at)
     VALUES (@postRowId, @spaceRowId, @postId, @seq, @author, @supersedes, @state, @proposed, @createdAt, @createdAt)`,
  );
  const setState = db.prepare<[string, number, string]>('UPDATE oracle_versions SET state = ?, changed_at = ? WHERE post_id = ?');
  const setDecision = db.prepare<{ postId: string; state: string; kind: string; by: string; reason: string | null; decisionPost: string | null; at: number }>(
    `UPDATE oracle_versions SET state = @state, changed_at = @at, decision_kind = @kind, decision_by = @by,
            decision_reason = @reason, decision_post_id = @decisionPost, decided_at = @at
      WHERE post_id = @postId`,
  );
  const upsertDocument = db.prepare(
    `INSERT INTO oracle_documents (space_row_id, current_post_id, changed_at) VALUES (?, ?, ?)
     ON CONFLICT (space_row_id) DO UPDATE SET current_post_id = excluded.current_post_id, changed_at = excluded.changed_at`,
  );

  const record = async (postId: string, state: VersionState, d: VersionDecision): Promise<void> => {
    await setDecision.run({ postId, state, kind: d.kind, by: d.by, reason: d.reason, decisionPost: d.postId, at: d.at });
  };

  return {
    async current(spaceRowId) {
      const r = await selectCurrent.get(spaceRowId);
      return r === undefined ? undefined : toVersion(r);
    },
    async document(spaceRowId) {
      const r = await selectDocument.get(spaceRowId);
      return r === undefined ? undefined : { spaceRowId: r.space_row_id, currentPostId: r.current_post_id, changedAt: r.changed_at };
    },
    async version(postId) {
      const r = await selectVersion.get(postId);
      return r === undefined ? undefined : toVersion(r);
    },
    async versions(spaceRowId, before, limit) {
      return (await selectPage.all(spaceRowId, before ?? Number.MAX_SAFE_INTEGER, limit)).map(toVersion);
    },
    async waitingCount(spaceRowId, author) {
      const r = author === undefined ? await countWaiting.get(spaceRowId) : await countWaitingBy.get(spaceRowId, author);
      return r?.n ?? 0;
    },
    async proposedSince(author, since) {
      const r = await countProposed.get(author, since);
      return { count: r?.n ?? 0, oldest: r?.oldest ?? null };
    },
    async firstAdmins(spaceRowId, limit) {
      return (await selectAdmins.all(spaceRowId, limit)).map((r) => r.peer_id);
    },
    async watchers(spaceRowId) {
      return (await selectWatchers.all(spaceRowId)).map((r) => r.peer);
    },
    async insert(v) {
      await insertRow.run({ ...v, proposed: v.proposed ? 1 : 0 });
    },
    async makeCurrent(spaceRowId, postId, decision, now) {
      const before = await selectCurrent.get(spaceRowId);
      if (before !== undefined) await setState.run('superseded', now, before.post_id);
      const outOfDate = (await selectWaiting
        .all(spaceRowId))
        .filter((r) => r.post_id !== postId)
        .map(toVersion);
      for (const v of outOfDate) await setState.run('out_of_date', now, v.postId);
      if (decision === null) await setState.run('current', now, postId);
      else await record(postId, 'current', decision);
      await upsertDocument.run(spaceRowId, postId, now);
      return { superseded: before?.post_id ?? null, outOfDate: outOfDate.map((v) => ({ ...v, state: 'out_of_date', changedAt: now })) };
    },
    async decline(postId, decision, now) {
      const r = await selectVersion.get(postId);
      if (r === undefined || r.state !== 'waiting') return false;
      await record(postId, 'declined', { ...decision, at: now });
      return true;
    },
  };
}
