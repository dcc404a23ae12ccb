/**
 * The task aggregate (migrations 009, 019 and 020): task rows of work SPACES, their `after` links,
 * the confirmations of each cycle, the words each change replaced, the retired tasks, and the
 * numbered attempts of a task added with `numbered_attempts` and their confirmations. Statements are prepared once. The writes here are steps of one
 * command and MUST run inside the caller's write transaction (relay/tasks/ runs each command
 * as one work of the commit queue, so each is one immediate transaction); the state machine,
 * roles and refusals live in relay/tasks/, not here.
 *
 * Title, body, tag and a rejection's reason are peer-written text, to be fenced when rendered.
 */
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';

export type StoredTaskState = 'open' | 'held' | 'done' | 'accepted';

/** One task as stored (a `held` row may carry an expired claim: readers decide what it reads as). */
export interface TaskRow {
  spaceRowId: number;
  number: number;
  title: string;
  body: string;
  tag: string | null;
  after: number[];
  /** How many of `after` are not yet accepted. */
  waiting: number;
  state: StoredTaskState;
  holder: string | null;
  claimExpiresAt: number | null;
  resultPostId: string | null;
  doneBy: string | null;
  cycle: number;
  rejected: { reason: string; by: string; at: number } | null;
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  /** The words' revision: 1 when added, one more at each change. */
  revision: number;
  /** The revision the holder took the task at; null while nobody holds it. */
  heldRevision: number | null;
  /** Added with `numbered_attempts`: any writer marks it done, each done a numbered attempt. */
  numberedAttempts: boolean;
  /** Attempts made at it across every cycle (each attempt's number is the count when made). */
  attempts: number;
  /** The attempt of record while done or accepted (`doneBy` and `resultPostId` are its). */
  attempt: number | null;
}

/** One numbered attempt at a task (migration 020). */
export interface TaskAttempt {
  attempt: number;
  cycle: number;
  /** The KEY that submitted it. */
  by: string;
  postId: string;
  /** The author of its post, which may be another KEY's. */
  author: string;
  at: number;
  rejected: { by: string; reason: string; at: number } | null;
}

/** A retired task, kept under its number (migration 018). */
export interface RetiredTaskRow {
  spaceRowId: number;
  number: number;
  title: string;
  body: string;
  tag: string | null;
  after: number[];
  revision: number;
  cycle: number;
  createdBy: string;
  createdAt: number;
  retired: { reason: string; by: string; at: number };
  numberedAttempts: boolean;
}

/** Words a change replaced: the revision they were, and who ended them, when and why. */
export interface TaskRevisionRow {
  revision: number;
  title: string;
  body: string;
  tag: string | null;
  after: number[];
  ended: { by: string; at: number; reason: string };
}

/** What a change sets (only the fields sent), and who changes it, when and why. */
export interface TaskChangeWrite {
  title?: string;
  body?: string;
  tag?: string | null;
  after?: number[];
  by: string;
  at: number;
  reason: string;
}

export interface TaskCheck {
  by: string;
  postId: string | null;
  at: number;
}

export interface NewTask {
  spaceRowId: number;
  title: string;
  body: string;
  tag: string | null;
  after: number[];
  createdBy: string;
  now: number;
  numberedAttempts?: boolean;
}

/** A page of a SPACE's tasks, newest (highest number) first. */
export interface TaskPageQuery {
  spaceRowId: number;
  /** Only numbers below this one. */
  before?: number | undefined;
  limit: number;
  /** The state as read at `now` (an expired claim reads as open). */
  state?: StoredTaskState | undefined;
  tag?: string | undefined;
  now: number;
}

export interface TaskStore {
  /** Last number given and tasks not yet accepted in a SPACE (zeros when it has none). */
  counts(spaceRowId: number): Promise<{ lastNumber: number; notAccepted: number }>;
  get(spaceRowId: number, number: number): Promise<TaskRow | undefined>;
  /** The confirmations of one cycle, oldest first. */
  checks(spaceRowId: number, number: number, cycle: number): Promise<TaskCheck[]>;
  page(q: TaskPageQuery): Promise<{ items: TaskRow[]; hasMore: boolean }>;
  /** The task `peer` holds in the SPACE (its claim live or expired, while nobody took it over). */
  heldBy(spaceRowId: number, peer: string): Promise<TaskRow | undefined>;
  /** The lowest-numbered task that is open (or held under an expired claim) with every `after` accepted. */
  lowestClaimable(spaceRowId: number, now: number, tag?: string): Promise<TaskRow | undefined>;
  /** The lowest-numbered done task `peer` neither did nor checked in its current cycle. */
  lowestToVerify(spaceRowId: number, peer: string, tag?: string): Promise<TaskRow | undefined>;
  /** Writes (inside the caller's transaction): */
  insert(t: NewTask): Promise<TaskRow>;
  claim(spaceRowId: number, number: number, holder: string, expiresAt: number, now: number): Promise<void>;
  release(spaceRowId: number, number: number, now: number): Promise<void>;
  markDone(spaceRowId: number, number: number, doneBy: string, postId: string, now: number): Promise<void>;
  /** Accept a done task; each task waiting for it waits for one fewer. */
  accept(spaceRowId: number, number: number, now: number): Promise<void>;
  addCheck(spaceRowId: number, number: number, cycle: number, check: TaskCheck): Promise<void>;
  /** Back to open in a new cycle, with the rejection recorded. */
  reject(spaceRowId: number, number: number, rejected: { reason: string; by: string; at: number }): Promise<void>;
  /** A retired task by its number. */
  retiredGet(spaceRowId: number, number: number): Promise<RetiredTaskRow | undefined>;
  /** A page of retired tasks, newest first. */
  retiredPage(q: { spaceRowId: number; before?: number | undefined; limit: number; tag?: string | undefined }): Promise<{ items: RetiredTaskRow[]; hasMore: boolean }>;
  /** Earlier words of a task, newest first, below revision `before`. */
  revisions(spaceRowId: number, number: number, before: number | undefined, limit: number): Promise<{ items: TaskRevisionRow[]; hasMore: boolean }>;
  /** The numbers of the tasks whose `after` names `number`. */
  dependents(spaceRowId: number, number: number): Promise<number[]>;
  /** New words: the old ones kept as a revision, `after` links and the waiting count rewritten. */
  change(spaceRowId: number, number: number, c: TaskChangeWrite): Promise<void>;
  /**
   * Retire a task not yet accepted: kept in task_retired, out of tasks; each task that waited
   * for it waits instead for what it waited for (`rewired`: each dependent's new `after`).
   */
  retire(spaceRowId: number, number: number, retired: { reason: string; by: string; at: number }, rewired: ReadonlyMap<number, number[]>): Promise<void>;
  /** The attempts of one cycle, by number. */
  attemptsIn(spaceRowId: number, number: number, cycle: number): Promise<TaskAttempt[]>;
  /** One attempt by its number. */
  attemptGet(spaceRowId: number, number: number, attempt: number): Promise<TaskAttempt | undefined>;
  /** A rejected attempt of any cycle whose result was this post, the latest first. */
  rejectedWithPost(spaceRowId: number, number: number, postId: string): Promise<TaskAttempt | undefined>;
  /** The confirmations of one attempt, oldest first. */
  attemptChecks(spaceRowId: number, number: number, attempt: number): Promise<TaskCheck[]>;
  /**
   * Record attempt `a.attempt` (one more than the task's count). The first of a cycle makes an
   * open or held task done with it as the attempt of record, ending any claim; a later one only
   * counts.
   */
  addAttempt(spaceRowId: number, number: number, a: Omit<TaskAttempt, 'rejected'>, first: boolean): Promise<void>;
  addAttemptCheck(spaceRowId: number, number: number, attempt: number, check: TaskCheck): Promise<void>;
  rejectAttempt(spaceRowId: number, number: number, attempt: number, rejected: { by: string; reason: string; at: number }): Promise<void>;
  /** Make `a` the attempt of record of a done task: its submitter and post on the row. */
  setRecord(spaceRowId: number, number: number, a: TaskAttempt, now: number): Promise<void>;
}

interface Row {
  space_row_id: number;
  number: number;
  title: string;
  body: string;
  tag: string | null;
  after_json: string;
  waiting: number;
  state: StoredTaskState;
  holder: string | null;
  claim_expires_at: number | null;
  result_post_id: string | null;
  done_by: string | null;
  cycle: number;
  rejected_reason: string | null;
  rejected_by: string | null;
  rejected_at: number | null;
  created_by: string;
  created_at: number;
  updated_at: number;
  revision: number;
  held_revision: number | null;
  numbered_attempts: number;
  attempts: number;
  attempt: number | null;
}

interface AttemptRow {
  attempt: number;
  cycle: number;
  by: string;
  post_id: string;
  author: string;
  at: number;
  rejected_by: string | null;
  rejected_reason: string | null;
  rejected_at: number | null;
}

interface RetiredRow {
  space_row_id: number;
  number: number;
  title: string;
  body: string;
  tag: string | null;
  after_json: string;
  revision: number;
  cycle: number;
  created_by: string;
  created_at: number;
  retired_by: string;
  retired_at: number;
  retired_reason: string;
  numbered_attempts: number;
}

interface RevisionRow {
  revision: number;
  title: string;
  body: string;
  tag: string | null;
  after_json: string;
  ended_by: string;
  ended_at: number;
  end_reason: string;
}

const COLUMNS = `space_row_id, number, title, body, tag, after_json, waiting, state, holder, claim_expires_at,
  result_post_id, done_by, cycle, rejected_reason, rejected_by, rejected_at, created_by, created_at, updated_at,
  revision, held_revision, numbered_attempts, attempts, attempt`;

const RETIRED_COLUMNS = `space_row_id, number, title, body, tag, after_json, revision, cycle, created_by, created_at,
  retired_by, retired_at, retired_reason, numbered_attempts`;

const ATTEMPT_COLUMNS = 'attempt, cycle, "by", post_id, author, at, rejected_by, rejected_reason, rejected_at';

function toAttempt(r: AttemptRow): TaskAttempt {
  return {
    attempt: Number(r.attempt),
    cycle: Number(r.cycle),
    by: r.by,
    postId: r.post_id,
    author: r.author,
    at: Number(r.at),
    rejected: r.rejected_by !== null && r.rejected_at !== null ? { by: r.rejected_by, reason: r.rejected_reason ?? '', at: Number(r.rejected_at) } : null,
  };
}

function toRetired(r: RetiredRow): RetiredTaskRow {
  return {
    spaceRowId: r.space_row_id,
    number: r.number,
    title: r.title,
    body: r.body,
    tag: r.tag,
    after: JSON.parse(r.after_json) as number[],
    revision: r.revision,
    cycle: r.cycle,
    createdBy: r.created_by,
    createdAt: r.created_at,
    retired: { reason: r.retired_reason, by: r.retired_by, at: r.retired_at },
    numberedAttempts: Number(r.numbered_attempts) === 1,
  };
}

function toTask(r: Row): TaskRow {
  return {
    spaceRowId: r.space_row_id,
    number: r.number,
    title: r.title,
    body: r.body,
    tag: r.tag,
    after: JSON.parse(r.after_json) as number[],
    waiting: r.waiting,
    state: r.state,
    holder: r.holder,
    claimExpiresAt: r.claim_expires_at,
    resultPostId: r.result_post_id,
    doneBy: r.done_by,
    cycle: r.cycle,
    rejected:
      r.rejected_reason !== null && r.rejected_by !== null && r.rejected_at !== null
        ? { reason: r.rejected_reason, by: r.rejected_by, at: r.rejected_at }
        : null,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    revision: r.revision,
    heldRevision: r.held_revision,
    numberedAttempts: Number(r.numbered_attempts) === 1,
    attempts: Number(r.attempts),
    attempt: r.attempt === null ? null : Number(r.attempt),
  };
}

/**
 * The page filter on the state as read at @now, as index ranges walked newest first: `open`
 * takes in held rows whose claim expired and `held` only live claims. The open case is two
 * ranges of `tasks_by_state` merged by number (UNION ALL with ORDER BY), so a page never walks
 * the SPACE's accepted tasks to find its open ones.
 */
const PAGE_RANGES: Record<'any' | StoredTaskState, readonly string[]> = {
  any: ['1 = 1'],
  open: ["state = 'open'", "state = 'held' AND claim_expires_at <= @now"],
  held: ["state = 'held' AND claim_expires_at > @now"],
  done: ["state = 'done'"],
  accepted: ["state = 'accepted'"],
};

function pageSql(ranges: readonly string[], tagged: boolean): string {
  const branch = (where: string): string =>
    `SELECT ${COLUMNS} FROM tasks WHERE space_row_id = @space AND number < @before AND ${where}${tagged ? ' AND tag = @tag' : ''}`;
  return `${ranges.map(branch).join(' UNION ALL ')} ORDER BY number DESC LIMIT @limit`;
}

export function createTaskStore(db: Db): TaskStore {
  const sql = dialectOf(db);
  const selectCounts = db.prepare<[number], { last_number: number; not_accepted: number }>(
    'SELECT last_number, not_accepted FROM task_lists WHERE space_row_id = ?',
  );
  const upsertList = db.prepare(
    `INSERT INTO task_lists (space_row_id, last_number, not_accepted) VALUES (?, 1, 1)
     ON CONFLICT (space_row_id) DO UPDATE SET last_number = task_lists.last_number + 1, not_accepted = task_lists.not_accepted + 1
     RETURNING last_number`,
  );
  const lessNotAccepted = db.prepare('UPDATE task_lists SET not_accepted = not_accepted - 1 WHERE space_row_id = ?');
  const selectOne = db.prepare<[number, number], Row>(`SELECT ${COLUMNS} FROM tasks WHERE space_row_id = ? AND number = ?`);
  const selectChecks = db.prepare<[number, number, number], { by: string; post_id: string | null; at: number }>(
    'SELECT "by", post_id, at FROM task_checks WHERE space_row_id = ? AND number = ? AND cycle = ? ORDER BY at, "by"',
  );
  const countWaiting = db.prepare<[number, string], { n: number }>(
    `SELECT count(*) AS n FROM tasks
      WHERE space_row_id = ? AND number IN (${sql.jsonEach('?', 'bigint')}) AND state <> 'accepted'`,
  );
  const insertTask = db.prepare(
    `INSERT INTO tasks (space_row_id, number, title, body, tag, after_json, waiting, state, holder, claim_expires_at,
       result_post_id, done_by, cycle, rejected_reason, rejected_by, rejected_at, created_by, created_at, updated_at, numbered_attempts)
     VALUES (@spaceRowId, @number, @title, @body, @tag, @afterJson, @waiting, 'open', NULL, NULL,
       NULL, NULL, 1, NULL, NULL, NULL, @createdBy, @now, @now, @numberedAttempts)`,
  );
  const insertAfter = db.prepare('INSERT INTO task_after (space_row_id, after_number, number) VALUES (?, ?, ?)');
  const pages = new Map<string, ReturnType<typeof db.prepare<Record<string, unknown>, Row>>>();
  for (const [state, ranges] of Object.entries(PAGE_RANGES)) {
    for (const tagged of [false, true]) pages.set(`${state}:${tagged}`, db.prepare<Record<string, unknown>, Row>(pageSql(ranges, tagged)));
  }
  const selectHeldBy = db.prepare<[number, string], Row>(
    `SELECT ${COLUMNS} FROM tasks WHERE space_row_id = ? AND holder = ? AND state = 'held'`,
  );
  // Each WHERE repeats its partial index's own condition so SQLite may use it (migration 009).
  const selectLowestOpen = db.prepare<{ space: number }, Row>(
    `SELECT ${COLUMNS} FROM tasks ${sql.indexedBy('tasks_open_ready')}
      WHERE space_row_id = @space AND state = 'open' AND waiting = 0 ORDER BY number LIMIT 1`,
  );
  const selectLowestOpenTagged = db.prepare<{ space: number; tag: string }, Row>(
    `SELECT ${COLUMNS} FROM tasks ${sql.indexedBy('tasks_open_ready_by_tag')}
      WHERE space_row_id = @space AND tag = @tag AND tag IS NOT NULL AND state = 'open' AND waiting = 0 ORDER BY number LIMIT 1`,
  );
  // Expired claims only: the range of `tasks_claims` up to now, lowest number first. A change
  // may give a held task `after` tasks to wait for, so `waiting = 0` is checked here too.
  const selectLowestExpired = db.prepare<{ space: number; now: number }, Row>(
    `SELECT ${COLUMNS} FROM tasks ${sql.indexedBy('tasks_claims')}
      WHERE space_row_id = @space AND state = 'held' AND claim_expires_at <= @now AND waiting = 0 ORDER BY number LIMIT 1`,
  );
  const selectLowestExpiredTagged = db.prepare<{ space: number; now: number; tag: string }, Row>(
    `SELECT ${COLUMNS} FROM tasks ${sql.indexedBy('tasks_claims')}
      WHERE space_row_id = @space AND state = 'held' AND claim_expires_at <= @now AND waiting = 0 AND tag = @tag ORDER BY number LIMIT 1`,
  );
  // A task with numbered attempts: not one the caller made an attempt at in this cycle, nor
  // whose attempt of record it confirmed (its checks are kept per attempt).
  const verifyWhere = `space_row_id = @space AND state = 'done' AND done_by <> @peer
        AND NOT EXISTS (SELECT 1 FROM task_checks c
          WHERE c.space_row_id = t.space_row_id AND c.number = t.number AND c.cycle = t.cycle AND c.by = @peer)
        AND NOT EXISTS (SELECT 1 FROM task_attempts a
          WHERE a.space_row_id = t.space_row_id AND a.number = t.number AND a.cycle = t.cycle AND a.by = @peer)
        AND NOT EXISTS (SELECT 1 FROM task_attempt_checks k
          WHERE k.space_row_id = t.space_row_id AND k.number = t.number AND k.attempt = t.attempt AND k.by = @peer)`;
  const selectToVerify = db.prepare<{ space: number; peer: string }, Row>(
    `SELECT ${COLUMNS} FROM tasks t ${sql.indexedBy('tasks_by_state')} WHERE ${verifyWhere} ORDER BY number LIMIT 1`,
  );
  const selectToVerifyTagged = db.prepare<{ space: number; peer: string; tag: string }, Row>(
    `SELECT ${COLUMNS} FROM tasks t ${sql.indexedBy('tasks_by_state')} WHERE ${verifyWhere} AND tag = @tag ORDER BY number LIMIT 1`,
  );
  const claimStmt = db.prepare(
    `UPDATE tasks SET state = 'held', holder = @holder, claim_expires_at = @expiresAt, updated_at = @now,
       held_revision = CASE WHEN state = 'held' AND holder = @holder THEN held_revision ELSE revision END
      WHERE space_row_id = @space AND number = @number`,
  );
  const releaseStmt = db.prepare(
    `UPDATE tasks SET state = 'open', holder = NULL, claim_expires_at = NULL, held_revision = NULL, updated_at = @now
      WHERE space_row_id = @space AND number = @number`,
  );
  const doneStmt = db.prepare(
    `UPDATE tasks SET state = 'done', holder = NULL, claim_expires_at = NULL, held_revision = NULL, done_by = @doneBy,
       result_post_id = @postId, updated_at = @now
      WHERE space_row_id = @space AND number = @number`,
  );
  const acceptStmt = db.prepare(
    "UPDATE tasks SET state = 'accepted', updated_at = @now WHERE space_row_id = @space AND number = @number",
  );
  const unblockDependents = db.prepare(
    `UPDATE tasks SET waiting = waiting - 1
      WHERE space_row_id = @space AND number IN (SELECT number FROM task_after WHERE space_row_id = @space AND after_number = @number)`,
  );
  const insertCheck = db.prepare(
    'INSERT INTO task_checks (space_row_id, number, cycle, by, post_id, at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const rejectStmt = db.prepare(
    `UPDATE tasks SET state = 'open', holder = NULL, claim_expires_at = NULL, held_revision = NULL, done_by = NULL, result_post_id = NULL,
       cycle = cycle + 1, rejected_reason = @reason, rejected_by = @by, rejected_at = @at, updated_at = @at, attempt = NULL
      WHERE space_row_id = @space AND number = @number`,
  );
  const selectAttemptsIn = db.prepare<[number, number, number], AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM task_attempts WHERE space_row_id = ? AND number = ? AND cycle = ? ORDER BY attempt`,
  );
  const selectAttempt = db.prepare<[number, number, number], AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM task_attempts WHERE space_row_id = ? AND number = ? AND attempt = ?`,
  );
  const selectRejectedWithPost = db.prepare<[number, number, string], AttemptRow>(
    `SELECT ${ATTEMPT_COLUMNS} FROM task_attempts
      WHERE space_row_id = ? AND number = ? AND post_id = ? AND rejected_by IS NOT NULL ORDER BY attempt DESC LIMIT 1`,
  );
  const selectAttemptChecks = db.prepare<[number, number, number], { by: string; post_id: string | null; at: number }>(
    'SELECT "by", post_id, at FROM task_attempt_checks WHERE space_row_id = ? AND number = ? AND attempt = ? ORDER BY at, "by"',
  );
  const insertAttempt = db.prepare(
    `INSERT INTO task_attempts (space_row_id, number, attempt, cycle, "by", post_id, author, at)
     VALUES (@space, @number, @attempt, @cycle, @by, @postId, @author, @at)`,
  );
  const doneByAttempt = db.prepare(
    `UPDATE tasks SET state = 'done', holder = NULL, claim_expires_at = NULL, held_revision = NULL, done_by = @by,
       result_post_id = @postId, attempt = @attempt, attempts = @attempt, updated_at = @at
      WHERE space_row_id = @space AND number = @number`,
  );
  const countAttempt = db.prepare('UPDATE tasks SET attempts = @attempt, updated_at = @at WHERE space_row_id = @space AND number = @number');
  const insertAttemptCheck = db.prepare(
    'INSERT INTO task_attempt_checks (space_row_id, number, attempt, "by", post_id, at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const rejectAttemptStmt = db.prepare(
    `UPDATE task_attempts SET rejected_by = @by, rejected_reason = @reason, rejected_at = @at
      WHERE space_row_id = @space AND number = @number AND attempt = @attempt`,
  );
  const setRecordStmt = db.prepare(
    `UPDATE tasks SET attempt = @attempt, done_by = @by, result_post_id = @postId, updated_at = @now
      WHERE space_row_id = @space AND number = @number`,
  );
  const deleteAttemptChecksOf = db.prepare('DELETE FROM task_attempt_checks WHERE space_row_id = ? AND number = ?');
  const deleteAttemptsOf = db.prepare('DELETE FROM task_attempts WHERE space_row_id = ? AND number = ?');

  const selectRetired = db.prepare<[number, number], RetiredRow>(`SELECT ${RETIRED_COLUMNS} FROM task_retired WHERE space_row_id = ? AND number = ?`);
  const selectRetiredPage = db.prepare<Record<string, unknown>, RetiredRow>(
    `SELECT ${RETIRED_COLUMNS} FROM task_retired WHERE space_row_id = @space AND number < @before ORDER BY number DESC LIMIT @limit`,
  );
  const selectRetiredPageTagged = db.prepare<Record<string, unknown>, RetiredRow>(
    `SELECT ${RETIRED_COLUMNS} FROM task_retired WHERE space_row_id = @space AND number < @before AND tag = @tag ORDER BY number DESC LIMIT @limit`,
  );
  const selectRevisions = db.prepare<Record<string, unknown>, RevisionRow>(
    `SELECT revision, title, body, tag, after_json, ended_by, ended_at, end_reason FROM task_revisions
      WHERE space_row_id = @space AND number = @number AND revision < @before ORDER BY revision DESC LIMIT @limit`,
  );
  const selectDependents = db.prepare<[number, number], { number: number }>(
    'SELECT number FROM task_after WHERE space_row_id = ? AND after_number = ? ORDER BY number',
  );
  const insertRevision = db.prepare(
    `INSERT INTO task_revisions (space_row_id, number, revision, title, body, tag, after_json, ended_by, ended_at, end_reason)
     SELECT space_row_id, number, revision, title, body, tag, after_json, @by, @at, @reason FROM tasks
      WHERE space_row_id = @space AND number = @number`,
  );
  const changeWords = db.prepare(
    `UPDATE tasks SET title = @title, body = @body, tag = @tag, revision = revision + 1, updated_at = @at
      WHERE space_row_id = @space AND number = @number`,
  );
  const deleteAfterOf = db.prepare('DELETE FROM task_after WHERE space_row_id = ? AND number = ?');
  const setAfterJson = db.prepare(
    'UPDATE tasks SET after_json = @afterJson, waiting = @waiting WHERE space_row_id = @space AND number = @number',
  );
  const insertRetired = db.prepare(
    `INSERT INTO task_retired (${RETIRED_COLUMNS})
     SELECT space_row_id, number, title, body, tag, after_json, revision, cycle, created_by, created_at, @by, @at, @reason,
            numbered_attempts
       FROM tasks WHERE space_row_id = @space AND number = @number`,
  );
  const deleteChecksOf = db.prepare('DELETE FROM task_checks WHERE space_row_id = ? AND number = ?');
  const deleteTask = db.prepare('DELETE FROM tasks WHERE space_row_id = ? AND number = ?');

  /** Point a task's `after` at `after`: its links, its list and how many of them are not accepted. */
  async function setAfter(space: number, number: number, after: number[]): Promise<void> {
    const afterJson = JSON.stringify(after);
    const waiting = after.length === 0 ? 0 : (await countWaiting.get(space, afterJson))!.n;
    await deleteAfterOf.run(space, number);
    for (const a of after) await insertAfter.run(space, a, number);
    await setAfterJson.run({ space, number, afterJson, waiting });
  }

  async function get(spaceRowId: number, number: number): Promise<TaskRow | undefined> {
    const r = await selectOne.get(spaceRowId, number);
    return r ? toTask(r) : undefined;
  }

  return {
    async counts(spaceRowId) {
      const r = await selectCounts.get(spaceRowId);
      return { lastNumber: r?.last_number ?? 0, notAccepted: r?.not_accepted ?? 0 };
    },
    get,
    async checks(spaceRowId, number, cycle) {
      return (await selectChecks.all(spaceRowId, number, cycle)).map((c) => ({ by: c.by, postId: c.post_id, at: c.at }));
    },
    async page(q) {
      const stmt = pages.get(`${q.state ?? 'any'}:${q.tag !== undefined}`)!;
      const params: Record<string, unknown> = { space: q.spaceRowId, before: q.before ?? Number.MAX_SAFE_INTEGER, limit: q.limit + 1 };
      if (q.state === 'open' || q.state === 'held') params.now = q.now;
      if (q.tag !== undefined) params.tag = q.tag;
      const rows = await stmt.all(params);
      return { items: rows.slice(0, q.limit).map(toTask), hasMore: rows.length > q.limit };
    },
    async heldBy(spaceRowId, peer) {
      const r = await selectHeldBy.get(spaceRowId, peer);
      return r ? toTask(r) : undefined;
    },
    async lowestClaimable(spaceRowId, now, tag) {
      const open = tag === undefined ? await selectLowestOpen.get({ space: spaceRowId }) : await selectLowestOpenTagged.get({ space: spaceRowId, tag });
      const expired = tag === undefined ? await selectLowestExpired.get({ space: spaceRowId, now }) : await selectLowestExpiredTagged.get({ space: spaceRowId, now, tag });
      const lowest = open === undefined || (expired !== undefined && expired.number < open.number) ? expired : open;
      return lowest ? toTask(lowest) : undefined;
    },
    async lowestToVerify(spaceRowId, peer, tag) {
      const r = tag === undefined ? await selectToVerify.get({ space: spaceRowId, peer }) : await selectToVerifyTagged.get({ space: spaceRowId, peer, tag });
      return r ? toTask(r) : undefined;
    },
    async insert(t) {
      const { last_number: number } = await upsertList.get(t.spaceRowId) as { last_number: number };
      const afterJson = JSON.stringify(t.after);
      const waiting = t.after.length === 0 ? 0 : (await countWaiting.get(t.spaceRowId, afterJson))!.n;
      await insertTask.run({
        spaceRowId: t.spaceRowId, number, title: t.title, body: t.body, tag: t.tag, afterJson, waiting, createdBy: t.createdBy, now: t.now,
        numberedAttempts: t.numberedAttempts === true ? 1 : 0,
      });
      for (const a of t.after) await insertAfter.run(t.spaceRowId, a, number);
      return (await get(t.spaceRowId, number))!;
    },
    async claim(space, number, holder, expiresAt, now) {
      await claimStmt.run({ space, number, holder, expiresAt, now });
    },
    async release(space, number, now) {
      await releaseStmt.run({ space, number, now });
    },
    async markDone(space, number, doneBy, postId, now) {
      await doneStmt.run({ space, number, doneBy, postId, now });
    },
    async accept(space, number, now) {
      await acceptStmt.run({ space, number, now });
      await unblockDependents.run({ space, number });
      await lessNotAccepted.run(space);
    },
    async addCheck(space, number, cycle, check) {
      await insertCheck.run(space, number, cycle, check.by, check.postId, check.at);
    },
    async reject(space, number, rejected) {
      await rejectStmt.run({ space, number, reason: rejected.reason, by: rejected.by, at: rejected.at });
    },
    async retiredGet(spaceRowId, number) {
      const r = await selectRetired.get(spaceRowId, number);
      return r ? toRetired(r) : undefined;
    },
    async retiredPage(q) {
      const params: Record<string, unknown> = { space: q.spaceRowId, before: q.before ?? Number.MAX_SAFE_INTEGER, limit: q.limit + 1 };
      if (q.tag !== undefined) params.tag = q.tag;
      const rows = await (q.tag === undefined ? selectRetiredPage : selectRetiredPageTagged).all(params);
      return { items: rows.slice(0, q.limit).map(toRetired), hasMore: rows.length > q.limit };
    },
    async revisions(spaceRowId, number, before, limit) {
      const rows = await selectRevisions.all({ space: spaceRowId, number, before: before ?? Number.MAX_SAFE_INTEGER, limit: limit + 1 });
      const items = rows.slice(0, limit).map((r) => ({
        revision: r.revision,
        title: r.title,
        body: r.body,
        tag: r.tag,
        after: JSON.parse(r.after_json) as number[],
        ended: { by: r.ended_by, at: r.ended_at, reason: r.end_reason },
      }));
      return { items, hasMore: rows.length > limit };
    },
    async dependents(spaceRowId, number) {
      return (await selectDependents.all(spaceRowId, number)).map((r) => r.number);
    },
    async change(space, number, c) {
      const row = (await get(space, number))!;
      await insertRevision.run({ space, number, by: c.by, at: c.at, reason: c.reason });
      await changeWords.run({ space, number, title: c.title ?? row.title, body: c.body ?? row.body, tag: c.tag === undefined ? row.tag : c.tag, at: c.at });
      if (c.after !== undefined) await setAfter(space, number, c.after);
    },
    async retire(space, number, retired, rewired) {
      await insertRetired.run({ space, number, by: retired.by, at: retired.at, reason: retired.reason });
      await deleteChecksOf.run(space, number);
      await deleteAttemptChecksOf.run(space, number);
      await deleteAttemptsOf.run(space, number);
      await deleteAfterOf.run(space, number);
      for (const [dependent, after] of rewired) await setAfter(space, dependent, after);
      await deleteTask.run(space, number);
      await lessNotAccepted.run(space);
    },
    async attemptsIn(space, number, cycle) {
      return (await selectAttemptsIn.all(space, number, cycle)).map(toAttempt);
    },
    async attemptGet(space, number, attempt) {
      const r = await selectAttempt.get(space, number, attempt);
      return r ? toAttempt(r) : undefined;
    },
    async rejectedWithPost(space, number, postId) {
      const r = await selectRejectedWithPost.get(space, number, postId);
      return r ? toAttempt(r) : undefined;
    },
    async attemptChecks(space, number, attempt) {
      return (await selectAttemptChecks.all(space, number, attempt)).map((c) => ({ by: c.by, postId: c.post_id, at: Number(c.at) }));
    },
    async addAttempt(space, number, a, first) {
      await insertAttempt.run({ space, number, attempt: a.attempt, cycle: a.cycle, by: a.by, postId: a.postId, author: a.author, at: a.at });
      if (first) await doneByAttempt.run({ space, number, by: a.by, postId: a.postId, attempt: a.attempt, at: a.at });
      else await countAttempt.run({ space, number, attempt: a.attempt, at: a.at });
    },
    async addAttemptCheck(space, number, attempt, check) {
      await insertAttemptCheck.run(space, number, attempt, check.by, check.postId, check.at);
    },
    async rejectAttempt(space, number, attempt, rejected) {
      await rejectAttemptStmt.run({ space, number, attempt, by: rejected.by, reason: rejected.reason, at: rejected.at });
    },
    async setRecord(space, number, a, now) {
      await setRecordStmt.run({ space, number, attempt: a.attempt, by: a.by, postId: a.postId, now });
    },
  };
}
