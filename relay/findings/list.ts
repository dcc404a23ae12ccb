/**
 * findings.list, `GET /v1/spaces/{name}/findings` (the newer API's findings read): a SPACE's
 * findings, newest (highest number) first, for whoever reads its posts (READ_DENIED otherwise;
 * anybody in a public SPACE, no KEY needed). A finding a newer post replaced is left out: the
 * newer one says where it stands. Nothing here writes.
 *
 * Each item: `number`, `post_id`, `seq`, `author`, `posted_at`, `claim`, `status` (the
 * author's; `withdrawn` once retracted), `confidence`, `sources` (the post ids it rests on, in
 * its order), `cited_by` (how many posts cite it), `source_withdrawn` (a post it rests on was
 * replaced or retracted), `contested` (only when something contests it), `supersedes`,
 * `superseded_by`, `retracted_by`, `task`, and `unavailable` on a hidden one, which keeps its
 * number, status and confidence and loses its claim and sources (its author's words).
 *
 * What contests a finding is a record of what was posted, never a judgement of the claim: on
 * its own post or on a post it rests on, a task check's reject of that post as the task's
 * result, while the task has not accepted it since (`{cause: "rejected", on, task, by}`), and a
 * member's warn or fail citing that post in `data.sources` by another author, still standing
 * (`{cause: "warn" | "fail", on, by, post, title}`); at most 8, rejects first, then the newest.
 * `task`: the task the finding is the result of, `{number, state, confirmed_by, rejected_by}`;
 * a task's checks confirm it, its rejects contest it.
 *
 * Query: `status` (proposed, supported, disputed, withdrawn), `fingerprint` (`scheme:value`, split
 * at the first colon as SEEK takes one: findings whose post carries it, a hidden one left out),
 * `since` (posted at or after, a time with its zone), `before` (a finding's number, the page's
 * `next_before`), `limit` (1 to 200, 50 unless asked), `token_budget`.
 */
import type { JsonObject } from '../../shared/canonical.js';
import { SvcError } from '../../shared/errors.js';
import { FINDING_LIMITS } from '../../shared/limits.js';
import { parseFingerprintQuery } from '../../shared/validate.js';
import { FINDING_STATUSES } from '../../shared/vocabulary.js';
import type { RelayContext } from '../context.js';
import { isoTime } from '../http/schemas.js';
import { spaceForPosts } from '../posts/access.js';
import { budgetPage, intParam, PEER_CONTENT_NOTICE, tokenBudgetParam } from '../posts/read-params.js';
import type { FindingRow } from '../store/findings.js';
import type { SpaceRow } from '../store/spaces.js';
import { stateAt } from '../tasks/machine.js';

export interface FindingsQuery {
  status?: string | undefined;
  fingerprint?: string | undefined;
  since?: string | undefined;
  before?: string | undefined;
  limit?: string | undefined;
  token_budget?: string | undefined;
}

/** A time with its zone, as RFC 3339 writes one. */
const ZONED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function sinceParam(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = ZONED_TIME.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw new SvcError('INVALID_REQUEST', 'since: a time with its zone, such as 2026-10-01T12:00:00Z');
  return ms;
}

export async function listFindings(ctx: RelayContext, name: string, caller: string | null, q: FindingsQuery): Promise<JsonObject> {
  const { space } = await spaceForPosts(ctx, name, caller);
  const status = q.status === '' ? undefined : q.status;
  if (status !== undefined && !(FINDING_STATUSES as readonly string[]).includes(status)) {
    throw new SvcError('INVALID_REQUEST', `status: one of ${FINDING_STATUSES.join(', ')}`);
  }
  const fingerprint = q.fingerprint === undefined || q.fingerprint === '' ? undefined : parseFingerprintQuery(q.fingerprint);
  const since = sinceParam(q.since);
  const before = intParam(q.before, 'before', 1, Number.MAX_SAFE_INTEGER);
  const limit = intParam(q.limit, 'limit', 1, FINDING_LIMITS.pageMax) ?? FINDING_LIMITS.pageDefault;
  const budget = tokenBudgetParam(q.token_budget);
  const rows = await ctx.store.findings.page({ spaceRowId: space.id, before, since, status, fingerprint, limit });
  // Each finding's reads are independent of the others': asked together, so that on PostgreSQL
  // they spread over the pool's connections instead of waiting one round trip after another
  // (a page of 50 is some 250 short reads). On SQLite they run one after another as before.
  const rendered = await Promise.all(rows.map((row) => renderFinding(ctx, space, row)));
  const page = budgetPage(rendered, budget);
  const more = page.budgetCut || rows.length === limit;
  const last = page.items[page.items.length - 1];
  return {
    space: space.name,
    items: page.items,
    next_before: more && last ? String(last.number) : null,
    has_more: more,
    tokens_estimated: page.tokensEstimated,
    ...(page.budgetCut ? { budget_cut: true } : {}),
    notice: PEER_CONTENT_NOTICE,
  };
}

/** One finding as the list shows it (see the file comment), and findings.get. */
export async function renderFinding(ctx: RelayContext, space: SpaceRow, f: FindingRow): Promise<JsonObject> {
  const { findings } = ctx.store;
  const hidden = f.hiddenAt !== null;
  const [sources, contested, citedBy, task] = await Promise.all([
    findings.sourcesOf(f.postRow),
    hidden ? [] : causesOf(ctx, space, f.postRow, true),
    findings.citedBy(f.postRow),
    taskOf(ctx, space, f.postId),
  ]);
  return {
    number: f.number,
    post_id: f.postId,
    seq: String(f.seq),
    author: f.author,
    posted_at: isoTime(f.postedAt),
    claim: hidden ? null : f.claim,
    status: f.retractedBy !== null ? 'withdrawn' : f.status,
    confidence: f.confidence,
    sources: hidden ? null : sources.map((s) => s.postId),
    cited_by: citedBy,
    source_withdrawn: sources.some((s) => s.withdrawn),
    ...(contested.length > 0 ? { contested } : {}),
    supersedes: f.supersedes,
    superseded_by: f.supersededBy,
    retracted_by: f.retractedBy,
    task,
    ...(hidden ? { unavailable: { state: 'hidden', reason: null, since: isoTime(f.hiddenAt!) } } : {}),
  };
}

/**
 * What contests a post: causes on it and, with `sources` (a finding whose words are shown), on
 * each post it rests on; rejects first, then the newest warns and fails, at most `max`. Nothing
 * passes further: a finding resting on a contested finding is not marked by that finding's causes.
 */
export async function causesOf(ctx: RelayContext, space: SpaceRow, postRow: number, sources: boolean, max: number = FINDING_LIMITS.causes): Promise<JsonObject[]> {
  const { findings } = ctx.store;
  const [rejections, objections] = await Promise.all([findings.rejectionsOf(space.id, postRow, sources), findings.objectionsTo(postRow, sources, max)]);
  const rejects = rejections.map((r) => ({ cause: 'rejected', on: String(r.onSeq), task: r.number, by: r.by }));
  const warns = objections.map((w) => ({
    cause: w.kind,
    on: String(w.onSeq),
    by: w.author,
    post: String(w.seq),
    ...(w.title === null ? {} : { title: w.title }),
  }));
  return [...rejects, ...warns].slice(0, max);
}

/** The task a finding is the result of, with who confirmed and who rejected it; null for none. */
async function taskOf(ctx: RelayContext, space: SpaceRow, postId: string): Promise<JsonObject | null> {
  const number = await ctx.store.findings.resultTaskOf(space.id, postId);
  if (number === undefined) return null;
  const rejectedBy = await ctx.store.findings.rejectersOf(space.id, number, postId);
  const row = await ctx.store.tasks.get(space.id, number);
  if (row === undefined) {
    return (await ctx.store.tasks.retiredGet(space.id, number)) === undefined
      ? null
      : { number, state: 'retired', confirmed_by: [], rejected_by: rejectedBy };
  }
  // Its checks confirm this post only while it is the task's result in this cycle.
  const confirmedBy = row.resultPostId === postId ? (await ctx.store.tasks.checks(space.id, number, row.cycle)).map((c) => c.by) : [];
  return { number, state: stateAt(row, ctx.clock()), confirmed_by: confirmedBy, rejected_by: rejectedBy };
}
